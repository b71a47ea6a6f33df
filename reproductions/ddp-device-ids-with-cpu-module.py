"""A training script written for GPUs wraps its model as DDP(model, device_ids=[local_rank]) but the
model's parameters are on the CPU: the script runs on a CPU-only machine, or the model was never moved
to its GPU before wrapping. device_ids only means something for a module that lives on one accelerator,
so DistributedDataParallel.__init__ refuses the CPU module (ValueError in current releases, an
AssertionError with older wording in releases before about 1.9). Every stage runs on CPU with a
one-process gloo group whose rendezvous is a file in a temporary directory. The demonstrations wrap the
same CPU model without device_ids (solution 1) and with device_ids derived from the parameters' devices
(solution 2), and each runs a forward/backward/optimizer step that changes the parameters; the record's
exampleFix and validationCode run from its own text."""
NEEDS = {"packages": {"torch": ">=1.13"}, "cuda_devices": 0, "timeout_s": 60}
SOLUTIONS = {1: "no_device_ids", 2: "derived_device_ids"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["torch", "DDP", "model", "local_rank"], "validationCode": ["model", "device_ids", "output_device"]}
VALID = {"cpu-module-without-device-ids": "valid_cpu_without_ids", "module-on-one-gpu": "valid_one_gpu",
         "output-device-zero-alone": "valid_output_device_zero"}
WORDINGS = [
    {"text": "DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-"
             "device GPU modules or CPU modules, but got device_ids [0], output_device None, and module parameters "
             "{device(type='cpu')}.", "source": "torch==2.13.0", "match": "pattern"},
    {"text": "DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-"
             "device GPU modules or CPU modules, but got device_ids [0], output_device None, and module parameters "
             "{device(type='cpu')}.", "source": "torch==1.13.1", "match": "pattern"},
    {"text": "AssertionError: DistributedDataParallel device_ids and output_device arguments only work with "
             "single-device CUDA modules, but got device_ids [3], output_device None, and module parameters "
             "{device(type='cuda', index=3), device(type='cpu')}.",
     "source": "microsoft/transductive-vos.pytorch#15", "match": "pattern"},
    {"text": "AssertionError: DistributedDataParallel device_ids and output_device arguments only work with "
             "single-device GPU modules, but got device_ids [0], output_device None, and module parameters "
             "{device(type='cpu')}.", "source": "pytorch/pytorch#54825", "match": "pattern"},
    {"text": "accelerator.prepare() error: DistributedDataParallel device_ids and output_device arguments only work with "
             "single-device/multiple-device GPU modules or CPU modules", "source": "huggingface/accelerate#1802",
     "match": "pattern"},
    {"text": "ValueError: DistributedDataParallel device_ids and output_device arguments only work with "
             "single-device/multiple-device GPU modules or CPU modules, but got device_ids [3], output_device None, "
             "and modu", "source": "facebookresearch/detectron2#5146", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import contextlib
import os
import sys
import tempfile

import errkb_record as record

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


@contextlib.contextmanager
def _group():
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)
        try:
            yield
        finally:
            dist.destroy_process_group()


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 2))


def _device_ids_for(module):
    """device_ids for DDP: the module's one accelerator index, or None for a CPU (or multi-device) module."""
    devices = {p.device for p in module.parameters()}
    if len(devices) == 1 and next(iter(devices)).type != "cpu":
        return [next(iter(devices)).index]
    return None


def _step(ddp):
    """One training step; checks the loss is finite and the parameters changed."""
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    before = [p.detach().clone() for p in ddp.parameters()]
    loss = ddp(torch.randn(8, 6)).pow(2).mean()
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in ddp.parameters())
    assert any(not torch.equal(b, p) for b, p in zip(before, ddp.parameters())), "the step changed nothing"


def trigger():
    with _group():
        local_rank = 0
        DDP(_model(), device_ids=[local_rank])  # the model is still on the CPU


def no_device_ids():
    """Solution 1: the CPU module is wrapped without device_ids / output_device."""
    with _group():
        ddp = DDP(_model())
        assert ddp.device_ids is None and ddp.output_device is None
        _step(ddp)


def derived_device_ids():
    """Solution 2: device_ids computed from where the parameters are (None for this CPU module)."""
    with _group():
        model = _model()
        device_ids = _device_ids_for(model)
        assert device_ids is None
        ddp = DDP(model, device_ids=device_ids)
        assert ddp.device_ids is None
        _step(ddp)


def example_fix():
    """The exampleFix's "after" part on the trigger's CPU model (on this CPU-only run it takes the CPU branch)."""
    with _group():
        names = record.run("exampleFix", {"torch": torch, "DDP": DDP, "model": _model(), "local_rank": 0}, section="after")
        assert isinstance(names["model"], DDP)
        _step(names["model"])
    return "cuda branch" if torch.cuda.is_available() else "cpu: CPU branch (no GPU on this machine)"


def guard():
    """validationCode flags device_ids=[0] with the CPU model, and output_device alone (which DDP refuses for any
    module when device_ids is unset: it raises the same ValueError), and passes device_ids=None."""
    model = _model()
    assert not record.check("validationCode", {"model": model, "device_ids": [0], "output_device": None})
    with _group():
        try:
            DDP(_model(), output_device=1)
        except ValueError as exc:
            assert "device_ids and output_device arguments only work" in str(exc), exc
        else:
            raise AssertionError("DDP accepted output_device=1 alone")
    assert not record.check("validationCode", {"model": model, "device_ids": None, "output_device": 1})
    assert record.check("validationCode", {"model": model, "device_ids": None, "output_device": None})


def _wraps(model, device_ids, output_device=None):
    """The situation is valid: DDP accepts it (the check runs in its constructor); on the CPU a training step runs."""
    with _group():
        ddp = DDP(model, device_ids=device_ids, output_device=output_device)
        if not device_ids:
            _step(ddp)
    return {"model": model, "device_ids": device_ids, "output_device": output_device}


def valid_cpu_without_ids():
    """A CPU module with device_ids None or an empty list (solution 1)."""
    return [_wraps(_model(), None), _wraps(_model(), [])]


def valid_one_gpu():
    """A module on one GPU with device_ids=[its index] (solution 2); a CPU module without ids where there is no GPU."""
    if torch.cuda.is_available():
        return _wraps(_model().to("cuda:0"), [0])
    return _wraps(_model(), _device_ids_for(_model()))


def valid_output_device_zero():
    """output_device=0 (rank 0's local_rank) without device_ids on a CPU module: DDP tests its truthiness and accepts it."""
    return _wraps(_model(), None, 0)
