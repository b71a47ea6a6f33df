"""A DataLoader with two worker processes loses one of them to a signal while the main process waits for a batch.
What stands in for what: the out-of-memory killer is played by the worker's dataset sending SIGKILL to its own
process at one index (the kernel's OOM killer sends the same uncatchable SIGKILL, and the DataLoader cannot tell
who sent it); a crash in a native library is a real segmentation fault (ctypes reading address 0) inside
__getitem__. The main process's SIGCHLD handler raises "DataLoader worker (pid N) is killed by signal: Killed."
and _MultiProcessingDataLoaderIter._try_get_data (torch/utils/data/dataloader.py) re-raises it as
"DataLoader worker (pid(s) N) exited unexpectedly", chained, so the signal is named only in the cause above it.
The demonstrations: read the chained cause (Killed for SIGKILL, Segmentation fault for the native crash); find a
native crash's line with faulthandler enabled in the workers and fix that call, after which the loader completes;
and, for the spawn start method (the default on Windows and macOS), a script whose loop is not under
`if __name__ == "__main__":` (its workers die with exit code 1 while importing it) against the guarded script.
The record's tryCatchPattern runs from its own text on the trigger's loader. CPU only, Linux (fork and signals)."""
NEEDS = {"packages": {"torch": ">=2.0"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "read_cause", 2: "locate_native_crash", 3: "main_guard"}
CODE = {"tryCatchPattern": "try_catch"}
CODE_NAMES = {"tryCatchPattern": ["loader", "train_step"]}
WORDINGS = [
    {"text": "RuntimeError: DataLoader worker (pid(s) 79123) exited unexpectedly",
     "source": "2U1/Phi3-Vision-Finetune#10", "match": "pattern"},
    {"text": "RuntimeError: DataLoader worker (pid(s) 12048, 7612) exited unexpectedly",
     "source": "buppt/ChineseNRE#41", "match": "pattern"},
    {"text": "RuntimeError: DataLoader worker (pid 1817) is killed by signal: Killed.",
     "source": "pytorch/pytorch#8976", "match": "none",
     "why": "the chained cause, raised by the SIGCHLD handler in C++; its own message, which the record explains but does not match"},
    {"text": "RuntimeError: DataLoader worker (pid 624) is killed by signal: Segmentation fault.",
     "source": "facebookresearch/pycls#146", "match": "none",
     "why": "the chained cause of a native crash, raised by the SIGCHLD handler; explained, not matched"},
    {"text": "ERROR: Unexpected segmentation fault encountered in worker.", "source": "facebookresearch/pycls#146",
     "match": "none", "why": "printed by the crashing worker on stderr, not an exception message"},
]
PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}

import ctypes
import os
import signal
import subprocess
import sys
import tempfile

import errkb_record as record

import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    """Eight samples; at index 0 the worker dies by `death` ("sigkill", "segfault") or survives (None).

    Index 0 is worker 0's first sample, so that worker dies before it has sent anything. A batch it had already
    sent travels as file descriptors that the dead worker can no longer hand over: the main process would then
    raise EOFError (torch/multiprocessing/reductions.py) instead of this error, depending on timing (it did in a
    loaded test run when the worker died at index 5)."""

    def __init__(self, death=None):
        self.death = death

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 0 and self.death == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer sends
        if i == 0 and self.death == "segfault":
            ctypes.string_at(0)  # a native read of address 0: SIGSEGV, as in a crashing decoder
        return torch.full((2,), float(i))


def _loader(death):
    return DataLoader(Shards(death), batch_size=2, num_workers=2)


def trigger():
    for _ in _loader("sigkill"):  # RuntimeError: DataLoader worker (pid(s) N) exited unexpectedly
        pass


def _death_of(death):
    try:
        for _ in _loader(death):
            pass
    except RuntimeError as exc:
        assert "exited unexpectedly" in str(exc), exc
        return str(exc.__cause__)
    raise AssertionError("the loader was expected to lose a worker")


