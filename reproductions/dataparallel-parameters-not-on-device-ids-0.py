"""A classifier is wrapped as nn.DataParallel(model, device_ids=[0]); with a single device id the
constructor moves the model to cuda:0 itself. Then, for fine-tuning, its head is replaced by a new
nn.Linear built on the CPU, after the wrapping. At the next forward, DataParallel.forward walks over the
module's parameters and buffers and raises RuntimeError "module must have its parameters and buffers on
device cuda:0 (device_ids[0]) but found one of them on device: cpu" (torch/nn/parallel/data_parallel.py).
Needs one CUDA GPU: without CUDA, DataParallel is a pass-through that runs the module and checks nothing,
so there is no CPU variant. fix() moves the wrapped model to device_ids[0] after the change and checks
that the forward output matches the unwrapped model and that a training step updates the new head.
"""

NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 1, "timeout_s": 120}

import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.body(x))


def _wrapped_with_new_head():
    torch.manual_seed(0)
    model = Classifier()
    dp = nn.DataParallel(model, device_ids=[0])  # one device id: the constructor moves model to cuda:0
    assert all(p.device == torch.device("cuda:0") for p in model.parameters())
    model.head = nn.Linear(16, 3)  # new 3-class head, created on the CPU after wrapping
    return model, dp


def trigger():
    variant = "cuda: head replaced on the CPU after wrapping in DataParallel(device_ids=[0])"
    model, dp = _wrapped_with_new_head()
    dp(torch.randn(6, 8))  # the batch may stay on the CPU: scatter would copy it; the module is checked first
    return variant


def fix():
    model, dp = _wrapped_with_new_head()
    dp.to("cuda:0")  # the documented fix: everything on device_ids[0] before the forward
    tensors = list(dp.parameters()) + list(dp.buffers())
    assert all(t.device == torch.device("cuda:0") for t in tensors)

    x = torch.randn(6, 8)
    y = torch.randint(0, 3, (6,))
    out = dp(x)
    assert out.device == torch.device("cuda:0") and tuple(out.shape) == (6, 3)
    with torch.no_grad():
        assert torch.allclose(out, model(x.to("cuda:0")))

    optimizer = torch.optim.SGD(dp.parameters(), lr=0.1)
    before = model.head.weight.detach().clone()
    loss = F.cross_entropy(out, y.to(out.device))
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
    assert model.head.weight.grad is not None and torch.isfinite(model.head.weight.grad).all()
    assert not torch.equal(before, model.head.weight), "the step did not change the new head"
    return "cuda: dp.to('cuda:0') after replacing the head"
