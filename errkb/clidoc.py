"""The README's CLI reference, generated from --help so it never drifts.

Regenerate with `python -m errkb.clidoc README.md`; tests/test_docs.py fails when it is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .cli import cli

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
    block = f"{START}\n{cli_reference()}\n{END}"
    return re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, readme, flags=re.S)


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    path.write_text(with_reference(path.read_text(encoding="utf-8")), encoding="utf-8")
