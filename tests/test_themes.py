"""Themes (errkb/themes.py, issue 20 Must 6): every record has one; the home page, the records browser and the
Datasette records table count and filter them, and the counts are the records' own (read off their tags)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from web_support import Client, make_root

from conftest import REPO
from errkb import themes
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
    # A record whose tags name no theme: counted by no theme, found by none.
    path = root / "records" / "mat1-and-mat2-shapes-cannot-be-multiplied.json"
    envelope = json.loads(path.read_text(encoding="utf-8"))
    envelope["record"]["tags"] = ["pytorch", "cnn"]
    path.write_text(json.dumps(envelope, indent=2), encoding="utf-8")
    from errkb import catalog

    catalog.build(root)
    return root


@pytest.fixture(scope="module")
def client(root):
    client = Client(make_datasette(root / "catalog.db"))
    yield client
    client.close()


def test_every_record_of_the_catalog_has_a_theme():
    lost = [slug for slug, tags in record_tags(REPO).items() if not themes.of(tags)]
    assert lost == [], f"records whose tags name no theme (add a tag to a theme in errkb/themes.py): {lost}"


def test_themes_of_tags_and_tags_of_themes():
    assert themes.of(["pytorch", "state-dict", "ddp"]) == ["devices-and-distributed", "checkpoints"]
    assert themes.of(["pytorch", "cnn"]) == []
    assert "state-dict" in themes.tags_of([THEME]) and themes.tags_of(["no-such-theme"]) == []
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
