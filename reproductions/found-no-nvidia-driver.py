"""A training script written for a GPU machine hard-codes the device (model.cuda(), x.cuda()) and runs with
a CUDA build of PyTorch on a machine where no NVIDIA driver is loaded: a CPU-only server or laptop, a CI
runner, or a Docker container started without GPU access. The first CUDA call enters torch.cuda._lazy_init,
whose torch._C._cuda_init() asks the CUDA runtime for the device count; cudaGetDeviceCount fails with
cudaErrorInsufficientDriver, no driver version can be read, and c10::cuda::device_count_impl
(c10/cuda/CUDAFunctions.cpp) raises RuntimeError "Found no NVIDIA driver on your system. ...". The case
needs a CUDA build (a CPU-only build raises "Torch not compiled with CUDA enabled" instead, its own record)
and a machine without a driver (with a GPU and driver the call succeeds), hence NEEDS torch_build "cuda"
and nvidia_driver False: the CPU-build 2.13.0 environments skip it. Demonstrations: choosing the device at
run time (a training step runs on whatever is available), the diagnosis that separates this from a wrong
build (torch.version.cuda is set, torch.cuda.is_available() is False, the kernel driver is absent), which
is what calls for installing the driver or exposing the GPU to the container (the install is not run), and
the explicit CPU path with a checkpoint loaded through map_location. exampleFix and validationCode run
from the record's text.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60, "torch_build": "cuda", "nvidia_driver": False}
SOLUTIONS = {1: "device_from_availability", 2: "diagnose_missing_driver", 3: "explicit_cpu_with_map_location"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}

import io
import math
import os

import errkb_record as record

import torch
import torch.nn as nn


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g)


def _step(model, x, y, device):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert math.isfinite(loss.item())
    assert any(not torch.equal(b, p.detach()) for b, p in zip(before, model.parameters()))
    return next(model.parameters()).device


def trigger():
    torch.manual_seed(0)
    model = nn.Linear(4, 3).cuda()  # written for a GPU machine
    x, _ = _data()
    model(x.cuda())


def device_from_availability():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    where = _step(nn.Linear(4, 3), *_data(), device)
    assert where.type == device.type
    return f"ran on {device.type}"


def diagnose_missing_driver():
    """The check that says 'install the driver / expose the GPU' rather than 'reinstall torch'."""
    cuda_build = torch.version.cuda is not None and torch.backends.cuda.is_built()
    assert cuda_build, "a CPU-only build: that is the torch-not-compiled-with-cuda case"
    driver_loaded = os.path.exists("/proc/driver/nvidia/version")  # Linux: the NVIDIA kernel module
    if not torch.cuda.is_available():
        assert torch.cuda.device_count() == 0 and not driver_loaded
        return f"CUDA {torch.version.cuda} build, no NVIDIA driver loaded: install the driver or run the container with GPU access"
    return "driver present and CUDA usable: nothing to fix"


def explicit_cpu_with_map_location():
    torch.manual_seed(0)
    trained = nn.Linear(4, 3)
    buffer = io.BytesIO()
    torch.save(trained.state_dict(), buffer)
    buffer.seek(0)
    device = torch.device("cpu")  # e.g. from a --device cpu flag
    model = nn.Linear(4, 3)
    model.load_state_dict(torch.load(buffer, map_location=device))
    for a, b in zip(trained.parameters(), model.parameters()):
        assert torch.equal(a, b)
    where = _step(model, *_data(), device)
    assert where.type == "cpu"


def example_fix():
    torch.manual_seed(0)
    x, _ = _data()
    names = record.run("exampleFix", {"torch": torch, "nn": nn, "x": x}, section="after")
    out = names["out"]
    assert out.shape == (8, 3) and out.device == names["device"]


def guard():
    assert not record.check("validationCode", {"torch": torch, "device": "cuda"})
    chosen = "cuda" if torch.cuda.is_available() else "cpu"
    assert record.check("validationCode", {"torch": torch, "device": chosen})
