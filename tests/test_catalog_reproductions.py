"""Every record in the catalog, proven by its reproduction on this machine's hardware.

One test item per record: `verified` (the trigger and every claim) passes; `skipped` (e.g. "needs 1 CUDA device, found 0") shows as a
pytest skip with its reason; any other verdict fails with the harness's explanation.
"""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow  # the full tier: every record's reproduction, several minutes

SLUGS = sorted(p.stem for p in (REPO / "records").glob("*.json"))


@pytest.fixture(scope="module")
def catalog_copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("catalog")
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "reproductions", root / "reproductions")
    return root


@pytest.mark.parametrize("slug", SLUGS)
def test_record_reproduces(catalog_copy, slug):
    proc = subprocess.run(
        [sys.executable, "-m", "errkb.cli", "--root", str(catalog_copy), "reproduce", "--json", "--no-write", slug],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode in (0, 1), proc.stderr
    (result,) = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if result["verdict"] == "skipped":
        pytest.skip(f"{slug}: {result['reason']}")
    assert result["verdict"] == "verified", f"{result['verdict']}: {result['reason']}"
    assert result["claims"] and all(claim["verdict"] == "verified" for claim in result["claims"])
    assert proc.returncode == 0
