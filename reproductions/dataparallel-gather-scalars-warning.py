"""A regression model computes its own loss inside forward with F.mse_loss (reduction="mean"), so it
returns a 0-dim tensor, and is wrapped as nn.DataParallel(model, device_ids=[0, 1]). Each of the two
replicas returns a scalar; gathering them along dim 0 is impossible, so Gather.forward
(torch/nn/parallel/_functions.py) views each as a 1-element vector, concatenates them on cuda:0 and warns
with the UserWarning "Was asked to gather along dimension 0, but all input tensors were scalars; will
instead unsqueeze and return a vector." The caller gets a 2-element vector of per-replica means instead
of one loss. Needs two CUDA GPUs: with one device DataParallel returns the module's output without a
gather, and without CUDA it is a pass-through, so there is no CPU variant.
fix() returns one loss per sample (reduction="none", averaged over the feature dimension only), so the
gather concatenates batch-length vectors, and takes .mean() of the gathered vector; it checks that no
such warning is emitted, that the loss equals the unwrapped model's batch loss, and that the gradients do
too, with a batch of 7 that splits unevenly (4 + 3) across the two GPUs.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 2, "timeout_s": 120}

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

WARNING_TEXT = "Was asked to gather along dimension 0, but all input tensors were scalars"


class RegressorWithLoss(nn.Module):
    def __init__(self, per_sample):
        super().__init__()
        self.net = nn.Linear(6, 2)
        self.per_sample = per_sample

    def forward(self, x, y):
        pred = self.net(x)
        if self.per_sample:
            return F.mse_loss(pred, y, reduction="none").mean(dim=1)  # shape (samples on this replica,)
        return F.mse_loss(pred, y)  # 0-dim


def _setup(per_sample, batch):
    torch.manual_seed(0)
    model = RegressorWithLoss(per_sample).to("cuda:0")
    x = torch.randn(batch, 6, device="cuda:0")
    y = torch.randn(batch, 2, device="cuda:0")
    return model, nn.DataParallel(model, device_ids=[0, 1]), x, y


def trigger():
    model, dp, x, y = _setup(per_sample=False, batch=8)
    dp(x, y)  # warns in Gather.forward; returns a vector of 2 per-replica losses
    return "cuda: two replicas each returned a 0-dim loss"


def fix():
    model, dp, x, y = _setup(per_sample=True, batch=7)  # 7 samples: the replicas get 4 and 3

    reference = F.mse_loss(model.net(x), y)  # the batch loss on one device
    (ref_weight_grad, ref_bias_grad) = torch.autograd.grad(reference, [model.net.weight, model.net.bias])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_sample = dp(x, y)
    assert not [w for w in caught if WARNING_TEXT in str(w.message)]
    assert tuple(per_sample.shape) == (7,) and per_sample.device == torch.device("cuda:0")

    loss = per_sample.mean()
    assert torch.allclose(loss, reference, rtol=1e-5, atol=1e-6)
    loss.backward()
    assert torch.allclose(model.net.weight.grad, ref_weight_grad, rtol=1e-5, atol=1e-6)
    assert torch.allclose(model.net.bias.grad, ref_bias_grad, rtol=1e-5, atol=1e-6)
    return "cuda: per-sample losses gathered, then .mean()"
