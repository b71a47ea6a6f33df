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
itself is not run: the demonstration checks that the diagnosis is right (no CUDA bindings in torch._C, and
initialising CUDA fails with this very assertion, while torch.cuda.is_available() alone would not have told the
two cases apart). exampleFix runs on the user's own model (KEEP: the same object afterwards); validationCode
is checked against the trigger's device and the valid CPU choices.
"""

NEEDS = {"packages": {"torch": ">=1.13"}, "torch_build": "cpu", "timeout_s": 60}
SOLUTIONS = {1: "device_from_availability", 2: "diagnose_cpu_build"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"cpu-string": "valid_cpu_string", "cpu-device-object": "valid_cpu_device", "meta-device": "valid_meta_device",
         "default-device-none": "valid_default_device"}
CODE_NAMES = {"exampleFix": ["torch", "model", "x"], "validationCode": ["torch", "device"]}
KEEP = ["model"]
WORDINGS = [
    {"text": "Torch not compiled with CUDA enabled", "source": "torch==2.13.0", "match": "pattern"},
    {"text": 'raise AssertionError("Torch not compiled with CUDA enabled")\nAssertionError: Torch not compiled with CUDA '
             'enabled', "source": "facebookresearch/detectron2#460", "match": "pattern"},
    {"text": "torch._C._cuda_setDevice(device)\nAttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",
     "source": "pytorch/pytorch#13718", "match": "pattern"},
    {"text": "module 'torch._C' has no attribute '_cuda_setDevice'", "source": "csxmli2016/DFDNet#62", "match": "pattern"},
    {"text": "AttributeError: module 'torch._C' has no attribute '_cuda_getDevice'", "source": "facebookresearch/ParlAI#831",
     "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

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
    """The check that says 'install a CUDA build' rather than 'this machine has no GPU', and that it is right."""
    assert not torch.cuda.is_available()  # true here, and also on a CUDA build without a GPU: it decides nothing
    cpu_only = torch.version.cuda is None and not torch.backends.cuda.is_built()
    assert cpu_only, f"CUDA build {torch.version.cuda}: not this error's cause (see found-no-nvidia-driver)"
    assert not hasattr(torch._C, "_cuda_getDeviceCount")  # the bindings _lazy_init looks for are absent
    try:
        torch.cuda.init()  # the diagnosis predicts exactly this failure
    except AssertionError as exc:
        assert str(exc) == "Torch not compiled with CUDA enabled", exc
    else:
        raise AssertionError("CUDA initialised: the diagnosis was wrong")
    return "cpu-only build: torch.version.cuda is None, backends.cuda.is_built() is False; install a CUDA build"


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


def valid_default_device():
    """device=None, the default of torch's factories and of Module.to/Tensor.to: the default device, never CUDA here."""
    model = torch.nn.Linear(2, 2)
    assert model.to(None) is model and torch.zeros(1, device=None).device.type == "cpu"
    return {"torch": torch, "device": None}
