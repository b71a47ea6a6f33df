import hashlib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from errkb.cli import cli

REPO = Path(__file__).resolve().parents[1]
SEED_SLUG = "dataparallel-not-supported-when-crf-is-used"
# The seed as it was given (canonical form): the fixture of add/build/web tests. The catalog's own copy,
# CATALOG_SEED, has been corrected since (README: coverage notes) and goes with the seed's reproduction.
SEED_RECORD = REPO / "tests" / "data" / "seed-record.json"
CATALOG_SEED = REPO / "records" / f"{SEED_SLUG}.json"
SHARED_SEED = REPO.parent / "shared" / "seeds" / "000_be5b0b299e0860bf.txt"


def run_cli(*args, root: Path | None = None):
    argv = (["--root", str(root)] if root else []) + [str(a) for a in args]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def tree_digest(root: Path) -> dict:
    """Every file under records/ and catalog.db, by content: to prove nothing was written."""
    files = sorted((root / "records").glob("**/*")) + [root / "catalog.db"]
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}


@pytest.fixture
def seeded_root(tmp_path: Path) -> Path:
    """A catalog root holding the seed record and a built catalog.db."""
    (tmp_path / "records").mkdir()
    shutil.copy(SEED_RECORD, tmp_path / "records" / f"{SEED_SLUG}.json")
    assert run_cli("build", root=tmp_path).exit_code == 0
    return tmp_path


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A catalog root of its own: a copy of the repository's records/ and reproductions/, so a test never
    reads or writes the live folders (where a user's own record would change what it sees)."""
    root = tmp_path / "catalog"
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "reproductions", root / "reproductions")
    return root


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", help="also run the tests marked slow (the full tier, as CI does)")


def pytest_collection_modifyitems(config, items):
    """The fast tier by default: tests marked `slow` are deselected (and counted as such) unless --full."""
    if config.getoption("--full"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
