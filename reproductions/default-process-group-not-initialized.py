"""A script written for torchrun asks torch.distributed for its rank (the same happens for
get_world_size, all_reduce, barrier or wrapping the model in DistributedDataParallel) but is started
with plain `python`, or calls these before init_process_group: no default process group exists yet,
so torch.distributed.distributed_c10d._get_default_group raises ValueError (RuntimeError before 2.2).
The demonstrations: create the group first (a single-process gloo group with a file:// rendezvous in a
temporary directory) and use it; start a launcher-style script (one that initializes the group from the
environment) with torchrun instead of plain python; and guard the calls with is_initialized() in code
that must also run without a launcher. The record's exampleFix, typeGuard and tryCatchPattern run from
its own text. Everything runs on CPU, and every group created is destroyed."""
NEEDS = {"packages": {"torch": ">=2.2"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "init_first", 2: "torchrun", 3: "guarded_rank"}
CODE = {"exampleFix": "example_fix", "typeGuard": "type_guard", "tryCatchPattern": "try_catch"}
CODE_NAMES = {"exampleFix": [], "typeGuard": [], "tryCatchPattern": []}
GUARD_CALL = {"typeGuard": "is_distributed()"}
VALID = {"group-initialized": "valid_group_initialized"}
WORDINGS = [
    {"text": "Default process group has not been initialized, please make sure to call init_process_group.",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "RuntimeError: Default process group has not been initialized, please make sure to call "
             "init_process_group.", "source": "RetroCirce/HTS-Audio-Transformer#59", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import os
import re
import subprocess
import sys
import tempfile
import textwrap

import errkb_record as record

import torch
import torch.distributed as dist
import torch.nn as nn


def _loopback():
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # keep gloo on the loopback interface


def trigger():
    rank = dist.get_rank()  # no init_process_group has run in this process
    print(f"rank {rank}")


def init_first():
    """Solution 1: init_process_group before any distributed call, destroy_process_group at the end."""
    assert not dist.is_initialized()
    _loopback()
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)
        try:
            assert dist.get_rank() == 0 and dist.get_world_size() == 1
            total = torch.tensor([1.5, -2.0])
            dist.all_reduce(total)  # sum over one process: unchanged
            assert torch.equal(total, torch.tensor([1.5, -2.0])), total
            dist.barrier()

            torch.manual_seed(0)
            model = nn.parallel.DistributedDataParallel(nn.Linear(3, 2))
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            assert torch.isfinite(loss)
            assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        finally:
            dist.destroy_process_group()
    assert not dist.is_initialized()


LAUNCHER_SCRIPT = """
import os
import torch
import torch.distributed as dist

if "RANK" in os.environ:  # set by torchrun: initialize from the environment (env://)
    dist.init_process_group("gloo")
try:
    rank, world = dist.get_rank(), dist.get_world_size()
    total = torch.ones(1)
    dist.all_reduce(total)
    print(f"rank={rank} world={world} total={total.item():g}", flush=True)
finally:
    if dist.is_initialized():
        dist.destroy_process_group()
"""


def torchrun():
    """Solution 2: the same launcher-style script, started with torchrun instead of plain python."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(LAUNCHER_SCRIPT))
        env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
        plain = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=60)
        assert plain.returncode != 0 and "Default process group has not been initialized" in plain.stderr
        run = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", script],
            capture_output=True, text=True, env=env, timeout=90, cwd=tmp,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        # Both ranks print to one pipe, so their lines may interleave: find each report wherever it landed.
        reports = sorted(re.findall(r"rank=\d+ world=\d+ total=\d+", run.stdout))
        assert reports == ["rank=0 world=2 total=2", "rank=1 world=2 total=2"], run.stdout


def _rank_or_zero():
    """Solution 3's guard, for code that runs both under a launcher and as a plain script."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def guarded_rank():
    """Solution 3: the guarded call returns 0 without a group, and the real rank inside one."""
    assert not dist.is_initialized()
    assert _rank_or_zero() == 0
    _loopback()
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)
        try:
            assert _rank_or_zero() == dist.get_rank() == 0
        finally:
            dist.destroy_process_group()
    assert _rank_or_zero() == 0


def example_fix():
    """The exampleFix's "after" part creates, uses and destroys a one-process group."""
    _loopback()
    names = record.run("exampleFix", {}, section="after")
    assert names["rank"] == 0
    assert not dist.is_initialized()


def type_guard():
    """typeGuard's is_distributed() is false in the trigger's situation and true once a group exists."""
    assert not record.check("typeGuard", {}, expr="is_distributed()")
    _loopback()
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "rendezvous"), rank=0, world_size=1)
        try:
            assert record.check("typeGuard", {}, expr="is_distributed()")
        finally:
            dist.destroy_process_group()


def try_catch():
    """tryCatchPattern in the trigger's situation: the real ValueError is caught and the rank falls back to 0."""
    names = record.run("tryCatchPattern", {})
    assert names["rank"] == 0


def valid_group_initialized():
    """A one-process gloo group that works (an all_reduce runs); it stays up for the guard to see."""
    _loopback()
    dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "rendezvous"), rank=0,
                            world_size=1)
    t = torch.ones(2)
    dist.all_reduce(t)
    assert torch.equal(t, torch.ones(2))
    return {}
