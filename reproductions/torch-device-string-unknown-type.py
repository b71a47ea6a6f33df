"""A model is moved with model.to('gpu'): torch parses the string as a device type name, 'gpu' is not one, and
parse_type (c10/core/Device.cpp, the line the build reports with TORCH_SHOW_CPP_STACKTRACES=1) raises "Expected one
of cpu, cuda, ... device type at start of device string: gpu". The demonstrations: the same configuration mapped to
torch's names ('gpu' -> 'cuda', 'gpu:1' -> 'cuda:1'), a bare command-line index turned into 'cuda:N', and the device
picked from what the machine has. torch.device('cuda:N') is only parsed, so those run on the CPU too; a tensor is
moved to it only where CUDA is present. The record's exampleFix and validationCode run from its own text.
"""
NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "torch_device_names", 2: "index_to_cuda_string", 3: "device_from_hardware"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["args"], "validationCode": ["device"]}
VALID = {
    "named-devices": "valid_named_devices",
    "device-objects": "valid_device_objects",
    "indexed-cuda": "valid_indexed_cuda",
    "default-none": "valid_default_none",
}
WORDINGS = [
    {"text": "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
             "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: gpu",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Expected one of cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu device type at start of device "
             "string: 0", "source": "AntheaLi/3DPartAssembly#8", "match": "pattern"},
    {"text": "Expected one of cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu device type at start of device "
             "string: train", "source": "PytorchConnectomics/pytorch_connectomics#40", "match": "pattern"},
    {"text": "Expected one of cpu, cuda, xpu, mkldnn, opengl, opencl, ideep, hip, ve, ort, mlc, xla, lazy, vulkan, "
             "meta, hpu device type at start of device string: mps", "source": "BayraktarLab/cell2location#269",
     "match": "pattern"},
    {"text": "Invalid device string: '0'", "source": "AshwinRJ/Federated-Learning-PyTorch#28",
     "match": "none", "why": "raised by another check of Device.cpp (the string does not start with a letter); "
                             "record torch-device-string-invalid covers it"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "035f2153cdd633a35d4d1253b013b0df69c01368", "offset": 0}

import argparse

import errkb_record as record
from hypothesis import strategies as st

import torch
import torch.nn as nn


def _model():
    torch.manual_seed(0)
    return nn.Linear(4, 2)


def _runs_on(device):
    """A forward pass on `device` where the machine has it; otherwise only the parse (no tensor is moved)."""
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return f"parsed {device} (no CUDA device here: nothing moved)"
    model = _model().to(device)
    out = model(torch.randn(3, 4, device=device))
    assert out.device.type == device.type and out.shape == (3, 2)
    return f"ran on {device}"


def trigger():
    _model().to("gpu")


def _torch_name(name):
    name = name.strip().lower()
    return "cuda" + name[3:] if name.startswith("gpu") else name


def torch_device_names():
    """Solution 1: the configuration's names mapped to torch's, then parsed; 'gpu:1' keeps its index."""
    assert torch.device(_torch_name("gpu")) == torch.device("cuda")
    assert torch.device(_torch_name("GPU:1")) == torch.device("cuda", 1)
    assert torch.device(_torch_name("cpu")) == torch.device("cpu")
    return _runs_on(_torch_name("cpu")) + "; " + _runs_on(_torch_name("gpu"))


def index_to_cuda_string():
    """Solution 2: '--device 0' from argparse arrives as the string '0'; 'cuda:0' is a device string torch takes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--device")
    args = parser.parse_args(["--device", "0"])
    assert args.device == "0"
    try:
        torch.device(args.device)
        raise AssertionError("the bare index string should be refused")
    except RuntimeError:
        pass
    device = torch.device(f"cuda:{args.device}")
    assert device.type == "cuda" and device.index == 0
    return _runs_on(device)


def device_from_hardware():
    """Solution 3: the device chosen from what is present; the model moves there and runs."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return _runs_on(device)


def example_fix():
    """The exampleFix's '# after' part on a parsed command line holding 'gpu', then on one holding '0'."""
    for given, expected in (("gpu", torch.device("cuda")), ("0", torch.device("cuda", 0)),
                            ("cpu", torch.device("cpu")), ("gpu:1", torch.device("cuda", 1))):
        args = argparse.Namespace(device=given)
        names = record.run("exampleFix", {"args": args}, section="after")
        assert names["device"] == expected, (given, names["device"])
        assert names["args"] is args


def guard():
    """validationCode flags 'gpu' and passes 'cuda'."""
    assert not record.check("validationCode", {"device": "gpu"})
    assert record.check("validationCode", {"device": "cuda"})


def valid_named_devices():
    names = ["cpu", "cuda", "cuda:0", "cuda:3", "meta", "mps", "xpu", "cpu:0"]
    for name in names:
        torch.device(name)  # each parses
    return [{"device": name} for name in names]


def valid_device_objects():
    devices = [torch.device("cpu"), torch.device("cuda", 1), torch.device("meta")]
    return [{"device": device} for device in devices]


def valid_default_none():
    """device=None, a configuration's 'use the default': Module.to and factory functions accept it."""
    model = _model()
    assert model.to(None) is model
    assert torch.zeros(2, device=None).device == torch.device("cpu")
    return {"device": None}


def valid_indexed_cuda():
    """Generated: 'cuda:N' for any index a machine may have."""
    def check(index):
        name = f"cuda:{index}"
        assert torch.device(name).index == index
        return {"device": name}
    return st.integers(0, 63).map(check)
