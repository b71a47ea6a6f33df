"""Run one stage of a reproduction in a fresh Python process, with its time budget; never raise for its sake."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("runner.py")
PROBE = Path(__file__).with_name("probe.py")
STDERR_TAIL = 2000

_live: set[subprocess.Popen] = set()  # running stages, so that an interrupted run can end them
_live_lock = threading.Lock()


@dataclass
class StageRun:
    stage: str
    status: str  # "completed" (result holds the runner's JSON), "timeout" or "crashed"
    seconds: float
    result: dict | None = None
    returncode: int | None = None
    stderr_tail: str = ""

    def death(self) -> str:
        """How a process without a result ended: 'signal SIGABRT (-6)' or 'exit code 3'."""
        code = self.returncode
        if code is not None and code < 0:
            try:
                return f"signal {signal.Signals(-code).name} ({code})"
            except ValueError:
                return f"signal {-code}"
        return f"exit code {code}"


def stage_environment(native: bool, threads: int | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONFAULTHANDLER"] = "1"
    if native:
        # C++ errors then end with "Exception raised from FUNC at FILE:LINE"; skipping addr2line keeps it fast.
        env["TORCH_SHOW_CPP_STACKTRACES"] = "1"
        env.setdefault("TORCH_DISABLE_ADDR2LINE", "1")
    if threads:
        env.setdefault("OMP_NUM_THREADS", str(threads))  # parallel stages would otherwise oversubscribe the cores
    return env


def run_stage(
    path: Path, stage: str, timeout_s: float, env: dict[str, str], python: str | None = None, code_path: Path | None = None
) -> StageRun:
    """Run the function `stage` of the reproduction at `path` in a fresh interpreter (`python`, default this one),
    in a scratch working directory, with the record's code fields from `code_path`."""
    command = [python or sys.executable, str(RUNNER), str(path.resolve()), stage, *([str(code_path)] if code_path else [])]
    with tempfile.TemporaryDirectory(prefix=f"errkb-{stage}-") as scratch:
        started = time.perf_counter()
        # A new session, so that a timeout kills the stage's own children too.
        process = subprocess.Popen(
            command, cwd=scratch, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        with _live_lock:
            _live.add(process)
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            seconds = _since(started)
            _kill_group(process)
            out, err = _drain(process)
            return StageRun(stage, "timeout", seconds, None, process.returncode, _tail(err))
        finally:
            with _live_lock:
                _live.discard(process)
        seconds = _since(started)
        _kill_group(process)  # anything the stage left running
    result = _parse(out)
    if result is None:
        return StageRun(stage, "crashed", seconds, None, process.returncode, _tail(err))
    return StageRun(stage, "completed", seconds, result, process.returncode, _tail(err))


def probe_environment(python: str | None = None, wanted: list[str] = (), timeout_s: float = 300) -> dict:
    """What the Python environment offers (versions, package folders, CUDA devices), from one subprocess of
    that interpreter (the parent never imports torch). `wanted`: "package=distribution" items to locate."""
    try:
        done = subprocess.run(
            [python or sys.executable, str(PROBE), *wanted], capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
        found = _parse(done.stdout)
        if found is not None:
            return found
        error = f"probe failed ({done.returncode}): {_tail(done.stderr)[-300:]}"
    except subprocess.TimeoutExpired:
        error = f"probe ran past {timeout_s:.0f} s"
    except OSError as exc:
        error = f"cannot run {python}: {exc}"
    return {"torch": None, "cuda_device_count": 0, "cuda_devices": [], "cuda_version": None, "error": error,
            "packages": {}, "locations": {}}


def kill_running() -> None:
    """End every running stage with its children (they run in sessions of their own, out of Ctrl-C's reach)."""
    with _live_lock:
        running = list(_live)
    for process in running:
        _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(process: subprocess.Popen) -> tuple[bytes, bytes]:
    try:
        return process.communicate(timeout=10)
    except subprocess.TimeoutExpired:  # a grandchild that left the group still holds the pipes
        process.kill()
        process.wait()
        return b"", b""


def _parse(out: bytes):
    try:
        value = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _tail(data: bytes) -> str:
    return data.decode("utf-8", "replace")[-STDERR_TAIL:]


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)
