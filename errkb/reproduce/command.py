"""`errkb reproduce`: the click layer over harness.reproduce."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from pathlib import Path

import click

from . import plan


@click.command()
@click.argument("slugs", nargs=-1, metavar="[SLUG]...")
@click.option("--all", "all_records", is_flag=True, help="Reproduce every record in records/.")
@click.option("--with", "with_specs", multiple=True, metavar="NAME==VERSION",
              help="Also run in a cached environment with this release. Each --with is one environment "
                   "(--with torch==2.1.2 --with torch==2.5.1: two); commas join requirements into one "
                   "(--with torch==2.5.1,numpy==1.26.4).")
@click.option("--refresh", is_flag=True, help="Rebuild the --with environments instead of reusing them.")
@click.option("--no-write", is_flag=True, help="Do not write result files to verifications/ (the run is still kept in catalog.db).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Records run at once (default: the number of cores).")
@click.option("--strict", is_flag=True,
              help="Fail on anything unexpected: every verdict but verified, and every skip the declared hardware "
                   "(--gpus) does not explain. Without --gpus, every skip fails. Refuses to run without every "
                   "sandbox protection.")
@click.option("--gpus", type=click.IntRange(min=0), default=None,
              help="Declare the runner's hardware: this many CUDA devices (with --strict and --plan).")
@click.option("--driver/--no-driver", default=None,
              help="Declare whether an NVIDIA driver is loaded (default: with --gpus 1 or more).")
@click.option("--torch-build", type=click.Choice(["cpu", "cuda"]), default=None,
              help="Declare the build of torch the run uses (default: cuda for --with torch==X, else the installed one's).")
@click.option("--plan", "plan_only", is_flag=True,
              help="Print what each record would do on the declared hardware (run, or which skip and whether it is "
                   "expected), installing and running nothing. Needs --gpus.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON Lines: one result per line as each record finishes (progress stays on stderr).")
@click.option("--sign", "sign_with", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="KEY",
              help="Sign each result file with this maintainer's private key (its public half in keys/maintainers/).")
@click.option("--trust-unsigned", is_flag=True, help="Let this machine's unsigned results count toward verdicts ($ERRKB_TRUST_UNSIGNED=1).")
@click.pass_obj
def reproduce(root: Path, slugs: tuple[str, ...], all_records: bool, with_specs: tuple[str, ...], refresh: bool,
              no_write: bool, jobs: int | None, strict: bool, gpus: int | None, driver: bool | None,
              torch_build: str | None, plan_only: bool, as_json: bool, sign_with: Path | None,
              trust_unsigned: bool) -> None:
    """Prove each record's error and every claim it makes against the installed library (or --with releases).

    Runs reproductions/SLUG.py: trigger() must raise the documented error (or emit the documented warning)
    inside the library; then each solution's demonstration and each code field's stage (exampleFix,
    validationCode, typeGuard, tryCatchPattern: the record's own text) must hold, each in a fresh process
    within its time budget. Each run writes verifications/SLUG/ENVIRONMENT.json (unless --no-write) and
    its row in catalog.db.

    \b
    A runner declares its hardware with --gpus N (and --driver/--no-driver, --torch-build); then --strict
    passes the skips that declaration explains (more devices than declared, the other torch build, a driver
    the record must not see, a release outside the record's range) and fails every other one (a missing
    library, a device declared but not found). --plan prints that decision for each record without
    installing or running anything.

    \b
    Verdicts: verified, not-reproduced, wrong-error, fix-failed, claim-failed, skipped, timeout, crashed.
    Exit status: 0 when every record is verified or skipped (with --strict: or an expected skip),
                 1 otherwise (or when a --with environment cannot be made; --plan: an unexpected skip),
                 2 for usage (no SLUG and no --all, both, an unknown SLUG, a --with that does not parse).
    """
    from .. import readme_table, signing, store  # the harness loads only when the command runs
    from ..lock import CatalogBusy
    from ..problems import InvalidInput
    from . import environments, harness, history, isolate, protections, report
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
        wanted = [environments.parse_specs(spec) for spec in with_specs]
        if wanted:
            environments.env_root()  # a relative $ERRKB_ENV_DIR is refused before anything runs
    except environments.SpecError as exc:
        raise click.UsageError(str(exc)) from None

    signer = None
    if sign_with is not None:
        try:
            signer = signing.load_private_key(sign_with)
            signing.listed_key(root, signer)
        except InvalidInput as exc:
            raise click.UsageError(str(exc)) from None

    needs_by_slug: dict[str, plan.Needs] = {}
    for slug in selected:
        with contextlib.suppress(ContractError, OSError):
            needs_by_slug[slug] = read_needs(root / store.REPRODUCTIONS_DIR / f"{slug}.py")
    needed: dict[str, str] = {}
    for needs in needs_by_slug.values():
        for name, spec in needs.packages.items():
            needed.setdefault(name, spec)
    hardware = _declared_hardware(gpus, driver, torch_build, wanted)
    if plan_only:
        if hardware is None:
            raise click.UsageError("--plan needs the runner's hardware: --gpus N")
        planned = [plan.plan_for(selected, needs_by_slug, hardware, requirements) for requirements in wanted or [None]]
        for requirements, cell in zip(wanted or [None], planned):
            label = environments.label_of(requirements)
            click.echo(json.dumps({"environment": label, "plan": [p.to_json() for p in cell]}) if as_json
                       else report.plan_table(cell, label, hardware))
        sys.exit(1 if any(not p.expected for cell in planned for p in cell) else 0)

    def say(text: str) -> None:
        click.echo(text, err=True)

    confined = isolate.machine_protections()
    say(protections.summary(confined))
    if strict and protections.missing(confined):
        say(f"error: --strict refuses to run stages without {', '.join(protections.WHAT[k] for k in protections.missing(confined))}")
        sys.exit(1)

    results, unmade, unsaved = [], [], []
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
                    try:
                        history.keep(root, result, write_file=not no_write, signer=signer, trust_unsigned=trust_unsigned)
                    except CatalogBusy as exc:
                        say(f"error: the {result.verdict} result of {result.slug} was not saved: {exc}")
                        unsaved.append(result.slug)
                if as_json:
                    click.echo(json.dumps(result.to_json(), ensure_ascii=False))

            def progress(result, done, total, label=environment.label):
                say(report.progress_line(result, done, total, label if wanted else None))

            results += harness.reproduce(root, selected, jobs=jobs, progress=progress, environment=environment, on_result=keep)
    if not no_write and readme_table.refresh(root):
        say(f"updated the coverage table of {root / readme_table.README}")
    outcomes = None
    if strict and hardware is not None:
        plans = {
            environments.label_of(requirements): {p.slug: p for p in plan.plan_for(selected, needs_by_slug, hardware, requirements)}
            for requirements in wanted or [None]
        }
        installed = environments.label_of(None)
        outcomes = [plan.classify(r.verdict, plans.get(r.environment.get("label") or installed, {}).get(r.slug)) for r in results]
    if not as_json:
        click.echo(report.table(results))
    click.echo(report.summary(results, strict, outcomes, hardware), err=as_json)
    hint = report.install_hint(results)
    if hint:
        say(hint)
    passed = all(o != "failed" for o in outcomes) if outcomes is not None else all(r.passed(strict) for r in results)
    sys.exit(0 if passed and not unmade and not unsaved else 1)


def _declared_hardware(gpus, driver, torch_build, wanted) -> plan.Hardware | None:
    if gpus is None:
        if driver is not None or torch_build is not None:
            raise click.UsageError("declare the runner's hardware with --gpus N (--driver and --torch-build go with it)")
        return None
    if torch_build is None:
        pins_torch = any(r.name.lower() == "torch" for requirements in wanted for r in requirements)
        torch_build = "cuda" if pins_torch else plan.installed_torch_build()
    try:
        return plan.Hardware(gpus, gpus > 0 if driver is None else driver, torch_build)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


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
