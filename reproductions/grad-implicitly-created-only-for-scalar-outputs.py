"""A regression model keeps its per-sample losses (mse_loss with reduction='none') and calls backward() on the 8x2
tensor; _make_grads in torch/autograd/__init__.py refuses to invent a gradient for a non-scalar output. Solution 1
reduces the loss with .mean() (and shows the nn.DataParallel shape of the problem, a loss with one element per
device, reduced the same way); solution 2 passes the gradient explicitly and checks it equals the gradient of the
sum, not of the mean. The record's exampleFix and validationCode run from its text; the guard's valid situations are
a reduced loss, a weighted mean, a one-element loss that is not 0-d, and a loss that does not require grad (eval).

Drafted by `errkb draft` from a snippet on torch 2.13.0+cpu, Python 3.11.7 (raise site, excerpt, provenance,
message and pattern unchanged from the draft). NEEDS was widened to torch>=1.13 after the draft, and the
results name each release run (2.5.1, 2.13.0, 2.15.0); the older wording is cited from public issues.
"""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 90}
SOLUTIONS = {1: "reduced_loss", 2: "explicit_gradient"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["nn", "model", "inputs", "targets"], "validationCode": ["loss"]}
KEEP = ["model"]
VALID = {"reduced": "valid_reduced", "weighted-mean": "valid_weighted", "one-element-1d": "valid_one_element",
         "eval-no-grad": "valid_no_grad"}
WORDINGS = [
    {"text": "grad can be implicitly created only for scalar outputs", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "grad can be implicitly created only for scalar outputs", "source": "carpedm20/ENAS-pytorch#58", "match": "pattern"},
    {"text": "grad can be implicitly created only for scalar outputs", "source": "WisconsinAIVision/MaskPoint#7", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0+cpu"}

import math

import errkb_record as record

import torch
from torch import nn


def _setup():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    inputs = torch.randn(8, 4)
    targets = torch.randn(8, 2)
    return model, inputs, targets


def _changes(model, loss):
    before = [p.detach().clone() for p in model.parameters()]
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    assert math.isfinite(float(loss))
    assert all(not torch.equal(a, p) for a, p in zip(before, model.parameters())), "a parameter did not change"


def trigger():
    import torch

    model = torch.nn.Linear(4, 2)
    inputs = torch.randn(8, 4)
    targets = torch.randn(8, 2)
    loss = torch.nn.functional.mse_loss(model(inputs), targets, reduction="none")
    loss.backward()


def reduced_loss():
    """Solution 1: the per-sample loss reduced with .mean() trains; so does a per-device (DataParallel-like) vector."""
    model, inputs, targets = _setup()
    loss = nn.functional.mse_loss(model(inputs), targets, reduction="none")
    loss.mean().backward()
    expected = torch.autograd.grad(nn.functional.mse_loss(model(inputs), targets), model.weight)[0]
    assert torch.allclose(model.weight.grad, expected), "mean of the per-sample loss = the default reduction"
    _changes(model, loss.mean())
    model.zero_grad()
    per_device = torch.stack([nn.functional.mse_loss(model(part), t) for part, t in zip(inputs.chunk(2), targets.chunk(2))])
    assert per_device.shape == (2,)  # what DataParallel gathers from two devices
    per_device.mean().backward()
    _changes(model, per_device.mean())


def explicit_gradient():
    """Solution 2: an explicit gradient of ones works, and equals backward on the sum (not the mean)."""
    model, inputs, targets = _setup()
    out = nn.functional.mse_loss(model(inputs), targets, reduction="none")
    out.backward(gradient=torch.ones_like(out))
    by_ones = model.weight.grad.clone()
    model.zero_grad()
    nn.functional.mse_loss(model(inputs), targets, reduction="sum").backward()
    assert torch.allclose(by_ones, model.weight.grad)
    try:  # autograd.grad without grad_outputs goes through the same check
        torch.autograd.grad(model(inputs), model.weight)
    except RuntimeError as exc:
        assert "grad can be implicitly created only for scalar outputs" in str(exc)
    else:
        raise AssertionError("autograd.grad on a non-scalar output did not raise")
    grads = torch.autograd.grad(model(inputs), model.weight, grad_outputs=torch.ones(8, 2))[0]
    assert grads.shape == model.weight.shape


def example_fix():
    model, inputs, targets = _setup()
    names = record.run("exampleFix", {"nn": nn, "model": model, "inputs": inputs, "targets": targets}, section="after")
    assert names["model"] is model
    assert model.weight.grad is not None and model.weight.grad.abs().sum() > 0


def guard():
    model, inputs, targets = _setup()
    loss = nn.functional.mse_loss(model(inputs), targets, reduction="none")
    assert not record.check("validationCode", {"loss": loss})
    assert record.check("validationCode", {"loss": loss.mean()})


def valid_reduced():
    model, inputs, targets = _setup()
    return {"loss": nn.functional.mse_loss(model(inputs), targets)}


def valid_weighted():
    model, inputs, targets = _setup()
    per_sample = nn.functional.mse_loss(model(inputs), targets, reduction="none").mean(dim=1)
    weights = torch.rand(8)
    return {"loss": (per_sample * weights).sum() / weights.sum()}


def valid_one_element():
    model, inputs, targets = _setup()
    return {"loss": nn.functional.mse_loss(model(inputs), targets).reshape(1)}  # backward() accepts one element


def valid_no_grad():
    model, inputs, targets = _setup()
    with torch.no_grad():
        return {"loss": nn.functional.mse_loss(model(inputs), targets, reduction="none")}  # evaluation, no backward