def read_cause():
    """Solution 1: the exception chained above ('direct cause') names the signal that killed the worker."""
    killed = _death_of("sigkill")
    assert "is killed by signal: Killed" in killed, killed  # SIGKILL: the OOM killer's signal
    crashed = _death_of("segfault")
    assert "is killed by signal: Segmentation fault" in crashed, crashed  # a native crash
    return f"sigkill -> {killed.strip()} / segfault -> {crashed.strip()}"


CRASHING_SCRIPT = """
import ctypes, faulthandler, sys, torch
from torch.utils.data import DataLoader, Dataset

class Shards(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 0 and sys.argv[1] == "crash":
            ctypes.string_at(0)  # the native call that crashes
        return torch.full((2,), float(i))

def show_crashes(worker_id):
    # The worker installs its own SIGSEGV handler; faulthandler enabled at start-up (-X faulthandler) is replaced.
    faulthandler.disable()
    faulthandler.enable()

if __name__ == "__main__":
    loader = DataLoader(Shards(), batch_size=2, num_workers=2, worker_init_fn=show_crashes)
    print("batches", sum(1 for _ in loader), flush=True)
"""


def locate_native_crash():
    """Solution 2: faulthandler in each worker prints the crashing worker's Python stack; then fix that call."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(CRASHING_SCRIPT)
        # both with faulthandler enabled at start-up, as under -X faulthandler, and without it
        with_startup = dict(os.environ, PYTHONFAULTHANDLER="1")
        without = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
        crashes = [subprocess.run([sys.executable, script, "crash"], capture_output=True, text=True, timeout=100,
                                  env=env, errors="replace") for env in (with_startup, without)]
        fixed = subprocess.run([sys.executable, script, "fixed"], capture_output=True, text=True, timeout=100)
    for crashed in crashes:
        _assert_located(crashed)
    assert fixed.returncode == 0 and "batches 4" in fixed.stdout, fixed.stderr[-2000:]


def _assert_located(crashed):
    assert crashed.returncode != 0 and "exited unexpectedly" in crashed.stderr, crashed.stderr[-2000:]
    assert "Fatal Python error: Segmentation fault" in crashed.stderr, crashed.stderr[-2000:]
    crash_line = CRASHING_SCRIPT.splitlines().index("            ctypes.string_at(0)  # the native call that crashes") + 1
    assert f"line {crash_line} in __getitem__" in crashed.stderr, crashed.stderr[-2000:]


SPAWN_SCRIPT = """
import torch
from torch.utils.data import DataLoader, TensorDataset

def main():
    loader = DataLoader(TensorDataset(torch.arange(8.0)), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    print("batches", sum(1 for _ in loader), flush=True)
"""


def main_guard():
    """Solution 3: with spawn (Windows, macOS) the workers import the script: its loop must sit under the main guard."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for name, tail in (("unguarded", "main()\n"), ("guarded", 'if __name__ == "__main__":\n    main()\n')):
            script = os.path.join(tmp, f"{name}.py")
            with open(script, "w") as f:
                f.write(SPAWN_SCRIPT + "\n" + tail)
            runs[name] = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=100)
    unguarded, guarded = runs["unguarded"], runs["guarded"]
    assert unguarded.returncode != 0, unguarded.stdout
    assert "DataLoader worker (pid(s)" in unguarded.stderr and "exited unexpectedly" in unguarded.stderr, unguarded.stderr[-2000:]
    assert "exited unexpectedly with exit code 1" in unguarded.stderr, unguarded.stderr[-2000:]
    assert guarded.returncode == 0 and "batches 4" in guarded.stdout, guarded.stderr[-2000:]


def try_catch():
    """The record's tryCatchPattern on the trigger's loader: it catches the error and reports the signal."""
    seen = []
    names = record.run("tryCatchPattern", {"loader": _loader("sigkill"), "train_step": seen.append})
    assert "is killed by signal: Killed" in names["reason"], names["reason"]
