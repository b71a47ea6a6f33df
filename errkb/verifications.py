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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import signing
from .jsonfile import display_name, parse_json, read_plain
from .problems import InvalidInput, Problem, describe, json_path
from .store import REPRODUCTIONS_DIR, file_hash, record_path, write_atomically
from .validate import load_envelope

VERIFICATIONS_DIR = "verifications"
SCHEMA_FILE = "schema/verification-result.v1.schema.json"
SCHEMA_ID = "https://errkb.dev/schema/verification-result.v1.schema.json"
HASH = r"^[0-9a-f]{64}$"
KEY = r"^[A-Za-z0-9][A-Za-z0-9.+_-]{0,200}$"
SLUG = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
SIGSTORE_SUFFIX = ".sigstore.json"  # a CI job's Sigstore bundle beside a result (checked by the merge job, not here)


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
    protections: dict[str, Optional[str]] = Field(
        default={}, description="what confined the stages: protection -> mechanism, null when missing (errkb/reproduce/protections.py)",
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
        protections=dict(env.get("protections") or {}),
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
    """Every entry of verifications/<slug>/ that should be a result file, symbolic links included (never
    followed: `load` refuses them by name, without reading what they point to)."""
    folder = root / VERIFICATIONS_DIR
    if folder.is_symlink():
        return [folder]
    if not folder.is_dir():
        return []
    return [path for slug_dir in sorted(folder.iterdir()) for path in files_of(slug_dir)]


def files_of(slug_dir: Path) -> list[Path]:
    """The result files of one record's folder (the folder itself when it is a symbolic link)."""
    if slug_dir.is_symlink():
        return [slug_dir]
    if not slug_dir.is_dir():
        return []
    return [p for p in sorted(slug_dir.iterdir())
            if p.name.endswith(".json") and not p.name.endswith(SIGSTORE_SUFFIX) and (p.is_symlink() or p.is_file())]


def load(path: Path, root: Path | None = None, data: bytes | None = None) -> Verification:
    """A result file, or InvalidInput naming the file and the field: its shape (the schema), where it sits
    (folder = slug, file name = environment) and whether it agrees with itself (`consistency_problems`)."""
    name = display_name(path, root)
    if data is None:
        data = read_plain(path, name)
    value = parse_json(data, name)
    try:
        verification = Verification.model_validate(value)
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
    problems += consistency_problems(verification, name, root)
    if problems:
        raise InvalidInput(problems)
    return verification


def load_signed(path: Path, root: Path, keys: list[signing.MaintainerKey]) -> tuple[Verification, str | None]:
    """A result file and who signed its exact bytes (None: unsigned); a bad signature raises InvalidInput."""
    data = read_plain(path, display_name(path, root))
    return load(path, root, data), signing.signer_of(root, path, data, keys)


MAX_CLOCK_SKEW = timedelta(minutes=10)
CODE_FIELDS = tuple(kind for kind in get_args(ClaimResult.model_fields["kind"].annotation) if kind != "solution")
RAN_THE_TRIGGER = ("verified", "fix-failed", "claim-failed", "wrong-error")  # the trigger raised; the rest is the claims
# A wording the matcher learns comes only from a run that proved the record: a wrong-error run saw another error,
# and a failed one is not yet evidence the record stands behind.
TEACHES_THE_MATCHER = ("verified",)


def consistency_problems(v: Verification, name: str, root: Path | None = None, now: datetime | None = None) -> list[Problem]:
    """What a hand-written or edited result gets wrong: the environment key is derived from the file's own
    packages, Python and GPUs; the time is a real time, not in the future; GPU names and count agree; a result
    whose trigger ran carries that stage; a `verified` one carries a verified stage for every claim (every
    claim the record makes, when the result is for today's record); observed messages are ones a stage saw."""
    problems = []
    expected = environment_key(v.packages, v.python, v.hardware.gpus)
    if v.environment != expected:
        problems.append(Problem(name, "$.environment", f"found {v.environment!r}, expected {expected!r} (derived from $.packages, $.python and $.hardware.gpus)"))
    if v.hardware.gpuCount != len(v.hardware.gpus):
        problems.append(Problem(name, "$.hardware.gpuCount", f"found {v.hardware.gpuCount}, expected {len(v.hardware.gpus)} (the number of $.hardware.gpus)"))
    started = _parse_time(v.startedAt)
    if started is None:
        problems.append(Problem(name, "$.startedAt", f"found {describe(v.startedAt)}, expected an ISO 8601 time with its zone (2026-12-01T08:34:18Z)"))
    elif started > (now or datetime.now(timezone.utc)) + MAX_CLOCK_SKEW:
        problems.append(Problem(name, "$.startedAt", f"found {v.startedAt!r}, expected a time that is not in the future"))
    trigger = next((s for s in v.stages if s.stage == "trigger"), None)
    if v.verdict in RAN_THE_TRIGGER and (trigger is None or not trigger.exceptionClass or trigger.outcome == "not-run"):
        problems.append(Problem(name, "$.stages", f"a {v.verdict!r} result without the trigger stage's error, expected a stage 'trigger' with its exceptionClass"))
    if v.verdict == "verified":
        problems += _claim_problems(v, name, root)
    seen = {s.message for s in v.stages if s.message}
    for i, message in enumerate(v.observedMessages):
        if message[:2000] not in {m[:2000] for m in seen}:
            problems.append(Problem(name, f"$.observedMessages[{i}]", "a message no stage of this result saw, expected one of the stages' messages"))
    return problems


def _claim_problems(v: Verification, name: str, root: Path | None) -> list[Problem]:
    problems = []
    if not v.claims:
        problems.append(Problem(name, "$.claims", "a 'verified' result without claims, expected every claim the record makes"))
    stages = {s.stage: s for s in v.stages}
    for i, claim in enumerate(v.claims):
        label = f"solution {claim.index}" if claim.kind == "solution" else claim.kind
        if claim.verdict != "verified":
            problems.append(Problem(name, f"$.claims[{i}].verdict", f"found {claim.verdict!r} in a 'verified' result, expected 'verified'"))
        stage = stages.get(label)
        if stage is None or stage.outcome == "not-run":
            problems.append(Problem(name, f"$.claims[{i}]", f"{label} has no stage that ran, expected a stage {label!r}"))
    if root is not None and is_current(v, current_hashes(root, v.slug)):
        try:
            record = load_envelope(record_path(root, v.slug)).record
        except InvalidInput:
            return problems  # `errkb validate` reports the record itself
        wanted = {f"solution {n}" for n in range(1, len(record.solutions) + 1)} | {f for f in CODE_FIELDS if getattr(record, f, None)}
        have = {f"solution {c.index}" if c.kind == "solution" else c.kind for c in v.claims}
        for label in sorted(wanted - have):
            problems.append(Problem(name, "$.claims", f"no result for the record's {label}, expected every claim the record makes"))
    return problems


def _parse_time(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else None


def feeds_matcher(verification: Verification, current: bool) -> bool:
    """Only a current, verified result lends the matcher its wording (never a skipped, timed-out, crashed,
    not-reproduced, wrong-error or failed one, nor one for an earlier record or reproduction)."""
    return current and verification.verdict in TEACHES_THE_MATCHER and bool(verification.observedMessages)


def current_hashes(root: Path, slug: str) -> tuple[Optional[str], Optional[str]]:
    return file_hash(record_path(root, slug)), file_hash(root / REPRODUCTIONS_DIR / f"{slug}.py")


def is_current(verification: Verification, hashes: tuple[Optional[str], Optional[str]]) -> bool:
    return verification.current_hashes == hashes



def for_record(root: Path, slug: str) -> list[dict]:
    """The committed results of one record, newest first, each saying whether it is current (read from the
    files, so a fresh clone shows them before any build)."""
    hashes = current_hashes(root, slug)
    keys = signing.maintainer_keys(root)
    entries = []
    for path in files_of(root / VERIFICATIONS_DIR / slug):
        v, signer = load_signed(path, root, keys)
        entries.append({
            "signer": signer, "signature": "signed" if signer else "unsigned",
            "path": path.relative_to(root).as_posix(), "environment": v.environment, "verdict": v.verdict,
            "reason": v.reason, "failed_claim": v.failedClaim, "claims": [c.model_dump() for c in v.claims],
            "packages": v.packages, "python": v.python, "torch_build": v.torchBuild,
            "cuda_devices": v.hardware.gpuCount, "gpus": v.hardware.gpus, "drift": v.drift,
            "started_at": v.startedAt, "current": is_current(v, hashes), "ran_at": v.ranAt.url or v.ranAt.kind,
            "library": v.library,
        })
    return sorted(entries, key=lambda e: e["started_at"], reverse=True)


def observed_wordings(results_root: Path, root: Path | None = None, trust_unsigned: bool = False) -> dict[str, list[str]]:
    """slug -> messages observed by the results in results_root/verifications/ that are current (for the record
    and reproduction files in `root`, default results_root), signed by a key listed there and whose trigger
    raised (`feeds_matcher`): the matcher's source without catalog.db. A file that fails to load lends nothing."""
    root = root or results_root
    keys = signing.maintainer_keys(root)
    out: dict[str, list[str]] = {}
    hashes: dict[str, tuple] = {}
    for path in result_files(results_root):
        try:
            v, signer = load_signed(path, results_root, keys)
        except InvalidInput:
            continue
        current = is_current(v, hashes.setdefault(v.slug, current_hashes(root, v.slug)))
        if (signer or trust_unsigned) and feeds_matcher(v, current):
            out.setdefault(v.slug, []).extend(v.observedMessages)
    return out
