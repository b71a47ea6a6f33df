"""`errkb reproduce --with torch==2.5.1`: run reproductions in a cached virtual environment holding exactly the
requested releases, errkb itself, and the other packages the reproductions' NEEDS pin.

Environments are made with uv (it hard-links from its cache, so ten PyTorch releases do not cost ten full copies)
or, where uv is absent, with venv + pip (and say so). They live under $ERRKB_ENV_DIR (default: the user cache
folder, e.g. ~/.cache/errkb/envs), one folder per set of requirements, and are reused until `--refresh`.
A half-made environment is never left behind: it is built in a `.partial-PID` folder and renamed when complete.
Runs that need the same environment at once take its file lock (`FOLDER.lock`, flock): one builds, the others
wait and reuse it; whoever holds the lock first removes `.partial-*` folders a killed creation left.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

MARKER = "errkb-env.json"
INSTALL_TIMEOUT_S = 3600
MAX_NAME, MAX_VERSION = 100, 64  # PyPI's longest names and versions are far shorter; a folder name must fit in 255 bytes


class SpecError(ValueError):
    """A --with value that is not NAME==VERSION, or an unusable $ERRKB_ENV_DIR."""


def parse_specs(text: str) -> list[Requirement]:
    """One --with value: NAME==VERSION, or several comma-separated (one environment)."""
    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise SpecError(f"--with {text!r} is empty: expected NAME==VERSION (e.g. torch==2.5.1)")
    return [parse_spec(part) for part in parts if part]


def parse_spec(text: str) -> Requirement:
    """NAME==VERSION with the name canonicalised (`SIX==1.16.0` and `six==1.16.0` are one environment)."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise SpecError(f"--with {text!r} is not a requirement: {exc}") from None
    specifiers = list(requirement.specifier)
    if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version or requirement.extras or requirement.marker:
        raise SpecError(f"--with {text!r}: expected NAME==VERSION, one exact release (e.g. torch==2.5.1)")
    version = specifiers[0].version
    if len(requirement.name) > MAX_NAME or len(version) > MAX_VERSION:
        raise SpecError(f"--with {text[:80]!r}...: a name of at most {MAX_NAME} and a version of at most {MAX_VERSION} characters expected")
    return Requirement(f"{canonicalize_name(requirement.name)}=={version}")


def env_root() -> Path:
    configured = os.environ.get("ERRKB_ENV_DIR")
    if configured:
        if not Path(configured).is_absolute():
            raise SpecError(f"$ERRKB_ENV_DIR={configured!r} is a relative path: stages run in other folders, expected an absolute path")
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("errkb")) / "envs"


@dataclass
class Prepared:
    """An environment ready to run stages (python set), or why it is not (problem set)."""

    label: str
    python: str | None = None
    problem: str | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # distribution -> why it could not be installed
    installer: str = "uv"
    path: Path | None = None


def era_constraints(wanted: list[Requirement], others: dict[str, str]) -> dict[str, str]:
    """What a release's own users had beside it. Torch wheels before 2.3 were built against NumPy 1.x and
    cannot use NumPy 2 ("Numpy is not available"), so their environments get numpy<2; they also import
    `packaging` (falling back to setuptools' pkg_resources) in torch.torch_version without declaring it, which
    the first optimizer step reaches, so they get packaging too."""
    for requirement in wanted:
        if canonicalize_name(requirement.name) == "torch":
            release = Version(next(iter(requirement.specifier)).version)
            if release < Version("2.3"):
                era = {"numpy": "<2", "packaging": ""}
                return {name: spec for name, spec in era.items() if not others.get(name)}  # "": any version
    return {}


def uv_binary() -> str | None:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def errkb_checkout() -> Path | None:
    """The source tree errkb runs from, when it is one (installed into environments without its dependencies)."""
    folder = Path(__file__).resolve().parents[2]
    return folder if (folder / "pyproject.toml").is_file() else None


def label_of(wanted: list[Requirement] | None) -> str:
    """How runs and results name an environment: its --with pins ("torch==2.5.1"), or "installed"."""
    return " ".join(str(r) for r in wanted) if wanted else "installed"


def prepare(
    wanted: list[Requirement],
    others: dict[str, str],
    refresh: bool = False,
    say: Callable[[str], None] = lambda text: None,
) -> Prepared:
    """The environment with exactly `wanted` and, where they install beside it, `others` (distribution ->
    specifier, from the reproductions' NEEDS)."""
    label = label_of(wanted)
    pinned = {canonicalize_name(r.name) for r in wanted}
    others = {canonicalize_name(name): spec for name, spec in sorted(others.items()) if canonicalize_name(name) not in pinned}
    others.update(era_constraints(wanted, others))
    key_text = json.dumps([sys.version_info[:2], sorted(map(str, wanted)), others], sort_keys=True)
    name = "-".join(f"{r.name}{r.specifier}".replace("==", "-") for r in wanted)
    folder = env_root() / f"{name}-py{sys.version_info[0]}.{sys.version_info[1]}-{hashlib.sha256(key_text.encode()).hexdigest()[:10]}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder, label, say):
        return _prepare_locked(folder, wanted, others, label, refresh, say)


