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


def _help(command: click.Command, name: str) -> str:
    with click.Context(command, info_name=name, terminal_width=100, max_content_width=100) as ctx:
        return command.get_help(ctx)


def cli_reference() -> str:
    parts = ["```", _help(cli, "errkb"), "```"]
    for name in sorted(cli.commands):
        parts += ["", f"### errkb {name}", "", "```", _help(cli.commands[name], f"errkb {name}"), "```"]
    return "\n".join(parts)


def with_reference(readme: str) -> str:
    block = f"{START}\n{cli_reference()}\n{END}"
    return re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, readme, flags=re.S)


if __name__ == "__main__":
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    path.write_text(with_reference(path.read_text(encoding="utf-8")), encoding="utf-8")
