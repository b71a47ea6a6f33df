"""The Datasette plugin, through datasette.client: metadata, facets, record pages, the match page, escaping."""

from __future__ import annotations

import importlib.metadata
import html
import html as html_module
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from types import SimpleNamespace

import pytest
from conftest import REPO, run_cli
from web_support import (
    SEED_SLUG, SEED_TRACEBACK, XSS_SLUG, Client, add_record, datasette_client, make_root, xss_record,
)

from errkb.web import matching
from errkb.web.browse import PAGE_SIZE
from errkb.web.serve import make_datasette

RECORD = f"/-/errkb/record/{SEED_SLUG}"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("catalog"))
    add_record(root, xss_record(tmp_path_factory.mktemp("incoming")))  # errkb add, into the built catalog
    return root


@pytest.fixture(scope="module")
def client(root):
    with datasette_client(root) as client:
        yield client


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
    assert records["facets"] == ["repo", {"theme": "tags"}, "errorClass", "errorType", "severity", {"tags": "tags"}, "lastVerdict"]
    assert "errorMessage" in records["columns"]


def count_records(root) -> int:
    return len(list((root / "records").glob("*.json")))


def test_home_page_is_errkbs_own(client, root):
    html = client.get("/").text
    assert 'action="/-/errkb/records"' in html and 'name="q"' in html  # search: the records browser
    assert re.search(r'<form[^>]*action="/-/errkb/match"[^>]*method="post"', html)  # paste box
    assert 'name="traceback"' in html and 'name="csrftoken"' in html
    assert f"{count_records(root)} records, by verdict" in html
    assert 'href="/-/errkb/records?lastVerdict=verified"' in html  # counts by verdict link to the browser
    assert 'href="/-/errkb/records?repo=hankcs%2FHanLP"' in html  # and by library
    recent = html[html.index("Recently verified"):]
    assert f'href="{RECORD}"' in recent  # the seed has a verified run
    assert "rows in" not in html and "hidden tables" not in html  # not Datasette's table counts


def test_datasette_home_page_stays_for_a_database_that_is_not_a_catalog(tmp_path):
    import sqlite3

    from datasette.app import Datasette

    sqlite3.connect(tmp_path / "other.db").execute("create table t (x)").connection.close()
    client = Client(Datasette([str(tmp_path / "other.db")]))
    try:
        client.run(client.ds.invoke_startup())
        response = client.get("/")
        assert response.status_code == 200 and "other" in response.text and "errkb-home" not in response.text
    finally:
        client.close()


def browse_rows(html: str) -> list[str]:
    """The record slugs the browser lists, in order."""
    return re.findall(r'<a class="errkb-record-link" href="/-/errkb/record/([^"]+)"', html)


def browse_all_rows(client, path: str) -> list[str]:
    """The record slugs the browser lists on every page of `path`, following its next links; each page but the
    last is full (PAGE_SIZE rows)."""
    from errkb.web.browse import PAGE_SIZE

    slugs = []
    while True:
        html = client.get(path).text
        rows = browse_rows(html)
        slugs += rows
        following = re.search(r'<a href="([^"]+)" rel="next">', html)
        if following is None:
            return slugs
        assert len(rows) == PAGE_SIZE, path
        path = html_module.unescape(following.group(1))


def browse_headings(root) -> list[str]:
    """The columns the records browser shows for this catalog: "verified on" only where the column exists."""
    import sqlite_utils

    has_verified_on = "verifiedOn" in sqlite_utils.Database(root / "catalog.db")["records"].columns_dict
    return ["message", "class", "library", "verdict"] + (["verified on"] if has_verified_on else []) + ["tags"]


def test_records_browser_shows_a_few_columns_and_no_long_text(client, root):
    html = client.get("/-/errkb/records").text
    headings = re.findall(r'<th scope="col">([^<]+)</th>', html)
    assert headings == browse_headings(root)
    # A page at a time, in slug order: the first PAGE_SIZE records, the total, and a link to the next page.
    total = count_records(root)
    assert total > PAGE_SIZE  # the repository's catalog is past one page
    assert len(browse_rows(html)) == PAGE_SIZE and f"{total} records" in html
    assert re.search(r'<a href="[^"]*page=2[^"]*" rel="next">', html)
    every = browse_all_rows(client, "/-/errkb/records")
    assert every == sorted(every) and len(set(every)) == len(every) == total
    assert "Attempting to deserialize object on a CUDA device" in html  # a message
    assert "def build_criterion" not in html  # the seed's sourceCode
    assert "A raw CRF has shared parameters" not in html  # the seed's documentation
    assert html.index('class="errkb-facets"') < html.index('class="errkb-records"')  # facets before the rows
    assert '<span class="errkb-badge errkb-good">verified</span>' in html


