"""A record's proof, read from its committed result files: the verdict, where it was verified, each claim's
mark and the results behind them. `errkb show --json`, `errkb match --json` and the MCP server give it in
these camelCase keys, the records' own spelling; the same from a clone and from a wheel install, which
ships the reproductions so that the results can be checked as current there too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from . import runs, verifications
from .store import file_hash, record_path


def result_rows(root: Path, slug: str) -> list[dict]:
    """Each committed result of the record as a reproduction_runs row, `current` set from today's files."""
    hashes = verifications.current_hashes(root, slug)
    rows = []
    for path in sorted((root / verifications.VERIFICATIONS_DIR / slug).glob("*.json")):
        verification = verifications.load(path, root)
        rows.append(runs.row(verification, path.relative_to(root).as_posix(), verifications.is_current(verification, hashes)))
    return sorted(rows, key=lambda r: r["started_at"], reverse=True)


def claim_marks(current: list[dict]) -> dict[str, dict]:
    """For each claim ("solution 1", "exampleFix"...): the environments it held in and those it ran in."""
    held: dict[str, list[str]] = defaultdict(list)
    ran: dict[str, list[str]] = defaultdict(list)
    for run in current:
        for claim in json.loads(run.get("claims") or "[]"):
            label = claim_label(claim)
            if claim.get("verdict") in (None, "not-run"):
                continue
            ran[label].append(run["environment"])
            if claim.get("verdict") == "verified":
                held[label].append(run["environment"])
    return {
        label: {"verified": len(held[label]) == len(environments), "heldIn": len(held[label]), "ranIn": len(environments),
                "failedIn": sorted(set(environments) - set(held[label]))}
        for label, environments in ran.items()
    }


def claim_label(claim: dict) -> str:
    return f"solution {claim.get('index')}" if claim.get("kind") == "solution" else str(claim.get("kind"))


def of_record(root: Path, slug: str) -> dict:
    """lastVerdict, lastVerifiedAt, verifiedOn, proofSummary, claimMarks, notProvenOn (current results that did not
    verify) and every result (camelCase) of one record.

    Raises InvalidInput naming the file and field when a result file is malformed.
    """
    rows = result_rows(root, slug)
    verdict, verified_at, verified_on = runs.verdict_columns(rows, file_hash(record_path(root, slug)))
    current = [r for r in rows if r["current"]]
    return {
        "lastVerdict": verdict,
        "lastVerifiedAt": verified_at,
        "verifiedOn": verified_on,
        "proofSummary": runs.matrix_summary(current, None) if current else None,
        "claimMarks": claim_marks(current),
        "notProvenOn": [
            {"environment": r["environment"], "verdict": r["verdict"], "reason": r["reason"], "path": r["path"]}
            for r in current if r["verdict"] != "verified"
        ],
        "verifications": [result_entry(r) for r in rows],
    }


def result_entry(row: dict) -> dict:
    return {
        "path": row["path"], "environment": row["environment"], "current": bool(row["current"]),
        "verdict": row["verdict"], "reason": row["reason"], "failedClaim": row["failed_claim"],
        "claims": json.loads(row["claims"] or "[]"), "packages": json.loads(row["packages"] or "{}"),
        "python": row["python"], "torchBuild": row["torch_build"], "gpuCount": row["cuda_device_count"],
        "gpus": json.loads(row["cuda_devices"] or "[]"), "drift": row["drift"], "startedAt": row["started_at"],
        "ranAt": row["ran_at"],
    }


def first_solution_mark(evidence: dict) -> str:
    """"verified in 6/6 environments", "failed in 1 of 6", or "not run yet": the mark of solution 1."""
    mark = evidence["claimMarks"].get("solution 1")
    if mark is None:
        return "not run yet"
    if mark["verified"]:
        return f"verified in {mark['heldIn']}/{mark['ranIn']} environments"
    return f"failed in {mark['ranIn'] - mark['heldIn']} of {mark['ranIn']} environments"
