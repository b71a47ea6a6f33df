"""The README's generated parts, so they never drift: the CLI reference (from --help) and the coverage table
(from records/, the reproductions' NEEDS and the committed verification results).

Regenerate with `python -m errkb.clidoc README.md`; tests/test_docs.py fails when either is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .cli import cli

START, END = "<!-- cli-reference -->", "<!-- /cli-reference -->"
COVERAGE_START, COVERAGE_END = "<!-- coverage-table -->", "<!-- /coverage-table -->"


def _context(command: click.Command, name: str, parent: click.Context | None = None) -> click.Context:
    # As the real command line builds it: subcommands inherit the group's settings (-h for help).
    settings = {**command.context_settings, "terminal_width": 100, "max_content_width": 100}
    return click.Context(command, info_name=name, parent=parent, **settings)


def cli_reference() -> str:
    top = _context(cli, "errkb")
    parts = ["```", cli.get_help(top), "```"]
    for name in sorted(cli.commands):
        command = cli.commands[name]
        parts += ["", f"### errkb {name}", "", "```", command.get_help(_context(command, name, top)), "```"]
    return "\n".join(parts)


def coverage_table(root: Path) -> str:
    """One row per record: where it is raised, what its reproduction needs, and what the committed results show."""
    from .reproduce.contract import ContractError, read_contract
    from .runs import matrix_summary
    from .store import record_files
    from .validate import load_envelope
    from .verifications import for_record

    rows = ["| record | raised at | the reproduction needs | committed results (current) |", "|---|---|---|---|"]
    for path in record_files(root):
        record = load_envelope(path).record
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
    return {
        "verdict": entry["verdict"], "torch": entry["packages"].get("torch"), "library": None, "library_version": None,
        "cuda_device_count": entry["cuda_devices"], "cuda_devices": "[]", "failed_claim": entry["failed_claim"],
        "drift": entry["drift"], "reason": entry["reason"],
    }


def _replace(readme: str, start: str, end: str, body: str) -> str:
    block = f"{start}\n{body}\n{end}"
    return re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, readme, flags=re.S)


def with_reference(readme: str) -> str:
    return _replace(readme, START, END, cli_reference())


def with_generated(readme: str, root: Path) -> str:
    return _replace(with_reference(readme), COVERAGE_START, COVERAGE_END, coverage_table(root))


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    path.write_text(with_generated(path.read_text(encoding="utf-8"), path.resolve().parent), encoding="utf-8")
