"""Orchestration: for each record, check what its reproduction needs, run trigger() then fix() each in a fresh
process, judge them against the record, and store the run. Records run in parallel across cores."""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .. import store
from ..coverage import exemptions, reproduction_path
from ..problems import InvalidInput
from ..validate import load_envelope
from . import compare, history, isolate
from .compare import CRASHED, FIX_FAILED, NOT_REPRODUCED, SKIPPED, TIMEOUT, VERIFIED
from .contract import ContractError, Needs, installed_versions, missing_hardware, missing_packages, read_needs
from .libraries import Library, resolve


SHOWN_WARNINGS, SHOWN_WARNING_TEXT = 20, 500


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Machine:
    """What this machine offers every reproduction; probed once per run."""

    python: str
    platform: str
    host: str
    torch: str | None
    cuda_device_count: int
    cuda_devices: list[str]
    probe_error: str | None = None

    @classmethod
    def probe(cls) -> "Machine":
        found = isolate.probe_hardware()
        return cls(
            python=platform.python_version(),
            platform=platform.platform(),
            host=socket.gethostname(),
            torch=found.get("torch"),
            cuda_device_count=int(found.get("cuda_device_count") or 0),
            cuda_devices=list(found.get("cuda_devices") or []),
            probe_error=found.get("error"),
        )


@dataclass
class StageReport:
    stage: str
    outcome: str = "not-run"  # returned, raised, timeout, crashed or not-run
    seconds: float | None = None
    variant: str | None = None
    kind: str | None = None  # "exception" or "warning": what exception_class/message/raise_site describe
    exception_class: str | None = None
    message: str | None = None
    raise_site: str | None = None
    warnings: list[dict] = field(default_factory=list)  # class, message, location (the warning's filename:lineno)
    detail: str | None = None  # traceback or stderr tail, for people

    def to_json(self) -> dict:
        return {**self.__dict__, "warnings": list(self.warnings)}


@dataclass
class Result:
    slug: str
    verdict: str
    reason: str
    started_at: str
    seconds: float
    environment: dict
    expected: dict = field(default_factory=dict)
    stages: list[StageReport] = field(default_factory=list)
    drift: str | None = None

    @property
    def variant(self) -> str | None:
        parts = [f"{stage.stage}: {stage.variant}" for stage in self.stages if stage.variant]
        return "; ".join(parts) or None

    def passed(self, strict: bool = False) -> bool:
        return self.verdict == VERIFIED or (self.verdict == SKIPPED and not strict)

    def to_json(self) -> dict:
        return {
            "slug": self.slug,
            "verdict": self.verdict,
            "reason": self.reason,
            "drift": self.drift,
            "started_at": self.started_at,
            "seconds": self.seconds,
            "expected": self.expected,
            "stages": [stage.to_json() for stage in self.stages],
            "environment": self.environment,
        }


def reproduce(
    root: Path,
    slugs: list[str],
    jobs: int | None = None,
    progress: Callable[[Result, int, int], None] | None = None,
    keep_history: bool = True,
    machine: Machine | None = None,
) -> list[Result]:
    """Reproduce the given records (in that order in the answer); store each run in catalog.db.

    `machine` is probed (one subprocess) unless given.
    """
    if not slugs:
        return []
    jobs = jobs or default_jobs()
    machine = machine or Machine.probe()
    threads = max(1, default_jobs() // jobs) if jobs > 1 else None
    cuda_lock = threading.Lock()  # reproductions that need CUDA devices take them one at a time
    db = history.open_history(root) if keep_history else None
    results: dict[str, Result] = {}
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(reproduce_one, root, slug, machine, threads, cuda_lock) for slug in slugs]
            try:
                for future in as_completed(futures):
                    result = future.result()
                    results[result.slug] = result
                    if db is not None:
                        history.store(db, result, root)
                    if progress:
                        progress(result, len(results), len(slugs))
            except BaseException:
                for future in futures:
                    future.cancel()
                isolate.kill_running()
                raise
        if db is not None:
            history.finish(db, list(results))
    finally:
        if db is not None:
            db.close()
    return [results[slug] for slug in slugs]


def reproduce_one(root: Path, slug: str, machine: Machine, threads: int | None = None, cuda_lock=None) -> Result:
    return _Run(root, slug, machine).go(threads, cuda_lock or contextlib.nullcontext())


