"""`errkb reproduce`: the click layer over harness.reproduce."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path

import click


@click.command()
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@click.option("--all", "all_records", is_flag=True, help="Reproduce every record in records/.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Records run at once (default: the number of cores).")
@click.option("--strict", is_flag=True, help="Count skipped records as failures.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of results instead of a table.")
@click.pass_obj
def reproduce(root: Path, slugs: tuple[str, ...], all_records: bool, jobs: int | None, strict: bool, as_json: bool) -> None:
    """Prove each record's error and its documented fix against the installed library.

    Runs reproductions/SLUG.py: trigger() must raise the documented error (or emit the documented
    warning) inside the library, then fix() must complete, each in a fresh process within its time
    budget. Every run is stored in catalog.db (table reproduction_runs).

    \b
    Verdicts: verified, not-reproduced, wrong-error, fix-failed, skipped, timeout, crashed.
    Exit status: 0 when every record is verified or skipped (with --strict, skipped fails),
                 1 otherwise, 2 for usage (no SLUG and no --all, both, or an unknown SLUG).
    """
    from .. import store  # the harness loads only when the command runs
    from . import harness, report

    root = root or Path(".")
    if all_records == bool(slugs):
        raise click.UsageError("give record SLUGs or --all (not both)")
    if all_records:
        selected = [path.stem for path in store.record_files(root)]
    else:
        unknown = [s for s in slugs if not store.is_safe_slug(s) or not store.record_path(root, s).exists()]
        if unknown:
            raise click.UsageError(f"no record {', '.join(map(repr, unknown))} in {root / store.RECORDS_DIR}{_suggestion(root, unknown)}")
        selected = list(dict.fromkeys(slugs))

    def progress(result, done, total):
        click.echo(report.progress_line(result, done, total), err=True)

    with _exit_on_sigterm():
        results = harness.reproduce(root, selected, jobs=jobs, progress=progress)
    if as_json:
        click.echo(report.to_json(results))
    else:
        click.echo(report.table(results))
    click.echo(report.summary(results, strict), err=as_json)
    sys.exit(0 if all(result.passed(strict) for result in results) else 1)


def _suggestion(root: Path, unknown: list[str]) -> str:
    import difflib

    from .. import store

    known = [path.stem for path in store.record_files(root)]
    close = [match for slug in unknown for match in difflib.get_close_matches(slug, known, n=1)]
    return f"; did you mean {', '.join(close)}?" if close else ""


@contextlib.contextmanager
def _exit_on_sigterm():
    """Stages run in sessions of their own, out of reach of the terminal's and CI's signals: on SIGTERM, as on
    Ctrl-C, exit through the harness so that it ends them first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
