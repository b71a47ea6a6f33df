"""Writers killed with SIGKILL at random points: the next command finds every file whole, no temp file left,
and catalog.db in line with records/. New and replaced files keep the folder's normal mode."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_cli
from reproduce_support import record_with
from test_reliability_writers import database_hashes, file_hashes, write_input

from errkb.validate import load_envelope

KILLS = 8  # runs per scenario; each kills one writer at a different moment


def command(root: Path, *args) -> list[str]:
    return [sys.executable, "-m", "errkb.cli", "--root", str(root), *map(str, args)]


def duration(argv: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(argv, capture_output=True, check=True)
    return time.monotonic() - started


def kill_after(argv: list[str], delay: float) -> int | None:
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return process.returncode


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


def test_add_killed_at_random_points_leaves_no_damage(seeded_root, tmp_path):
    rng = random.Random(11)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    killed = 0
    batches = [
        [write_input(inputs, f"k{run}-{i}", record_with({"slug": f"killed-{run}-{i}"})) for i in range(60)]
        for run in range(KILLS + 1)
    ]
    whole = duration(command(seeded_root, "add", *batches.pop()))  # startup, then the work we aim at
    for batch in batches:
        killed += kill_after(command(seeded_root, "add", *batch), rng.uniform(0.4, 1.0) * whole) == -signal.SIGKILL
        again = run_cli("add", *batch, root=seeded_root)  # the next command: it finishes the job
        assert again.exit_code == 0, again.stderr
        assert_whole(seeded_root)
    assert killed >= KILLS // 2  # most writers really died mid-way


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


def test_build_full_killed_mid_way_leaves_the_database_usable(seeded_root, tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    batch = [write_input(inputs, f"b{i}", record_with({"slug": f"built-{i}"})) for i in range(300)]
    assert run_cli("add", *batch, root=seeded_root).exit_code == 0
    rng = random.Random(12)
    killed = 0
    whole = duration(command(seeded_root, "build", "--full"))
    for _ in range(KILLS):
        killed += kill_after(command(seeded_root, "build", "--full"), rng.uniform(0.4, 1.0) * whole) == -signal.SIGKILL
        assert_whole(seeded_root)
    assert killed >= KILLS // 2


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