@contextlib.contextmanager
def _locked(folder: Path, label: str, say):
    """Hold the environment's lock; a second run waits here (and then finds the environment made)."""
    with open(folder.with_name(folder.name + ".lock"), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"environment {label}: another run is creating it; waiting")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prepare_locked(folder: Path, wanted, others: dict[str, str], label: str, refresh: bool, say) -> Prepared:
    for leftover in folder.parent.glob(folder.name + ".partial-*"):  # under the lock nobody is building them
        shutil.rmtree(leftover, ignore_errors=True)
    marker = folder / MARKER
    if marker.is_file() and not refresh:
        facts = json.loads(marker.read_text(encoding="utf-8"))
        say(f"environment {label}: reusing {folder}")
        return Prepared(label, str(folder / "bin" / "python"), None, facts.get("unavailable", {}), facts.get("installer", "uv"), folder)
    uv = uv_binary()
    installer = "uv" if uv else "venv + pip"
    if not uv:
        say("uv is not installed: making the environment with venv + pip (slower, and no shared cache): pip install uv")
    say(f"environment {label}: creating {folder} with {installer} (the first time downloads the packages)")
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    if refresh:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        prepared = _build(partial, uv, wanted, others, label, say)
        prepared.installer = installer
        if prepared.problem:
            shutil.rmtree(partial, ignore_errors=True)
            return prepared
        (partial / MARKER).write_text(
            json.dumps({"wanted": [str(r) for r in wanted], "others": others, "unavailable": prepared.unavailable, "installer": installer}, indent=2),
            encoding="utf-8",
        )
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        return Prepared(label, problem=_disk_message(str(exc), label, folder) or f"cannot create the environment for {label}: {exc}")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    prepared.python, prepared.path = str(folder / "bin" / "python"), folder
    return prepared


def _build(folder: Path, uv: str | None, wanted, others: dict[str, str], label: str, say) -> Prepared:
    folder.parent.mkdir(parents=True, exist_ok=True)
    python = folder / "bin" / "python"
    made = _run([uv, "venv", "--quiet", "--python", sys.executable, str(folder)] if uv else [sys.executable, "-m", "venv", str(folder)])
    if made.returncode:
        return Prepared(label, problem=_failure(made, label, folder, "cannot create a virtual environment"))

    def install(requirements: list[str]) -> subprocess.CompletedProcess:
        if uv:
            links = [arg for link in os.environ.get("PIP_FIND_LINKS", "").split() for arg in ("--find-links", link)]
            return _run([uv, "pip", "install", "--quiet", "--python", str(python), *links, *requirements])
        return _run([str(python), "-m", "pip", "install", "--quiet", *requirements])

    pins = [str(r) for r in wanted]
    extra = [f"{name}{spec}" for name, spec in others.items()]
    done = install(pins + extra)
    unavailable = {}
    if done.returncode:
        alone = install(pins)
        if alone.returncode:
            return Prepared(label, problem=_failure(alone, label, folder, f"cannot install {label}"))
        for requirement in extra:
            one = install(pins + [requirement])
            if one.returncode:
                name = Requirement(requirement).name
                unavailable[name] = f"{requirement} cannot be installed beside {label}: {_reason(one)}"
                say(f"environment {label}: {unavailable[name]}")
    checkout = errkb_checkout()
    if checkout:
        own = install(["--no-deps", "-e", str(checkout)])
        if own.returncode:
            return Prepared(label, problem=_failure(own, label, folder, "cannot install errkb into it"))
    return Prepared(label, unavailable=unavailable)


def _run(command: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, 124, "", f"timed out after {INSTALL_TIMEOUT_S} s")


def _reason(done: subprocess.CompletedProcess) -> str:
    lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines() if line.strip()]
    telling = [line for line in lines if any(word in line for word in ("no version", "unsatisfiable", "error", "Error", "depends on", "requires"))]
    return " ".join((telling or lines)[-3:])[:600] or f"exit code {done.returncode}"


def _failure(done: subprocess.CompletedProcess, label: str, folder: Path, what: str) -> str:
    return _disk_message(done.stderr or "", label, folder) or f"{what}: {_reason(done)}"


def _disk_message(text: str, label: str, folder: Path) -> str | None:
    if "No space left on device" in text or "ENOSPC" in text or "Disk quota exceeded" in text:
        return f"the disk filled while creating the environment for {label} under {folder.parent}; the half-made environment was removed"
    return None
