"""Themes (errkb/themes.py, issue 20 Must 6): every record has one; the home page, the records browser and the
Datasette records table count and filter them, and the counts are the records' own (read off their tags)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections import Counter

import pytest
from web_support import Client, make_root

from conftest import REPO, tree_digest
from errkb import catalog, themes
from errkb.web.serve import make_datasette

THEME = "checkpoints"


def record_tags(root) -> dict[str, list[str]]:
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))["record"]["tags"]
        for path in sorted((root / "records").glob("*.json"))
    }


def expected_counts(root) -> Counter:
    return Counter(theme for tags in record_tags(root).values() for theme in themes.of(tags))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("catalog"), runs=False)
    retag(root, "mat1-and-mat2-shapes-cannot-be-multiplied", ["pytorch", "cnn"])  # no theme: counted by none
    catalog.build(root)
    return root


@pytest.fixture
def catalog_root(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    retag(tmp_path, "mat1-and-mat2-shapes-cannot-be-multiplied", ["pytorch", "cnn"])
    return tmp_path


@pytest.fixture(scope="module")
def client(root):
    client = Client(make_datasette(root / "catalog.db"))
    yield client
    client.close()


def test_every_record_of_the_catalog_has_a_theme():
    lost = [slug for slug, tags in record_tags(REPO).items() if not themes.of(tags)]
    assert lost == [], f"records whose tags name no theme (add a tag to a theme in errkb/themes.py): {lost}"


def test_themes_of_tags():
    assert themes.of(["pytorch", "state-dict", "ddp"]) == ["devices-and-distributed", "checkpoints"]
    assert themes.of(["pytorch", "cnn"]) == []
    words = [tag for _, tags in themes.THEMES.values() for tag in tags]
    assert len(words) == len(set(words)), "a tag names one theme"


def test_home_page_counts_records_by_theme_and_links_the_browser(client, root):
    html = client.get("/").text
    section = html[html.index('class="errkb-home-themes"'):]
    section = section[:section.index("</section>")]
    shown = {label: int(n) for label, n in re.findall(r'>([^<>]+)</a> <span class="errkb-count">(\d+)</span>', section)}
    assert shown == {themes.label(name): n for name, n in expected_counts(root).items()}
    assert f"/-/errkb/records?_theme={THEME}" in section


def test_browser_filters_by_theme_and_counts_themes_of_the_result(client, root):
    wanted = sorted(slug for slug, tags in record_tags(root).items() if THEME in themes.of(tags))
    html = client.get(f"/-/errkb/records?_theme={THEME}").text
    shown = sorted(set(re.findall(r'href="/-/errkb/record/([^"]+)"', html)))
    assert shown == wanted and "mat1-and-mat2-shapes-cannot-be-multiplied" not in shown
    facet = html[html.index('id="facet-_theme"'):]
    facet = facet[:facet.index("</section>")]
    assert re.search(rf'class="errkb-selected">\s*<a href="[^"]*"[^>]*>{themes.label(THEME)}</a>\s*<span class="errkb-count">{len(wanted)}<', facet)
    both = client.get(f"/-/errkb/records?_theme={THEME}&_theme=autograd").text  # any of them
    assert len(set(re.findall(r'href="/-/errkb/record/([^"]+)"', both))) == len(
        [slug for slug, tags in record_tags(root).items() if {THEME, "autograd"} & set(themes.of(tags))])


def test_records_table_has_a_theme_facet_and_filter(client, root):
    data = client.get("/catalog/records.json?_shape=objects&_facet_theme=tags&_size=max").json()
    counts = {item["value"]: item["count"] for item in data["facet_results"]["theme"]["results"]}
    assert counts == dict(expected_counts(root))
    data = client.get(f"/catalog/records.json?_shape=objects&_theme={THEME}&_size=max").json()
    assert sorted(row["slug"] for row in data["rows"]) == sorted(
        slug for slug, tags in record_tags(root).items() if THEME in themes.of(tags))
    selected = {item["value"]: item for item in data["facet_results"]["theme"]["results"]}
    assert selected[THEME]["selected"] and f"_theme={THEME}" not in selected[THEME]["toggle_url"]
    assert "about checkpoints and weights" in client.get(f"/catalog/records?_theme={THEME}").text


def stored(root) -> dict[str, list[str]]:
    with sqlite3.connect(root / "catalog.db") as conn:
        rows = conn.execute(f"select slug, theme from {themes.TABLE} order by slug, theme").fetchall()
    found: dict[str, list[str]] = {}
    for slug, theme in rows:
        found.setdefault(slug, []).append(theme)
    return found


def derived(root) -> dict[str, list[str]]:
    return {slug: sorted(themes.of(tags)) for slug, tags in record_tags(root).items() if themes.of(tags)}


def retag(root, slug: str, tags: list[str]) -> None:
    path = root / "records" / f"{slug}.json"
    envelope = json.loads(path.read_text(encoding="utf-8"))
    envelope["record"]["tags"] = tags
    path.write_text(json.dumps(envelope, indent=2), encoding="utf-8")


def test_build_keeps_record_themes_in_step_with_tags_and_with_the_themes(catalog_root, monkeypatch):
    root = catalog_root
    catalog.build(root)
    assert stored(root) == derived(root)
    retag(root, "cuda-out-of-memory", ["pytorch", "autograd"])  # an edited record moves
    (root / "records" / "view-size-not-compatible-with-stride.json").unlink()  # a deleted one leaves
    catalog.build(root)
    assert stored(root) == derived(root) and stored(root)["cuda-out-of-memory"] == ["autograd"]
    assert "view-size-not-compatible-with-stride" not in stored(root)
    before = tree_digest(root)
    catalog.build(root)  # nothing changed: nothing written
    assert tree_digest(root) == before
    # The themes change (a tag joins another theme): the next build rewrites every record's themes.
    changed = dict(themes.THEMES)
    label, words = changed["data-loading"]
    changed["data-loading"] = (label, words + ("cnn",))
    monkeypatch.setattr(themes, "THEMES", changed)
    catalog.build(root)
    assert "data-loading" in stored(root)["mat1-and-mat2-shapes-cannot-be-multiplied"]
    assert stored(root) == derived(root)


def test_a_catalog_built_before_themes_gets_them_on_the_next_build(catalog_root):
    root = catalog_root
    catalog.build(root)
    with sqlite3.connect(root / "catalog.db") as conn:
        conn.execute(f"drop table {themes.TABLE}")
        conn.execute("delete from build_info where key = 'themes'")
    client = Client(make_datasette(root / "catalog.db"))
    try:  # served as it is: no theme facet, no record of a theme, no error
        assert client.get(f"/-/errkb/records?_theme={THEME}").status_code == 200
        data = client.get(f"/catalog/records.json?_shape=objects&_theme={THEME}&_facet_theme=tags").json()
        assert data["rows"] == [] and "theme" not in data["facet_results"]
        assert client.get("/").status_code == 200
    finally:
        client.close()
    catalog.build(root)
    assert stored(root) == derived(root)
