"""A script written for torchrun reads LOCAL_RANK with os.environ.get and is started with plain python: the rank is
None and batch.to(f"cuda:{local_rank}") asks for the device 'cuda:None'. The Device constructor (c10/core/Device.cpp,
the line the build reports with TORCH_SHOW_CPP_STACKTRACES=1) finds that the string is not a type name optionally
followed by ':' and an index, and raises "Invalid device string: 'cuda:None'". The demonstrations: the device built
from a checked rank (CPU, or the GPU when present, when the rank is None; torch.device('cuda', int(rank)) when it is
set), and a setting that already names a device passed through while only a bare index gets the 'cuda:' prefix.
CUDA devices are only parsed where the machine has none. The record's exampleFix and validationCode run from its text.
"""
NEEDS = {"packages": {"torch": ">=1.13", "hypothesis": ""}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "checked_rank", 2: "prefix_only_bare_index"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["batch", "local_rank"], "validationCode": ["device"]}
VALID = {
    "device-strings": "valid_device_strings",
    "device-objects": "valid_device_objects",
    "generated-indices": "valid_generated_indices",
}
WORDINGS = [
    {"text": "Invalid device string: 'cuda:None'", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "Invalid device string: '0'", "source": "AshwinRJ/Federated-Learning-PyTorch#28", "match": "pattern"},
    {"text": "Invalid device string: 'cuda:cuda:0'", "source": "samsledje/ConPLex#34", "match": "pattern"},
    {"text": "Device string must not be empty", "source": "TorchStudio/torchstudio#8", "match": "pattern"},
    {"text": "Expected one of cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu device type at start of device "
             "string: 0", "source": "AntheaLi/3DPartAssembly#8", "match": "none",
     "why": "an older release's other check (record torch-device-string-unknown-type matches it)"},
]
PROVENANCE = {"checked": "native-build", "dist": "torch", "version": "2.13.0", "excerpt": "upstream-copy",
              "commit": "035f2153cdd633a35d4d1253b013b0df69c01368", "offset": 1}

import os

import errkb_record as record
from hypothesis import strategies as st

import torch


def _here(device):
    """Move a batch to `device` where the machine has it; a CUDA device on a CPU machine is only parsed."""
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return f"parsed {device} (no CUDA device here: nothing moved)"
    batch = torch.randn(2, 3).to(device)
    assert batch.device.type == device.type
    return f"moved to {device}"


def trigger():
    os.environ.pop("LOCAL_RANK", None)
    local_rank = os.environ.get("LOCAL_RANK")  # started with plain python, not torchrun
    batch = torch.randn(2, 3)
    batch.to(f"cuda:{local_rank}")


def _device_for(local_rank):
    if local_rank is None or int(local_rank) < 0:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device("cuda", int(local_rank))


def checked_rank():
    """Solution 1: no rank -> a default device; a rank (as torchrun sets it, a string) -> torch.device('cuda', int)."""
    os.environ.pop("LOCAL_RANK", None)
    outside = _device_for(os.environ.get("LOCAL_RANK"))
    assert outside.type in ("cpu", "cuda")
    os.environ["LOCAL_RANK"] = "1"
    inside = _device_for(os.environ.get("LOCAL_RANK"))
    assert inside == torch.device("cuda", 1)
    try:
        torch.device(f"cuda:{-1}")  # the -1 default of --local_rank, formatted the same way
        raise AssertionError("'cuda:-1' should be refused")
    except RuntimeError as exc:
        assert "Invalid device string" in str(exc), exc
    assert _device_for(-1) == outside  # a negative rank is treated like None
    assert torch.device("cuda", None) == torch.device("cuda")  # why the None check has to be the script's own
    return _here(outside) + "; " + _here(inside)


def _from_setting(setting):
    setting = str(setting)
    return torch.device(f"cuda:{setting}" if setting.isdigit() else setting)


def prefix_only_bare_index():
    """Solution 2: 'cuda:0' and 'cpu' pass through; only a bare '0' gets the prefix ('cuda:cuda:0' is never built)."""
    try:
        torch.device("cuda:cuda:0")
        raise AssertionError("the double prefix should be refused")
    except RuntimeError:
        pass
    assert _from_setting("cuda:0") == torch.device("cuda", 0)
    assert _from_setting("0") == torch.device("cuda", 0)
    assert _from_setting("cpu") == torch.device("cpu")
    return _here(_from_setting("cpu")) + "; " + _here(_from_setting("cuda:0"))


def example_fix():
    """The exampleFix's '# after' part with the rank unset (None); with a GPU present also with the rank torchrun
    sets (a string), which moves the batch to cuda:0. On a CPU machine that second case cannot move anything."""
    ranks = [None, -1] + (["0"] if torch.cuda.is_available() else [])
    for local_rank in ranks:
        batch = torch.randn(2, 3)
        names = record.run("exampleFix", {"batch": batch, "local_rank": local_rank}, section="after")
        assert names["batch"].shape == (2, 3)
        assert names["batch"].device.type == names["device"].type
        assert torch.equal(names["batch"].cpu(), batch.cpu())
    return "cpu: rank None and -1 only" if len(ranks) == 2 else "cuda: rank None, -1 and rank '0'"


def guard():
    """validationCode flags 'cuda:None', 'cuda:-1' and an empty setting, and passes 'cuda:0'."""
    assert not record.check("validationCode", {"device": "cuda:None"})
    assert not record.check("validationCode", {"device": "cuda:-1"})
    try:
        torch.device("")
        raise AssertionError("an empty device string should be refused")
    except RuntimeError as exc:
        assert "Device string must not be empty" in str(exc), exc
    assert not record.check("validationCode", {"device": ""})
    assert record.check("validationCode", {"device": "cuda:0"})


def valid_device_strings():
    names = ["cpu", "cuda", "cuda:0", "cuda:7", "meta", "mps", "xpu:1", "cpu:0"]
    for name in names:
        torch.device(name)
    return [{"device": name} for name in names]


def valid_device_objects():
    """Device objects, None (the default device: Tensor.to(None) keeps the tensor where it is) and, where a GPU is
    present, a bare int index (Tensor.to(0)); on a CPU machine torch itself refuses the int, so it is not offered."""
    devices = [torch.device("cpu"), torch.device("cuda", 2), torch.device("meta")]
    assert torch.randn(2).to(None).device.type == "cpu"
    devices.append(None)
    if torch.cuda.is_available():
        assert torch.randn(2).to(0).device == torch.device("cuda", 0)
        devices.append(0)
    return [{"device": device} for device in devices]


def valid_generated_indices():
    def check(index):
        name = f"cuda:{index}"
        assert torch.device(name).index == index
        return {"device": name}
    return st.integers(0, 99).map(check)
