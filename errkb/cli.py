"""The errkb command: a thin click layer over the library."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import click

from . import catalog, evidence, listing, readme_table, search, signing, store, verifications, writes
from .hits import short_title
from .lock import CatalogBusy, tidy_if_idle
from .problems import InvalidInput
from .terminal import inert, inert_json
from .validate import check_files, load_envelope
from .coverage import duplicate_ids, missing_reproductions, reproduction_path
from .run import verification
from .draft.stubs import reproduction_stub_problems
from .matching.command import catalog_root
from .reproduce.command import reproduce


def fail(problems) -> None:
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    sys.exit(1)


class Group(click.Group):
    """Lists each command's whole summary, wrapped; click cuts it to the terminal's width ("...")."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, command.get_short_help_str(limit=10_000)) for name, command in commands if command and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                _write_dl(formatter, rows)


def _write_dl(formatter: click.HelpFormatter, rows: list[tuple[str, str]], col_max: int = 30, spacing: int = 2) -> None:
    """click's write_dl, but a summary is wrapped only between words: never inside "TODO(errkb-draft)" or a
    hyphenated word, which click's wrapper splits at the hyphen."""
    first_col = min(max(len(name) for name, _ in rows), col_max) + spacing
    text_width = max(formatter.width - first_col - 2, 10)
    indent = " " * formatter.current_indent
    for name, summary in rows:
        lines = textwrap.wrap(summary, text_width, break_on_hyphens=False, break_long_words=False)
        if len(name) <= first_col - spacing:
            formatter.write(f"{indent}{name:<{first_col}}")
        else:
            formatter.write(f"{indent}{name}\n{indent}{' ' * first_col}")
        formatter.write(f"{lines[0]}\n" if lines else "\n")
        for line in lines[1:]:
            formatter.write(f"{indent}{' ' * first_col}{line}\n")


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.argument("paths", nargs=-1, required=True, metavar="PATHS...", type=click.Path(path_type=Path))
@click.option("--replace", is_flag=True, help="Overwrite a record whose slug exists with different content.")
@click.pass_obj
def add(root: Path, paths: tuple[Path, ...], replace: bool) -> None:
    """Validate record files or folders of them (envelope or bare record) and write them to records/.

    A folder adds its *.json files. All files are validated before any is written; catalog.db is updated
    when it exists.
    """
    files = _expand(paths)
    if not files:
        fail([f"no *.json file in {', '.join(map(str, paths))}"])
    try:
        results = writes.add_files(root, files, replace)
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
    if readme_table.refresh(root):
        click.echo(f"updated the coverage table of {root / readme_table.README}")


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
    problems += [p for _, envelope in good for p in reproduction_stub_problems(reproduction_path(root, envelope.record.slug))]
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
@click.option("--trust-unsigned", is_flag=True,
              help="Let unsigned results count toward verdicts (a maintainer's own machine; $ERRKB_TRUST_UNSIGNED=1).")
@click.pass_obj
def build(root: Path, full: bool, trust_unsigned: bool) -> None:
    """Build or update catalog.db from records/ (incremental: unchanged files are skipped).

    Verifies each result file in verifications/ offline: consistent with itself, and signed by a key of
    keys/maintainers/ (else it shows as unsigned and does not count, unless --trust-unsigned).
    """
    try:
        report = writes.build(root, full=full, trust_unsigned=trust_unsigned)
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
    root = catalog_root(ctx)  # --root, else the nearest catalog folder, else the bundled catalog
    path = store.record_path(root, slug)
    if not store.is_safe_slug(slug) or not path.exists():
        click.echo(f"error: {listing.unknown_slug_message(root, [slug])}", err=True)
        sys.exit(2)  # a usage error, as from reproduce (README: Exit status)
    try:
        envelope = load_envelope(path)
    except InvalidInput as exc:
        fail(exc.problems)
    if as_json:
        from .reproduce.contract import provenance_summary, read_provenance

        try:
            proof = evidence.of_record(root, slug)
        except InvalidInput as exc:
            fail(exc.problems)
        provenance = read_provenance(root, slug)
        click.echo(inert_json(json.dumps({**envelope.record.model_dump(), **proof, "provenance": provenance,
                               "provenanceSummary": provenance_summary(provenance)}, indent=2, ensure_ascii=False)))
        return
    click.echo(inert(render_record(envelope.record, verification(root, slug))))


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--all", "all_results", is_flag=True, help="Sign every result file in verifications/.")
@click.option("--key", type=click.Path(dir_okay=False, path_type=Path), envvar="ERRKB_SIGNING_KEY", required=True,
              help="The maintainer's private key (PEM; $ERRKB_SIGNING_KEY). Keep it out of the repository.")
