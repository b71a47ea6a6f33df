"""A training script written for GPUs wraps its model as DDP(model, device_ids=[local_rank]) but the
model's parameters are on the CPU: the script runs on a CPU-only machine, or the model was never moved
to its GPU before wrapping. device_ids only means something for a module that lives on one accelerator,
so DistributedDataParallel.__init__ refuses the CPU module (ValueError in current releases, an
AssertionError with older wording in releases before about 1.9). Both stages run on CPU with a
one-process gloo group whose rendezvous is a file on local disk."""
NEEDS = {"packages": {"torch": ">=2.1"}, "cuda_devices": 0, "timeout_s": 60}

import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def _init_group(tmp):
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface
    dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 2))


def _device_ids_for(module):
    """device_ids for DDP: the module's one accelerator index, or None for a CPU (or multi-device) module."""
    devices = {p.device for p in module.parameters()}
    if len(devices) == 1 and next(iter(devices)).type != "cpu":
        return [next(iter(devices)).index]
    return None


def trigger():
    with tempfile.TemporaryDirectory() as tmp:
        _init_group(tmp)
        try:
            local_rank = 0
            DDP(_model(), device_ids=[local_rank])  # the model is still on the CPU
        finally:
            dist.destroy_process_group()


def fix():
    with tempfile.TemporaryDirectory() as tmp:
        _init_group(tmp)
        try:
            model = _model()
            device_ids = _device_ids_for(model)
            assert device_ids is None
            ddp = DDP(model, device_ids=device_ids)
            assert ddp.device_ids is None and ddp.output_device is None

            optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
            x = torch.randn(8, 6)
            before = [p.detach().clone() for p in ddp.parameters()]
            loss = ddp(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            assert torch.isfinite(loss)
            assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in ddp.parameters())
            assert any(not torch.equal(b, p) for b, p in zip(before, ddp.parameters())), "the step changed nothing"
        finally:
            dist.destroy_process_group()
