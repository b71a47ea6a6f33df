"""Orchestration: for each record, check what its reproduction needs, run trigger() and then one stage per claim
(each solution's demonstration, each code field) and one stage for the guards' valid inputs, each in a fresh
process, judge them against the record, and keep the run. Records run in parallel across cores."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
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
from . import claims as claim_rules
from . import compare, isolate
from .compare import CLAIM_FAILED, CRASHED, FIX_FAILED, NOT_REPRODUCED, SKIPPED, TIMEOUT, VERIFIED
from .contract import (
    CODE_FIELDS, GUARDS, Claim, Contract, ContractError, claim_gaps, contract_problems, missing_hardware, missing_packages,
    read_contract,
)
from .libraries import Library, probe_items, resolve
from .runner import VALID_STAGE

SHOWN_WARNINGS, SHOWN_WARNING_TEXT = 20, 500


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Environment:
    """Where the stages run: this interpreter, or a `--with` environment's; probed once per run."""

    facts: dict  # the probe's answer: versions, package folders, python, CPU, CUDA devices
    python: str | None = None  # None: this interpreter
    label: str = "installed"  # "installed", or the requested specs: "torch==2.5.1"
    problem: str | None = None  # the environment could not be made: every record is skipped with this reason
    unavailable: dict = field(default_factory=dict)  # distribution -> why it could not be installed in it

    @classmethod
    def probe(cls, python: str | None = None, label: str = "installed", distributions=()) -> "Environment":
        facts = isolate.probe_environment(python, probe_items(distributions))
        return cls({**facts, "protections": isolate.machine_protections()}, python, label)

    @property
    def cuda_device_count(self) -> int:
        return int(self.facts.get("cuda_device_count") or 0)

    @property
    def cuda_devices(self) -> list[str]:
        return list(self.facts.get("cuda_devices") or [])

    def version(self, distribution: str) -> str | None:
        return (self.facts.get("packages") or {}).get(distribution)


@dataclass
class StageReport:
    stage: str  # "trigger", "solution 1", "exampleFix", ...
    function: str = "trigger"
    outcome: str = "not-run"  # returned, raised, timeout, crashed or not-run
    seconds: float | None = None
    variant: str | None = None
    kind: str | None = None  # "exception" or "warning": what exception_class/message/raise_site describe
    exception_class: str | None = None
    message: str | None = None
    raise_site: str | None = None
    warnings: list[dict] = field(default_factory=list)  # class, message, location (the warning's filename:lineno)
    executed: list[dict] = field(default_factory=list)  # the record's code fields this stage ran, and what they did
    detail: str | None = None  # traceback or stderr tail, for people

    def to_json(self) -> dict:
        return {**self.__dict__, "warnings": list(self.warnings), "executed": list(self.executed)}


@dataclass
class ClaimReport:
    kind: str
    index: int | None
    verdict: str = "not-run"
    reason: str = ""
    failure: str | None = None  # the run's failed_claim when this claim fails, if not its label

    @property
    def label(self) -> str:
        return f"solution {self.index}" if self.kind == "solution" else self.kind

    def set(self, verdict: str, reason: str, failure: str | None = None) -> None:
        self.verdict, self.reason, self.failure = verdict, reason, failure

    def to_json(self) -> dict:
        return {"kind": self.kind, "index": self.index, "verdict": self.verdict, "reason": self.reason}


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
    claims: list[ClaimReport] = field(default_factory=list)
    failed_claim: str | None = None  # "solution 2", "validationCode": the first claim that did not hold
    drift: str | None = None
    record_hash: str | None = None
    reproduction_hash: str | None = None
    contract_problems: list[str] = field(default_factory=list)  # what the reproduction lacks to prove a claim
    # The run ended before any environment mattered (the record or its reproduction invalid or missing, the library
    # unknown): a fact about the files, not a result of an environment, so no result file is written for it.
    authoring_problem: bool = False

    @property
    def variant(self) -> str | None:
        parts = [f"{stage.stage}: {stage.variant}" for stage in self.stages if stage.variant]
        return "; ".join(parts) or None

    @property
    def headline(self) -> str:
        """`fix-failed: solution 2`, or the bare verdict."""
        return f"{self.verdict}: {self.failed_claim}" if self.failed_claim else self.verdict

    def claims_held(self) -> str:
        held = sum(claim.verdict == VERIFIED for claim in self.claims)
        return f"claims {held}/{len(self.claims)}"

    def passed(self, strict: bool = False) -> bool:
        return self.verdict == VERIFIED or (self.verdict == SKIPPED and not strict)

    def to_json(self) -> dict:
        return {
            "slug": self.slug,
            "verdict": self.verdict,
            "reason": self.reason,
            "failed_claim": self.failed_claim,
            "claims": [claim.to_json() for claim in self.claims],
            "drift": self.drift,
            "started_at": self.started_at,
            "seconds": self.seconds,
            "record_hash": self.record_hash,
            "reproduction_hash": self.reproduction_hash,
            "contract_problems": list(self.contract_problems),
            "expected": self.expected,
            "stages": [stage.to_json() for stage in self.stages],
            "environment": self.environment,
        }


