"""Bounded input: record files that never end, integers SQLite cannot hold, costly or match-anything
patterns, and 1 MB pastes of anything. Each answer is a clear error or a verdict, never a hang."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import REPO, tree_digest
from reproduce_support import record_with

from errkb import paste
from errkb.matching import Matcher
from errkb.matching.index import entries_from_folder
from errkb.patterns import MAX_PROGRAM_SIZE, compile_pattern

sys.path.insert(0, str(REPO / "benchmarks"))
from paste_growth import base64_text, training_log  # noqa: E402

PASTES = REPO / "tests" / "data" / "pastes"
SEED = "dataparallel-not-supported-when-crf-is-used"
LIMIT_S = 60  # a hang fails the test here instead of stalling the suite


def errkb(root: Path, *args, stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "errkb.cli", "--root", str(root), *map(str, args)],
        capture_output=True, text=True, timeout=LIMIT_S, stdin=stdin,
    )


def test_add_refuses_a_device_instead_of_reading_it_forever(seeded_root):
    before = tree_digest(seeded_root)
    result = errkb(seeded_root, "add", "/dev/zero")
    assert result.returncode == 1
    assert "/dev/zero: $: is not a regular file (a device), expected a record file" in result.stderr
    assert tree_digest(seeded_root) == before


def test_add_refuses_a_fifo_without_waiting_for_a_writer(seeded_root, tmp_path):
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    result = errkb(seeded_root, "add", fifo)
    assert result.returncode == 1
    assert f"{fifo}: $: is not a regular file (a FIFO)" in result.stderr


def test_add_stops_reading_a_file_that_keeps_growing(seeded_root, tmp_path):
    growing = tmp_path / "growing.json"
    growing.write_text("[")
    writer = subprocess.Popen(
        [sys.executable, "-c", f"f = open({str(growing)!r}, 'a')\nwhile True: f.write('1,' * 50000); f.flush()"]
    )
    try:
        result = errkb(seeded_root, "add", growing)
    finally:
        writer.kill()
        writer.wait()
    assert result.returncode == 1
    assert f"{growing}: $: file" in result.stderr and "expected at most 1048576 bytes" in result.stderr


def test_line_numbers_past_sqlites_integers_are_a_validation_error(seeded_root, tmp_path):
    huge = 2**63
    envelope = record_with({"slug": "huge-line", "lineNumber": huge, "sourceCodeEnd": huge})
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(envelope))
    before = tree_digest(seeded_root)
    result = errkb(seeded_root, "add", path)
    assert result.returncode == 1
    assert f"$.record.lineNumber: lineNumber is {huge}, expected at most {2**63 - 1}" in result.stderr
    assert f"$.record.sourceCodeEnd: sourceCodeEnd is {huge}" in result.stderr
    assert tree_digest(seeded_root) == before
    assert errkb(seeded_root, "build").returncode == 0


@pytest.mark.parametrize(
    "pattern, complaint",
    [
        (".*", "matches any text"),
        ("(?s).*", "matches any text"),
        ("(?s).", "matches any text"),
        (r"(?i)(?:\w+\s*){1,999}x", f"expected at most {MAX_PROGRAM_SIZE}"),
    ],
)
def test_costly_or_match_anything_patterns_are_refused_at_add(seeded_root, tmp_path, pattern, complaint):
    path = tmp_path / "pattern.json"
    path.write_text(json.dumps(record_with({"slug": "greedy-pattern", "messagePattern": pattern})))
    result = errkb(seeded_root, "add", path)
    assert result.returncode == 1
    assert f"{path}: $.record.messagePattern: messagePattern " in result.stderr and complaint in result.stderr


def test_every_catalog_pattern_is_within_the_budget():
    for path in (REPO / "records").glob("*.json"):
        compile_pattern(json.loads(path.read_text())["record"]["messagePattern"])


def one_megabyte_pastes() -> dict[str, str]:
    rng = random.Random(3)
    traceback = (PASTES / "hanlp-crf-dataparallel--log-timestamps.txt").read_text()
    return {
        "base64": base64_text(1_000_000, rng),
        "base64-one-line": base64_text(1_000_000, rng).replace("\n", ""),
        "plain-log": training_log(1_000_000, rng),
        "traceback-in-log": training_log(500_000, rng) + "\n" + traceback + "\n" + training_log(500_000, rng),
    }


@pytest.mark.parametrize("kind", ["base64", "base64-one-line", "plain-log", "traceback-in-log"])
def test_errkb_match_answers_a_megabyte_of_anything(tmp_path, kind):
    shutil.copytree(REPO / "records", tmp_path / "records")
    path = tmp_path / f"{kind}.txt"
    path.write_text(one_megabyte_pastes()[kind])
    result = errkb(tmp_path, "match", "--json", path)
    assert "Traceback" not in result.stderr
    found = json.loads(result.stdout)
    if kind == "traceback-in-log":
        assert result.returncode == 0 and found[0]["slug"] == SEED
    else:
        assert result.returncode == 1 and found == []


def test_a_costly_pattern_already_in_a_database_is_skipped_by_the_matcher(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    assert errkb(tmp_path, "build").returncode == 0
    conn = sqlite3.connect(tmp_path / "catalog.db")
    with conn:  # as a catalog.db built before the budget, or written by hand, may hold
        conn.execute("update records set messagePattern = ? where slug = ?", [r"(?i)(?:\w+\s*){1,999}x", SEED])
    conn.close()
    path = tmp_path / "log.txt"
    path.write_text(training_log(1_000_000, random.Random(4)))
    result = errkb(tmp_path, "match", "--json", path)
    assert result.returncode == 1 and json.loads(result.stdout) == []


def test_matching_stops_at_its_time_budget_and_says_so():
    matcher = Matcher.from_entries(entries_from_folder(REPO / "records"), "records/")
    text = (PASTES / "hanlp-crf-dataparallel--log-timestamps.txt").read_text()
    assert matcher.match(text)[0].slug == SEED and not paste.over_budget()
    with paste.time_budget(-1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matcher.match(text)
        assert paste.over_budget()
    assert any(issubclass(w.category, paste.MatchBudgetWarning) for w in caught)
