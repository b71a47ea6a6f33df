"""A script written for torchrun asks torch.distributed for its rank (the same happens for
get_world_size, all_reduce, barrier or wrapping the model in DistributedDataParallel) but is started
with plain `python`, or calls these before init_process_group: no default process group exists yet,
so torch.distributed.distributed_c10d._get_default_group raises. The fix creates the group first
(here a single-process gloo group with a file:// rendezvous on local disk), uses it, and destroys it
at the end; scripts that must also run without any launcher guard the calls with is_initialized().
Both stages run on CPU."""
NEEDS = {"packages": {"torch": ">=2.2"}, "cuda_devices": 0, "timeout_s": 60}

import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn


def trigger():
    rank = dist.get_rank()  # no init_process_group has run in this process
    print(f"rank {rank}")


def _rank_or_zero():
    """The guard for code that runs both under a launcher and as a plain script."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def fix():
    assert not dist.is_initialized()
    assert _rank_or_zero() == 0

    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group(
            "gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1
        )
        try:
            assert dist.get_rank() == 0 and dist.get_world_size() == 1
            assert _rank_or_zero() == 0

            total = torch.tensor([1.5, -2.0])
            dist.all_reduce(total)  # sum over one process: unchanged
            assert torch.equal(total, torch.tensor([1.5, -2.0])), total

            torch.manual_seed(0)
            model = nn.parallel.DistributedDataParallel(nn.Linear(3, 2))
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            assert torch.isfinite(loss)
            assert all(p.grad is not None for p in model.parameters())
        finally:
            dist.destroy_process_group()
    assert not dist.is_initialized()
