"""A regression model computes its own loss inside forward with F.mse_loss (reduction="mean"), so it
returns a 0-dim tensor, and is wrapped as nn.DataParallel(model, device_ids=[0, 1]). Each of the two
replicas returns a scalar; gathering them along dim 0 is impossible, so Gather.forward
(torch/nn/parallel/_functions.py) views each as a 1-element vector, concatenates them on cuda:0 and warns
with the UserWarning "Was asked to gather along dimension 0, but all input tensors were scalars; will
instead unsqueeze and return a vector." The caller gets a 2-element vector of per-replica means instead
of one loss. Needs two CUDA GPUs: with one device DataParallel returns the module's output without a
gather, and without CUDA it is a pass-through, so there is no CPU variant.
The demonstrations use a batch of 7 that splits unevenly (4 + 3): forward returns one loss per sample and
the gathered vector is averaged (solution 1), or forward returns each replica's loss sum and element count
as 1-element vectors and the sums are divided by the counts after the gather (solution 2). Each checks that
the warning is gone and that the loss and the gradients equal the unwrapped model's batch loss on one
device. The record's exampleFix and validationCode run from its own text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 2, "timeout_s": 120}
SOLUTIONS = {1: "per_sample_losses", 2: "sums_and_counts"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "F", "net", "x", "y"], "validationCode": ["dp", "x", "y"]}
KEEP = ["net"]
VALID = {"per-sample-losses": "valid_per_sample", "sum-and-count": "valid_sum_and_count"}
WORDINGS = [
    {"text": "Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and "
             "return a vector.", "source": "huggingface/trl#7018", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import warnings

import errkb_record as record

import torch
import torch.nn as nn
import torch.nn.functional as F

WARNING_TEXT = "Was asked to gather along dimension 0, but all input tensors were scalars"


class RegressorWithLoss(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.net = nn.Linear(6, 2)
        self.mode = mode

    def forward(self, x, y):
        pred = self.net(x)
        if self.mode == "per_sample":
            return F.mse_loss(pred, y, reduction="none").mean(dim=1)  # shape (samples on this replica,)
        if self.mode == "sum_and_count":
            total = F.mse_loss(pred, y, reduction="sum").unsqueeze(0)  # shape (1,)
            count = torch.full((1,), y.numel(), dtype=total.dtype, device=total.device)
            return total, count
        return F.mse_loss(pred, y)  # 0-dim


def _setup(mode, batch):
    torch.manual_seed(0)
    model = RegressorWithLoss(mode).to("cuda:0")
    x = torch.randn(batch, 6, device="cuda:0")
    y = torch.randn(batch, 2, device="cuda:0")
    return model, nn.DataParallel(model, device_ids=[0, 1]), x, y


def _no_warning(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    assert not [w for w in caught if WARNING_TEXT in str(w.message)]
    return out


def _equals_single_device(model, x, y, loss):
    """The loss and its gradients equal the batch loss computed without DataParallel."""
    reference = F.mse_loss(model.net(x), y)
    ref_grads = torch.autograd.grad(reference, [model.net.weight, model.net.bias])
    assert torch.allclose(loss, reference, rtol=1e-5, atol=1e-6)
    loss.backward()
    assert torch.allclose(model.net.weight.grad, ref_grads[0], rtol=1e-5, atol=1e-6)
    assert torch.allclose(model.net.bias.grad, ref_grads[1], rtol=1e-5, atol=1e-6)


def trigger():
    model, dp, x, y = _setup("scalar", batch=8)
    dp(x, y)  # warns in Gather.forward; returns a vector of 2 per-replica losses
    return "cuda: two replicas each returned a 0-dim loss"


def per_sample_losses():
    """Solution 1: one loss per sample from forward, .mean() after the gather."""
    model, dp, x, y = _setup("per_sample", batch=7)  # 7 samples: the replicas get 4 and 3
    per_sample = _no_warning(lambda: dp(x, y))
    assert tuple(per_sample.shape) == (7,) and per_sample.device == torch.device("cuda:0")
    _equals_single_device(model, x, y, per_sample.mean())
    return "cuda: per-sample losses gathered, then .mean()"


def sums_and_counts():
    """Solution 2: per-replica sums and counts as 1-element vectors, reduced after the gather."""
    model, dp, x, y = _setup("sum_and_count", batch=7)
    sums, counts = _no_warning(lambda: dp(x, y))
    assert tuple(sums.shape) == (2,) and counts.tolist() == [8.0, 6.0]  # 4 and 3 samples, 2 values each
    _equals_single_device(model, x, y, sums.sum() / counts.sum())
    return "cuda: per-replica sums and counts, divided after the gather"


def example_fix():
    """The exampleFix's "after" part with the trigger's network and an uneven batch of 7."""
    torch.manual_seed(0)
    net = nn.Linear(6, 2).to("cuda:0")
    x = torch.randn(7, 6, device="cuda:0")
    y = torch.randn(7, 2, device="cuda:0")
    names = _no_warning(lambda: record.run("exampleFix", {"nn": nn, "F": F, "net": net, "x": x, "y": y}, section="after"))
    loss = names["loss"]
    assert torch.allclose(loss, F.mse_loss(net(x), y), rtol=1e-5, atol=1e-6)
    loss.backward()
    assert net.weight.grad is not None and torch.isfinite(net.weight.grad).all()
    return "cuda: the record's after part"


def guard():
    """validationCode flags the scalar-loss model and passes the per-sample one."""
    _, dp, x, y = _setup("scalar", batch=8)
    assert not record.check("validationCode", {"dp": dp, "x": x, "y": y})
    _, dp, x, y = _setup("per_sample", batch=8)
    assert record.check("validationCode", {"dp": dp, "x": x, "y": y})
    return "cuda: the record's guard"


def _gathers_quietly(mode, batch):
    """The situation is valid: DataParallel gathers it on two GPUs without the warning."""
    _, dp, x, y = _setup(mode, batch)
    _no_warning(lambda: dp(x, y))
    return {"dp": dp, "x": x, "y": y}


def valid_per_sample():
    """Solution 1: one loss per sample, even and uneven batches."""
    return [_gathers_quietly("per_sample", 8), _gathers_quietly("per_sample", 7)]


def valid_sum_and_count():
    """Solution 2: a (sum, count) pair of 1-element tensors per replica."""
    return _gathers_quietly("sum_and_count", 7)
