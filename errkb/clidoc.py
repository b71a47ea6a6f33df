"""The README's generated parts, so they never drift: the CLI reference (from --help) and the coverage table
(from records/, the reproductions' NEEDS and the committed verification results).

Regenerate with `python -m errkb.clidoc README.md`; tests/test_docs.py fails when either is stale. The coverage
table (readme_table.py) is also rewritten by `errkb add` and `errkb reproduce` in a catalog whose README has one.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli import cli
from .readme_table import COVERAGE_END, COVERAGE_START, coverage_table, replace_block

START, END = "<!-- cli-reference -->", "<!-- /cli-reference -->"


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


def with_reference(readme: str) -> str:
    return replace_block(readme, START, END, cli_reference())


def with_generated(readme: str, root: Path) -> str:
    return replace_block(with_reference(readme), COVERAGE_START, COVERAGE_END, coverage_table(root))


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    path.write_text(with_generated(path.read_text(encoding="utf-8"), path.resolve().parent), encoding="utf-8")
