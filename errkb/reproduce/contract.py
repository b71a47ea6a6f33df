"""The reproduction contract: read it without importing the file, and say why this machine cannot run it.

    NEEDS = {"packages": {"hanlp": "==2.1.5"}, "cuda_devices": 0, "timeout_s": 120}
    SOLUTIONS = {1: "single_device", 2: "crf_off"}       # record solution number -> its demonstration
    CODE = {"exampleFix": "example_fix", "validationCode": "guard"}  # record code field -> the stage that runs it
    def trigger(): ...        # raises the documented error (or emits the documented warning) inside the library
    def single_device(): ...  # applies exactly solution 1 to the trigger's situation and asserts it works
    VALID = {"ignore-index-default": "valid_ignore_index"}   # negative controls: every guard must pass these
    GUARD_CALL = {"typeGuard": "is_valid_lengths(lengths)"}   # the call that decides a predicate-defining guard
    def valid_ignore_index(): ...  # returns the names a guard sees: a dict, a list of dicts, or a Hypothesis
                                   # strategy of dicts
    CODE_NAMES = {"exampleFix": ["model", "labels"]}  # the user's objects each code field may read (and nothing else)
    KEEP = ["model"]                                   # the user's objects a code field must not replace
    WORDINGS = [{"text": "Target 5 is out of bounds.", "source": "torch==2.13.0", "match": "pattern"}]
    PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}  # what sourceCode was checked against

Each demonstration and each code stage runs in a fresh process of its own; a code stage executes the record's
own text through the `errkb_record` module the runner provides (see errkb_record.py). The valid inputs run in a
stage of their own: every guard of the record (validationCode, typeGuard) on every namespace VALID declares.
docs/record-brief.md describes the whole contract.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .codenames import NotPython, checked_text, free_names

NEEDS_KEYS = {"packages", "cuda_devices", "timeout_s", "memory_gb", "torch_build", "nvidia_driver"}
TORCH_BUILDS = ("cpu", "cuda")
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_GB = 8.0  # each stage's memory limit (isolate.py, sandbox.py) unless NEEDS["memory_gb"] says more
CODE_FIELDS = ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern")
GUARDS = ("validationCode", "typeGuard")  # code fields that decide whether a situation is safe
LITERALS = ("NEEDS", "SOLUTIONS", "CODE", "VALID", "GUARD_CALL", "CODE_NAMES", "KEEP", "WORDINGS", "PROVENANCE")
MAX_VALID_NAME = 80
MATCHES = ("pattern", "matcher", "none")
# A wording's source: a release of the committed matrix, with an optional note ("torch==2.13.0 (CUDA kernel)"),
# or a public issue ("pytorch/pytorch#50259").
RELEASE_SOURCE = re.compile(r"^(?P<dist>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9][A-Za-z0-9.+!_-]*)(?: \((?P<note>[^()]+)\))?$")
ISSUE_SOURCE = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>[1-9][0-9]*)$")
SHA = re.compile(r"^[0-9a-f]{40}$")
PROVENANCE_KEYS = {  # kind -> (required keys, optional keys)
    "installed": ({"dist", "version"}, set()),
    "native-build": ({"dist", "version", "excerpt"}, {"commit", "offset"}),  # both needed for an upstream-copy excerpt
    "upstream-copy": ({"repo", "commit", "path", "line", "offset"}, set()),
    "unverified": ({"why"}, set()),
}
EXCERPT_SOURCES = ("upstream-copy", "unverified")


class ContractError(ValueError):
    """The reproduction file breaks the contract; the message says how."""


@dataclass(frozen=True)
class Needs:
    packages: dict[str, str] = field(default_factory=dict)  # distribution -> version specifier ("" for any)
    cuda_devices: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_gb: float = DEFAULT_MEMORY_GB
    torch_build: str | None = None  # "cpu" or "cuda": the error exists only in that build of torch
    nvidia_driver: bool | None = None  # False: the error needs a machine without an NVIDIA driver


@dataclass(frozen=True)
class Claim:
    """One thing a record says that its reproduction demonstrates in a stage of its own."""

    kind: str  # "solution" or a code field name
    index: int | None  # the solution's number (1-based), None for a code field
    function: str  # the reproduction's function that demonstrates it

    @property
    def label(self) -> str:
        return f"solution {self.index}" if self.kind == "solution" else self.kind


@dataclass(frozen=True)
class Wording:
    """One wording of the message that the record mentions, where it comes from, and how it is matched."""

    text: str
    source: str
    match: str  # "pattern" (messagePattern accepts it), "matcher" (errkb match finds the record), "none"
    why: str | None = None  # for match "none": why the record does not match it

    @property
    def release(self) -> tuple[str, str] | None:
        found = RELEASE_SOURCE.match(self.source)
        return (found["dist"], found["version"]) if found else None


@dataclass(frozen=True)
class Contract:
    needs: Needs
    claims: tuple[Claim, ...]
    valid: dict[str, str] = field(default_factory=dict)  # name of a valid situation -> function returning its names
    guard_call: dict[str, str] = field(default_factory=dict)  # guard field -> expression whose value decides
    code_names: dict[str, list[str]] = field(default_factory=dict)  # code field -> the user's names it may read
    keep: list[str] = field(default_factory=list)  # the user's objects a code field must leave in place
    wordings: tuple[Wording, ...] = ()
    provenance: dict | None = None  # what sourceCode and lineNumber were checked against (PROVENANCE_KEYS)

    @property
    def solution_count(self) -> int:
        return sum(claim.kind == "solution" for claim in self.claims)

    @property
    def code_fields(self) -> set[str]:
        return {claim.kind for claim in self.claims if claim.kind != "solution"}


def read_needs(path: Path) -> Needs:
    return read_contract(path).needs


def read_contract(path: Path) -> Contract:
    """Parse the contract's literals (NEEDS, SOLUTIONS, CODE, VALID, GUARD_CALL, CODE_NAMES, KEEP) and check every
    function they name exists, importing nothing."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise ContractError(f"cannot parse {path.name}: {exc}") from None
    literals, functions = {}, set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id in LITERALS:
                literals[target.id] = node.value
    if "trigger" not in functions:
        raise ContractError("no top-level def trigger()")
    if "NEEDS" not in literals:
        raise ContractError("no top-level NEEDS = {...}")
    if "SOLUTIONS" not in literals:
        raise ContractError("no top-level SOLUTIONS = {1: \"function\", ...} (one demonstration per solution)")
    needs = needs_from_value(_literal(literals["NEEDS"], "NEEDS"))
    claims = [
        *solution_claims(_literal(literals["SOLUTIONS"], "SOLUTIONS")),
        *code_claims(_literal(literals["CODE"], "CODE") if "CODE" in literals else {}),
    ]
    valid = valid_from_value(_literal(literals["VALID"], "VALID")) if "VALID" in literals else {}
    guard_call = guard_call_from_value(_literal(literals["GUARD_CALL"], "GUARD_CALL")) if "GUARD_CALL" in literals else {}
    code_names = code_names_from_value(_literal(literals["CODE_NAMES"], "CODE_NAMES")) if "CODE_NAMES" in literals else {}
    keep = keep_from_value(_literal(literals["KEEP"], "KEEP")) if "KEEP" in literals else []
    wordings = wordings_from_value(_literal(literals["WORDINGS"], "WORDINGS")) if "WORDINGS" in literals else ()
    provenance = provenance_from_value(_literal(literals["PROVENANCE"], "PROVENANCE")) if "PROVENANCE" in literals else None
    missing = sorted({claim.function for claim in claims} - functions)
    if missing:
        raise ContractError(f"no top-level def {', '.join(name + '()' for name in missing)} (named in SOLUTIONS/CODE)")
    missing = sorted(set(valid.values()) - functions)
    if missing:
        raise ContractError(f"no top-level def {', '.join(name + '()' for name in missing)} (named in VALID)")
    return Contract(needs, tuple(claims), valid, guard_call, code_names, keep, wordings, provenance)


