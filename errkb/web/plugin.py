"""errkb's Datasette plugin: metadata, record pages, the match page, and links from the tables.

Registered as the `datasette` entry point `errkb = "errkb.web.plugin"`, so `datasette catalog.db` loads it.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

from datasette import hookimpl
from datasette.utils.asgi import asgi_static
from jinja2 import ChoiceLoader, FileSystemLoader
from markupsafe import Markup

from . import metadata, present, queries, urls, views
from .tags import TagsFacet, tag_filter

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


@hookimpl
def prepare_jinja2_environment(env, datasette):
    # A plugin that is a module, not a package, gets no automatic templates/ folder: add ours.
    env.loader = ChoiceLoader([env.loader, FileSystemLoader(str(TEMPLATES))])
    env.filters["errkb_prose"] = present.prose
    env.filters["errkb_inline"] = present.inline


@hookimpl
def get_metadata(datasette, key, database, table):
    # A fresh copy each time: Datasette merges metadata into the dicts it is given.
    return copy.deepcopy(metadata.build(datasette, queries.known_catalogs(datasette)))


@hookimpl
def register_facet_classes():
    return [TagsFacet]


@hookimpl
def filters_from_request(request, database, table, datasette):
    if table == "records" and database in queries.known_catalogs(datasette):
        return tag_filter(request)
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
