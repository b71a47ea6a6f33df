"""Result files as `errkb reproduce` writes them, for any record of a catalog root, and a throwaway maintainer key
to sign them: the honest baseline that forged and broken results are measured against."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from errkb import signing, verifications
from errkb.reproduce.contract import read_contract
from errkb.store import file_hash

REPO = Path(__file__).resolve().parents[1]


def catalog_with(root: Path, *slugs: str, key: bool = True) -> Path:
    """A catalog root holding these records and their reproductions, and (with `key`) a maintainer key whose
    private half lies beside the root, never inside it."""
    (root / "records").mkdir(parents=True, exist_ok=True)
    (root / "reproductions").mkdir(exist_ok=True)
    for slug in slugs:
        shutil.copy(REPO / "records" / f"{slug}.json", root / "records")
        shutil.copy(REPO / "reproductions" / f"{slug}.py", root / "reproductions")
    if key:
        signing.generate_key(private_key(root), root / signing.KEYS_DIR / "test-maintainer.pub")
    return root


def private_key(root: Path) -> Path:
    return root.parent / f"{root.name}-maintainer.pem"


def result(root: Path, slug: str, verdict: str = "verified", torch: str = "2.13.0+cpu", gpus=(), message: str = "the error",
           **changes) -> dict:
    """A consistent, current result of `slug` in `root`: every claim of its reproduction with its stage."""
    claims = read_contract(root / "reproductions" / f"{slug}.py").claims
    packages = {"torch": torch}
    ran = verdict in verifications.RAN_THE_TRIGGER
    data = {
        "schemaVersion": 1, "slug": slug,
        "environment": verifications.environment_key(packages, "3.11.7", list(gpus)),
        "recordHash": file_hash(root / "records" / f"{slug}.json"),
        "reproductionHash": file_hash(root / "reproductions" / f"{slug}.py"),
        "verdict": verdict, "reason": "as planted", "failedClaim": None, "drift": None,
        "stages": [{"stage": "trigger", "function": "trigger", "outcome": "raised" if ran else "not-run",
                    "kind": "exception" if ran else None, "exceptionClass": "RuntimeError" if ran else None,
                    "message": message, "raiseSite": None, "warnings": [], "executed": []},
                   *[{"stage": c.label, "function": c.function, "outcome": "returned" if ran else "not-run"} for c in claims]],
        "claims": [{"kind": c.kind, "index": c.index, "verdict": "verified" if verdict == "verified" else "not-run",
                    "reason": ""} for c in claims],
        "packages": packages, "library": f"torch {torch}", "python": "3.11.7", "torchGitVersion": None,
        "torchBuild": "CUDA 12.8" if gpus else "CPU",
        "hardware": {"cpu": "AMD EPYC", "cpuCount": 2, "gpus": list(gpus), "gpuCount": len(gpus),
                     "cuda": "12.8" if gpus else None, "cudnn": None},
        "os": "Linux", "startedAt": "2026-12-01T07:00:00.000000Z", "seconds": 5.0, "errkbVersion": "0.1.0",
        "ranAt": {"kind": "local", "url": None}, "observedMessages": [message] if ran else [],
    }
    data.update(changes)
    return data


def write(root: Path, data: dict, sign: bool = True) -> Path:
    path = verifications.result_path(root, data["slug"], data["environment"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if sign:
        signing.sign(root, path, signing.load_private_key(private_key(root)))
    return path
