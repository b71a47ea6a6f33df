"""errkb search and the records browser's search: synonyms, tags in any case, misspelt words, why a record matched."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO, run_cli
from web_support import Client

from errkb import search
from errkb.web.serve import make_datasette

OOM = "cuda-out-of-memory"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalog")
    shutil.copytree(REPO / "records", root / "records")
    assert run_cli("build", root=root).exit_code == 0
    return root


def found(root, query: str) -> dict:
    result = run_cli("search", query, "--json", root=root)
    answer = json.loads(result.stdout)
    assert result.exit_code == (0 if answer["hits"] else 1)
    return answer


@pytest.mark.parametrize("query, slug", [
    ("OOM", OOM),  # a synonym: the records say "out of memory"
    ("oom", OOM),
    ("device mismatch", "expected-all-tensors-on-same-device"),
    ("devise mismatch", "expected-all-tensors-on-same-device"),  # misspelt inside a synonym: still the synonym
    ("NCCL", "default-process-group-not-initialized"),
    ("memroy", OOM),  # misspelt
    ("dataparalel", "dataparallel-not-supported-when-crf-is-used"),
    ("Multi-GPU", "cuda-invalid-device-ordinal"),  # a tag, in another case
])
def test_what_people_type_finds_the_record(root, query, slug):
    answer = found(root, query)
    assert slug in [hit["slug"] for hit in answer["hits"]], answer


def test_each_hit_says_why_it_matched(root):
    answer = found(root, "OOM")
    (hit,) = [hit for hit in answer["hits"] if hit["slug"] == OOM]
    assert "tagged oom" in hit["why"]
    assert any("«out of memory»" in why for why in hit["why"])
    assert answer["notes"] == ["“oom” also searches “out of memory”"]
    assert not [key for key in hit if "_" in key]  # camelCase, as in records and show


def test_a_misspelt_word_says_what_was_searched_instead(root):
    answer = found(root, "memroy")
    assert answer["notes"] == ["no record has “memroy”: searched “memory” instead"]
    assert any("«memory»" in why for hit in answer["hits"] for why in hit["why"])


def test_nothing_close_is_no_match_with_exit_status_1(root):
    answer = found(root, "zzzqx")
    assert answer["hits"] == [] and answer["total"] == 0
    result = run_cli("search", "zzzqx", root=root)
    assert result.exit_code == 1 and "0 record(s) match" in result.stderr


def test_text_output_leads_with_a_title(root):
    result = run_cli("search", "OOM", root=root)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == f"1. CUDA out of memory   [{OOM}, never verified]"


def test_fts_syntax_in_a_query_is_only_words(root):
    answer = found(root, 'state_dict" ( * ^')
    assert "state-dict-keys-have-module-prefix" in [hit["slug"] for hit in answer["hits"]]


def test_the_records_browser_searches_the_same_way_and_marks_why(root):
    client = Client(make_datasette(root / "catalog.db"))
    try:
        page = client.get("/-/errkb/records?q=OOM").text
        assert f'href="/-/errkb/record/{OOM}"' in page
        assert "CUDA <mark>out of memory</mark>" in page
        assert "“oom” also searches “out of memory”" in page
        assert 'href="/catalog/records?_search=OOM"' in page  # the table link keeps the query
        assert "\x1b" not in client.get("/-/errkb/records?q=weights+only").text  # no raw colour codes
    finally:
        client.close()


def test_the_vocabulary_is_read_again_for_a_rebuilt_catalog(root, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(REPO / "records", other / "records")
    for path in (other / "records").glob("*.json"):
        if path.stem != OOM:
            path.unlink()
    assert run_cli("build", root=other).exit_code == 0
    import sqlite3

    conn = sqlite3.connect(other / "catalog.db")
    assert "dataparallel" not in search.vocabulary(conn, "d")
    conn.close()
    conn = sqlite3.connect(root / "catalog.db")
    assert "dataparallel" in search.vocabulary(conn, "d") and "memori" not in search.vocabulary(conn, "d")
    conn.close()


def test_search_builds_a_catalog_db_that_holds_only_runs(tmp_path):
    """`errkb reproduce` into an unbuilt root writes catalog.db with only its runs; search builds the rest
    instead of failing on the missing full-text table."""
    import sqlite3

    root = tmp_path / "catalog"
    shutil.copytree(REPO / "records", root / "records")
    sqlite3.connect(root / "catalog.db").execute("create table reproduction_runs (slug text)").connection.commit()
    answer = found(root, "OOM")
    assert OOM in [hit["slug"] for hit in answer["hits"]]
