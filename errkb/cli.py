"""The errkb command: a thin click layer over the library."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import click

from . import catalog, store
from .lock import CatalogBusy, tidy_if_idle
from .problems import InvalidInput
from .validate import check_files, load_envelope
from .coverage import duplicate_ids, missing_reproductions, reproduction_path
from .run import verification
from .matching.command import catalog_root
from .reproduce.command import reproduce


def fail(problems) -> None:
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="errkb")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="ERRKB_ROOT",
    help="Catalog root holding records/, reproductions/ and catalog.db. Default: $ERRKB_ROOT, else the "
    "current folder; show, match and run also look in parent folders and in the checkout errkb runs from.",
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """errkb: a catalog of ML error records, each proven by a reproduction."""
    ctx.obj = root or Path(".")


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--replace", is_flag=True, help="Overwrite a record whose slug exists with different content.")
@click.pass_obj
def add(root: Path, files: tuple[Path, ...], replace: bool) -> None:
    """Validate FILES (envelope or bare record) and write them to records/.

    All files are validated before any is written; catalog.db is updated when it exists.
    """
    try:
        results = store.add_files(root, list(files), replace)
    except InvalidInput as exc:
        fail(exc.problems)
    except CatalogBusy as exc:
        fail([exc])
    for result in results:
        click.echo(f"{result.status}: {result.slug} ({result.path})")
        if not reproduction_path(root, result.slug).exists():
            click.echo(
                f"warning: no {reproduction_path(root, result.slug)} yet: `errkb validate` fails until the record "
                "has a reproduction (README: Writing a reproduction)",
                err=True,
            )
    if any(result.status != "unchanged" for result in results) and (root / store.DATABASE_FILE).exists():
        click.echo(f"updated {root / store.DATABASE_FILE}")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.pass_obj
def validate(root: Path, paths: tuple[Path, ...]) -> None:
    """Check record files or folders (default: records/) and report every problem.

    Records in the catalog's records/ must also have a reproduction.
    """
    tidy_if_idle(root)
    files = _expand(paths or (root / store.RECORDS_DIR,))
    good, problems = check_files(files)
    problems += missing_reproductions(root, good) + duplicate_ids(good)
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    click.echo(f"{len(files)} file(s) checked, {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


def _expand(paths) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return files


@cli.command()
@click.option("--full", is_flag=True, help="Rebuild every record table from scratch (reproduction history is kept).")
@click.pass_obj
def build(root: Path, full: bool) -> None:
    """Build or update catalog.db from records/ (incremental: unchanged files are skipped)."""
    try:
        report = catalog.build(root, full=full)
    except InvalidInput as exc:
        fail(exc.problems)
    except CatalogBusy as exc:
        fail([exc])
    click.echo(
        f"{root / store.DATABASE_FILE}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.unchanged} unchanged"
    )


@cli.command()
@click.argument("slug")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_context
def show(ctx: click.Context, slug: str, as_json: bool) -> None:
    """Show the record SLUG: message, cause and fixes."""
    root = catalog_root(ctx) or ctx.obj
    path = store.record_path(root, slug)
    if not store.is_safe_slug(slug) or not path.exists():
        click.echo(f"error: no record {slug!r} in {root / store.RECORDS_DIR}", err=True)
        sys.exit(1)
    try:
        envelope = load_envelope(path)
    except InvalidInput as exc:
        fail(exc.problems)
    if as_json:
        click.echo(json.dumps(envelope.record.model_dump(), indent=2, ensure_ascii=False))
        return
    click.echo(render_record(envelope.record, verification(root, slug)))


@cli.command()
def schema() -> None:
    """Print the JSON Schema of a record file (generated from the models)."""
    from .schema import schema_text

    click.echo(schema_text(), nl=False)


def render_record(record, verified: str) -> str:
    def para(text: str) -> str:
        return textwrap.fill(text, width=88, initial_indent="  ", subsequent_indent="  ")

    lines = [
        f"{record.slug}  [{record.errorClass}, {record.severity}]",
        f"  {record.errorMessage}",
        f"  raised at {record.repo} {record.filePath}:{record.lineNumber}",
        f"  {record.githubUrl}",
        "",
        "What happened",
        para(record.documentation),
        "",
        "When it happens",
        para(record.triggerScenarios),
        "",
        "Fixes",
        *[textwrap.fill(s, width=88, initial_indent=f"  {i}. ", subsequent_indent="     ") for i, s in enumerate(record.solutions, 1)],
    ]
    if record.exampleFix:
        lines += ["", "Example fix", textwrap.indent(record.exampleFix, "    ")]
    if record.preventionTips:
        lines += ["", "Prevention", *[f"  - {tip}" for tip in record.preventionTips]]
    lines += ["", f"Verification: {verified}"]
    return "\n".join(lines)


from .web.serve import serve  # noqa: E402  (datasette itself is imported only when serving)

cli.add_command(serve)


cli.add_command(reproduce)

from .matching.command import match_command  # noqa: E402
from .run import run_command  # noqa: E402

cli.add_command(match_command)
cli.add_command(run_command)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