class _Run:
    """One record's run, step by step; each step either passes or ends the run with a verdict."""

    def __init__(self, root: Path, slug: str, machine: Machine):
        self.root, self.slug, self.machine = root, slug, machine
        self.started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.clock = time.perf_counter()
        self.stages = [StageReport("trigger"), StageReport("fix")]
        self.library: Library | None = None
        self.packages: dict[str, str | None] = {}
        self.record = None
        self.drift = None

    def go(self, threads: int | None, cuda_lock) -> Result:
        try:
            self.record = record = load_envelope(store.record_path(self.root, self.slug)).record
        except InvalidInput as exc:
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            return self.end(NOT_REPRODUCED, f"invalid record: {exc.problems[0]}{more}")
        self.library = resolve(record.repo)
        path = reproduction_path(self.root, self.slug)
        shown = f"{store.REPRODUCTIONS_DIR}/{self.slug}.py"
        if not path.exists():
            if self.slug in exemptions(self.root):
                return self.end(SKIPPED, f"no reproduction yet: {shown} is missing and the record is exempt in reproductions/EXEMPT")
            return self.end(NOT_REPRODUCED, f"no reproduction: expected {shown}")
        try:
            needs = read_needs(path)
        except ContractError as exc:
            return self.end(NOT_REPRODUCED, f"invalid reproduction {shown}: {exc}")
        if self.library is None:
            return self.end(NOT_REPRODUCED, f"unknown library: no installed package is known for repo {record.repo!r} "
                                            f"(add it to LIBRARIES in errkb/reproduce/libraries.py)")
        self.packages = installed_versions(needs.packages)
        lacking = [missing_hardware(needs, self.machine.cuda_device_count), *missing_packages(needs)]
        if not self.library.installed and self.library.distribution not in needs.packages:
            lacking.append(f"needs {self.library.package} (the installed package of {record.repo}), not installed")
        lacking = [reason for reason in lacking if reason]
        if lacking:
            return self.end(SKIPPED, "; ".join(lacking))
        env = isolate.stage_environment(compare.is_native(record.filePath), threads)
        with cuda_lock if needs.cuda_devices else contextlib.nullcontext():
            return self.run_stages(path, needs, env)

    def run_stages(self, path: Path, needs: Needs, env: dict) -> Result:
        record, library = self.record, self.library
        trigger = self.run_stage(path, 0, needs, env)
        if trigger.status != "completed":
            return self.end(*self.death(trigger, needs))
        judged = compare.judge_trigger(trigger.result, record, library)
        self.describe(0, trigger.result, judged.observed)
        if not judged.ok:
            return self.end(judged.verdict, judged.reason)
        self.drift = compare.drift(judged.observed, record, library)
        fix = self.run_stage(path, 1, needs, env)
        if fix.status != "completed":
            return self.end(*self.death(fix, needs))
        fixed = compare.judge_fix(fix.result, record, library, judged.observed)
        self.describe(1, fix.result, fixed.observed)
        if not fixed.ok:
            return self.end(fixed.verdict, fixed.reason)
        return self.end(VERIFIED, f"{judged.reason}; {fixed.reason}")

    def run_stage(self, path: Path, index: int, needs: Needs, env: dict) -> isolate.StageRun:
        report = self.stages[index]
        run = isolate.run_stage(path, report.stage, needs.timeout_s, env)
        report.seconds, report.outcome = run.seconds, run.status
        if run.status != "completed":
            report.detail = run.stderr_tail or None
            return run
        report.outcome = run.result.get("outcome") or CRASHED
        report.variant = run.result.get("variant")
        report.warnings = [
            {"class": w["class"], "message": w["message"][:SHOWN_WARNING_TEXT], "location": f"{w['filename']}:{w['lineno']}"}
            for w in run.result.get("warnings", [])[:SHOWN_WARNINGS]
        ]
        if run.result.get("exception"):
            report.detail = run.result["exception"].get("traceback")
        return run

    @staticmethod
    def death(run: isolate.StageRun, needs: Needs) -> tuple[str, str]:
        if run.status == "timeout":
            return TIMEOUT, f"{run.stage}() ran past its {needs.timeout_s:g} s budget"
        if run.status == "exited":  # no result from the runner: what the stage wrote proves nothing
            verdict = NOT_REPRODUCED if run.stage == "trigger" else FIX_FAILED
            return verdict, f"{run.stage}() exited without raising and without a result from the runner: {run.death()}"
        last = _telling_line(run.stderr_tail)
        return CRASHED, f"{run.stage}() died with {run.death()} without a result" + (f": {last}" if last else "")

    def describe(self, index: int, result: dict, observed) -> None:
        report = self.stages[index]
        if observed is None and result.get("exception"):
            observed = compare.observe_exception(result["exception"], self.record, self.library)
        if observed is not None:
            report.kind, report.exception_class = observed.kind, observed.cls
            report.message, report.raise_site = observed.message, observed.site

    def end(self, verdict: str, reason: str) -> Result:
        library, record = self.library, self.record
        return Result(
            slug=self.slug,
            verdict=verdict,
            reason=reason,
            started_at=self.started_at,
            seconds=round(time.perf_counter() - self.clock, 3),
            environment={
                "python": self.machine.python,
                "torch": self.machine.torch,
                "library": {
                    "repo": record.repo if record else None,
                    "package": library.package if library else None,
                    "distribution": library.distribution if library else None,
                    "version": library.version if library else None,
                },
                "packages": self.packages,
                "cuda_device_count": self.machine.cuda_device_count,
                "cuda_devices": self.machine.cuda_devices,
                "host": self.machine.host,
                "platform": self.machine.platform,
            },
            expected=(
                {key: getattr(record, key) for key in ("repo", "errorClass", "messagePattern", "filePath", "lineNumber")}
                if record else {}
            ),
            stages=self.stages,
            drift=self.drift,
        )


def _telling_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Fatal Python error"):
            return line
    return lines[-1][:200] if lines else ""