@pytest.mark.parametrize("with_column", [True, False])
def test_records_browser_shows_verified_on_when_the_column_exists(tmp_path, with_column):
    import sqlite_utils

    from web_support import make_root

    root = make_root(tmp_path)
    db = sqlite_utils.Database(root / "catalog.db")
    has_column = "verifiedOn" in db["records"].columns_dict
    if with_column and not has_column:
        db["records"].add_column("verifiedOn", str)
    if not with_column and has_column:  # a catalog built before the column existed
        db.execute("alter table records drop column verifiedOn")
    if with_column:
        db.execute("update records set verifiedOn = ? where slug = ?", ["torch 2.1.2–2.14.1 (CPU)", SEED_SLUG])
    db.conn.commit()
    db.close()
    client = Client(make_datasette(root / "catalog.db"))
    try:
        response = client.get("/-/errkb/records")
    finally:
        client.close()
    assert response.status_code == 200
    headings = re.findall(r'<th scope="col">([^<]+)</th>', response.text)
    assert ("verified on" in headings) == with_column
    assert ("torch 2.1.2–2.14.1 (CPU)" in response.text) == with_column


def test_records_browser_search_is_ordered_by_relevance(client, root):
    html = client.get("/-/errkb/records?q=DataParallel").text
    slugs = browse_rows(html)
    # bm25 weighs the message most: the records whose message says DataParallel come first.
    assert slugs[:2] == [SEED_SLUG, "dataparallel-object-has-no-attribute"]
    assert len(slugs) < count_records(root) and "most relevant first" in html
    assert "<title>Records matching “DataParallel” · errkb</title>" in html


def test_records_browser_filters_by_facet_values_and_tags(client, root):
    html = client.get("/-/errkb/records?lastVerdict=verified").text
    assert browse_rows(html) == [SEED_SLUG]
    html = client.get("/-/errkb/records?_tag=crf&_tag=dataparallel&repo=hankcs%2FHanLP").text
    assert browse_rows(html) == [SEED_SLUG, XSS_SLUG]  # the probe is the seed with markup in its text
    never = client.get("/-/errkb/records?lastVerdict=none").text
    never_rows = browse_all_rows(client, "/-/errkb/records?lastVerdict=none")
    assert SEED_SLUG not in never_rows and len(never_rows) == count_records(root) - 1
    assert f"{count_records(root) - 1} records" in never
    facet = html[html.index('id="facet-_tag"'):]
    crf = re.search(r'<li class="errkb-selected">\s*<a href="([^"]+)"[^>]*>crf</a>', facet).group(1)
    assert "_tag=crf" not in crf and "_tag=dataparallel" in crf  # a selected value's link removes only it


def test_search_facets_count_the_whole_match_or_say_what_they_count(client, root, monkeypatch):
    from errkb.web import facets as sampled

    def tag_counts(html):
        facet = html[html.index('id="facet-_tag"'):]
        facet = facet[:facet.index("</section>")]
        return {tag: int(n) for tag, n in re.findall(r'>([\w-]+)</a>\s*<span class="errkb-count">(\d+)</span>', facet)}

    html = client.get("/-/errkb/records?q=DataParallel").text
    matches = browse_rows(html)
    assert "most relevant of" not in html  # every match counted
    assert tag_counts(html)["dataparallel"] == sum(
        "dataparallel" in json.loads(sqlite3.connect(root / "catalog.db").execute(
            "select tags from records where slug = ?", [slug]).fetchone()[0]) for slug in matches)

    monkeypatch.setattr(sampled, "FACET_SAMPLE", 1)
    html = client.get("/-/errkb/records?q=DataParallel").text
    assert browse_rows(html) == matches  # the page itself is not cut
    assert f"Counts over the 1 most relevant of {len(matches)} matches." in html
    top_tags = json.loads(sqlite3.connect(root / "catalog.db").execute(
        "select tags from records where slug = ?", [matches[0]]).fetchone()[0])
    assert tag_counts(html) == {tag: 1 for tag in top_tags}

    html = client.get("/-/errkb/records?_tag=dataparallel").text
    tagged = browse_rows(html)
    assert len(tagged) > 1 and f"Counts over the first 1 of {len(tagged)} records, by name." in html
    assert tag_counts(html)["dataparallel"] == 1
    assert "Counts over" not in client.get("/-/errkb/records").text  # unfiltered: exact, from the indexes


