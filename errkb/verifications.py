"""Verification results as committed data: `verifications/<slug>/<environment>.json`, one per record and
environment (library versions, Python, hardware class).

`errkb reproduce` writes them; `errkb build` loads them into `reproduction_runs`. A result is *current* when its
record hash and reproduction hash are those of today's files; only current results set a record's verdict,
older ones stay visible, labelled as being for an earlier version. Re-running an environment replaces its file;
other environments (other releases, GPU machines, CI jobs) add files, so merging results is adding files.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .jsonfile import read_json
from .problems import InvalidInput, Problem, describe, json_path
from .store import REPRODUCTIONS_DIR, file_hash, record_path, write_atomically

VERIFICATIONS_DIR = "verifications"
SCHEMA_FILE = "schema/verification-result.v1.schema.json"
SCHEMA_ID = "https://errkb.dev/schema/verification-result.v1.schema.json"
HASH = r"^[0-9a-f]{64}$"
KEY = r"^[A-Za-z0-9][A-Za-z0-9.+_-]{0,200}$"
SLUG = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class WarningSeen(_Strict):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)
    cls: str = Field(alias="class")
    message: str
    location: str


class Execution(_Strict):
    """One call of errkb_record in a stage: which code field, what it did."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)
    field: str
    action: Literal["run", "check", "config"]
    section: Optional[Literal["before", "after"]] = None
    outcome: Optional[str] = None
    expr: Optional[str] = None
    caught: list[dict] = []
    exception: Optional[dict] = None
    valid: Optional[str] = Field(default=None, description="the VALID situation a guard was checked on (negative control)")
    examples: Optional[int] = Field(default=None, ge=0, description="how many valid situations of that name were checked")
    failures: Optional[int] = Field(default=None, ge=0, description="how many of them the guard rejected")
    input: Optional[str] = Field(default=None, description="the valid situation the guard rejected, in short")


class Stage(_Strict):
    stage: str = Field(description='"trigger", "solution N" or a code field name')
    function: str
    outcome: str = Field(description="returned, raised, timeout, crashed or not-run")
    seconds: Optional[float] = None
    variant: Optional[str] = None
    kind: Optional[Literal["exception", "warning"]] = None
    exceptionClass: Optional[str] = None
    message: Optional[str] = None
    raiseSite: Optional[str] = Field(default=None, description="file:line of the raise site that was observed")
    warnings: list[WarningSeen] = []
    executed: list[Execution] = []


class ClaimResult(_Strict):
    kind: Literal["solution", "exampleFix", "validationCode", "typeGuard", "tryCatchPattern"]
    index: Optional[int] = Field(default=None, ge=1)
    verdict: str
    reason: str


class Hardware(_Strict):
    cpu: Optional[str] = None
    cpuCount: Optional[int] = None
    gpus: list[str] = []
    gpuCount: int = Field(ge=0)
    cuda: Optional[str] = Field(default=None, description="CUDA version of the torch build, null for a CPU build")
    cudnn: Optional[int] = None


class RanAt(_Strict):
    kind: Literal["local", "github-actions"]
    url: Optional[str] = Field(default=None, description="the CI run; never a host or user name")


class Verification(_Strict):
    """One reproduction run of one record in one environment."""

    schemaVersion: Literal[1]
    slug: str = Field(pattern=SLUG)
    environment: str = Field(pattern=KEY, description="the key of the environment: library versions, Python, hardware")
    recordHash: str = Field(pattern=HASH, description="sha256 of the record file that was judged")
    reproductionHash: Optional[str] = Field(pattern=HASH, description="sha256 of the reproduction file that ran")
    verdict: Literal["verified", "not-reproduced", "wrong-error", "fix-failed", "claim-failed", "skipped", "timeout", "crashed"]
    reason: str
    failedClaim: Optional[str] = None
    drift: Optional[str] = None
    stages: list[Stage] = []
    claims: list[ClaimResult] = []
    packages: dict[str, Optional[str]] = Field(description="version of every package in the reproduction's NEEDS")
    library: Optional[str] = Field(default=None, description="the record's library and its version, e.g. hanlp 2.1.5")
    python: Optional[str] = None
    torchGitVersion: Optional[str] = None
    torchBuild: Optional[str] = Field(default=None, description='"CPU" or "CUDA 12.8": which build of torch ran')
    hardware: Hardware
    os: Optional[str] = None
    startedAt: str
    seconds: float = Field(ge=0)
    errkbVersion: str
    ranAt: RanAt
    observedMessages: list[str] = Field(default=[], description="messages of the documented error seen in this run")
    contractProblems: list[str] = Field(
        default=[], description="what the reproduction lacks to prove a claim (e.g. a guard without VALID inputs)",
    )

    @property
    def current_hashes(self) -> tuple[str, Optional[str]]:
        return self.recordHash, self.reproductionHash


def json_schema() -> dict:
    schema = Verification.model_json_schema(ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.+]+", "-", text.lower()).strip("-")


def environment_key(packages: dict[str, Optional[str]], python: Optional[str], gpus: list[str]) -> str:
    """`pytorch-crf-0.7.2_torch-2.13.0+cpu_py3.11_cpu`: the same environment always gets the same file name."""
    parts = [f"{_slug(name)}-{_slug(version or 'missing')}" for name, version in sorted(packages.items())]
    minor = ".".join((python or "unknown").split(".")[:2])
    hardware = f"cuda{len(gpus)}x-{_slug(gpus[0])}" if gpus else "cpu"
    return "_".join([*parts, f"py{minor}", hardware])[:200]


