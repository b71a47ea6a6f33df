"""The plugin's own pages: home, the records browser, one page per record, paste a traceback. Read-only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlencode

from datasette.utils.asgi import NotFound, Response
from datasette.views.index import IndexView

from .. import hits
from . import browse, matching, metadata, present, queries, urls


async def _catalog(datasette, request) -> str:
    database = await queries.catalog_name(datasette)
    if database is None:
        raise NotFound("No errkb catalog here: no database has a records table (run `errkb build`)")
    await datasette.ensure_permissions(
        request.actor, [("view-table", (database, "records")), ("view-database", database), "view-instance"]
    )
    return database


async def record_page(datasette, request):
    database = await _catalog(datasette, request)
    db = datasette.get_database(database)
    slug = request.url_vars["slug"]
    row = await queries.record(db, slug)
    if row is None:
        raise NotFound(f"No record {slug!r} in the catalog")
    context = present.record_context(datasette, database, row, await queries.runs(db, slug))
    html = await datasette.render_template("errkb/record.html", context, request=request)
    return Response.html(html)


async def match_page(datasette, request):
    database = await _catalog(datasette, request)
    if request.method == "POST":
        text = (await request.post_vars()).get("traceback", "")
    else:
        text = request.args.get("traceback", "")
    answer, found = None, []
    db = datasette.get_database(database)
    if text.strip():
        answer = await matching.match(datasette, database, text)
        rows = await queries.summaries(db, [m.slug for m in answer.matches])
        summaries = await asyncio.to_thread(_fix_first, Path(db.path).parent, [m.slug for m in answer.matches])
        found = present.match_items(datasette, answer.matches, rows, summaries)
    context = {"text": text, "answer": answer, "found": found, "database": database,
               "search_url": urls.records_table(datasette, database, browse=True, q=present.search_words(text)) if text.strip() else None}
    return Response.html(await datasette.render_template("errkb/match.html", context, request=request))


async def records_page(datasette, request):
    database = await _catalog(datasette, request)
    wanted = browse.Request.from_args(request.args)
    db = datasette.get_database(database)
    await browse.plan_search(db, wanted)
    page = await browse.records_page(db, wanted)
    for facet in page.facets:
        for value in facet["values"]:
            value["toggle_url"] = _toggled(request, facet["param"], value["value"])
    context = {
        "database": database, "want": wanted, "page": page,
        "record_urls": {row["slug"]: urls.record(datasette, row["slug"]) for row in page.rows},
        "table_url": urls.records_table(datasette, database, **({"_search": wanted.q} if wanted.q else {})),
        "browse_url": urls.records_table(datasette, database, browse=True),
        "verdict_tone": present.VERDICT_TONE,
        "next_url": _with_page(request, wanted.page + 1) if page.has_next else None,
        "previous_url": _with_page(request, wanted.page - 1) if wanted.page > 1 else None,
    }
    return Response.html(await datasette.render_template("errkb/records.html", context, request=request))


async def home_page(datasette, request, send):
    database = await queries.catalog_name(datasette)
    if database is None:  # not an errkb catalog: Datasette's own home page, which reads a {format} from its URL
        request.scope.setdefault("url_route", {}).setdefault("kwargs", {}).setdefault("format", None)
        return await IndexView.as_view(datasette)(request, send)
    database = await _catalog(datasette, request)
    numbers = await browse.home_numbers(datasette.get_database(database))
    for item in numbers["by_verdict"]:
        item["url"] = urls.records_table(datasette, database, browse=True, lastVerdict=item["value"])
    for item in numbers["by_library"]:
        item["url"] = urls.records_table(datasette, database, browse=True, repo=item["value"])
    for item in numbers["by_theme"]:
        item["url"] = urls.records_table(datasette, database, browse=True, _theme=item["value"])
    for row in numbers["recent"]:
        row["url"] = urls.record(datasette, row["slug"])
    context = {
        "database": database,
        "numbers": numbers,
        "browse_url": urls.records_table(datasette, database, browse=True),
        "verdict_tone": present.VERDICT_TONE,
        "description": metadata.DESCRIPTION,
    }
    return Response.html(await datasette.render_template("errkb/home.html", context, request=request))


def _fix_first(root: Path, slugs: list[str]) -> dict[str, dict]:
    """Each matched record's fix-first summary, read from its files (a catalog.db served alone has none)."""
    found = {slug: hits.fix_first(root, slug) for slug in slugs}
    return {slug: summary for slug, summary in found.items() if summary}


def _toggled(request, param: str, value: str) -> str:
    """This page's URL with the filter param=value added, or removed when it is already there; back to page 1."""
    pairs = [(k, v) for k, v in _pairs(request) if k != "page"]
    if (param, value) in pairs:
        pairs.remove((param, value))
    else:
        pairs.append((param, value))
    return request.path + ("?" + urlencode(pairs) if pairs else "")


def _with_page(request, number: int) -> str:
    pairs = [(k, v) for k, v in _pairs(request) if k != "page"] + ([("page", str(number))] if number > 1 else [])
    return request.path + ("?" + urlencode(pairs) if pairs else "")


def _pairs(request) -> list[tuple[str, str]]:
    return [(key, value) for key in request.args.keys() for value in request.args.getlist(key)]