def test_table_facets_over_a_large_filtered_result_count_a_labelled_sample(client, monkeypatch):
    from errkb.web import facets as sampled

    def facet(html, name):
        block = html[html.index(f'id="facet-{name}"'):]
        return block[:block.index("</ul>")]

    path = "/catalog/records?_search=DataParallel&_facet=errorClass&_facet_tags=tags"
    exact = client.get(path).text
    assert "errkb-facet-note" not in exact
    rows = client.get(path.replace("/records?", "/records.json?") + "&_shape=objects").json()["rows"]
    assert len(rows) > 1

    monkeypatch.setattr(sampled, "FACET_SAMPLE", 1)
    html = client.get(path).text
    for name in ["errorClass", "tags"]:
        assert f"counts over the first 1 of {len(rows)} rows" in facet(html, name)
    # The sample is the first row of the result: its class counted once, nothing else.
    counts = re.findall(r"</a> (\d+)</li>", facet(html, "errorClass"))
    assert counts == ["1"]
    assert "errkb-facet-note" not in client.get("/catalog/records?_facet=errorClass").text  # unfiltered: exact


@pytest.mark.parametrize("q", ["", '"', '""', "((", "*", "NEAR(", "-"])
def test_searches_that_are_not_words_do_not_fail(client, q):
    for path in ["/-/errkb/records", "/catalog/search", "/catalog/search.json"]:
        response = client.get(path, params={"q": q})
        assert response.status_code == 200, (path, q, response.text[:300])


def test_catalog_search_speaks_in_words(client):
    html = client.get("/catalog/search?q=DataParallel").text
    assert "<title>Search: DataParallel · errkb</title>" in html
    assert "<h1>Records matching “DataParallel”</h1>" in html
    assert "Custom SQL query" not in html and "select records.slug" not in html
    assert html.index(SEED_SLUG) < html.index("dataparallel-gather-scalars-warning")  # by relevance
    assert 'errkb-none">never verified</span>' in html and 'errkb-good">verified</span>' in html
    for query in ["", "?q=", '?q="']:
        empty = client.get("/catalog/search" + query).text
        assert "<h1>Search the records</h1>" in empty and "Type a few words" in empty


def test_links_to_browse_records_open_the_records_browser(client):
    menu = client.get("/").text
    assert re.search(r'<a href="/-/errkb/records">Browse records</a>', menu)
    record = client.get(RECORD).text
    assert 'href="/-/errkb/records?_tag=crf"' in record and 'href="/-/errkb/records?errorClass=ValueError"' in record


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
    runs = history[history.index("<h3>Runs, by environment</h3>"):]
    assert runs.index("torch 2.13.0 · CPU") < runs.index("torch 2.13.0 · 2× H200")  # CPU first, then by release
    # The matrix: a column per environment (CPU first), a row per stage or claim, and a summary over them.
    matrix = history[history.index('<table class="errkb-matrix">'):history.index("</table>")]
    assert matrix.count("<th scope=\"col\">") == 3 and "torch 2.13.0 · CPU" in matrix and "2× H200" in matrix
    assert "error reproduced" in matrix
    assert "reproduces on torch 2.13.0 (2× H200)" in history
    for text in ["hanlp 2.1.5", "torch 2.13.0", "Python 3.11.7", "torch on 2× H200", "CI run",
                 "2026-11-29 15:00", "needs 2 CUDA devices, found 0", "CPU only"]:
        assert text in history, text


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """The repository's records with their committed results: real runs on several releases."""
    root = tmp_path_factory.mktemp("proven")
    for folder in ("records", "reproductions", "verifications", "keys"):  # keys: to verify the results
        shutil.copytree(REPO / folder, root / folder)
    assert run_cli("build", root=root).exit_code == 0
    client = Client(make_datasette(root / "catalog.db"))
    yield client
    client.close()


def test_the_record_page_is_crash_first(proven):
    page = proven.get("/-/errkb/record/cuda-out-of-memory").text
    assert '<h1 class="errkb-title">CUDA out of memory</h1>' in page
    assert '<details class="errkb-message-box">' in page  # an 11-line message starts collapsed
    assert page.index("<h2>How to fix it</h2>") < page.index("<h2>What happened</h2>")  # fixes before background
    short = proven.get("/-/errkb/record/batchnorm-one-value-per-channel").text
    assert '<pre class="errkb-message">Expected more than 1 value per channel' in short  # a short one is shown


def record_with_most_current_releases(proven) -> tuple[str, list[str]]:
    """The record whose current, trusted CPU results span the most torch releases, and those releases in order
    (from the built catalog: a reviewed record keeps only the results of today's record and reproduction)."""
    conn = sqlite3.connect(proven.ds.get_database("catalog").path)
    try:
        rows = conn.execute(
            "select slug, group_concat(distinct torch) from reproduction_runs where current and trusted "
            "and cuda_device_count = 0 and torch is not null group by slug "
            "order by count(distinct torch) desc, count(*), slug limit 1").fetchall()
    finally:
        conn.close()
    slug, releases = rows[0]
    return slug, sorted({r.split("+")[0] for r in releases.split(",")}, key=lambda r: tuple(int(n) for n in r.split(".")))


