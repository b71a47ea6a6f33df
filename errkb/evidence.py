"""A record's proof, read from its committed result files: the verdict, where it was verified, each claim's
mark and the results behind them. `errkb show --json`, `errkb match --json` and the MCP server give it in
these camelCase keys, the records' own spelling; the same from a clone and from a wheel install, which
ships the reproductions so that the results can be checked as current there too.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from . import runs, signing, verifications
from .store import file_hash, record_path


def result_rows(root: Path, slug: str, trust_unsigned: bool = False) -> list[dict]:
    """Each committed result of the record as a reproduction_runs row, `current` set from today's files and its
    signature verified (an unsigned result counts only when trusted: signing.trusts_unsigned)."""
    hashes = verifications.current_hashes(root, slug)
    keys = signing.maintainer_keys(root)
    rows = []
    for path in verifications.files_of(root / verifications.VERIFICATIONS_DIR / slug):
        verification, signer = verifications.load_signed(path, root, keys)
        rows.append(runs.row(verification, path.relative_to(root).as_posix(), verifications.is_current(verification, hashes),
                             signer=signer, trust_unsigned=signing.trusts_unsigned(trust_unsigned)))
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
    return _proof(root, slug, result_rows(root, slug))


def _counts(row: dict) -> bool:
    """A result counts as proof when it judged today's files and is trusted; an unsigned one is listed only."""
    return bool(row["current"] and row["trusted"])


def _proof(root: Path, slug: str, rows: list[dict]) -> dict:
    verdict, verified_at, verified_on = runs.verdict_columns(rows, file_hash(record_path(root, slug)))
    current = [r for r in rows if _counts(r)]
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


def brief(root: Path, slug: str) -> dict:
    """The evidence a list of records carries for each (search and list hits in the MCP server): the verdict,
    where it was verified, each claim's mark, where it was not proven, and the committed result files that
    count (current and signed), citable by path."""
    rows = result_rows(root, slug)
    proof = _proof(root, slug, rows)
    return {key: proof[key] for key in ("lastVerdict", "verifiedOn", "proofSummary", "claimMarks", "notProvenOn")} | {
        "resultPaths": [r["path"] for r in rows if _counts(r)]}


def result_entry(row: dict) -> dict:
    return {
        "path": row["path"], "environment": row["environment"], "current": bool(row["current"]),
        "signer": row["signer"], "signature": "signed" if row["signer"] else "unsigned",
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
