"""Every record in records/ needs reproductions/<slug>.py, except the few listed in reproductions/EXEMPT.

The exemption list exists only while the catalog is being built; tests make sure it can only shrink.
"""

from __future__ import annotations

from pathlib import Path

from .model import Envelope
from .problems import Problem
from .store import RECORDS_DIR, REPRODUCTIONS_DIR

EXEMPTIONS_FILE = "EXEMPT"


def exemptions(root: Path) -> set[str]:
    path = root / REPRODUCTIONS_DIR / EXEMPTIONS_FILE
    if not path.exists():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


def reproduction_path(root: Path, slug: str) -> Path:
    return root / REPRODUCTIONS_DIR / f"{slug}.py"


def missing_reproductions(root: Path, checked: list[tuple[Path, Envelope]]) -> list[Problem]:
    """Problems for record files that live in root/records/ but break the catalog's rules."""
    records_dir = (root / RECORDS_DIR).resolve()
    exempt = exemptions(root)
    problems = []
    for path, envelope in checked:
        if path.resolve().parent != records_dir:
            continue
        slug = envelope.record.slug
        if path.stem != slug:
            problems.append(Problem(str(path), "$.record.slug", f"found {slug!r}, expected {path.stem!r} (the file name)"))
        reproduction = reproduction_path(root, slug)
        if not reproduction.exists():
            if slug not in exempt:
                problems.append(Problem(str(path), "$.record.slug", f"no reproduction: expected {REPRODUCTIONS_DIR}/{slug}.py"))
            continue
        problems += claim_problems(path, envelope, reproduction)
    return problems


def claim_problems(path: Path, envelope: Envelope, reproduction: Path) -> list[Problem]:
    """Every solution needs its demonstration and every code field its stage (read without importing the file)."""
    from .reproduce.contract import ContractError, claim_gaps, contract_problems, read_contract
    from .reproduce.evidence import committed_results, provenance_problems, wording_problems

    shown = f"{REPRODUCTIONS_DIR}/{reproduction.name}"
    try:
        contract = read_contract(reproduction)
    except ContractError as exc:
        return [Problem(str(path), "$.record.slug", f"invalid reproduction {shown}: {exc}")]
    problems = [
        Problem(str(path), "$.record.solutions" if "solution" in problem else "$.record", f"{problem} ({shown})")
        for problem in contract_problems(contract, envelope.record)
    ]
    problems += [Problem(str(path), f"$.record.{field}", f"{gap} ({shown})") for field, gap in claim_gaps(contract, envelope.record).items()]
    results = committed_results(reproduction.parent.parent, envelope.record.slug)
    for where, what in wording_problems(envelope.record, contract, results) + provenance_problems(envelope.record, contract, results):
        problems.append(Problem(str(path), where, what) if where.startswith("$.") else Problem(shown, where, what))
    return problems


def duplicate_ids(checked: list[tuple[Path, Envelope]]) -> list[Problem]:
    """Problems for files whose record id another file already uses."""
    first: dict[str, Path] = {}
    problems = []
    for path, envelope in checked:
        owner = first.setdefault(envelope.record.id, path)
        if owner != path:
            problems.append(Problem(str(path), "$.record.id", f"id {envelope.record.id!r} is also used by {owner}"))
    return problems
