"""Writers killed with SIGKILL at chosen points (deterministic, whatever the load): the next command finds
every file whole, no temp file left, and catalog.db in line with records/. New and replaced files keep the folder's normal mode."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SEED_RECORD, SEED_SLUG, run_cli
from reproduce_support import record_with
from test_reliability_writers import database_hashes, file_hashes, write_input

from errkb.validate import load_envelope

# Runs errkb's CLI with one function wrapped so that the process SIGKILLs itself on the Nth call, just before
# or just after it: a kill point chosen exactly, whatever the machine's load (no sleeps, no timing).
KILL_AT = """
import importlib, os, signal, sys
target, nth, when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
module_name, _, attribute = target.partition(":")
owner = importlib.import_module(module_name)
*path, name = attribute.split(".")
for part in path:
    owner = getattr(owner, part)
original = getattr(owner, name)
calls = 0

def wrapper(*args, **kwargs):
    global calls
    calls += 1
    if calls == nth and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    result = original(*args, **kwargs)
    if calls == nth and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
    return result

setattr(owner, name, wrapper)
from errkb.cli import cli
cli(sys.argv[4:])
"""


def kill_at(root: Path, point: tuple[str, int, str], *args) -> int:
    """Run `errkb --root ROOT ARGS`, killed at `point` (function, call number, "before" or "after" it)."""
    target, nth, when = point
    argv = [sys.executable, "-c", KILL_AT, target, str(nth), when, "--root", str(root), *map(str, args)]
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def assert_whole(root: Path) -> None:
    """The damage check: every file valid, nothing hidden, and (after a build) the database agrees."""
    records = root / "records"
    assert not [p.name for p in records.iterdir() if p.name.startswith(".")]
    for path in records.glob("*.json"):
        load_envelope(path)  # raises on a torn file
    result = run_cli("build", root=root)
    assert result.exit_code == 0, result.stderr
    conn = sqlite3.connect(root / "catalog.db")
    try:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    assert database_hashes(root) == file_hashes(root)


# `errkb add` of 60 records into a built catalog: rows, then match index, then files, then commit.
ADD_KILL_POINTS = [
    ("errkb.store:plan_add", 1, "after"),  # validated, nothing written
    ("errkb.catalog:upsert_records", 1, "after"),  # rows written, not committed
    ("errkb.matching.index:refresh", 1, "after"),  # rows and match index, not committed
    ("errkb.store:write_atomically", 1, "after"),  # the first file in place
    ("errkb.store:write_atomically", 30, "before"),  # half the files in place
    ("errkb.store:write_atomically", 60, "after"),  # every file in place, not committed
    ("sqlite_utils:Database.close", 1, "before"),  # committed, not closed
]


@pytest.mark.parametrize("point", ADD_KILL_POINTS, ids=lambda p: f"{p[2]} {p[0].split(':')[1]} #{p[1]}")
def test_add_killed_at_each_point_leaves_no_damage(seeded_root, tmp_path, point):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    batch = [write_input(inputs, f"k{i}", record_with({"slug": f"killed-{i}"})) for i in range(60)]
    assert kill_at(seeded_root, point, "add", *batch) == -signal.SIGKILL  # the writer died at that point
    again = run_cli("add", *batch, root=seeded_root)  # the next command: it finishes the job
    assert again.exit_code == 0, again.stderr
    assert_whole(seeded_root)
    assert {f"killed-{i}" for i in range(60)} <= set(file_hashes(seeded_root))


KILL_AT_RENAME = """
import os, signal, sys
os.replace = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # dies with the temp file written, not renamed
from errkb.cli import cli
cli(sys.argv[1:])
"""


def test_add_killed_after_the_temp_file_appears(seeded_root, tmp_path):
    path = write_input(tmp_path, "late", record_with({"slug": "killed-late"}))
    died = subprocess.run([sys.executable, "-c", KILL_AT_RENAME, "--root", str(seeded_root), "add", str(path)], capture_output=True)
    assert died.returncode == -signal.SIGKILL
    scratch = seeded_root / "records" / ".tmp"
    assert [p.name for p in scratch.iterdir() if p.name.endswith(".tmp")]  # the dead writer's file
    assert not (seeded_root / "records" / "killed-late.json").exists()
    result = run_cli("validate", seeded_root / "records", root=seeded_root)  # any next command tidies up
    assert not scratch.exists()  # the temp file and its scratch folder are gone
    assert run_cli("add", path, root=seeded_root).exit_code == 0
    assert_whole(seeded_root)
    assert "1 file(s) checked" in result.stdout


# `errkb build --full` of 301 records (one batch): drop, insert, id check, indexes and match index, results, commit.
BUILD_KILL_POINTS = [
    ("errkb.catalog:_drop_record_tables", 1, "after"),
    ("errkb.catalog:_Writer.write", 1, "after"),
    ("errkb.changes:remember", 1, "after"),
    ("errkb.catalog:_Writer.id_conflicts", 1, "after"),
    ("errkb.catalog:_Writer.finish", 1, "after"),
    ("errkb.runs:sync", 1, "after"),
    ("sqlite_utils:Database.close", 1, "before"),
]


@pytest.fixture(scope="module")
def large_root(tmp_path_factory) -> Path:
    """A built catalog of the seed and 300 more records, copied for each kill."""
    root = tmp_path_factory.mktemp("large")
    (root / "records").mkdir()
    shutil.copy(SEED_RECORD, root / "records" / f"{SEED_SLUG}.json")
    inputs = tmp_path_factory.mktemp("inputs")
    batch = [write_input(inputs, f"b{i}", record_with({"slug": f"built-{i}"})) for i in range(300)]
    assert run_cli("add", *batch, root=root).exit_code == 0
    assert run_cli("build", root=root).exit_code == 0
    return root


@pytest.mark.parametrize("point", BUILD_KILL_POINTS, ids=lambda p: f"{p[2]} {p[0].split(':')[1]} #{p[1]}")
def test_build_full_killed_at_each_point_leaves_the_database_usable(large_root, tmp_path, point):
    root = tmp_path / "root"
    shutil.copytree(large_root, root)
    assert kill_at(root, point, "build", "--full") == -signal.SIGKILL
    assert_whole(root)


def test_new_and_replaced_files_keep_the_folders_normal_mode(seeded_root, tmp_path):
    old_umask = os.umask(0o002)
    try:
        path = write_input(tmp_path, "mode", record_with({"slug": "mode-check"}))
        assert run_cli("add", path, root=seeded_root).exit_code == 0
        target = seeded_root / "records" / "mode-check.json"
        assert stat.S_IMODE(target.stat().st_mode) == 0o664
        target.chmod(0o644)
        changed = record_with({"slug": "mode-check", "documentation": "Changed."})
        path.write_text(json.dumps(changed))
        assert run_cli("add", "--replace", path, root=seeded_root).exit_code == 0
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        assert json.loads(target.read_text())["record"]["documentation"] == "Changed."
    finally:
        os.umask(old_umask)