def _literal(node: ast.AST, name: str):
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ContractError(f"{name} must be a literal dict (no names or calls)") from None


def solution_claims(value) -> list[Claim]:
    if not isinstance(value, dict) or not value:
        raise ContractError("SOLUTIONS must be a non-empty dict {solution number: function name}")
    numbers = sorted(value) if all(isinstance(k, int) and not isinstance(k, bool) for k in value) else None
    if numbers != list(range(1, len(value) + 1)):
        raise ContractError(f"SOLUTIONS keys must be the solution numbers 1..{len(value)}, got {sorted(map(repr, value))}")
    if not all(isinstance(v, str) and v.isidentifier() for v in value.values()):
        raise ContractError("SOLUTIONS values must be function names")
    return [Claim("solution", number, value[number]) for number in numbers]


def code_claims(value) -> list[Claim]:
    if not isinstance(value, dict):
        raise ContractError("CODE must be a dict {record code field: function name}")
    unknown = sorted(map(str, set(value) - set(CODE_FIELDS)))
    if unknown:
        raise ContractError(f"CODE has unknown field(s) {', '.join(unknown)}; expected some of {', '.join(CODE_FIELDS)}")
    if not all(isinstance(v, str) and v.isidentifier() for v in value.values()):
        raise ContractError("CODE values must be function names")
    return [Claim(name, None, value[name]) for name in CODE_FIELDS if name in value]


