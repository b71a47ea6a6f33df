"""Run one benchmark step as a child process: its wall time and the peak RSS of its whole process tree."""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.1  # reading smaps_rollup costs CPU: poll gently


@dataclass
class Measured:
    seconds: float
    cpu_seconds: float  # user + system of the whole tree: steadier than wall time on a busy machine
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


def _pss_kib(pid: int) -> int:
    """Proportional set size: forked workers share their parent's pages, which RSS would count in each."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(command: list[str], cwd: Path | None = None, env: dict | None = None, timeout: float = 3600) -> Measured:
    """Run `command`; its peak memory is the largest sum, over one poll, of the tree's processes' PSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    peak = [0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], sum(_pss_kib(pid) for pid in _tree(process.pid)))
            done.wait(POLL_SECONDS)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    output, _ = process.communicate(timeout=timeout)
    seconds = time.perf_counter() - start
    done.set()
    watcher.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(seconds, cpu, peak[0] / 1024, process.returncode, output)
