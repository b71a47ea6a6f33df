"""A model is converted to half precision with model.half() and trained with a GradScaler, as if
.half() were how mixed precision is switched on. The scaled backward pass leaves float16 gradients on
float16 parameters; scaler.step(optimizer) first unscales them, and GradScaler._unscale_grads_ refuses:
ValueError "Attempting to unscale FP16 gradients." (torch/amp/grad_scaler.py). The check does not
depend on the device: with a GPU the real CUDA case runs, without one the same code runs with a CPU
GradScaler (torch.amp.GradScaler("cpu"), same raise line), and each stage returns which ran.
Demonstrations: float32 parameters with autocast producing float16 activations (the scaler steps, the
weights change and stay float32), and a bfloat16 model trained without any scaler. The record's
exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=2.4"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "fp32_weights_with_autocast", 2: "bfloat16_without_scaler"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "float32-model": "valid_float32",
    "bfloat16-model": "valid_bfloat16",
    "frozen-float16-backbone": "valid_frozen_half_backbone",
}
CODE_NAMES = {"exampleFix": ["torch", "nn", "model", "x", "y", "device"], "validationCode": ["torch", "model"]}
KEEP = ["model"]
WORDINGS = [{"text": "Attempting to unscale FP16 gradients.", "source": "torch==2.13.0", "match": "pattern"}]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import math

import errkb_record as record

import torch
import torch.nn as nn


def _device():
    if torch.cuda.is_available():
        return "cuda", "cuda: GradScaler('cuda')"
    return "cpu", "cpu: GradScaler('cpu'), the same unscale check"


def _model(device):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)


def _batch(device):
    g = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=g).to(device), torch.randint(0, 2, (4,), generator=g).to(device)


def trigger():
    device, variant = _device()
    model = _model(device).half()  # "mixed precision" by converting the weights
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device)
    x, y = _batch(device)
    loss = nn.functional.cross_entropy(model(x.half()).float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)  # unscale_ refuses float16 gradients
    return variant


def fp32_weights_with_autocast():
    device, variant = _device()
    model = _model(device)  # parameters stay float32
    before = model[0].weight.detach().clone()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device)
    x, y = _batch(device)
    with torch.autocast(device_type=device, dtype=torch.float16):
        out = model(x)
        assert out.dtype == torch.float16  # the compute is half precision
        loss = nn.functional.cross_entropy(out.float(), y)
    scaler.scale(loss).backward()
    assert model[0].weight.grad.dtype == torch.float32
    scaler.step(opt)
    scaler.update()
    assert math.isfinite(loss.item())
    assert model[0].weight.dtype == torch.float32 and not torch.equal(model[0].weight, before)
    return variant


def bfloat16_without_scaler():
    device, variant = _device()
    model = _model(device).bfloat16()  # float32's exponent range: no loss scaling needed
    before = model[0].weight.detach().clone()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _batch(device)
    loss = nn.functional.cross_entropy(model(x.bfloat16()).float(), y)
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item()) and not torch.equal(model[0].weight, before)
    return variant


def example_fix():
    device, variant = _device()
    model = _model(device)
    x, y = _batch(device)
    names = record.run("exampleFix", {"torch": torch, "nn": nn, "model": model, "x": x, "y": y,
                                      "device": device}, section="after")
    assert math.isfinite(names["loss"].item()) and model[0].weight.dtype == torch.float32
    assert names["model"] is model
    return variant


def guard():
    device, _ = _device()
    assert not record.check("validationCode", {"torch": torch, "model": _model(device).half()})
    assert record.check("validationCode", {"torch": torch, "model": _model(device)})


def _scaler_steps(model):
    """A valid situation is one where a GradScaler step goes through (the unscale check included)."""
    device, _ = _device()
    x, y = _batch(device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.1)
    scaler = torch.amp.GradScaler(device)
    loss = nn.functional.cross_entropy(model(x.to(params[0].dtype)).float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return {"torch": torch, "model": model}


def valid_float32():
    return _scaler_steps(_model(_device()[0]))


def valid_bfloat16():
    """bfloat16 gradients pass the check (the record says a scaler is not needed for them, not that it fails)."""
    return _scaler_steps(_model(_device()[0]).bfloat16())


def valid_frozen_half_backbone():
    """A float16 backbone that is frozen has no gradients to unscale; only the float32 head trains."""
    device, _ = _device()
    torch.manual_seed(0)
    backbone = nn.Linear(8, 16).to(device).half().requires_grad_(False)
    head = nn.Linear(16, 2).to(device)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.head = backbone, head

        def forward(self, x):
            return self.head(self.backbone(x.half()).float())

    return _scaler_steps(Model())