def reproduce(
    root: Path,
    slugs: list[str],
    jobs: int | None = None,
    progress: Callable[[Result, int, int], None] | None = None,
    environment: Environment | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Reproduce the given records (in that order in the answer) in `environment` (default: probe this one).

    `on_result` sees each result as it comes (to write it down); `progress` after that.
    """
    if not slugs:
        return []
    jobs = jobs or default_jobs()
    environment = environment or Environment.probe()
    threads = max(1, default_jobs() // jobs) if jobs > 1 else None
    cuda_lock = threading.Lock()  # reproductions that need CUDA devices take them one at a time
    results: dict[str, Result] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(reproduce_one, root, slug, environment, threads, cuda_lock) for slug in slugs]
        try:
            for future in as_completed(futures):
                result = future.result()
                results[result.slug] = result
                if on_result:
                    on_result(result)
                if progress:
                    progress(result, len(results), len(slugs))
        except BaseException:
            for future in futures:
                future.cancel()
            isolate.kill_running()
            raise
    return [results[slug] for slug in slugs]


def reproduce_one(root: Path, slug: str, environment: Environment, threads: int | None = None, cuda_lock=None) -> Result:
    return _Run(root, slug, environment).go(threads, cuda_lock or contextlib.nullcontext())


class _Run:
    """One record's run, step by step; each step either passes or ends the run with a verdict."""

    def __init__(self, root: Path, slug: str, environment: Environment):
        self.root, self.slug, self.environment = root, slug, environment
        self.started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.clock = time.perf_counter()
        self.stages = [StageReport("trigger")]
        self.claims: list[ClaimReport] = []
        self.library: Library | None = None
        self.packages: dict[str, str | None] = {}
        self.record = None
        self.drift = None
        self.torch: dict | None = None
        self.hashes: tuple[str | None, str | None] = (None, None)
        self.files_read = False  # the record, its reproduction's contract and its library are known
        self.gaps: dict[str, str] = {}  # code field -> why its claim cannot hold as stated (contract.claim_gaps)
        self.contract_problems: list[str] = []

    def go(self, threads: int | None, cuda_lock) -> Result:
        record_file = store.record_path(self.root, self.slug)
        path = reproduction_path(self.root, self.slug)
        self.hashes = (_hash(record_file), _hash(path))
        try:
            self.record = record = load_envelope(record_file).record
        except InvalidInput as exc:
            more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
            return self.end(NOT_REPRODUCED, f"invalid record: {exc.problems[0]}{more}")
        self.library = resolve(record.repo, self.environment.facts)
        shown = f"{store.REPRODUCTIONS_DIR}/{self.slug}.py"
        if not path.exists():
            if self.slug in exemptions(self.root):
                return self.end(SKIPPED, f"no reproduction yet: {shown} is missing and the record is exempt in reproductions/EXEMPT")
            return self.end(NOT_REPRODUCED, f"no reproduction: expected {shown}")
        try:
            contract = read_contract(path)
        except ContractError as exc:
            return self.end(NOT_REPRODUCED, f"invalid reproduction {shown}: {exc}")
        self.claims = [ClaimReport(claim.kind, claim.index) for claim in contract.claims]
        problems = contract_problems(contract, record)
        if problems:
            return self.end(NOT_REPRODUCED, f"invalid reproduction {shown}: {'; '.join(problems)}")
        self.gaps = claim_gaps(contract, record)
        self.contract_problems = list(self.gaps.values())
        needs = contract.needs
        absent = missing_packages(needs, {name: self.environment.version(name) for name in needs.packages})
        if self.library is None and not absent:
            return self.end(NOT_REPRODUCED, f"unknown library: no distribution in {shown}'s NEEDS packages names repo "
                                            f"{record.repo!r} (its metadata's URLs, or its name) and no table knows it")
        self.files_read = True
        self.packages = {name: self.environment.version(name) for name in needs.packages}
        if self.environment.problem:
            return self.end(SKIPPED, self.environment.problem)
        lacking = [*missing_hardware(needs, self.environment.facts), *missing_packages(needs, self.packages)]
        lacking += [self.environment.unavailable[name] for name in needs.packages if name in self.environment.unavailable]
        if self.library is not None and not self.library.installed and self.library.distribution not in needs.packages:
            lacking.append(f"needs {self.library.package} (the installed package of {record.repo}), not installed")
        lacking = [reason for reason in lacking if reason]
        if lacking:
            return self.end(SKIPPED, "; ".join(lacking))
        env = isolate.stage_environment(compare.is_native(record.filePath), threads)
        with cuda_lock if needs.cuda_devices else contextlib.nullcontext():
            with tempfile.TemporaryDirectory(prefix="errkb-code-") as scratch:
                code_path = Path(scratch) / "record_code.json"
                code_path.write_text(json.dumps({
                    "fields": {name: getattr(record, name) for name in CODE_FIELDS},
                    "valid": contract.valid, "guard_call": contract.guard_call,
                    "code_names": contract.code_names, "keep": contract.keep,
                }), encoding="utf-8")
                return self.run_stages(path, contract, env, code_path)

    def run_stages(self, path: Path, contract: Contract, env: dict, code_path: Path) -> Result:
        record, library, needs = self.record, self.library, contract.needs
        trigger = self.run_stage(path, self.stages[0], needs, env, code_path)
        if trigger.status != "completed":
            return self.end(*self.death(trigger, needs))
        judged = compare.judge_trigger(trigger.result, record, library)
        self.describe(self.stages[0], trigger.result, judged.observed)
        if not judged.ok:
            return self.end(judged.verdict, judged.reason)
        self.drift = compare.drift(judged.observed, record, library)
        for claim, report in zip(contract.claims, self.claims):
            stage = StageReport(report.label, claim.function)
            self.stages.append(stage)
            run = self.run_stage(path, stage, needs, env, code_path)
            if run.status != "completed":
                report.verdict, report.reason = self.death(run, needs)
                continue
            verdict = claim_rules.judge(claim, run.result, record, library, judged.observed, trigger.result)
            report.set(verdict.verdict, verdict.reason, verdict.failure)
            if run.result.get("exception"):
                self.describe(stage, run.result, None)
        self.run_valid_inputs(path, contract, env, code_path)
        for report in self.claims:  # a gap is the claim's first failure: the stage's own failure may follow from it
            if report.kind in self.gaps:
                stage = f" (and its stage: {report.reason})" if report.verdict != VERIFIED else ""
                report.set(CLAIM_FAILED, self.gaps[report.kind] + stage)
        failed = next((claim for claim in self.claims if claim.verdict != VERIFIED), None)
        if failed:
            name = failed.failure or failed.label
            return self.end(failed.verdict, f"{name}: {failed.reason}", name)
        return self.end(VERIFIED, f"{judged.reason}; {len(self.claims)} claim(s) held")

    def run_valid_inputs(self, path: Path, contract: Contract, env: dict, code_path: Path) -> None:
        """The guards' negative controls, in a stage of their own: each guard must pass every valid situation."""
        guards = {report.kind: report for report in self.claims if report.kind in GUARDS}
        if not contract.valid or not guards:
            return
        stage = StageReport("valid inputs", VALID_STAGE)
        self.stages.append(stage)
        run = self.run_stage(path, stage, contract.needs, env, code_path)
        for name, report in guards.items():
            if report.verdict != VERIFIED:
                continue  # already failed, and its own stage says why
            if run.status != "completed":
                verdict, reason = self.death(run, contract.needs)
                report.set(verdict, f"{name}: its valid inputs stage: {reason}")
                continue
            judged = claim_rules.judge_valid_inputs(name, contract.valid, run.result, self.record, self.library)
            if judged.verdict == VERIFIED:
                report.reason = f"{report.reason}; {judged.reason}"
            else:
                report.set(judged.verdict, judged.reason, judged.failure)
        if run.status == "completed" and run.result.get("exception"):
            self.describe(stage, run.result, None)

    def run_stage(self, path: Path, report: StageReport, needs, env: dict, code_path: Path) -> isolate.StageRun:
        run = isolate.run_stage(path, report.function, needs.timeout_s, env, self.environment.python, code_path)
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
        report.executed = [_executed_summary(entry) for entry in run.result.get("executed") or []]
        self.torch = self.torch or run.result.get("torch")
        if run.result.get("exception"):
            report.detail = run.result["exception"].get("traceback")
        return run

    @staticmethod
    def death(run: isolate.StageRun, needs) -> tuple[str, str]:
        if run.status == "timeout":
            return TIMEOUT, f"{run.stage}() ran past its {needs.timeout_s:g} s budget"
        if run.status == "exited":  # no result from the runner: what the stage wrote proves nothing
            verdict = NOT_REPRODUCED if run.stage == "trigger" else FIX_FAILED
            return verdict, f"{run.stage}() exited without raising and without a result from the runner: {run.death()}"
        last = _telling_line(run.stderr_tail)
        return CRASHED, f"{run.stage}() died with {run.death()} without a result" + (f": {last}" if last else "")

    def describe(self, report: StageReport, result: dict, observed) -> None:
        if observed is None and result.get("exception"):
            observed = compare.observe_exception(result["exception"], self.record, self.library)
        if observed is not None:
            report.kind, report.exception_class = observed.kind, observed.cls
            report.message, report.raise_site = observed.message, observed.site

    def end(self, verdict: str, reason: str, failed_claim: str | None = None) -> Result:
        library, record, facts = self.library, self.record, self.environment.facts
        return Result(
            slug=self.slug,
            verdict=verdict,
            reason=reason,
            failed_claim=failed_claim,
            started_at=self.started_at,
            seconds=round(time.perf_counter() - self.clock, 3),
            environment={
                "label": self.environment.label,
                "python": facts.get("python"),
                "torch": facts.get("torch"),
                "torch_facts": self.torch,
                "torch_git_version": facts.get("torch_git_version"),
                "library": {
                    "repo": record.repo if record else None,
                    "package": library.package if library else None,
                    "distribution": library.distribution if library else None,
                    "version": library.version if library else None,
                },
                "packages": self.packages,
                "cuda_device_count": self.environment.cuda_device_count,
                "cuda_devices": self.environment.cuda_devices,
                "cuda_version": facts.get("cuda_version"),
                "cudnn_version": facts.get("cudnn_version"),
                "cpu": facts.get("cpu"),
                "platform": facts.get("platform"),
                "protections": facts.get("protections") or {},
            },
            expected=(
                {key: getattr(record, key) for key in ("repo", "errorClass", "messagePattern", "filePath", "lineNumber")}
                if record else {}
            ),
            authoring_problem=not self.files_read,
            stages=self.stages,
            claims=self.claims,
            contract_problems=self.contract_problems,
            drift=self.drift,
            record_hash=self.hashes[0],
            reproduction_hash=self.hashes[1],
        )


def _executed_summary(entry: dict) -> dict:
    """What one errkb_record call did, without the tracebacks."""
    keys = ("field", "action", "section", "outcome", "expr", "valid", "examples", "failures", "input")
    summary = {key: entry.get(key) for key in keys if entry.get(key) is not None}
    caught = entry.get("caught") or []
    if caught:
        summary["caught"] = [{"class": c.get("class"), "message": (c.get("message") or "")[:SHOWN_WARNING_TEXT]} for c in caught]
    exc = entry.get("exception")
    if exc:
        summary["exception"] = {"class": exc.get("class"), "message": (exc.get("message") or "")[:SHOWN_WARNING_TEXT]}
    return summary


def _hash(path: Path) -> str | None:
    try:
        return store.file_hash(path)
    except OSError:
        return None


def _telling_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Fatal Python error"):
            return line
    return lines[-1][:200] if lines else ""
