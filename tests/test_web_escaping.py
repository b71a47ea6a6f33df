"""Markup in a contributed record or result file shows as text on every page that renders it.

The probe record has markup in every field that can hold it, and two result files with markup in every
free-text field (web_support.xss_record, write_xss_results). Each page is checked for the markup arriving
unescaped, and for the probe being shown at all (a page that dropped the field would prove nothing).
"""

from __future__ import annotations

import sqlite3

import pytest
from web_support import (
    ESCAPED_SCRIPT, RAW_MARKUP, XSS_PASTE, XSS_RECORD_FIELDS, XSS_RESULT_FIELDS_SHOWN, XSS_SLUG, add_record,
    datasette_client, make_root, shows_escaped, write_xss_results, xss_record,
)

from errkb import catalog
from errkb.web.browse import PAGE_SIZE


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("catalog"), runs=False)
    add_record(root, xss_record(tmp_path_factory.mktemp("incoming")))  # errkb add, into the built catalog
    write_xss_results(root)
    catalog.build(root)  # loads the result files
    return root


@pytest.fixture(scope="module")
def client(root):
    with datasette_client(root) as client:
        yield client


def assert_no_raw_markup(html: str, page: str) -> None:
    for raw in RAW_MARKUP:
        assert raw not in html, f"{page}: {raw!r} reached the page unescaped"


def catalog_tables(root) -> dict[str, bool]:
    """Every table Datasette serves from catalog.db, and whether it has a slug column to filter on."""
    conn = sqlite3.connect(root / "catalog.db")
    try:
        names = [row[0] for row in conn.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '%fts_%'"
        )]
        return {name: "slug" in [c[1] for c in conn.execute(f"pragma table_info([{name}])")] for name in names}
    finally:
        conn.close()


ERRKB_PAGES = {
    "record page": (f"/-/errkb/record/{XSS_SLUG}", {}),
    "home": ("/", {}),
    "browser": ("/-/errkb/records", {"page": "the probe's"}),  # the page the probe falls on, by slug
    "browser search": ("/-/errkb/records", {"q": "Probe"}),
    "browser, filtered": ("/-/errkb/records", {"lastVerdict": "verified"}),
    "search": ("/catalog/search", {"q": "Probe"}),
    "match page": ("/-/errkb/match", {"traceback": XSS_PASTE}),
}


@pytest.mark.parametrize("page", sorted(ERRKB_PAGES))
def test_errkbs_pages_show_the_probe_as_text(client, root, page):
    path, params = ERRKB_PAGES[page]
    if params.get("page") == "the probe's":  # the browser lists PAGE_SIZE records a page, in slug order
        conn = sqlite3.connect(root / "catalog.db")
        try:
            before = conn.execute("select count(*) from records where slug < ?", (XSS_SLUG,)).fetchone()[0]
        finally:
            conn.close()
        params = {"page": str(before // PAGE_SIZE + 1)}
    response = client.get(path, params=params)
    assert response.status_code == 200, page
    assert_no_raw_markup(response.text, page)
    assert ESCAPED_SCRIPT in response.text, f"{page} does not show the probe"
    if page in ("match page", "browser search", "search"):
        assert f'href="/-/errkb/record/{XSS_SLUG}"' in response.text, f"{page} does not list the probe"


def test_every_field_of_the_probe_is_on_its_record_page_as_text(client):
    html = client.get(f"/-/errkb/record/{XSS_SLUG}").text
    assert_no_raw_markup(html, "record page")
    for field in XSS_RECORD_FIELDS + XSS_RESULT_FIELDS_SHOWN:
        assert shows_escaped(html, field), f"the record page does not show {field}"
    assert "javascript:alert(1)" in html  # the result's ranAt, shown as text, not as a link


def test_every_datasette_table_and_row_shows_the_probe_as_text(client, root):
    shown = []
    for table, has_slug in catalog_tables(root).items():
        params = {"slug": XSS_SLUG, "_size": "max"} if has_slug else {"_size": "max"}
        response = client.get(f"/catalog/{table}", params=params)
        assert response.status_code == 200, table
        assert_no_raw_markup(response.text, f"table {table}")
        if ESCAPED_SCRIPT in response.text:
            shown.append(table)
    assert {"records", "reproduction_runs", "solutions", "prevention_tips", "observed_messages"} <= set(shown)
    row = client.get(f"/catalog/records/{XSS_SLUG}").text
    assert_no_raw_markup(row, "records row page")
    for field in XSS_RECORD_FIELDS:
        assert shows_escaped(row, field), f"the row page does not show {field}"
