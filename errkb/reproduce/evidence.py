"""What `errkb validate` checks of a record against its reproduction's WORDINGS and PROVENANCE, with the
committed results (verifications/<slug>/) and the installed packages as evidence.

Wordings: a wording declared as matched by the pattern must be accepted by the record's messagePattern; a wording
whose source is a release (`torch==1.13.1`) must have been observed by a committed, not skipped, result for that
release (the wording, whitespace aside, inside the message the run saw). Results need not be current: an older
reproduction of the record on that release still shows what the release prints. A wording from an issue
(`owner/repo#N`) is a citation; reading it is the reviewer's job.

Provenance: an excerpt from an installed file is re-read byte for byte when that version is installed here (the
distribution's own file, found through importlib.metadata without importing it); a native build's line must be
the raise line a committed result of that release reports; an upstream copy's offset must be lineNumber - line.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..patterns import PatternError, pattern_matches
from ..problems import InvalidInput
from .. import verifications
from .compare import is_native, path_matches
from .contract import Contract


def committed_results(root: Path, slug: str) -> list[verifications.Verification]:
    """The record's committed results that load (a broken result file is reported by the build, not here)."""
    results = []
    for path in sorted((root / verifications.VERIFICATIONS_DIR / slug).glob("*.json")):
        try:
            results.append(verifications.load(path, root))
        except InvalidInput:
            continue
    return results


def is_release(version: str | None, wanted: str) -> bool:
    """`2.13.0+cpu` is release 2.13.0 (a local build tag does not make another release)."""
    if not version:
        return False
    try:
        return SpecifierSet(f"=={wanted}").contains(version, prereleases=True)
    except InvalidSpecifier:
        return version == wanted


def of_release(results: list, dist: str, version: str) -> list:
    return [r for r in results if r.verdict != "skipped" and is_release(r.packages.get(dist), version)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def seen_messages(result) -> list[str]:
    trigger = result.stages[0].message if result.stages and result.stages[0].message else None
    return [*result.observedMessages, *([trigger] if trigger else [])]


def wording_problems(record, contract: Contract, results: list) -> list[tuple[str, str]]:
    """(where, what) for each declared wording the pattern or the committed results do not back."""
    problems = []
    for index, wording in enumerate(contract.wordings):
        where = f"WORDINGS[{index}]"
        if wording.match == "pattern":
            try:
                if not pattern_matches(record.messagePattern, wording.text):
                    problems.append(("$.record.messagePattern", f"does not accept {wording.text!r}, which {where} "
                                     f"({wording.source}) declares as matched by the pattern"))
            except PatternError:
                pass  # the pattern itself is reported by the record's own validation
        release = wording.release
        if release is None:
            continue
        dist, version = release
        ran = of_release(results, dist, version)
        if not ran:
            problems.append((f"{where}.source", f"no committed result for {dist}=={version} backs {wording.text!r} "
                             f"(run errkb reproduce --with {dist}=={version}, or cite a public issue as owner/repo#N)"))
        elif not any(_flat(wording.text) in _flat(message) for r in ran for message in seen_messages(r)):
            seen = sorted({message for r in ran for message in seen_messages(r)})
            problems.append((f"{where}.text", f"{wording.text!r} is not what the committed result(s) for "
                             f"{dist}=={version} observed: {seen[:3]!r}"))
    return problems


def provenance_problems(record, contract: Contract, results: list) -> list[tuple[str, str]]:
    """(where, what) for a PROVENANCE that is missing or that the installed file or the results contradict."""
    provenance = contract.provenance
    if provenance is None:
        return [("PROVENANCE", "missing: the reproduction must state what sourceCode and lineNumber were checked "
                 'against, e.g. PROVENANCE = {"checked": "installed", "dist": "torch", "version": "2.13.0"}')]
    kind = provenance["checked"]
    if kind == "installed":
        return installed_problems(record, provenance)
    if kind == "native-build":
        return native_problems(record, provenance, results)
    if kind == "upstream-copy":
        return upstream_problems(record, provenance)
    return []


def installed_problems(record, provenance: dict) -> list[tuple[str, str]]:
    dist, version = provenance["dist"], provenance["version"]
    if is_native(record.filePath):
        return [("PROVENANCE.checked", f"{record.filePath} is native source, which no installed package holds: "
                 f"use 'native-build' or 'upstream-copy'")]
    try:
        distribution = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return []  # not installed here: nothing to re-check
    if not is_release(distribution.version, version):
        return []
    path = Path(str(distribution.locate_file(record.filePath)))
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError:
        return [("$.record.filePath", f"installed {dist} {distribution.version} has no file {record.filePath} "
                 f"(PROVENANCE says the excerpt was checked against it)")]
    start, end = record.sourceCodeStart, record.sourceCodeEnd
    installed = lines[start - 1: end]
    claimed = record.sourceCode.encode("utf-8").split(b"\n")
    if installed == claimed:
        return []
    first = next((i for i, (a, b) in enumerate(zip(installed, claimed)) if a != b), min(len(installed), len(claimed)))
    theirs = installed[first].decode("utf-8", "replace") if first < len(installed) else "(past the end)"
    ours = claimed[first].decode("utf-8", "replace") if first < len(claimed) else "(nothing)"
    return [("$.record.sourceCode", f"is not lines {start}-{end} of the installed {dist} {distribution.version} "
             f"{record.filePath} (PROVENANCE 'installed'): line {start + first} reads {theirs!r}, the record has {ours!r}")]


def native_problems(record, provenance: dict, results: list) -> list[tuple[str, str]]:
    dist, version = provenance["dist"], provenance["version"]
    if not is_native(record.filePath):
        return [("PROVENANCE.checked", f"{record.filePath} is Python source: a native build reports no raise line "
                 f"for it; use 'installed' or 'upstream-copy'")]
    sites = set()
    for result in of_release(results, dist, version):
        site = result.stages[0].raiseSite if result.stages else None
        file, _, line = (site or "").rpartition(":")
        if file and line.isdigit() and path_matches(file, record.filePath):
            sites.add(int(line))
    if not sites:
        return [("PROVENANCE", f"no committed result for {dist}=={version} reports the raise line in "
                 f"{record.filePath} (run errkb reproduce with that release)")]
    if record.lineNumber not in sites:
        return [("$.record.lineNumber", f"is {record.lineNumber}, but the {dist} {version} build reports the raise at "
                 f"{record.filePath}:{', '.join(map(str, sorted(sites)))} (PROVENANCE 'native-build')")]
    return []


def upstream_problems(record, provenance: dict) -> list[tuple[str, str]]:
    problems = []
    line, offset = provenance["line"], provenance["offset"]
    if record.lineNumber - line != offset:
        problems.append(("PROVENANCE.offset", f"is {offset}, but lineNumber {record.lineNumber} - line {line} of the "
                         f"copy is {record.lineNumber - line}"))
    same_file = provenance["commit"] == record.analyzedSha and provenance["path"] == record.filePath
    if same_file and provenance["repo"] == record.repo and line != record.lineNumber:
        problems.append(("PROVENANCE.line", f"is {line}, in the very file and commit the record cites at line "
                         f"{record.lineNumber}: the copy is that file, so the lines must agree"))
    return problems
