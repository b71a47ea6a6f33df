"""`errkb draft --api-change --library DIST`: run the snippet against DIST's releases, each in its own uv environment
(errkb/reproduce/environments.py), and bisect for the last release where it works and the first where it raises.
Every release actually run is reported with what it did; releases between two runs are never implied."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ..patterns import pattern_matches
from ..reproduce import environments
from .capture import Captured, DraftError, capture, locate, run_snippet
from .generalise import generalise
from .snippet import imported_modules

WORKS, FAILS, OTHER, UNINSTALLABLE = "works", "fails", "other error", "not installable"


@dataclass
class Run:
    version: str
    outcome: str  # works, fails (the documented error), other error, not installable
    detail: str = ""


@dataclass
class Bisection:
    library: str
    releases: list[str]  # every candidate release, oldest first
    runs: list[Run] = field(default_factory=list)  # in the order they ran
    last_working: str | None = None
    first_failing: str | None = None
    captured: Captured | None = None  # the error on the newest release
    python: str | None = None  # the newest release's environment
    pins: dict[str, str] = field(default_factory=dict)  # --pin: requirements every environment gets
    others: dict[str, str] = field(default_factory=dict)  # what the newest release's environment got beside it

    def outcome(self, version: str) -> str | None:
        return next((run.outcome for run in self.runs if run.version == version), None)

    def report(self) -> list[str]:
        lines = [f"{self.library}=={run.version}: {run.outcome}" + (f" ({run.detail})" if run.detail else "")
                 for run in sorted(self.runs, key=lambda run: Version(run.version))]
        untested = [v for v in self.releases if self.outcome(v) is None]
        if untested:
            lines.append(f"not run (no claim is made for them): {', '.join(untested)}")
        return lines


def list_releases(distribution: str, pre: bool = False) -> list[str]:
    """The releases the package index offers for this Python, oldest first (pip's own index client and its
    configuration: PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX)."""
    done = subprocess.run([sys.executable, "-m", "pip", "index", "versions", distribution, *(["--pre"] if pre else [])],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    found = re.search(r"^Available versions: (.+)$", done.stdout, flags=re.M)
    if done.returncode or not found:
        reason = next((line for line in done.stderr.splitlines() if line.startswith("ERROR")), done.stderr.strip()[-300:])
        raise DraftError(f"no releases of {distribution} found in the package index ({reason or 'pip index found none'})")
    versions = []
    for text in found.group(1).split(","):
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return [str(v) for v in sorted(versions) if pre or not v.is_prerelease]


def select(releases: list[str], since: str | None, until: str | None, only: list[str] | None) -> list[str]:
    chosen = [v for v in releases if (not since or Version(v) >= Version(since)) and (not until or Version(v) <= Version(until))]
    if only:
        missing = [v for v in only if v not in releases]
        if missing:
            raise DraftError(f"--releases {', '.join(missing)}: not in the index's releases ({', '.join(releases[-12:])} ...)")
        chosen = [v for v in releases if v in only]
    if len(chosen) < 2:
        raise DraftError(f"need at least two releases to bisect, found {', '.join(chosen) or 'none'} "
                         f"(of {len(releases)} in the index; check --since/--until/--releases)")
    return chosen


def others_of(snippet_text: str, library: str) -> dict[str, str]:
    """The snippet's other libraries, pinned to what is installed here (exact local build: torch 2.13.0+cpu stays the
    CPU wheel, never another torch)."""
    facts = locate([], sorted(imported_modules(snippet_text) | {"torch"}))  # torch: a dependency pinned, never resolved
    return {name: f"=={f['version']}" for name, f in facts["distributions"].items()
            if canonicalize_name(name) != canonicalize_name(library) and f.get("version")}


def parse_pins(pins) -> dict[str, str]:
    """--pin setuptools<70 --pin lightning-cloud==0.5.32: what old releases need beside them (name -> specifier)."""
    parsed = {}
    for text in pins or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            raise DraftError(f"--pin {text!r} is not a requirement: {exc}") from None
        parsed[requirement.name] = str(requirement.specifier)
    return parsed


def bisect(snippet_text: str, name: str, library: str, releases: list[str], timeout_s: float,
           say: Callable[[str], None] = lambda text: None, pins: dict[str, str] | None = None) -> Bisection:
    found = Bisection(library, releases, pins=dict(pins or {}))
    others = {**others_of(snippet_text, library), **found.pins}

    def environment(version: str) -> str | None:
        prepared = environments.prepare([Requirement(f"{library}=={version}")], others, say=say)
        if prepared.problem:
            found.runs.append(Run(version, UNINSTALLABLE, prepared.problem[:300]))
            return None
        if version == releases[-1]:  # what the newest environment could not get is not a need of the record
            found.others = {name: spec for name, spec in others.items() if name not in prepared.unavailable}
        return prepared.python

    newest = releases[-1]
    python = environment(newest)
    if python is None:
        raise DraftError(f"the newest release {library}=={newest} cannot be installed: {found.runs[-1].detail}")
    try:
        found.captured = capture(snippet_text, name, timeout_s, python)
    except DraftError as exc:
        raise DraftError(f"on the newest release {library}=={newest}: {exc}") from None
    found.python = python
    pattern = generalise(found.captured.message, []).pattern
    found.runs.append(Run(newest, FAILS, f"{found.captured.cls}: {found.captured.message.splitlines()[0][:120]}"))
    say(f"{library}=={newest}: fails with {found.captured.cls}")

    def outcome(version: str) -> str:
        python = environment(version)
        if python is None:
            return UNINSTALLABLE
        run = run_snippet(snippet_text, timeout_s, python)
        if run.status != "completed":
            found.runs.append(Run(version, OTHER, f"the snippet {run.status}: {run.death() if run.status != 'timeout' else 'timeout'}"))
        elif run.result.get("outcome") == "returned":
            found.runs.append(Run(version, WORKS))
        else:
            exc = run.result["exception"]
            same = exc["class"] == found.captured.cls and pattern_matches(pattern, exc["message"])
            found.runs.append(Run(version, FAILS if same else OTHER, f"{exc['class']}: {exc['message'].splitlines()[0][:120] if exc['message'] else ''}"))
        say(f"{library}=={version}: {found.runs[-1].outcome}")
        return found.runs[-1].outcome

    low, high = 0, len(releases) - 1
    first = outcome(releases[low])
    if first == FAILS:
        raise DraftError(f"no working side: the oldest release tried, {library}=={releases[low]}, raises the same error "
                         f"(releases run: {'; '.join(found.report())}); try an older --since")
    if first != WORKS:
        raise DraftError(f"the oldest release tried, {library}=={releases[low]}, gives {first} "
                         f"({found.runs[-1].detail}), not a working run; choose a later --since")
    while high - low > 1:
        middle = (low + high) // 2
        result = outcome(releases[middle])
        if result == WORKS:
            low = middle
        elif result == FAILS:
            high = middle
        else:  # another error or no environment: the boundary is not narrowed past it, and the report says so
            break
    found.last_working, found.first_failing = releases[low], releases[high]
    return found


def extra_doc(found: Bisection) -> str:
    runs = "\n".join(f"  {line}" for line in found.report())
    exact = "" if found.releases.index(found.first_failing) - found.releases.index(found.last_working) == 1 else (
        "\nThe boundary is not narrowed to adjacent releases: the releases between are not run.")
    return (f"\n\nAPI change (errkb draft --api-change): {found.library} works up to {found.last_working} and raises from "
            f"{found.first_failing} on. Releases run:\n{runs}{exact}\nCommit the results on both sides: errkb reproduce SLUG "
            f"--with {found.library}=={found.last_working} --with {found.library}=={found.first_failing} "
            f"--with {found.library}=={found.releases[-1]}")


def needs_of(found: Bisection, captured: Captured) -> dict:
    """Any release of the library (the old side must run, and not raise, for its result to count) and everything
    the bisection's environments got beside it, exactly (torch 2.13.0+cpu stays that build: an environment made
    from these NEEDS never resolves another torch)."""
    packages = {found.library: ""}
    for name, facts in sorted(captured.distributions.items()):
        if canonicalize_name(name) != canonicalize_name(found.library) and facts.get("version"):
            packages[name] = f"=={facts['version']}"
    return {"packages": {**packages, **found.others}, "cuda_devices": 0, "timeout_s": 120}


def api_literal(found: Bisection) -> str:
    runs = {run.version: run.outcome for run in sorted(found.runs, key=lambda run: Version(run.version))}
    return ("\n\n# What errkb draft --api-change ran (each release in its own environment) and saw.\n"
            f"API_CHANGE = {{\"library\": {found.library!r}, \"last_working\": {found.last_working!r}, "
            f"\"first_failing\": {found.first_failing!r}, \"runs\": {runs!r}, \"pins\": {found.pins!r}}}\n")
