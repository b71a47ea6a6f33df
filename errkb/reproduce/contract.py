"""The reproduction contract: read `NEEDS` without importing the file, and say why this machine cannot run it.

    NEEDS = {"packages": {"hanlp": "==2.1.5"}, "cuda_devices": 0, "timeout_s": 120}
    def trigger(): ...   # raises the documented error (or emits the documented warning) inside the library
    def fix(): ...       # applies the documented fix and asserts it works
"""

from __future__ import annotations

import ast
import importlib.metadata
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

NEEDS_KEYS = {"packages", "cuda_devices", "timeout_s", "memory_gb"}
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_GB = 8.0  # each stage's memory limit (isolate.py, sandbox.py) unless NEEDS["memory_gb"] says more
STAGES = ("trigger", "fix")


class ContractError(ValueError):
    """The reproduction file breaks the contract; the message says how."""


@dataclass(frozen=True)
class Needs:
    packages: dict[str, str] = field(default_factory=dict)  # distribution -> version specifier ("" for any)
    cuda_devices: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_gb: float = DEFAULT_MEMORY_GB


def read_needs(path: Path) -> Needs:
    """Parse `NEEDS` (a literal) and check `trigger` and `fix` are defined at top level, importing nothing."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise ContractError(f"cannot parse {path.name}: {exc}") from None
    needs_node, functions = None, set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "NEEDS" for t in targets):
            needs_node = node.value
    missing = [name for name in STAGES if name not in functions]
    if missing:
        raise ContractError(f"no top-level def {', '.join(name + '()' for name in missing)}")
    if needs_node is None:
        raise ContractError("no top-level NEEDS = {...}")
    try:
        value = ast.literal_eval(needs_node)
    except ValueError:
        raise ContractError("NEEDS must be a literal dict (no names or calls)") from None
    return needs_from_value(value)


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
    return Needs(dict(packages), cuda, float(timeout), float(memory))


def missing_hardware(needs: Needs, cuda_device_count: int) -> str | None:
    if needs.cuda_devices > cuda_device_count:
        noun = "device" if needs.cuda_devices == 1 else "devices"
        return f"needs {needs.cuda_devices} CUDA {noun}, found {cuda_device_count}"
    return None


def installed_versions(names) -> dict[str, str | None]:
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def missing_packages(needs: Needs) -> list[str]:
    """E.g. ["needs hanlp==2.1.5, found 2.1.4", "needs pytorch-crf, not installed"]."""
    problems = []
    for name, version in installed_versions(needs.packages).items():
        spec = needs.packages[name]
        if version is None:
            problems.append(f"needs {name}{spec}, not installed")
        elif not SpecifierSet(spec).contains(version, prereleases=True):
            problems.append(f"needs {name}{spec}, found {version}")
    return problems