def test_the_matrix_has_compact_release_columns_and_runs_say_shared_notes_once(proven):
    slug, releases = record_with_most_current_releases(proven)
    assert len(releases) >= 3, (slug, releases)  # enough columns for the matrix to say something
    page = proven.get(f"/-/errkb/record/{slug}").text
    matrix = page[page.index('<table class="errkb-matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    heads = re.findall(r'<th scope="col"><a [^>]*>([^<]+)</a></th>', matrix)
    assert heads == releases  # by release, the local version (+cpu) left to the build row
    assert f'<th scope="colgroup" colspan="{len(releases)}">torch on CPU only</th>' in matrix  # hardware above the releases
    builds = re.findall(r'<td title="[^"]*">([a-z0-9]+)</td>', matrix)
    assert len(builds) == len(releases) and all(re.fullmatch(r"cpu|cu\d+", b) for b in builds)
    assert all(f"{b}: CUDA {b[2:-1]}.{b[-1]} build of torch" in page for b in builds if b != "cpu")
    runs = page[page.index("<h3>Runs, by environment</h3>"):page.index("</table>", page.index("<h3>Runs, by environment</h3>"))]
    shared = re.search(r'<p class="errkb-note errkb-shared-notes">In every environment: ([^<]+)</p>', runs)
    assert shared, "no notes shared by every run"
    for note in shared.group(1).split("; "):  # the same in every run: said once, not in every row
        assert runs.count(note) == 1, note
    assert runs.count("<tr>") == 1 + len(releases)  # the header, then one row per environment


def test_no_raw_colour_codes_on_any_page(proven):
    slug = "torch-load-weights-only-failed"
    assert "\x1b" in json.loads((REPO / "records" / f"{slug}.json").read_text())["record"]["errorMessage"]
    for path in ["/", f"/-/errkb/record/{slug}", "/-/errkb/records?q=weights", "/-/errkb/match?traceback=Weights+only+load+failed"]:
        page = proven.get(path).text
        assert "\x1b" not in page and "[1m" not in page, path


def test_a_record_without_runs_says_never_verified(client):
    html = client.get(f"/-/errkb/record/{XSS_SLUG}").text
    assert "never verified" in html


@pytest.mark.parametrize("slug", ["no-such-record", "x' or '1'='1", "..%2F..%2Fetc"])
def test_unknown_records_are_404(client, slug):
    assert client.get(f"/-/errkb/record/{slug}", follow_redirects=True).status_code == 404


def html_text(text: str) -> str:
    return html.escape(text, quote=True)


def test_match_page_offers_a_form_with_a_csrf_token(client):
    html = client.get("/-/errkb/match").text
    assert "<textarea" in html and 'name="traceback"' in html
    assert 'name="csrftoken"' in html


def test_match_page_puts_the_seed_first(client):
    html = client.get("/-/errkb/match", params={"traceback": SEED_TRACEBACK}).text
    assert "matched with" not in html  # no debug line on a working page
    links = re.findall(r'<li class="errkb-match">.*?href="/-/errkb/record/([^"]+)"', html, re.S)
    assert links and links[0] == SEED_SLUG
    assert "errkb-reasons" in html


def test_match_page_says_no_match_when_nothing_is_close(client):
    html = client.get("/-/errkb/match", params={"traceback": "KeyError: 'banana split with sprinkles'"}).text
    assert "No match" in html
    link = re.search(r'class="errkb-search-link" href="([^"]+)"', html).group(1)
    assert link == "/-/errkb/records?q=%27banana+split+with+sprinkles%27"  # the query goes with the link


def test_match_page_leads_with_title_cause_and_the_first_fix(client, root):
    page = client.get("/-/errkb/match", params={"traceback": SEED_TRACEBACK}).text
    item = page.split('<li class="errkb-match">')[1].split("</details>")[0]
    record = json.loads((root / "records" / f"{SEED_SLUG}.json").read_text())["record"]
    title, cause, fix, more = (item.index(marker) for marker in
                               ("errkb-match-title", "errkb-match-cause", "errkb-match-fix", "errkb-match-more"))
    assert title < cause < fix < more, "the fix comes before the message and the reasons"
    assert "DataParallel not supported when CRF is used</a>" in item
    assert html_text(record["solutions"][0].split("`")[0]) in item
    assert item.index(html_text(record["errorMessage"]), more) > more  # the message is in the collapsed part


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
    assert "class ValueError" in html and "0.93" in html


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
