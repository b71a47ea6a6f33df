"""`errkb match`: the click command over `errkb.matching` (registered in errkb/cli.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..terminal import inert, inert_json
from ..hits import as_text, match_entry
from .score import THRESHOLD


def catalog_root(ctx: click.Context) -> Path:
    """--root (or $ERRKB_ROOT) when given, else the nearest catalog folder, else the bundled catalog.

    Exits with status 2 and says so when there is no catalog at all (never "no match").
    """
    from ..bundled import NoCatalog, locate

    try:
        return locate(ctx.find_root().params.get("root"))
    except NoCatalog as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


def read_paste(source: str) -> str:
    """The text of FILE or of stdin (`-`), decoded as UTF-8 with undecodable bytes replaced."""
    if source == "-":
        if sys.stdin.isatty():
            click.echo("Paste the traceback, then press Ctrl-D (Ctrl-Z Enter on Windows):", err=True)
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    else:
        data = Path(source).read_bytes()
    return data.decode("utf-8", errors="replace")


@click.command(name="match")
@click.argument("source", default="-", metavar="[FILE|-]")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of matches, best first: slug, score, title, cause, firstSolution, verifiedOn, evidence, why.")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(min=1), help="Show at most N records.")
@click.option(
    "--min-score", default=THRESHOLD, show_default=True, type=click.FloatRange(0, 1),
    help="Report records scoring at least this (0..1).",
)
@click.pass_context
def match_command(ctx: click.Context, source: str, as_json: bool, limit: int, min_score: float) -> None:
    """Rank the catalog's records against a pasted traceback or log (FILE, or - for stdin).

    Log prefixes, colour codes, wrapped lines, chained exceptions and text around the error are
    handled. Outside a catalog folder the catalog bundled with errkb is used. Exit status: 0 when a
    record matches, 1 when none is close enough, 2 on bad usage or when there is no catalog.
    """
    from .. import paste
    from .api import matcher_for

    if source != "-" and Path(source).is_dir():
        raise click.BadParameter(f"{source} is a directory; expected a file, or - for stdin", param_hint="FILE")
    if source != "-" and not Path(source).is_file():
        raise click.BadParameter(f"no such file: {source}", param_hint="FILE")
    clipped = paste.clip(read_paste(source))
    if clipped.cut:
        click.echo(f"errkb match: {clipped.note()}", err=True)
    text = clipped.text
    root = catalog_root(ctx)
    matcher = matcher_for(root)
    found = matcher.match(text, limit=limit, threshold=min_score)
    hits = [match_entry(root, m) for m in found]
    if as_json:
        click.echo(inert_json(json.dumps(hits, indent=2, ensure_ascii=False)))
    elif found:
        for i, hit in enumerate(hits, 1):
            click.echo(inert(("\n" if i > 1 else "") + "\n".join(as_text(i, hit, "errkb show"))))
        click.echo(f"\nerrkb show {found[0].slug}   # the whole record: cause, every fix, verification matrix")
    else:
        click.echo(f"no match: no record of the {matcher.size} in {matcher.source} is close enough (score >= {min_score}).")
    sys.exit(0 if found else 1)