def valid_from_value(value) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise ContractError('VALID must be a non-empty dict {"name of a valid situation": "function name"}')
    for name, function in value.items():
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_VALID_NAME or not name.isprintable():
            raise ContractError(f"VALID key {name!r} must be a short name (one line, at most {MAX_VALID_NAME} characters)")
        if not isinstance(function, str) or not function.isidentifier():
            raise ContractError(f"VALID[{name!r}] must be a function name, found {function!r}")
    return dict(value)


def guard_call_from_value(value) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ContractError('GUARD_CALL must be a dict {"typeGuard": "predicate(names)"}')
    for name, expr in value.items():
        if name not in GUARDS:
            raise ContractError(f"GUARD_CALL has unknown field {name!r}; expected some of {', '.join(GUARDS)}")
        if not isinstance(expr, str):
            raise ContractError(f"GUARD_CALL[{name!r}] must be an expression (a string), found {expr!r}")
        try:
            compile(expr, f"GUARD_CALL[{name!r}]", "eval")
        except SyntaxError as exc:
            raise ContractError(f"GUARD_CALL[{name!r}] is not a Python expression: {exc.msg}") from None
    return dict(value)


def code_names_from_value(value) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise ContractError('CODE_NAMES must be a dict {"exampleFix": ["model", ...], ...}')
    for name, names in value.items():
        if name not in CODE_FIELDS:
            raise ContractError(f"CODE_NAMES has unknown field {name!r}; expected some of {', '.join(CODE_FIELDS)}")
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise ContractError(f"CODE_NAMES[{name!r}] must be a list of names (identifiers), found {names!r}")
    return {name: list(names) for name, names in value.items()}


def keep_from_value(value) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) and n.isidentifier() for n in value):
        raise ContractError(f'KEEP must be a list of names (identifiers), e.g. ["model"], found {value!r}')
    return list(value)


def wordings_from_value(value) -> tuple[Wording, ...]:
    if not isinstance(value, (list, tuple)):
        raise ContractError('WORDINGS must be a list of {"text": ..., "source": ..., "match": ...}')
    wordings = []
    for index, item in enumerate(value):
        where = f"WORDINGS[{index}]"
        if not isinstance(item, dict):
            raise ContractError(f"{where} must be a dict with text, source and match")
        unknown = sorted(map(str, set(item) - {"text", "source", "match", "why"}))
        if unknown:
            raise ContractError(f"{where} has unknown key(s) {', '.join(unknown)}; expected text, source, match, why")
        text, source, match, why = (item.get(key) for key in ("text", "source", "match", "why"))
        if not isinstance(text, str) or not text.strip():
            raise ContractError(f"{where}['text'] must be the wording (a non-empty string)")
        if not isinstance(source, str) or not (RELEASE_SOURCE.match(source) or ISSUE_SOURCE.match(source)):
            raise ContractError(f"{where}['source'] is {source!r}, expected a release of the committed matrix "
                                f"('torch==1.13.1', optionally with a note: 'torch==2.13.0 (CUDA kernel)') or a public "
                                f"issue ('owner/repo#N')")
        if match not in MATCHES:
            raise ContractError(f"{where}['match'] is {match!r}, expected one of {', '.join(map(repr, MATCHES))}")
        if match == "none" and not (isinstance(why, str) and why.strip()):
            raise ContractError(f"{where} is not matched (match 'none'): 'why' must say why the record does not match it")
        if why is not None and not isinstance(why, str):
            raise ContractError(f"{where}['why'] must be a string")
        wordings.append(Wording(text, source, match, why))
    return tuple(wordings)


