"""errkb's Datasette plugin: metadata, record pages, the match page, and links from the tables.

Registered as the `datasette` entry point `errkb = "errkb.web.plugin"`, so `datasette catalog.db` loads it.
"""

from __future__ import annotations

import copy
import hashlib
import sqlite3
from pathlib import Path

from datasette import hookimpl
from datasette.facets import ColumnFacet
from datasette.views.base import DatasetteError
from datasette.utils.asgi import Response, asgi_static
from jinja2 import ChoiceLoader, FileSystemLoader
from markupsafe import Markup

from . import guards, matching, metadata, present, queries, urls, views
from .facets import SampledColumnFacet
from .tags import TagsFacet, tag_filter
from .themes import ThemeFacet, theme_filter

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
CSS_VERSION = hashlib.sha256((STATIC / "errkb.css").read_bytes()).hexdigest()[:8]


@hookimpl
def startup(datasette):
    async def inner():
        await queries.detect_catalogs(datasette)
        if queries.known_catalogs(datasette):
            # Facet suggestions cost ~3 s per table page at 100k records. Datasette has no public way
            # for a plugin to change a setting, and `errkb serve` passes it too; this covers `datasette catalog.db`.
            datasette._settings["suggest_facets"] = False

    return inner


# The longest string or blob SQLite may make on a served connection: far above any record (a record file is at
# most 1 MB), far below what `select hex(zeroblob(400000000))` would take (800 MB, then more to render it).
MAX_SQL_LENGTH = 16 * 1024 * 1024
MMAP_BYTES = 4 * 1024**3


@hookimpl
def prepare_connection(conn, database, datasette):
    # Datasette's time limit interrupts long queries between steps; one huge value is a single step.
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_SQL_LENGTH)
    guards.bound_printf(conn)  # printf('%.*c', 2147483647, 'x'): one step of seconds, out of the time limit's reach
    # Read pages through a memory map instead of a read() per page: a search that touches tens of thousands of
    # rows of a large catalog runs about twice as fast. Address space only; the OS shares the pages.
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")


@hookimpl
def asgi_wrapper(datasette):
    """The paste bound (bounded_paste) inside errkb's request guards (guards.py)."""

    def wrap(app):
        return guards.request_guard(bounded_paste(app))

    return wrap


def bounded_paste(app):
    """A POSTed paste larger than matching.MAX_BODY_BYTES is refused (413) before anything reads it whole."""

    async def bounded(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith("/-/errkb/match"):
            return await app(scope, receive, send)
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > matching.MAX_BODY_BYTES:
                return await _too_large(send)
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        return await app(scope, replay, send)

    return bounded


async def _too_large(send) -> None:
    text = f"The paste is larger than {matching.MAX_BODY_BYTES // 2**20} MB; paste the traceback and a little around it.\n"
    await send({"type": "http.response.start", "status": 413, "headers": [[b"content-type", b"text/plain; charset=utf-8"]]})
    await send({"type": "http.response.body", "body": text.encode()})


@hookimpl
def handle_exception(datasette, request, exception):
    """Client mistakes that Datasette 0.65 answers with a 500: a POST to a table page, an unknown _sort."""
    if request.method == "POST" and isinstance(exception, AssertionError) and "POST to a canned query" in str(exception):
        status, message = 405, "This page does not accept POST; only canned queries and the match page do."
    elif isinstance(exception, DatasetteError) and str(exception).startswith("Cannot sort table by"):
        status, message = 400, str(exception)
    else:
        return None

    async def answer():
        if request.path.endswith(".json"):
            return Response.json({"ok": False, "error": message, "status": status}, status=status)
        html = await datasette.render_template(
            "error.html", {"ok": False, "error": message, "status": status, "title": None}, request=request
        )
        return Response.html(html, status=status)

    return answer


@hookimpl
def prepare_jinja2_environment(env, datasette):
    # A plugin that is a module, not a package, gets no automatic templates/ folder: add ours.
    # Ours first: _facet_results.html adds the sample note to Datasette's own; the rest have names of their own.
    env.loader = ChoiceLoader([FileSystemLoader(str(TEMPLATES)), env.loader])
    env.filters["errkb_prose"] = present.prose
    env.filters["errkb_inline"] = present.inline
    env.filters["errkb_plain"] = present.plain  # no terminal colour codes on a page
    env.filters["errkb_marked"] = present.marked
    env.filters["errkb_title"] = present.short_title


@hookimpl
def get_metadata(datasette, key, database, table):
    # A fresh copy each time: Datasette merges metadata into the dicts it is given.
    return copy.deepcopy(metadata.build(datasette, queries.known_catalogs(datasette)))


@hookimpl
def register_facet_classes():
    return [TagsFacet, ThemeFacet]


@hookimpl(wrapper=True, specname="register_facet_classes")
def sample_large_column_facets():
    """Datasette's column facet, swapped for one that samples large filtered results of records (facets.py)."""
    return [[SampledColumnFacet if cls is ColumnFacet else cls for cls in classes] for classes in (yield)]


@hookimpl
def filters_from_request(request, database, table, datasette):
    if table == "records" and database in queries.known_catalogs(datasette):
        return tag_filter(request)
    return None


@hookimpl(specname="filters_from_request")
def theme_filters_from_request(request, database, table, datasette):
    if table == "records" and database in queries.known_catalogs(datasette):
        return theme_filter(request, datasette.get_database(database))  # a coroutine: Datasette awaits it
    return None


@hookimpl
def register_routes(datasette):
    return [
        (r"^/$", views.home_page),  # errkb's own home page; Datasette's list of databases stays at /-/databases
        (r"^/-/errkb/records$", views.records_page),
        (r"^/-/errkb/record/(?P<slug>[^/]+)$", views.record_page),
        (r"^/-/errkb/match$", views.match_page),
        (r"^/-/static-plugins/errkb/(?P<path>.*)$", asgi_static(STATIC)),
    ]


@hookimpl
def extra_css_urls(datasette):
    return [urls.static(datasette, f"errkb.css?{CSS_VERSION}")]


@hookimpl
def menu_links(datasette):
    if not queries.known_catalogs(datasette):
        return []
    database = queries.known_catalogs(datasette)[0]
    return [
        {"href": urls.match(datasette), "label": "Paste a traceback"},
        {"href": urls.records_table(datasette, database, browse=True), "label": "Browse records"},
    ]


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if database not in queries.known_catalogs(datasette) or value is None:
        return None
    if column == "slug":  # not on the records table page, where the slug is the link to the raw row
        return _link(datasette, value, value)
    if table == "records" and column == "errorMessage":
        return _link(datasette, _get(row, "slug"), value)
    if column in ("lastVerdict", "verdict") and table in ("records", "reproduction_runs", None):
        tone = present.VERDICT_TONE.get(value, "muted")
        return Markup('<span class="errkb-badge errkb-{}">{}</span>').format(tone, value)
    if column == "snippet" and table is None:
        return metadata.snippet_html(value)
    return None


def _get(row, name):
    try:
        return row[name]
    except (KeyError, IndexError):
        return None


def _link(datasette, slug, text):
    if not isinstance(slug, str) or not slug:
        return None
    return Markup('<a class="errkb-record-link" href="{}">{}</a>').format(urls.record(datasette, slug), text)
