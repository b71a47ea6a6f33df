"""Run one benchmark step as a child process: its wall time and the peak RSS of its whole process tree."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.02


@dataclass
class Measured:
    seconds: float
    peak_rss_mib: float
    returncode: int
    output: str


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in task.read_text().split()]
        except OSError:
            continue
    return found


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def _high_water_kib(pid: int) -> int:
    """VmHWM: a process's own peak RSS, so a peak between two polls is not missed."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(command: list[str], cwd: Path | None = None, env: dict | None = None, timeout: float = 3600) -> Measured:
    """Run `command`; peak RSS is the largest sum, over one poll, of the tree's processes' high-water marks."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peak = [0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], sum(_high_water_kib(pid) for pid in _tree(process.pid)))
            done.wait(POLL_SECONDS)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    output, _ = process.communicate(timeout=timeout)
    seconds = time.perf_counter() - start
    done.set()
    watcher.join()
    return Measured(seconds, peak[0] / 1024, process.returncode, output)
