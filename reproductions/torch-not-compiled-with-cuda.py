"""A training script written on a GPU machine hard-codes the device: model.cuda(), tensors created with
device="cuda". Run with a CPU-only build of PyTorch (the default pip wheel on Windows and macOS, the
"+cpu" wheels, a conda cpuonly install; this machine's 2.13.0+cpu), the first CUDA call enters
torch.cuda._lazy_init, which finds no CUDA bindings compiled into torch._C and raises AssertionError
"Torch not compiled with CUDA enabled". The trigger needs a CPU-only build (NEEDS torch_build "cpu"), so
CUDA builds skip it with that reason: without a driver the same call raises "Found no NVIDIA driver"
instead (the record found-no-nvidia-driver), and with a GPU it succeeds.
Demonstrations: choosing the device at run time (a training step runs on whatever is available), and
the diagnosis that tells a CPU-only build from a missing GPU (torch.version.cuda is None,
torch.backends.cuda.is_built() is False), which is what calls for installing a CUDA build; the install
itself is not run. The record's exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "torch_build": "cpu", "timeout_s": 60}
SOLUTIONS = {1: "device_from_availability", 2: "diagnose_cpu_build"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}

import math

import errkb_record as record

import torch
import torch.nn as nn


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g)


def _step(model, x, y, device):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item())
    return next(model.parameters()).device


def trigger():
    torch.manual_seed(0)
    model = nn.Linear(4, 3).cuda()  # written for a GPU machine
    x, y = _data()
    model(x.cuda())


def device_from_availability():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    where = _step(nn.Linear(4, 3), *_data(), device)
    assert where.type == device.type
    return f"ran on {device.type}"


def diagnose_cpu_build():
    """The check that says 'reinstall a CUDA build' rather than 'this machine has no GPU'."""
    cpu_only = torch.version.cuda is None and not torch.backends.cuda.is_built()
    if cpu_only:
        assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
        return "cpu-only build detected: torch.version.cuda is None, backends.cuda.is_built() is False"
    return f"CUDA build {torch.version.cuda}: nothing to reinstall"


def example_fix():
    torch.manual_seed(0)
    x, y = _data()
    names = record.run("exampleFix", {"torch": torch, "nn": nn, "x": x}, section="after")
    out = names["out"]
    assert out.shape == (8, 3) and out.device == names["device"]


def guard():
    assert not record.check("validationCode", {"torch": torch, "device": "cuda"})
    chosen = "cuda" if torch.cuda.is_available() else "cpu"
    assert record.check("validationCode", {"torch": torch, "device": chosen})
