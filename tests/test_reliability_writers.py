"""Concurrent writers, with real processes: nothing lost, one winner per id or slug, exit 1 means nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEED_SLUG, tree_digest
from reproduce_support import PLANTED, record_with

from errkb.lock import catalog_lock

WRITERS = 8
PER_WRITER = 25


def errkb(root: Path, *args, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "errkb.cli", "--root", str(root), *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
    )


def finish(processes: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    outputs = [p.communicate(timeout=300) for p in processes]
    return [(p.returncode, out, err) for p, (out, err) in zip(processes, outputs)]


def write_input(folder: Path, name: str, envelope: dict) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    return path


def database_hashes(root: Path) -> dict[str, str]:
    conn = sqlite3.connect(root / "catalog.db")
    try:
        return dict(conn.execute("select slug, contentHash from records"))
    finally:
        conn.close()


def file_hashes(root: Path) -> dict[str, str]:
    return {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "records").glob("*.json")}


def test_eight_writers_of_twenty_five_records_lose_nothing(seeded_root, tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    batches = [
        [write_input(inputs, f"w{w}-r{r}", record_with({"slug": f"writer-{w}-record-{r}"})) for r in range(PER_WRITER)]
        for w in range(WRITERS)
    ]
    results = finish([errkb(seeded_root, "add", *batch) for batch in batches])
    assert [code for code, _, _ in results] == [0] * WRITERS, [err for _, _, err in results]
    files, rows = file_hashes(seeded_root), database_hashes(seeded_root)
    assert len(files) == 1 + WRITERS * PER_WRITER
    assert rows == files  # every row, made from the bytes written, without a later build
    assert not list((seeded_root / "records").glob(".*"))


@pytest.mark.parametrize("with_database", [True, False])
def test_writers_racing_for_one_id_have_one_winner(seeded_root, tmp_path, with_database):
    if not with_database:
        (seeded_root / "catalog.db").unlink()
    shared_id = "00000000000000aa"
    paths = [
        write_input(tmp_path, f"id-{n}", record_with({"slug": f"same-id-{n}", "id": shared_id})) for n in range(WRITERS)
    ]
    results = finish([errkb(seeded_root, "add", path) for path in paths])
    winners = [out for code, out, _ in results if code == 0]
    losers = [err for code, _, err in results if code != 0]
    assert len(winners) == 1 and winners[0].startswith("added: same-id-")
    winner = winners[0].split()[1]
    assert len(losers) == WRITERS - 1
    assert all(f"id '{shared_id}' is already used by record '{winner}'" in err for err in losers), losers
    assert all("Traceback" not in err for err in losers)
    owners = [p.stem for p in (seeded_root / "records").glob("*.json") if json.loads(p.read_text())["record"]["id"] == shared_id]
    assert owners == [winner]
    if with_database:
        assert database_hashes(seeded_root) == file_hashes(seeded_root)


def test_writers_racing_for_one_slug_with_different_content_have_one_winner(seeded_root, tmp_path):
    paths = [
        write_input(tmp_path, f"slug-{n}", record_with({"slug": "contested-slug", "documentation": f"Story number {n}."}))
        for n in range(WRITERS)
    ]
    results = finish([errkb(seeded_root, "add", path) for path in paths])
    winners = [n for n, (code, _, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    losers = [err for code, _, err in results if code != 0]
    assert all("slug 'contested-slug' already exists" in err and "differs in: documentation" in err for err in losers)
    stored = json.loads((seeded_root / "records" / "contested-slug.json").read_text())
    assert stored["record"]["documentation"] == f"Story number {winners[0]}."
    assert database_hashes(seeded_root) == file_hashes(seeded_root)


def test_a_writer_that_cannot_get_the_lock_exits_1_and_writes_nothing(seeded_root, tmp_path):
    path = write_input(tmp_path, "waiting", record_with({"slug": "waiting-writer"}))
    before = tree_digest(seeded_root)
    with catalog_lock(seeded_root):  # this test process is the other writer
        code, out, err = finish([errkb(seeded_root, "add", path, env={"ERRKB_LOCK_TIMEOUT": "0.5"})])[0]
        build_code, _, build_err = finish([errkb(seeded_root, "build", "--full", env={"ERRKB_LOCK_TIMEOUT": "0.5"})])[0]
    assert code == 1 and build_code == 1
    for message in (err, build_err):
        assert f"catalog {seeded_root} is busy" in message and "nothing was written" in message
        assert "Traceback" not in message
    assert tree_digest(seeded_root) == before
    assert finish([errkb(seeded_root, "add", path)])[0][0] == 0  # and once the lock is free, it goes through


def test_unchanged_only_when_the_database_agrees(seeded_root, tmp_path):
    path = write_input(tmp_path, "stale", record_with({"slug": "stale-row"}))
    assert finish([errkb(seeded_root, "add", path)])[0][0] == 0
    conn = sqlite3.connect(seeded_root / "catalog.db")
    with conn:
        conn.execute("delete from records where slug = 'stale-row'")  # as an add that died before its commit left it
    conn.close()
    code, out, _ = finish([errkb(seeded_root, "add", path)])[0]
    assert code == 0 and out.startswith("indexed: stale-row")
    assert database_hashes(seeded_root) == file_hashes(seeded_root)
    code, out, _ = finish([errkb(seeded_root, "add", path)])[0]
    assert code == 0 and out.startswith("unchanged: stale-row")


def test_reproduce_history_and_adds_write_side_by_side(seeded_root, tmp_path):
    (seeded_root / "reproductions").mkdir()
    shutil.copy(PLANTED / "does_nothing.py", seeded_root / "reproductions" / f"{SEED_SLUG}.py")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    batches = [
        [write_input(inputs, f"h{w}-{r}", record_with({"slug": f"beside-{w}-{r}"})) for r in range(PER_WRITER)]
        for w in range(4)
    ]
    processes = [errkb(seeded_root, "reproduce", "--trust-unsigned", SEED_SLUG)] + [errkb(seeded_root, "add", *batch) for batch in batches]
    results = finish(processes)
    assert results[0][0] == 1 and "not-reproduced" in results[0][1]  # does_nothing.py: a verdict, stored
    assert [code for code, _, _ in results[1:]] == [0] * 4, [err for _, _, err in results]
    assert database_hashes(seeded_root) == file_hashes(seeded_root)
    conn = sqlite3.connect(seeded_root / "catalog.db")
    try:
        runs = conn.execute("select verdict from reproduction_runs where slug = ?", [SEED_SLUG]).fetchall()
        last = conn.execute("select lastVerdict from records where slug = ?", [SEED_SLUG]).fetchone()
    finally:
        conn.close()
    assert runs == [("not-reproduced",)] and last == ("not-reproduced",)