def provenance_from_value(value) -> dict:
    if not isinstance(value, dict) or value.get("checked") not in PROVENANCE_KEYS:
        found = value.get("checked") if isinstance(value, dict) else value
        raise ContractError(f"PROVENANCE['checked'] is {found!r}, expected one of {', '.join(map(repr, PROVENANCE_KEYS))}")
    kind = value["checked"]
    required, optional = PROVENANCE_KEYS[kind]
    if value.get("excerpt") == "upstream-copy":
        required = required | {"commit", "offset"}
    missing, unknown = sorted(required - set(value)), sorted(map(str, set(value) - required - optional - {"checked"}))
    if missing or unknown:
        raise ContractError(f"PROVENANCE of kind {kind!r} needs {', '.join(sorted(required))}"
                            + (f" (may have {', '.join(sorted(optional - required))})" if optional - required else "")
                            + (f"; missing {', '.join(missing)}" if missing else "")
                            + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    for key in ("dist", "version", "repo", "path", "why"):
        if key in value and not (isinstance(value[key], str) and value[key].strip()):
            raise ContractError(f"PROVENANCE[{key!r}] must be a non-empty string")
    for key in ("offset", "line"):
        if key in value and (not isinstance(value[key], int) or isinstance(value[key], bool)):
            raise ContractError(f"PROVENANCE[{key!r}] must be a whole number")
    if "line" in value and value["line"] < 1:
        raise ContractError("PROVENANCE['line'] must be a line number (>= 1)")
    if "excerpt" in value and value["excerpt"] not in EXCERPT_SOURCES:
        raise ContractError(f"PROVENANCE['excerpt'] is {value['excerpt']!r}, expected one of {', '.join(map(repr, EXCERPT_SOURCES))}")
    if "commit" in value and not (isinstance(value["commit"], str) and SHA.match(value["commit"])):
        raise ContractError(f"PROVENANCE['commit'] is {value['commit']!r}, expected a full 40-hex commit")
    if "repo" in value and not ISSUE_SOURCE.match(value["repo"] + "#1"):
        raise ContractError(f"PROVENANCE['repo'] is {value['repo']!r}, expected owner/name")
    return dict(value)


def record_guards(record) -> list[str]:
    return [name for name in GUARDS if getattr(record, name, None)]


def contract_problems(contract: Contract, record) -> list[str]:
    """How the reproduction's claims disagree with what the record says (empty when every claim has its stage).

    These stop a run before any stage; `claim_gaps` are reported in the run's result instead.
    """
    problems = []
    if contract.solution_count != len(record.solutions):
        problems.append(
            f"the record has {len(record.solutions)} solution(s), the reproduction demonstrates "
            f"{contract.solution_count} (SOLUTIONS)"
        )
    present = {name for name in CODE_FIELDS if getattr(record, name, None)}
    for name in sorted(present - contract.code_fields):
        problems.append(f"the record has {name}, the reproduction does not run it (no CODE entry)")
    for name in sorted(contract.code_fields - present):
        problems.append(f"CODE runs {name}, but the record has none")
    for name in sorted(set(contract.guard_call) - present):
        problems.append(f"GUARD_CALL gives a call for {name}, but the record has none")
    if contract.valid and not record_guards(record):
        problems.append("VALID declares valid inputs, but the record has no validationCode or typeGuard to run on them")
    for name in sorted(set(contract.code_names) - present):
        problems.append(f"CODE_NAMES declares names for {name}, but the record has none")
    declared = {name for names in contract.code_names.values() for name in names}
    for name in contract.keep:
        if name not in declared:
            problems.append(f"KEEP names {name!r}, which no CODE_NAMES entry declares (no code field receives it)")
    return problems


def claim_gaps(contract: Contract, record) -> dict[str, str]:
    """Code field -> why its claim cannot hold as the record states it (reported in the run's result, where it
    fails that claim, and by `errkb validate`): a guard without valid inputs, a predicate no GUARD_CALL decides,
    a text that reads names it neither defines nor declares in CODE_NAMES."""
    gaps: dict[str, list[str]] = {}
    for name, why in guard_gaps(contract, record).items():
        gaps.setdefault(name, []).append(why)
    for name, why in name_gaps(contract, record).items():
        gaps.setdefault(name, []).append(why)
    return {name: "; ".join(whys) for name, whys in gaps.items()}


def name_gaps(contract: Contract, record) -> dict[str, str]:
    """Code field -> the names its text reads without defining or declaring them (it cannot run on its own)."""
    gaps = {}
    for name in CODE_FIELDS:
        code = getattr(record, name, None)
        text = checked_text(name, code) if code else None
        if text is None:
            continue
        part = "its '# after' part" if text != code else "its text"
        try:
            reads = free_names(text)
        except NotPython as exc:
            gaps[name] = f"{name} is not Python ({exc}), so it cannot run from the record"
            continue
        if name not in contract.code_names:
            gaps[name] = (f"the record has {name}, the reproduction does not declare the user's names it may read "
                          f"(CODE_NAMES[{name!r}]; {part} reads {', '.join(reads) or 'none'})")
            continue
        undeclared = [read for read in reads if read not in contract.code_names[name]]
        if undeclared:
            gaps[name] = (f"{name} reads {', '.join(undeclared)} in {part}, which it neither defines nor imports and "
                          f"CODE_NAMES[{name!r}] does not declare: it does not run from the record's text")
    return gaps


def guard_gaps(contract: Contract, record) -> dict[str, str]:
    """Guard field -> why its negative controls cannot run (no VALID; a predicate with no GUARD_CALL to decide it).

    A gap fails that guard's claim and is written in the run's result; `errkb validate` reports it too.
    """
    gaps = {}
    for name in record_guards(record):
        if not contract.valid:
            gaps[name] = (f"the record has {name}, the reproduction declares no valid inputs for it "
                          f"(VALID = {{\"name\": \"function\"}}: the situations the guard must pass)")
        elif name not in contract.guard_call and only_defines(getattr(record, name)):
            gaps[name] = (f"{name} only defines functions, so running it decides nothing: "
                          f"GUARD_CALL[{name!r}] must give the call that decides (e.g. \"is_valid(x)\")")
    return gaps


def only_defines(code: str) -> bool:
    """The text defines functions or classes (and imports) but checks nothing when executed."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    inert = (*definitions, ast.Import, ast.ImportFrom)
    statements = [node for node in body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    return any(isinstance(node, definitions) for node in statements) and all(isinstance(node, inert) for node in statements)


def needs_from_value(value) -> Needs:
    if not isinstance(value, dict):
        raise ContractError(f"NEEDS is a {type(value).__name__}, expected a dict")
    unknown = sorted(set(map(str, value)) - NEEDS_KEYS)
    if unknown:
        raise ContractError(f"NEEDS has unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(NEEDS_KEYS))}")
    packages = value.get("packages", {})
    if not isinstance(packages, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in packages.items()):
        raise ContractError('NEEDS["packages"] must map distribution names to version specifiers (strings)')
    for name, spec in packages.items():
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            raise ContractError(f'NEEDS["packages"][{name!r}]: {spec!r} is not a version specifier') from None
    cuda = value.get("cuda_devices", 0)
    if not isinstance(cuda, int) or isinstance(cuda, bool) or cuda < 0:
        raise ContractError(f'NEEDS["cuda_devices"] is {cuda!r}, expected a whole number >= 0')
    timeout = value.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 24 * 3600:
        raise ContractError(f'NEEDS["timeout_s"] is {timeout!r}, expected seconds > 0')
    memory = value.get("memory_gb", DEFAULT_MEMORY_GB)
    if not isinstance(memory, (int, float)) or isinstance(memory, bool) or not 0.25 <= memory <= 4096:
        raise ContractError(f'NEEDS["memory_gb"] is {memory!r}, expected GiB between 0.25 and 4096')
    build = value.get("torch_build")
    if build is not None and build not in TORCH_BUILDS:
        raise ContractError(f'NEEDS["torch_build"] is {build!r}, expected one of {", ".join(map(repr, TORCH_BUILDS))}')
    driver = value.get("nvidia_driver")
    if driver is not None and not isinstance(driver, bool):
        raise ContractError(f'NEEDS["nvidia_driver"] is {driver!r}, expected True or False')
    return Needs(dict(packages), cuda, float(timeout), float(memory), build, driver)


def missing_hardware(needs: Needs, facts: dict) -> list[str]:
    """What the environment (the probe's facts) lacks for the real case, e.g. ["needs 1 CUDA device, found 0"]."""
    lacking = []
    count = int(facts.get("cuda_device_count") or 0)
    if needs.cuda_devices > count:
        noun = "device" if needs.cuda_devices == 1 else "devices"
        lacking.append(f"needs {needs.cuda_devices} CUDA {noun}, found {count}")
    if needs.torch_build and facts.get("torch"):
        built_for = facts.get("cuda_version")
        if needs.torch_build == "cpu" and built_for:
            lacking.append(f"needs a CPU build of torch, found a CUDA {built_for} build")
        elif needs.torch_build == "cuda" and not built_for:
            lacking.append("needs a CUDA build of torch, found a CPU build")
    if needs.nvidia_driver is not None and facts.get("nvidia_driver") is not needs.nvidia_driver:
        want = "an NVIDIA driver" if needs.nvidia_driver else "a machine without an NVIDIA driver"
        found = {True: "a driver is loaded", False: "no driver is loaded"}.get(facts.get("nvidia_driver"), "cannot tell")
        lacking.append(f"needs {want}, {found}")
    return lacking


def missing_packages(needs: Needs, versions: dict[str, str | None]) -> list[str]:
    """E.g. ["needs hanlp==2.1.5, found 2.1.4", "needs pytorch-crf, not installed"], from the environment's versions."""
    problems = []
    for name, spec in needs.packages.items():
        version = versions.get(name)
        if version is None:
            problems.append(f"needs {name}{spec}, not installed")
        elif not SpecifierSet(spec).contains(version, prereleases=True):
            problems.append(f"needs {name}{spec}, found {version}")
    return problems


def read_provenance(root: Path, slug: str) -> dict | None:
    """The PROVENANCE of reproductions/<slug>.py under `root`; None when there is no reproduction, it does not
    parse (errkb validate says why), or it states none."""
    try:
        return read_contract(root / "reproductions" / f"{slug}.py").provenance
    except (ContractError, OSError):
        return None


def provenance_summary(provenance: dict | None) -> str:
    """What the record's sourceCode and lineNumber were checked against, in words."""
    if provenance is None:
        return "not stated"
    kind = provenance["checked"]
    if kind == "installed":
        return f"excerpt identical to the installed {provenance['dist']} {provenance['version']} file"
    if kind == "native-build":
        excerpt = (f"excerpt from the upstream source at {provenance['commit'][:10]} (offset {provenance['offset']})"
                   if provenance["excerpt"] == "upstream-copy" else "excerpt not verified")
        return f"raise line as the {provenance['dist']} {provenance['version']} build reports it; {excerpt}"
    if kind == "upstream-copy":
        return (f"checked against {provenance['repo']} {provenance['path']} at {provenance['commit'][:10]}, "
                f"line {provenance['line']} (offset {provenance['offset']})")
    return f"not verified: {provenance['why']}"
