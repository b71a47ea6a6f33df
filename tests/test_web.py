"""The Datasette plugin, through datasette.client: metadata, facets, record pages, the match page, escaping."""

from __future__ import annotations

import importlib.metadata
import json
import re
import sqlite3
import subprocess
import sys
from types import SimpleNamespace

import pytest
from web_support import (
    SEED_SLUG, SEED_TRACEBACK, XSS_IMG, XSS_SCRIPT, XSS_SLUG, Client, add_record, make_root, xss_record,
)

from errkb.web import matching
from errkb.web.serve import make_datasette

RECORD = f"/-/errkb/record/{SEED_SLUG}"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("catalog"))
    add_record(root, xss_record(tmp_path_factory.mktemp("incoming")))  # errkb add, into the built catalog
    return root


@pytest.fixture(scope="module")
def client(root):
    client = Client(make_datasette(root / "catalog.db"))
    yield client
    client.close()


def test_plugin_is_registered_through_the_datasette_entry_point(client):
    points = importlib.metadata.entry_points(group="datasette")
    assert any(p.name == "errkb" and p.value == "errkb.web.plugin" for p in points)
    plugins = client.get("/-/plugins.json").json()
    errkb = next(p for p in plugins if p["name"] == "errkb")
    assert {"get_metadata", "register_routes", "render_cell"} <= set(errkb["hooks"])


def test_metadata_has_title_license_source_and_facets(client):
    metadata = client.get("/-/metadata.json").json()
    assert metadata["title"].startswith("errkb")
    assert metadata["license"] and metadata["source"]
    records = metadata["databases"]["catalog"]["tables"]["records"]
    assert records["facets"] == ["repo", "errorClass", "errorType", "severity", {"tags": "tags"}, "lastVerdict"]
    assert "errorMessage" in records["columns"]


def test_home_page_has_a_search_box_and_the_match_page(client):
    html = client.get("/").text
    assert 'name="_search"' in html and 'action="/catalog/records"' in html
    assert 'href="/-/errkb/match"' in html


def test_records_table_opens_with_facets_search_and_no_suggestions(client):
    data = client.get("/catalog/records.json?_search=DataParallel&_shape=objects").json()
    assert SEED_SLUG in [row["slug"] for row in data["rows"]]
    facets = data["facet_results"]
    facets = facets.get("results", facets)  # the shape differs across Datasette versions
    assert {"repo", "errorClass", "errorType", "severity", "tags", "lastVerdict"} <= set(facets)
    assert data.get("suggested_facets", []) == []
    html = client.get("/catalog/records").text
    assert 'name="_search"' in html


def test_tags_facet_and_filter_use_record_tags(client):
    data = client.get("/catalog/records.json?_shape=objects&_tag=crf&_tag=dataparallel").json()
    assert SEED_SLUG in [row["slug"] for row in data["rows"]]
    assert all({"crf", "dataparallel"} <= set(json.loads(row["tags"])) for row in data["rows"])
    tags = {item["value"]: item for item in data["facet_results"]["tags"]["results"]}
    assert tags["crf"]["selected"] and tags["crf"]["count"] == len(data["rows"])
    assert "_tag=crf" not in tags["crf"]["toggle_url"]  # a selected tag's link removes it
    html = client.get("/catalog/records?_tag=crf").text
    assert "tagged &#34;crf&#34;" in html


def test_suggest_facets_is_off_even_for_a_plain_datasette(root):
    from datasette.app import Datasette

    client = Client(Datasette(immutables=[str(root / "catalog.db")]))
    try:
        client.run(client.ds.invoke_startup())
        assert client.ds.setting("suggest_facets") is False
    finally:
        client.close()


def test_records_table_links_each_message_to_its_record_page(client):
    html = client.get("/catalog/records").text
    assert f'href="{RECORD}"' in html


def test_row_page_links_the_slug_to_the_record_page(client):
    html = client.get(f"/catalog/records/{SEED_SLUG}").text
    assert f'href="{RECORD}"' in html


def test_record_page_has_the_whole_record(client):
    response = client.get(RECORD)
    assert response.status_code == 200
    html = response.text
    for text in [
        "DataParallel not supported when CRF is used",  # message and pattern
        "ValueError", "validation",
        "hankcs/HanLP",
        "https://github.com/hankcs/HanLP/blob/ddb1299bddff079e447af52ec12549c50636bfa8/hanlp/components/taggers/tagger.py#L37",
        "hanlp/components/taggers/tagger.py:37",
        "tagger.py#L19-L55",  # the excerpt on GitHub (the record's githubUrl)
        "build_criterion returns the model&#39;s CRF module",  # documentation
        "Training a tagger",  # trigger scenarios
        "Scaling single-GPU CRF training",  # common situations
        "Train on a single GPU",  # solutions
        "{&#34;crf&#34;: true, &#34;devices&#34;: [0]}",  # example fix, as code
        "Limit devices to one GPU when crf=True",  # prevention tips
        ">multi-gpu</a>",  # tags
    ]:
        assert text in html, text
    raise_line = re.search(r'<tr class="errkb-raise".*?</tr>', html, re.S).group(0)
    assert ">37<" in raise_line and "raise ValueError(" in raise_line


