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
is what calls for installing the driver or exposing the GPU to the container (the install is not run; the
demonstration checks that the diagnosis names the cause: CUDA build, CUDA unusable, nvidia-smi failing, and
initialising CUDA fails with this very message), and the explicit CPU path (a training step that leaves CUDA
uninitialised). exampleFix runs on the user's own model (KEEP: the same object afterwards); validationCode
is checked against the trigger's device and the valid CPU choices.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60, "torch_build": "cuda", "nvidia_driver": False}
SOLUTIONS = {1: "device_from_availability", 2: "diagnose_missing_driver", 3: "explicit_cpu"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"cpu-string": "valid_cpu_string", "cpu-device-object": "valid_cpu_device", "meta-device": "valid_meta_device"}
CODE_NAMES = {"exampleFix": ["torch", "model", "x"], "validationCode": ["torch", "device"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
             "from http://www.nvidia.com/Download/index.aspx", "source": "torch==2.15.0", "match": "pattern"},
    {"text": "AssertionError: \nFound no NVIDIA driver on your system. Please check that you\nhave an NVIDIA GPU and "
             "installed a driver from\nhttp://www.nvidia.com/Download/index.aspx",
     "source": "votchallenge/toolkit#6", "match": "pattern"},
    {"text": "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an "
             "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx (Triggered internally "
             "at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)", "source": "pytorch/pytorch#47038", "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "pytorch/pytorch", "commit": "68e217b9e71fcecbd34d831dd3e3e5a4ea9028fd",
              "path": "c10/cuda/CUDAFunctions.cpp", "line": 40, "offset": 0}

import math
import shutil
import subprocess

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
    """The check that says 'install the driver / expose the GPU' rather than 'reinstall torch', and that it is right."""
    assert torch.version.cuda is not None and torch.backends.cuda.is_built(), "a CPU-only build: the other record"
    assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
    smi = shutil.which("nvidia-smi")
    smi_works = smi is not None and subprocess.run([smi], capture_output=True, timeout=30).returncode == 0
    assert not smi_works, "nvidia-smi works: the driver is reachable, look elsewhere"
    try:
        torch.cuda.init()  # the diagnosis predicts exactly this failure, from the driver check
    except RuntimeError as exc:
        assert "Found no NVIDIA driver" in str(exc), exc
    else:
        raise AssertionError("CUDA initialised: the diagnosis was wrong")
    return f"CUDA {torch.version.cuda} build, CUDA unusable, nvidia-smi fails: install the driver or expose the GPU"


def explicit_cpu():
    """Solution 3: the device is a setting; model and tensors go there and CUDA is never initialised."""
    torch.manual_seed(0)
    device = torch.device("cpu")  # e.g. from a --device cpu flag
    where = _step(nn.Linear(4, 3), *_data(), device)
    assert where.type == "cpu" and not torch.cuda.is_initialized()


def example_fix():
    """The record's exampleFix "after" part on the user's model (written for a GPU) and batch."""
    torch.manual_seed(0)
    x, _ = _data()
    model = nn.Linear(4, 3)
    names = record.run("exampleFix", {"torch": torch, "model": model, "x": x}, section="after")
    assert names["model"] is model  # the user's model moved, not replaced
    out = names["out"]
    assert out.shape == (8, 3) and out.device == names["device"] == next(model.parameters()).device


def guard():
    assert not record.check("validationCode", {"torch": torch, "device": "cuda"})
    chosen = "cuda" if torch.cuda.is_available() else "cpu"
    assert record.check("validationCode", {"torch": torch, "device": chosen})


def valid_cpu_string():
    return {"torch": torch, "device": "cpu"}


def valid_cpu_device():
    return {"torch": torch, "device": torch.device("cpu")}


def valid_meta_device():
    """A device that is not CUDA at all (used for shape checks and model surgery) is none of the guard's business."""
    return {"torch": torch, "device": "meta"}
