"""`errkb reproduce`: the click layer over harness.reproduce."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

import click


@click.command()
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@click.option("--all", "all_records", is_flag=True, help="Reproduce every record in records/.")
@click.option("--with", "with_specs", multiple=True, metavar="NAME==VERSION",
              help="Run in a cached environment with this release (repeatable: each --with torch==X is one more "
                   "environment; --with a==1 --with b==2 in one value, comma-separated, makes one environment).")
@click.option("--refresh", is_flag=True, help="Rebuild the --with environments instead of reusing them.")
@click.option("--no-write", is_flag=True, help="Do not write result files to verifications/ (the run is still kept in catalog.db).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Records run at once (default: the number of cores).")
@click.option("--strict", is_flag=True, help="Count skipped records as failures.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON Lines: one result per line as each record finishes (progress stays on stderr).")
@click.pass_obj
def reproduce(root: Path, slugs: tuple[str, ...], all_records: bool, with_specs: tuple[str, ...], refresh: bool,
              no_write: bool, jobs: int | None, strict: bool, as_json: bool) -> None:
    """Prove each record's error and every claim it makes against the installed library (or --with releases).

    Runs reproductions/SLUG.py: trigger() must raise the documented error (or emit the documented warning)
    inside the library; then each solution's demonstration and each code field's stage (exampleFix,
    validationCode, typeGuard, tryCatchPattern: the record's own text) must hold, each in a fresh process
    within its time budget. Each run writes verifications/SLUG/ENVIRONMENT.json (unless --no-write) and
    its row in catalog.db.

    \b
    Verdicts: verified, not-reproduced, wrong-error, fix-failed, claim-failed, skipped, timeout, crashed.
    Exit status: 0 when every record is verified or skipped (with --strict, skipped fails),
                 1 otherwise (or when a --with environment cannot be made),
                 2 for usage (no SLUG and no --all, both, an unknown SLUG, a --with that does not parse).
    """
    from .. import readme_table, store  # the harness loads only when the command runs
    from . import environments, harness, history, report
    from .contract import ContractError, read_needs

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
    try:
        wanted = [[environments.parse_spec(part.strip()) for part in spec.split(",") if part.strip()] for spec in with_specs]
    except environments.SpecError as exc:
        raise click.UsageError(str(exc)) from None

    needed: dict[str, str] = {}
    for slug in selected:
        with contextlib.suppress(ContractError, OSError):
            for name, spec in read_needs(root / store.REPRODUCTIONS_DIR / f"{slug}.py").packages.items():
                needed.setdefault(name, spec)

    def say(text: str) -> None:
        click.echo(text, err=True)

    db = history.open_history(root)
    results, unmade = [], []
    try:
        with _exit_on_sigterm():
            for requirements in wanted or [None]:
                if requirements is None:
                    environment = harness.Environment.probe(distributions=needed)
                else:
                    prepared = environments.prepare(requirements, needed, refresh, say)
                    if prepared.problem:
                        say(f"error: {prepared.problem}; skipping the records for {prepared.label}")
                        unmade.append(prepared.label)
                        environment = harness.Environment({}, None, prepared.label, prepared.problem)
                    else:
                        environment = harness.Environment.probe(prepared.python, prepared.label, needed)
                        environment = harness.Environment(environment.facts, prepared.python, prepared.label, None, prepared.unavailable)
                        build = report.build_line(environment)
                        say(f"environment {prepared.label}: {build}")

                def keep(result, environment=environment):
                    if environment.problem is None:  # an environment that was never made proves nothing
                        history.keep(db, root, result, write_file=not no_write)
                    if as_json:
                        click.echo(json.dumps(result.to_json(), ensure_ascii=False))

                def progress(result, done, total, label=environment.label):
                    say(report.progress_line(result, done, total, label if wanted else None))

                results += harness.reproduce(root, selected, jobs=jobs, progress=progress, environment=environment, on_result=keep)
    finally:
        db.close()
    if not no_write and readme_table.refresh(root):
        say(f"updated the coverage table of {root / readme_table.README}")
    if not as_json:
        click.echo(report.table(results))
    click.echo(report.summary(results, strict), err=as_json)
    hint = report.install_hint(results)
    if hint:
        say(hint)
    sys.exit(0 if all(result.passed(strict) for result in results) and not unmade else 1)


def _suggestion(root: Path, unknown: list[str]) -> str:
    import difflib

    from .. import store

    known = [path.stem for path in store.record_files(root)]
    close = [match for slug in unknown for match in difflib.get_close_matches(slug, known, n=1)]
    return f"; did you mean {', '.join(close)}?" if close else ""


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