def test_record_page_shows_the_verification_history(client):
    html = client.get(RECORD).text
    history = html[html.index("<h2>Verification</h2>"):]
    assert history.index(">verified<") < history.index(">skipped<")  # newest first
    for text in ["hanlp 2.1.5", "torch 2.13.0", "Python 3.11.7", "2 CUDA devices: NVIDIA H200", "gpu-box-1",
                 "2026-11-29 15:00", "needs 2 CUDA devices, found 0", "CPU only"]:
        assert text in history, text


def test_a_record_without_runs_says_never_verified(client):
    html = client.get(f"/-/errkb/record/{XSS_SLUG}").text
    assert "never verified" in html


@pytest.mark.parametrize("slug", ["no-such-record", "x' or '1'='1", "..%2F..%2Fetc"])
def test_unknown_records_are_404(client, slug):
    assert client.get(f"/-/errkb/record/{slug}", follow_redirects=True).status_code == 404


def test_markup_in_a_record_renders_as_text(client):
    pages = {
        "record page": client.get(f"/-/errkb/record/{XSS_SLUG}").text,
        "table page": client.get("/catalog/records?_col=errorMessage&_col=documentation&_col=solutions").text,
        "row page": client.get(f"/catalog/records/{XSS_SLUG}").text,
        "search": client.get("/catalog/search?q=probe").text,
        "match page": client.get("/-/errkb/match", params={"traceback": f"ValueError: Probe {XSS_SCRIPT}"}).text,
    }
    for name, html in pages.items():
        assert XSS_SCRIPT not in html, name
        assert XSS_IMG not in html, name
        assert "&lt;script&gt;alert(" in html, name
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages["record page"]


def test_match_page_offers_a_form_with_a_csrf_token(client):
    html = client.get("/-/errkb/match").text
    assert "<textarea" in html and 'name="traceback"' in html
    assert 'name="csrftoken"' in html


def test_match_page_puts_the_seed_first(client):
    html = client.get("/-/errkb/match", params={"traceback": SEED_TRACEBACK}).text
    assert "matched with errkb.matching" in html
    links = re.findall(r'<li class="errkb-match">.*?href="/-/errkb/record/([^"]+)"', html, re.S)
    assert links and links[0] == SEED_SLUG
    assert "errkb-reasons" in html


def test_match_page_says_no_match_when_nothing_is_close(client):
    html = client.get("/-/errkb/match", params={"traceback": "KeyError: 'banana split with sprinkles'"}).text
    assert "No match" in html


def test_a_failing_matcher_is_named_on_the_page(client, monkeypatch):
    def broken(text, root=None):
        raise RuntimeError("index is corrupt")

    monkeypatch.setattr(matching.matcher, "match", broken)
    html = client.get("/-/errkb/match", params={"traceback": SEED_TRACEBACK}).text
    assert "errkb.matching failed: RuntimeError: index is corrupt" in html


def test_match_page_uses_errkb_matching_and_shows_why(client, monkeypatch):
    calls = []

    def fake_match(text, root=None):
        calls.append((text, root))
        return [SimpleNamespace(slug=SEED_SLUG, score=0.93, why=lambda: "pattern matched; class ValueError")]

    monkeypatch.setattr(matching, "matcher", SimpleNamespace(match=fake_match))
    html = client.get("/-/errkb/match", params={"traceback": SEED_TRACEBACK}).text
    assert calls and "ValueError: DataParallel" in calls[0][0]
    assert (calls[0][1] / "catalog.db").exists()  # the catalog's root is passed
    assert "matched with errkb.matching" in html and "class ValueError" in html and "0.93" in html


def test_post_with_cookies_but_without_a_csrf_token_is_refused(client):
    response = client.post("/-/errkb/match", data={"traceback": SEED_TRACEBACK}, cookies={"ds_csrftoken": "forged"})
    assert response.status_code == 403


def test_the_catalog_is_served_read_only(client):
    # The live file, opened read-only (mode=ro): Datasette's own connections cannot write it either.
    conn = client.ds.get_database("catalog").connect()
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("delete from records")
    response = client.get("/catalog.json", params={"sql": "delete from records"})
    assert response.status_code == 400
    assert client.get("/catalog/records.json?_shape=objects&_size=1000").json()["rows"]


def test_stylesheet_is_served_and_linked(client):
    html = client.get(RECORD).text
    href = re.search(r'href="(/-/static-plugins/errkb/errkb\.css[^"]*)"', html).group(1)
    response = client.get(href.replace("&amp;", "&"))
    assert response.status_code == 200 and ".errkb-badge" in response.text


def test_other_commands_do_not_import_datasette():
    code = "import sys, errkb.cli; sys.exit('datasette' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
