"""The test command itself: the fast tier leaves out exactly the tests marked slow, and --dist loadgroup keeps
each xdist_group on one worker (so a group's module fixtures, such as test_reproduce.py's reproduced catalogs,
are made once)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO

SLOW_FILES = {"tests/test_catalog_reproductions.py", "tests/test_matrix.py", "tests/test_bundled_wheel.py"}

GROUPED = '''
import os
import pytest

pytestmark = pytest.mark.xdist_group("one")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    with open(os.environ["SETUPS"], "a") as log:
        log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")


@pytest.mark.parametrize("n", range(6))
def test_grouped(made, n):
    pass
'''
UNGROUPED = '''
import pytest


@pytest.mark.parametrize("n", range(12))
def test_other(n):
    pass
'''


def test_an_xdist_group_runs_on_one_worker_and_sets_up_its_module_fixture_once(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "test_other.py").write_text(UNGROUPED)
    setups = tmp_path / "setups.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "SETUPS": str(setups)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(setups.read_text().split()) == 1, f"the group's module fixture was made on: {setups.read_text().split()}"


def collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *args, *sorted(SLOW_FILES)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_the_fast_tier_leaves_out_the_slow_tests_and_the_full_tier_runs_them():
    fast, full = collected(), collected("--full")
    slow = full - fast
    assert fast < full and {item.split("::")[0] for item in slow} == SLOW_FILES
    assert {item.split("::")[0] for item in fast} == {"tests/test_matrix.py"}  # its quick checks stay in the fast tier
