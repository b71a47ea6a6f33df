"""The click layer of `errkb draft`."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from ..lock import CatalogBusy

from .capture import DraftError
from .make import draft, draft_api_change

USAGE = "errkb draft -- python snippet.py   (or: errkb draft --from snippet.py)"


def snippet_and_python(command: tuple[str, ...], from_file: Path | None) -> tuple[Path, str | None]:
    """The snippet to run and the interpreter to run it with (the command's python, else this one)."""
    if from_file and command:
        raise DraftError(f"give the snippet once: --from {from_file} or a command after --, not both ({USAGE})")
    if from_file:
        return from_file, None
    if len(command) != 2 or not os.path.basename(command[0]).startswith("python") or not command[1].endswith(".py"):
        raise DraftError(f"expected a Python snippet and no arguments: {USAGE}; got {' '.join(command) or 'nothing'}")
    python = shutil.which(command[0])
    if python is None:
        raise DraftError(f"command not found: {command[0]}")
    return Path(command[1]), os.path.abspath(python)  # the stage runs in a scratch folder


@click.command(name="draft", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--from", "from_file", type=click.Path(path_type=Path), help="The snippet to run (instead of -- python FILE).")
@click.option("--slug", help="The new record's slug (default: from the library and the message).")
@click.option("--tag", "tags", multiple=True, help="A tag to put first (repeat); the library and class are suggested too.")
@click.option("--sha", help="The source commit of the installed library, when its metadata names none (40 hex).")
@click.option("--upstream", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A local clone of the library's repository: its release tag gives the commit, when the tag's copy of "
              "the raise site's file is byte-identical to the installed one.")
@click.option("--timeout", "timeout_s", type=float, default=120, show_default=True, help="Seconds the snippet may run.")
@click.option("--allow-no-gpu", is_flag=True, help="Draft a 'no GPU' error itself (CUDA not available, no driver).")
@click.option("--api-change", is_flag=True, help="The error came with a release of --library: bisect its releases "
              "(each in its own uv environment) for the last that works and the first that raises.")
@click.option("--library", metavar="DIST", help="With --api-change: the distribution whose releases to run.")
@click.option("--since", metavar="VERSION", help="With --api-change: the oldest release to consider.")
@click.option("--until", metavar="VERSION", help="With --api-change: the newest release to consider.")
@click.option("--releases", metavar="V1,V2,...", help="With --api-change: exactly these releases (comma-separated).")
@click.option("--pre", is_flag=True, help="With --api-change: consider pre-releases too.")
@click.option("--pin", "pins", multiple=True, metavar="REQUIREMENT", help="With --api-change: also install this in "
              "every environment (repeat), e.g. what old releases need from their era: --pin 'setuptools<70'.")
@click.pass_obj
def draft_command(root: Path, command: tuple[str, ...], from_file: Path | None, slug: str | None, tags: tuple[str, ...],
                  sha: str | None, timeout_s: float, allow_no_gpu: bool, api_change: bool, library: str | None,
                  since: str | None, until: str | None, releases: str | None, pre: bool, pins: tuple[str, ...],
                  upstream: Path | None) -> None:
    """Start a record from a snippet that raises: run it in the sandbox, capture its error, and write a draft
    records/<slug>.json and reproductions/<slug>.py with stubs (TODO(errkb-draft)) for what a person must write.

    errkb draft -- python snippet.py. With --api-change --library DIST, the snippet runs against DIST's releases
    (the index pip is configured with) and the draft records the last release that works and the first that
    raises, naming every release run. Nothing is written when the snippet does not raise, raises from your own code,
    runs past --timeout or needs a GPU this machine lacks. `errkb validate` refuses the draft until every stub is filled.
    """
    try:
        snippet, python = snippet_and_python(command, from_file)
        if api_change != bool(library):
            raise DraftError("--api-change and --library DIST go together: errkb draft --api-change --library DIST -- python snippet.py")
        if not api_change and (since or until or releases or pre or pins):
            raise DraftError("--since, --until, --releases, --pre and --pin are for --api-change")
        if api_change:
            only = [v.strip() for v in releases.split(",") if v.strip()] if releases else None
            made = draft_api_change(root, snippet, library, slug, tags, sha, timeout_s, since, until, only, pre,
                                    say=lambda text: click.echo(text, err=True), pins=pins, upstream=upstream)
        else:
            made = draft(root, snippet, python, slug, tags, sha, timeout_s, allow_no_gpu, upstream=upstream)
    except (DraftError, CatalogBusy) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(made.summary())
