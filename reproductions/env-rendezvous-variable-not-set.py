"""A training script calls torch.distributed.init_process_group("gloo") with the default env:// rendezvous, but is
started with plain `python`, so nothing has set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun sets them
for each process it starts). The env:// handler in torch/distributed/rendezvous.py reads them in that order and
raises ValueError "Error initializing torch.distributed using env:// rendezvous: environment variable RANK
expected, but not set" for the first one missing; passing rank= and world_size= to init_process_group only moves
the error on to MASTER_ADDR. The demonstrations: start the script with torchrun (two processes); set the four
variables for a single process without a launcher (and see that rank/world_size arguments alone are not enough);
and initialize only when a launcher set the variables, running single-process otherwise. The record's exampleFix
and validationCode run from its own text; the guard is checked against torchrun's environment, explicit
rank/world_size arguments and init_process_group's own defaults (-1). CPU only, gloo on the loopback interface."""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "torchrun", 2: "set_variables", 3: "init_only_under_launcher"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
VALID = {
    "torchrun-environment": "valid_torchrun_environment",
    "explicit-rank-and-world-size": "valid_explicit_rank_world_size",
    "default-arguments-minus-one": "valid_default_minus_one",
}
CODE_NAMES = {"exampleFix": [], "validationCode": ["env", "rank", "world_size"]}
WORDINGS = [
    {"text": "Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
     "source": "torch==2.13.0", "match": "pattern"},
    {"text": "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
             "expected, but not set", "source": "rwth-i6/i6_core#444", "match": "pattern"},
    {"text": "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable "
             "WORLD_SIZE expected, but not set", "source": "NVIDIA/apex#99", "match": "pattern"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile

import errkb_record as record

import torch
import torch.distributed as dist

LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _plain_python_environment():
    """What `python train.py` sees: none of the launcher's variables."""
    for name in LAUNCHER_VARIABLES:
        os.environ.pop(name, None)
    if sys.platform.startswith("linux"):
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # keep gloo on the loopback interface


def _single_process_environment():
    _plain_python_environment()
    os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))


def _launcher_env():
    """The part of the environment the guard reads: the launcher's variables that are set."""
    return {name: os.environ[name] for name in LAUNCHER_VARIABLES if name in os.environ}


@contextlib.contextmanager
def _group(**kwargs):
    dist.init_process_group("gloo", **kwargs)
    try:
        total = torch.tensor([2.0, 3.0])
        dist.all_reduce(total)
        assert torch.equal(total, torch.tensor([2.0, 3.0]) * dist.get_world_size()), total
        yield
    finally:
        dist.destroy_process_group()


def trigger():
    _plain_python_environment()
    dist.init_process_group("gloo")  # ValueError: ... environment variable RANK expected, but not set


SCRIPT = """
import os
import torch
import torch.distributed as dist

distributed = "RANK" in os.environ  # set by torchrun for each process it starts
if distributed:
    dist.init_process_group("gloo")
rank = dist.get_rank() if distributed else 0
world = dist.get_world_size() if distributed else 1
total = torch.ones(1)
if distributed:
    dist.all_reduce(total)
    dist.destroy_process_group()
print(f"rank={rank} world={world} total={total.item():g}", flush=True)
"""


def _run_script(*launcher):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        _plain_python_environment()
        return subprocess.run([sys.executable, *launcher, script], capture_output=True, text=True, timeout=100,
                              env=dict(os.environ))


def torchrun():
    """Solution 1: torchrun sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT for each process it starts."""
    done = _run_script("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    # The two workers share torchrun's stdout, so their lines can interleave: find each report, not each line.
    reports = re.findall(r"rank=\d+ world=\d+ total=\d+", done.stdout)
    assert sorted(reports) == ["rank=0 world=2 total=2", "rank=1 world=2 total=2"], done.stdout


def set_variables():
    """Solution 2: one process without a launcher sets all four; rank/world_size arguments alone are not enough."""
    _plain_python_environment()
    try:
        dist.init_process_group("gloo", rank=0, world_size=1)
    except ValueError as exc:
        assert "MASTER_ADDR expected, but not set" in str(exc), exc
    else:
        raise AssertionError("rank and world_size alone were expected to leave MASTER_ADDR missing")
    assert not dist.is_initialized()
    _single_process_environment()
    with _group():
        assert dist.get_rank() == 0 and dist.get_world_size() == 1


def init_only_under_launcher():
    """Solution 3: initialize only when a launcher set the variables; plain python runs single-process."""
    plain = _run_script()
    assert plain.returncode == 0 and "rank=0 world=1 total=1" in plain.stdout, plain.stderr[-2000:]
    launched = _run_script("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")
    assert launched.returncode == 0 and "rank=1 world=2 total=2" in launched.stdout, launched.stderr[-2000:]


def example_fix():
    """The record's exampleFix, its "after" part, in plain python's environment: the group works."""
    _plain_python_environment()
    record.run("exampleFix", {}, section="after")
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        total = torch.ones(2)
        dist.all_reduce(total)
        assert torch.equal(total, torch.ones(2))
    finally:
        dist.destroy_process_group()


def guard():
    """validationCode flags plain python's environment and passes the single-process one, before init runs."""
    _plain_python_environment()
    assert not record.check("validationCode", {"env": _launcher_env(), "rank": None, "world_size": None})
    assert not record.check("validationCode", {"env": _launcher_env(), "rank": 0, "world_size": 1})  # MASTER_ADDR
    _single_process_environment()
    assert record.check("validationCode", {"env": _launcher_env(), "rank": None, "world_size": None})
    with _group():  # and init_process_group agrees
        pass


def valid_torchrun_environment():
    """The four variables set, as torchrun sets them (here for a one-process job); no arguments."""
    _single_process_environment()
    with _group():
        pass
    return {"env": _launcher_env(), "rank": None, "world_size": None}


def valid_explicit_rank_world_size():
    """rank= and world_size= passed to init_process_group: only MASTER_ADDR and MASTER_PORT are needed."""
    _plain_python_environment()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    with _group(rank=0, world_size=1):
        pass
    return {"env": _launcher_env(), "rank": 0, "world_size": 1}


def valid_default_minus_one():
    """init_process_group's own defaults (rank=-1, world_size=-1) passed explicitly, with the launcher's variables."""
    _single_process_environment()
    with _group(rank=-1, world_size=-1):
        pass
    return {"env": _launcher_env(), "rank": -1, "world_size": -1}
