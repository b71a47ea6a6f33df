"""The demand sample (benchmarks/demand/) and benchmarks/demand.py, issue 20.

The files: every entry has exactly the fields measurement needs, a citation owner/repo#number, a
kebab-case family and the query that found it (one of queries.txt, not an excluded one); at most two
reports per repository; the tune/held-out split is the one the fixed seed gives. The script: its
figures come from the matcher's answers (a planted paste of a record's family counts as right, an
answer to a paste of a family without a record counts against precision).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import demand  # noqa: E402

DATA = REPO / "benchmarks" / "demand"
RECORD = "mat1-and-mat2-shapes-cannot-be-multiplied"


def write(path: Path, entries: list[dict]) -> None:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")


def entry(citation: str, family: str, error: str) -> dict:
    return {"citation": citation, "query": "a generic query", "family": family, "raised_by": "torch", "error": error}


def test_files_hold_at_least_300_well_formed_reports():
    tune, held_out = demand.load(DATA / "tune.jsonl"), demand.load(DATA / "held-out.jsonl")
    assert len(tune) + len(held_out) >= 300
    assert demand.problems(tune + held_out) == []


def test_every_query_is_logged_and_none_is_an_excluded_one():
    logged, excluded = set(), set()
    for line in (DATA / "queries.txt").read_text(encoding="utf-8").splitlines():
        query, _, note = line.partition("\t")
        (excluded if note.startswith("EXCLUDED") else logged).add(query)
    used = {row["query"] for row in demand.entries_of("all")}
    assert used <= logged
    assert not used & excluded


def test_problems_flags_a_third_report_of_a_repository_and_bad_fields():
    rows = [entry("Owner/Repo#1", "project-bug", "E"), entry("owner/repo#2", "project-bug", "E")]
    assert demand.problems(rows) == []
    assert demand.problems(rows + [entry("owner/REPO#3", "project-bug", "E")]) == ["owner/repo: 3 reports (at most 2)"]
    assert demand.problems([entry("owner/repo#1", "project-bug", "E"), entry("owner/repo#1", "project-bug", "E")])
    assert demand.problems([entry("owner/repo", "project-bug", "E")])  # no number
    assert demand.problems([entry("owner/repo#1", "Not Kebab", "E")])
    assert demand.problems([{**entry("owner/repo#1", "project-bug", "E"), "url": "x"}])


def test_split_is_the_one_the_seed_gives():
    tune, held_out = demand.load(DATA / "tune.jsonl"), demand.load(DATA / "held-out.jsonl")
    assert demand.split(held_out + tune) == (tune, held_out)
    assert len(held_out) == (len(tune) + len(held_out)) // 3
    assert demand.split(tune + held_out, seed=demand.SEED + 1) != (tune, held_out)


@pytest.fixture(scope="module")
def small_catalog(tmp_path_factory):
    source = tmp_path_factory.mktemp("source")
    (source / "records").mkdir()
    shutil.copy(REPO / "records" / f"{RECORD}.json", source / "records")
    return demand.build_catalog(source, tmp_path_factory.mktemp("catalog"))


def test_figures_count_a_planted_paste_of_a_record_family(small_catalog):
    message = json.loads((REPO / "records" / f"{RECORD}.json").read_text())["record"]["errorMessage"]
    paste = f'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    y = model(x)\nRuntimeError: {message}\n'
    rows = [
        entry("a/one#1", RECORD, paste),                          # right
        entry("a/two#2", RECORD, "ValueError: nothing alike\n"),  # missed
        entry("a/three#3", "project-bug", paste),                 # answered, but its family has no record: wrong
        entry("a/four#4", "some-other-family", "KeyError: 'x'\n"),
    ]
    result = demand.evaluate(rows, small_catalog)
    assert (result["pastes"], result["answered"], result["right"], result["with_record"]) == (4, 2, 1, 2)
    assert result["coverage"] == 0.25 and result["precision"] == 0.5
    assert result["families_with_record"] == {RECORD: {"pastes": 2, "right": 1}}
    assert result["families_without_record"] == {"project-bug": 1, "some-other-family": 1}
    assert [row["citation"] for row in result["wrong_answers"]] == ["a/three#3"]
    assert [row["citation"] for row in result["missed"]] == ["a/two#2"]


def test_an_aliased_family_counts_its_record_and_only_that_record(small_catalog):
    message = json.loads((REPO / "records" / f"{RECORD}.json").read_text())["record"]["errorMessage"]
    paste = f"RuntimeError: {message}\n"
    rows = [entry("a/one#1", "old-name-of-the-family", paste), entry("a/two#2", "another-family", paste)]
    result = demand.evaluate(rows, small_catalog, renamed={"old-name-of-the-family": RECORD})
    assert [row["right"] for row in result["wrong_answers"] + result["missed"]] == [False]
    assert (result["right"], result["answered"]) == (1, 2)
    assert result["families_with_record"] == {RECORD: {"pastes": 1, "right": 1}}
    assert result["families_without_record"] == {"another-family": 1}
    unaliased = demand.evaluate(rows, small_catalog, renamed={})
    assert unaliased["right"] == 0


def test_the_alias_file_names_real_records_and_says_why():
    data = json.loads(demand.ALIASES.read_text())
    slugs = {path.stem for path in (REPO / "records").glob("*.json")}
    for family, alias in ((f, a) for f, a in data.items() if not f.startswith("_")):
        assert alias["record"] in slugs and alias["why"].strip() and family != alias["record"], family
        assert family not in slugs, f"{family} is a record's own slug: no alias needed"


def test_script_reads_a_split_and_prints_the_figures(tmp_path, capsys):
    message = json.loads((REPO / "records" / f"{RECORD}.json").read_text())["record"]["errorMessage"]
    write(tmp_path / "tune.jsonl", [entry("a/one#1", RECORD, f"RuntimeError: {message}\n"),
                                     entry("a/two#2", "dependency-not-installed", "ModuleNotFoundError: No module named 'x'\n")])
    write(tmp_path / "held-out.jsonl", [entry("b/one#1", RECORD, "nothing\n")])
    demand.main(["--data", str(tmp_path), "--split", "tune", "--json"])
    figures = json.loads(capsys.readouterr().out)
    assert figures["split"] == "tune" and figures["pastes"] == 2 and figures["right"] == 1
    assert figures["catalog"] == len(list((REPO / "records").glob("*.json")))
    assert figures["families_without_record"] == {"dependency-not-installed": 1}
    demand.main(["--data", str(tmp_path), "--split", "held-out"])
    text = capsys.readouterr().out
    assert "coverage:  0/1 = 0.0%" in text and f"0/1 = 0.0%  {RECORD}" in text