@click.option("--new-key", metavar="NAME", help="First create the key: private half to --key, public half to keys/maintainers/NAME.pub.")
@click.pass_obj
def sign(root: Path, paths: tuple[Path, ...], all_results: bool, key: Path, new_key: str | None) -> None:
    """Sign result files (an in-toto statement in a DSSE envelope beside each, RESULT.intoto.jsonl).

    Each file must load and agree with itself first. Idempotent: a file already signed by this key, or
    validly by another key of keys/maintainers/, is left as it is (a maintainer never replaces another's
    signature), so `errkb sign --all` after merging results signs exactly the new or changed ones.
    """
    if all_results == bool(paths):
        raise click.UsageError("give result files or --all (not both)")
    try:
        if new_key:
            if not store.is_safe_slug(new_key):
                raise click.UsageError(f"--new-key {new_key!r}: expected a name of lowercase letters, digits and dashes")
            keyid = signing.generate_key(key, root / signing.KEYS_DIR / f"{new_key}.pub")
            click.echo(f"new key {keyid[:16]}: private half {key}, public half {signing.KEYS_DIR / new_key}.pub (commit it)")
        signer = signing.load_private_key(key)
        identity = signing.listed_key(root, signer).identity
        files = verifications.result_files(root) if all_results else [Path(p) for p in paths]
        written, stale = writes.sign_results(root, files, signer, remove_orphans=all_results)
    except InvalidInput as exc:
        fail(exc.problems)
    except FileExistsError as exc:
        fail([f"{exc.filename}: exists; --new-key never overwrites a key"])
    except CatalogBusy as exc:
        fail([exc])
    click.echo(f"signed {written} result file(s) as {identity}, {len(files) - written} already signed"
               + (f"; removed {len(stale)} signature(s) of result files that are gone" if stale else ""))


@cli.command(name="list")
@click.option("--tag", "tags", multiple=True, help="Only records with this tag, any case (repeat: all must hold).")
@click.option(
    "--verdict", type=click.Choice(listing.VERDICTS),
    help="Only records whose last reproduction gave this verdict (never: not reproduced yet).",
)
@click.option("--library", help="Only records about this library: owner/name, name or package, any case (hanlp, torch).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (slug, errorClass, library, lastVerdict, errorMessage, tags).")
@click.pass_context
def list_command(ctx: click.Context, tags: tuple[str, ...], verdict: str | None, library: str | None, as_json: bool) -> None:
    """List the catalog's records: slug, class, library and last verdict, filtered by tag, verdict or library.

    Verdicts come from catalog.db, or before the first build from the committed results. Exit status: 0,
    also when no record passes the filters.
    """
    root = catalog_root(ctx) or ctx.obj
    try:
        entries = listing.list_records(root, tags, verdict, library)
    except InvalidInput as exc:
        fail(exc.problems)
    if as_json:
        click.echo(inert_json(json.dumps([entry.as_dict() for entry in entries], indent=2, ensure_ascii=False)))
        return
    if entries:
        click.echo(inert("\n".join(listing.table(entries))))
    click.echo(f"{len(entries)} record(s)", err=True)


@cli.command(name="search")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: query, notes, total and hits (slug, errorClass, library, lastVerdict, verifiedOn, tags, why).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1), help="Show at most N records.")
@click.pass_context
def search_command(ctx: click.Context, query: str, as_json: bool, limit: int) -> None:
    """Search the records' messages, causes, fixes and tags; synonyms (OOM) and misspelt words are handled.

    Each hit says why it matched. Exit status: 0 when a record matches, 1 when none does, 2 when there
    is no catalog.
    """
    root = catalog_root(ctx)
    try:
        found, total, planned = search.run(root, query, limit)
    except InvalidInput as exc:
        fail(exc.problems)
    if as_json:
        click.echo(inert_json(json.dumps({"query": query, "notes": planned.notes, "total": total,
                                          "hits": [hit.as_dict() for hit in found]}, indent=2, ensure_ascii=False)))
    else:
        for note in planned.notes:
            click.echo(inert(f"note: {note}"), err=True)
        for i, hit in enumerate(found, 1):
            click.echo(inert(f"{i}. {short_title(hit.errorMessage)}   [{hit.slug}, {hit.lastVerdict or 'never verified'}]"))
            for why in hit.why:
                click.echo(inert(f"   {search.plain_marks(why)}"))
        click.echo(f"{total} record(s) match" + (f", {len(found)} shown" if total > len(found) else ""), err=True)
    sys.exit(0 if found else 1)


@cli.command(name="mcp")
@click.pass_context
def mcp_command(ctx: click.Context) -> None:
    """Run a Model Context Protocol server over stdio for coding agents: tools match, show, search and list.

    Every record comes with its evidence (verifiedOn, claim marks, result files). Uses --root, else the
    nearest catalog folder, else the bundled catalog; without any, each tool answers "no catalog".
    """
    from .mcp_server import serve  # the SDK loads only for this command

    serve(ctx.obj if ctx.find_root().params.get("root") else None)


@cli.command()
@click.option("--results", is_flag=True, help="The schema of a verification result file instead.")
def schema(results: bool) -> None:
    """Print the JSON Schema of a record file (generated from the models); with --results, of a verification result."""
    if results:
        from .verifications import schema_text
    else:
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
from .draft.command import draft_command  # noqa: E402

cli.add_command(match_command)
cli.add_command(run_command)
cli.add_command(draft_command)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
