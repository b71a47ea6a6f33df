"""The fast build paths give the same catalog: bulk (empty database, workers) and incremental (triggers)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from conftest import REPO

from errkb import catalog, changes, ingest

sys.path.insert(0, str(REPO / "benchmarks"))
import generate  # noqa: E402

# Tables whose content depends on the order rows arrived in, compared by what they mean instead.
SKIPPED = {changes.INFO_TABLE, "match_anchors", "match_patterns", "match_fts", "records_fts"}


def dump(path: Path) -> dict:
    """Every table's rows (sorted), the schema, and the match index keyed by slug instead of row ids."""
    conn = sqlite3.connect(path)
    schema = sorted(
        (kind, name, sql) for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master")
        if not name.startswith("records_fts_") and not name.startswith("match_fts_")
    )
    tables = [name for kind, name, _ in schema if kind == "table" and name not in SKIPPED]
    out = {"schema": schema}
    for table in tables:
        out[table] = sorted(conn.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr)
    out["match_patterns"] = sorted(
        conn.execute("SELECT slug, pattern, error_class, message, anchors, literals, opening FROM match_patterns")
    )
    # An incremental change may leave an older, still valid anchor: any required word of the pattern will do.
    out["anchored"] = sorted(conn.execute(
        "SELECT p.slug, count(*) FROM match_anchors a JOIN match_patterns p ON p.id = a.id GROUP BY p.slug"
    ))
    out["search"] = {
        word: sorted(row[0] for row in conn.execute(
            "SELECT slug FROM records WHERE rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)", [word]))
        for word in ["DataParallel", generate.BROAD_WORD, "tensor", "device"]
    }
    out["match_fts"] = {
        word: sorted(row[0] for row in conn.execute(
            "SELECT p.slug FROM match_fts f JOIN match_patterns p ON p.id = f.rowid WHERE match_fts MATCH ?", [word]))
        for word in ["device", "tensor", "expected"]
    }
    conn.execute("INSERT INTO records_fts (records_fts) VALUES ('integrity-check')")
    conn.close()
    return out


def write(folder: Path, start: int, count: int) -> None:
    generate.write_records(folder, count, start)


@pytest.fixture
def catalogs(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "IN_PROCESS_BELOW", 50)  # use the worker pool even on a small catalog
    incremental, full = tmp_path / "incremental", tmp_path / "full"
    return incremental, full


def test_incremental_and_full_builds_make_the_same_database(catalogs):
    incremental, full = catalogs
    records = incremental / "records"
    shutil.copytree(REPO / "records", records)
    write(records, 0, 120)
    assert len(catalog.build(incremental).added) == len(list(records.glob("*.json")))
    write(records, 120, 40)  # more records
    for path in sorted(records.glob("*.json"))[::17]:  # edits
        envelope = json.loads(path.read_text(encoding="utf-8"))
        envelope["record"]["documentation"] += " Edited."
        envelope["record"]["tags"] = envelope["record"]["tags"][:1] + ["edited"]
        path.write_text(json.dumps(envelope, indent=2) + "\n", encoding="utf-8")
    for path in sorted(records.glob("*.json"))[5::23]:  # removals
        path.unlink()
    report = catalog.build(incremental)
    assert report.added and report.updated and report.removed
    shutil.copytree(records, full / "records")
    catalog.build(full, full=True)
    assert dump(incremental / "catalog.db") == dump(full / "catalog.db")


def test_an_unchanged_file_is_not_read_again(tmp_path, monkeypatch):
    shutil.copytree(REPO / "records", tmp_path / "records")
    catalog.build(tmp_path)
    monkeypatch.setattr(changes, "RACY_NS", 0)  # the files were written just now: trust their mtime anyway
    with sqlite3.connect(tmp_path / "catalog.db") as conn:  # as if the last build started a while ago
        conn.execute("UPDATE build_info SET value = ? WHERE key = 'started_ns'", [str(2**62)])
    read = []
    original = ingest.prepare_file
    monkeypatch.setattr(ingest, "prepare_file", lambda *args: read.append(args[1]) or original(*args))
    path = tmp_path / "records" / "batchnorm-one-value-per-channel.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("BatchNorm", "BatchNorm "), encoding="utf-8")  # one edit: new size and mtime
    report = catalog.build(tmp_path)
    assert read == ["batchnorm-one-value-per-channel"] and report.updated == ["batchnorm-one-value-per-channel"]


def test_a_file_touched_without_a_change_is_hashed_not_rewritten(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    catalog.build(tmp_path)
    path = tmp_path / "records" / "batchnorm-one-value-per-channel.json"
    os.utime(path, ns=(1, 1))
    report = catalog.build(tmp_path)
    assert not report.changed and report.unchanged == len(list((tmp_path / "records").glob("*.json")))
    with sqlite3.connect(tmp_path / "catalog.db") as conn:
        stored = conn.execute("SELECT mtime_ns FROM record_files WHERE slug = ?", [path.stem]).fetchone()
    assert stored == (1,)


def test_an_invalid_file_found_by_a_worker_leaves_the_database_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "IN_PROCESS_BELOW", 50)
    records = tmp_path / "records"
    write(records, 0, 80)
    catalog.build(tmp_path)
    before = (tmp_path / "catalog.db").read_bytes()
    write(records, 80, 60)
    bad = sorted(records.glob("*.json"))[-1]
    bad.write_text(bad.read_text(encoding="utf-8").replace('"schemaVersion": 2', '"schemaVersion": "2"'))
    with pytest.raises(catalog.InvalidInput) as caught:
        catalog.build(tmp_path)
    assert [p.path for p in caught.value.problems] == ["$.record.schemaVersion"]
    assert (tmp_path / "catalog.db").read_bytes() == before


def test_ids_shared_between_new_files_are_refused(tmp_path):
    records = tmp_path / "records"
    write(records, 0, 3)
    first, second, _ = sorted(records.glob("*.json"))
    envelope = json.loads(second.read_text(encoding="utf-8"))
    envelope["record"]["id"] = json.loads(first.read_text(encoding="utf-8"))["record"]["id"]
    second.write_text(json.dumps(envelope), encoding="utf-8")
    with pytest.raises(catalog.InvalidInput) as caught:
        catalog.build(tmp_path)
    [problem] = caught.value.problems
    assert problem.file == str(second) and f"also used by record {first.stem!r}" in problem.message
