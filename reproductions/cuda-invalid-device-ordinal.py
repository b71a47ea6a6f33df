"""A script written on a two-GPU machine selects its GPU by index (--gpu 1, torch.cuda.set_device(1),
local_rank from a launcher, 'cuda:1' hard-coded) and runs on a machine with fewer GPUs, or with
CUDA_VISIBLE_DEVICES limiting what the process sees. torch.cuda.set_device passes the index to
c10::cuda::set_device, whose C10_CUDA_CHECK gets cudaErrorInvalidDevice from cudaSetDevice and raises "CUDA
error: invalid device ordinal" (torch.AcceleratorError in recent releases, RuntimeError before pytorch/pytorch#152023),
reported at set_device in c10/cuda/CUDAFunctions.cpp (before pytorch/pytorch#162808 at
c10_cuda_check_implementation in CUDAException.cpp). The trigger asks for the index one past the last visible GPU, so it fails on any machine
with at least one GPU. GPU-only: NEEDS one CUDA device, every stage is skipped without one. Not run on a GPU
when written (no GPU was available): the stages were run once on the CPU in a scratch copy, with
torch.cuda's device functions faked and tensors on the CPU, to catch Python errors only. Demonstrations:
choosing an index that exists (a tensor is created and used on it), and selecting the physical GPU with
CUDA_VISIBLE_DEVICES when a process starts, so that it addresses that GPU as cuda:0 (shown in a child
process started with the variable set). The record's exampleFix and validationCode run from its text.
"""

NEEDS = {"packages": {"torch": ">=2.9"}, "cuda_devices": 1, "timeout_s": 120}
SOLUTIONS = {1: "index_that_exists", 2: "select_with_visible_devices"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {"first-gpu": "valid_first_gpu", "last-gpu": "valid_last_gpu"}
CODE_NAMES = {"exampleFix": ["torch", "gpu"], "validationCode": ["torch", "gpu"]}
WORDINGS = [
    {"text": "RuntimeError: CUDA error: invalid device ordinal", "source": "microsoft/SimXNS#2", "match": "pattern"},
    {"text": "RuntimeError: cuda runtime error (10) : invalid device ordinal at torch/csrc/cuda/Module.cpp:88",
     "source": "NVIDIA/vid2vid#17", "match": "pattern"},
    {"text": "temp_x = x.cuda(self.device_id[i]) RuntimeError: CUDA error (10): invalid device ordinal",
     "source": "ZhaoJ9014/face.evoLVe#58", "match": "pattern"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "pytorch/pytorch", "commit": "68e217b9e71fcecbd34d831dd3e3e5a4ea9028fd",
              "path": "c10/cuda/CUDAFunctions.cpp", "line": 134, "offset": 0}

import os
import subprocess
import sys

import errkb_record as record

import torch


def _requested_gpu():
    return torch.cuda.device_count()  # e.g. --gpu 1 on a one-GPU machine: one past the last index


def _use(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    assert x.device.type == torch.device(device).type and (x @ x.T).sum().item() == 83.0


def trigger():
    torch.cuda.set_device(_requested_gpu())
    _use("cuda")


def index_that_exists():
    requested = _requested_gpu()
    gpu = requested if requested < torch.cuda.device_count() else 0
    torch.cuda.set_device(gpu)
    _use(f"cuda:{gpu}")
    assert torch.cuda.current_device() == gpu


CHILD = """
import torch
assert torch.cuda.device_count() == 1
torch.cuda.set_device(0)
x = torch.arange(6.0, device="cuda:0").reshape(2, 3)
print((x @ x.T).sum().item())
"""


def select_with_visible_devices():
    """Pick the physical GPU when the process starts; inside it, that GPU is cuda:0."""
    # The last GPU this process sees, named as the parent names it (it may itself run with CUDA_VISIBLE_DEVICES).
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    physical = visible.split(",")[torch.cuda.device_count() - 1].strip() if visible else str(torch.cuda.device_count() - 1)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=physical)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "83.0"
    return f"physical GPU {physical} used as cuda:0 in a process started with CUDA_VISIBLE_DEVICES={physical}"


def example_fix():
    names = record.run("exampleFix", {"torch": torch, "gpu": _requested_gpu()}, section="after")
    _use(names["device"])


def guard():
    assert not record.check("validationCode", {"torch": torch, "gpu": _requested_gpu()})
    assert record.check("validationCode", {"torch": torch, "gpu": 0})


def valid_first_gpu():
    _use("cuda:0")
    return {"torch": torch, "gpu": 0}


def valid_last_gpu():
    last = torch.cuda.device_count() - 1
    _use(f"cuda:{last}")
    return {"torch": torch, "gpu": last}