def torch_build(torch_facts: Optional[dict], cuda_version: Optional[str]) -> Optional[str]:
    cuda = (torch_facts or {}).get("cuda") or cuda_version
    if torch_facts is None and cuda is None:
        return None
    return f"CUDA {cuda}" if cuda else "CPU"


def where_it_ran() -> RanAt:
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_RUN_ID"):
        server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
        return RanAt(kind="github-actions", url=f"{server}/{os.environ.get('GITHUB_REPOSITORY', '')}/actions/runs/{os.environ['GITHUB_RUN_ID']}")
    return RanAt(kind="local")


def observed_messages(result) -> list[str]:
    """The documented error's message as this release words it: trigger messages whose class and raise site
    were right (a reworded message makes the run wrong-error, but the wording is still what users paste)."""
    trigger = result.stages[0] if result.stages else None
    if trigger is None or not trigger.message or result.verdict in ("skipped", "timeout", "crashed"):
        return []
    if result.verdict == "wrong-error" and ("class:" in result.reason or "raise site:" in result.reason):
        return []
    return [trigger.message[:2000]]


def from_result(result) -> Verification:
    env = result.environment
    torch_facts = env.get("torch_facts") or {}
    library = env.get("library") or {}
    return Verification(
        schemaVersion=1,
        slug=result.slug,
        environment=environment_key(result.environment.get("packages") or {}, env.get("python"), env.get("cuda_devices") or []),
        recordHash=result.record_hash,
        reproductionHash=result.reproduction_hash,
        verdict=result.verdict,
        reason=result.reason,
        failedClaim=result.failed_claim,
        drift=result.drift,
        stages=[
            Stage(
                stage=s.stage, function=s.function, outcome=s.outcome, seconds=s.seconds, variant=s.variant, kind=s.kind,
                exceptionClass=s.exception_class, message=s.message, raiseSite=s.raise_site,
                warnings=[WarningSeen.model_validate(w) for w in s.warnings],
                executed=[Execution.model_validate(e) for e in s.executed],
            )
            for s in result.stages
        ],
        claims=[ClaimResult.model_validate(c.to_json()) for c in result.claims],
        packages=dict(env.get("packages") or {}),
        library=f"{library['distribution']} {library['version']}" if library.get("version") else None,
        python=env.get("python"),
        torchGitVersion=torch_facts.get("git_version") or env.get("torch_git_version"),
        torchBuild=torch_build(env.get("torch_facts"), env.get("cuda_version")),
        hardware=Hardware(
            cpu=env.get("cpu"), cpuCount=os.cpu_count(), gpus=list(env.get("cuda_devices") or []),
            gpuCount=int(env.get("cuda_device_count") or 0),
            cuda=torch_facts.get("cuda") or env.get("cuda_version"), cudnn=torch_facts.get("cudnn") or env.get("cudnn_version"),
        ),
        os=env.get("platform"),
        startedAt=result.started_at,
        seconds=result.seconds,
        errkbVersion=errkb_version(),
        ranAt=where_it_ran(),
        observedMessages=observed_messages(result),
        contractProblems=list(result.contract_problems),
    )


def errkb_version() -> str:
    try:
        return importlib.metadata.version("errkb")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def result_path(root: Path, slug: str, environment: str) -> Path:
    return root / VERIFICATIONS_DIR / slug / f"{environment}.json"


def write(root: Path, verification: Verification) -> Path:
    path = result_path(root, verification.slug, verification.environment)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(verification.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text)
    return path


def result_files(root: Path) -> list[Path]:
    folder = root / VERIFICATIONS_DIR
    return sorted(folder.glob("*/*.json")) if folder.is_dir() else []


def load(path: Path, root: Path | None = None) -> Verification:
    """A result file, or InvalidInput naming the file and the field."""
    name = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
    data = read_json(path, name)
    try:
        verification = Verification.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput([
            Problem(name, json_path(tuple(e["loc"])), f"found {describe(e.get('input'))}, expected: {e['msg']}")
            for e in exc.errors()
        ]) from None
    problems = []
    if verification.slug != path.parent.name:
        problems.append(Problem(name, "$.slug", f"found {verification.slug!r}, expected the folder's name {path.parent.name!r}"))
    if verification.environment != path.stem:
        problems.append(Problem(name, "$.environment", f"found {verification.environment!r}, expected the file's name {path.stem!r}"))
    if problems:
        raise InvalidInput(problems)
    return verification


def current_hashes(root: Path, slug: str) -> tuple[Optional[str], Optional[str]]:
    return file_hash(record_path(root, slug)), file_hash(root / REPRODUCTIONS_DIR / f"{slug}.py")


def is_current(verification: Verification, hashes: tuple[Optional[str], Optional[str]]) -> bool:
    return verification.current_hashes == hashes



def for_record(root: Path, slug: str) -> list[dict]:
    """The committed results of one record, newest first, each saying whether it is current (read from the
    files, so a fresh clone shows them before any build)."""
    hashes = current_hashes(root, slug)
    entries = []
    for path in sorted((root / VERIFICATIONS_DIR / slug).glob("*.json")):
        v = load(path, root)
        entries.append({
            "path": path.relative_to(root).as_posix(), "environment": v.environment, "verdict": v.verdict,
            "reason": v.reason, "failed_claim": v.failedClaim, "claims": [c.model_dump() for c in v.claims],
            "packages": v.packages, "python": v.python, "torch_build": v.torchBuild,
            "cuda_devices": v.hardware.gpuCount, "gpus": v.hardware.gpus, "drift": v.drift,
            "started_at": v.startedAt, "current": is_current(v, hashes), "ran_at": v.ranAt.url or v.ranAt.kind,
        })
    return sorted(entries, key=lambda e: e["started_at"], reverse=True)
