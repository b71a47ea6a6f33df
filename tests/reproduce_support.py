"""Helpers for the reproduce tests: valid records made from the seed, and catalogs of planted reproductions."""

from __future__ import annotations

import importlib.util
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from conftest import SEED_RECORD

PLANTED = Path(__file__).parent / "planted"
CPP_EXAMPLE = Path(__file__).parent / "examples" / "valid" / "cpp-raise-site.json"
TORCH_SHA = "cf30153c4c131c8164ee7798e5022d810682e2cb"


def record_with(changes: dict, base: dict | None = None) -> dict:
    """A valid envelope: the seed record (or `base`) with `changes`, its githubUrl recomputed."""
    envelope = json.loads(SEED_RECORD.read_text(encoding="utf-8"))
    record = dict(base or envelope["record"], **changes)
    if "id" not in changes:  # ids are unique in a catalog
        record["id"] = hashlib.sha256(record["slug"].encode()).hexdigest()[:16]
    record["githubUrl"] = (
        f"https://github.com/{record['repo']}/blob/{record['analyzedSha']}/{record['filePath']}"
        f"#L{record['sourceCodeStart']}-L{record['sourceCodeEnd']}"
    )
    return {"record": record, "datasetVersion": envelope["datasetVersion"]}


def softmax_warning(pattern: str, message: str) -> dict:
    """Record changes for torch's Python UserWarning about softmax without dim=, excerpt from the installed file."""
    torch_dir = Path(list(importlib.util.find_spec("torch").submodule_search_locations)[0])  # no import of torch
    lines = (torch_dir / "nn" / "functional.py").read_text(encoding="utf-8").split("\n")
    warn = next(i for i, line in enumerate(lines, 1) if "Implicit dimension choice for" in line) - 1
    start, end = warn - 2, warn + 4
    return dict(
        repo="pytorch/pytorch", filePath="torch/nn/functional.py", lineNumber=warn, sourceCodeStart=start,
        sourceCodeEnd=end, sourceCode="\n".join(lines[start - 1 : end]), analyzedSha=TORCH_SHA,
        errorClass="UserWarning", errorType="deprecation", severity="warning", errorMessage=message,
        messagePattern=pattern,
    )


SOFTMAX_MESSAGE = "Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as an argument."
LOG_SOFTMAX_MESSAGE = SOFTMAX_MESSAGE.replace("for softmax", "for log_softmax")


@dataclass
class Case:
    slug: str
    planted: str | None  # file in tests/planted/, None for no reproduction
    changes: dict
    verdict: str
    reason: str  # a part of the reason the verdict must come with
    base: dict | None = None


# Planted reproductions demonstrate one solution and run no code field, unless a case says otherwise.
ONE_CLAIM = {
    "solutions": ["Train on one device: fit(devices=[0])"],
    "exampleFix": None, "validationCode": None, "typeGuard": None, "tryCatchPattern": None,
}


def write_catalog(root: Path, cases: list[Case]) -> None:
    (root / "records").mkdir(parents=True)
    (root / "reproductions").mkdir()
    for case in cases:
        envelope = record_with(dict(ONE_CLAIM, **case.changes, slug=case.slug), case.base)
        (root / "records" / f"{case.slug}.json").write_text(json.dumps(envelope, indent=2), encoding="utf-8")
        if case.planted:
            shutil.copy(PLANTED / case.planted, root / "reproductions" / f"{case.slug}.py")


def survivors(marker: str) -> list[int]:
    """The processes whose command line carries `marker` (a stage's daemon that should not outlive it)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
