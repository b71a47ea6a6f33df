"""The plugin's own pages: one per record, and the paste-a-traceback page. Read-only."""

from __future__ import annotations

from datasette.utils.asgi import NotFound, Response

from . import matching, present, queries


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
    if text.strip():
        answer = await matching.match(datasette, database, text)
        rows = await queries.summaries(datasette.get_database(database), [m.slug for m in answer.matches])
        found = present.match_items(datasette, answer.matches, rows)
    context = {"text": text, "answer": answer, "found": found, "database": database}
    return Response.html(await datasette.render_template("errkb/match.html", context, request=request))
