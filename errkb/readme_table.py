"""The README's coverage table: one row per record, from records/, the reproductions' NEEDS and the committed
results. `errkb add` and `errkb reproduce` rewrite it in a catalog whose README.md carries the table's markers, so
adding a record never leaves the README (and its doc test) behind until someone regenerates it by hand."""

from __future__ import annotations

import re
from pathlib import Path

from .problems import InvalidInput
from .store import record_files, write_atomically

COVERAGE_START, COVERAGE_END = "<!-- coverage-table -->", "<!-- /coverage-table -->"
README = "README.md"


def coverage_table(root: Path) -> str:
    """One row per record: where it is raised, what its reproduction needs, and what the committed results show."""
    from .reproduce.contract import ContractError, read_contract
    from .runs import matrix_summary
    from .validate import load_envelope
    from .verifications import for_record

    rows = ["| record | raised at | the reproduction needs | committed results (current) |", "|---|---|---|---|"]
    for path in record_files(root):
        try:
            record = load_envelope(path).record
        except InvalidInput:  # a draft (errkb draft) or a broken file is not covered yet
            continue
        try:
            needs = read_contract(root / "reproductions" / f"{record.slug}.py").needs
            devices = f"{needs.cuda_devices} CUDA device(s)" if needs.cuda_devices else "CPU"
            if needs.torch_build:
                devices += f", a {needs.torch_build.upper()} build of torch"
            if needs.nvidia_driver is False:
                devices += ", no NVIDIA driver"
            packages = ", ".join(f"{name}{spec}" for name, spec in sorted(needs.packages.items()))
            wants = f"{devices}; {packages}"
        except ContractError:
            wants = "(invalid reproduction)"
        runs = [_as_run(entry) for entry in for_record(root, record.slug) if entry["current"]]
        summary = matrix_summary(runs, record.lineNumber) if runs else "none yet"
        rows.append(f"| `{record.slug}` | `{record.filePath}:{record.lineNumber}` ({record.repo}) | {wants} | {summary} |")
    return "\n".join(rows)


def _as_run(entry: dict) -> dict:
    """A result file's entry in the shape of a reproduction_runs row, for the summary."""
    from .runs import library_fields

    library, library_version = library_fields(entry["library"])
    return {
        "verdict": entry["verdict"], "torch": entry["packages"].get("torch"), "library": library,
        "library_version": library_version,
        "cuda_device_count": entry["cuda_devices"], "cuda_devices": "[]", "failed_claim": entry["failed_claim"],
        "drift": entry["drift"], "reason": entry["reason"],
    }


def replace_block(readme: str, start: str, end: str, body: str) -> str:
    block = f"{start}\n{body}\n{end}"
    return re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, readme, flags=re.S)


def refresh(root: Path) -> bool:
    """Rewrite root/README.md's coverage table when it has one and it is stale; whether it was rewritten."""
    path = root / README
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if COVERAGE_START not in text or COVERAGE_END not in text:
        return False
    new = replace_block(text, COVERAGE_START, COVERAGE_END, coverage_table(root))
    if new == text:
        return False
    write_atomically(path, new)
    return True
