"""`errkb add` keeps a catalog's README coverage table current: no hand-run regeneration between adding a record and
the doc test; a draft (unfilled stubs) is not listed."""

from __future__ import annotations

import shutil

from conftest import CATALOG_SEED, REPO, SEED_SLUG, run_cli


def test_add_rewrites_the_coverage_table(tmp_path):
    root = tmp_path / "catalog"
    (root / "records").mkdir(parents=True)
    (root / "reproductions").mkdir()
    shutil.copy(REPO / "reproductions" / f"{SEED_SLUG}.py", root / "reproductions" / f"{SEED_SLUG}.py")
    readme = root / "README.md"
    readme.write_text("# My catalog\n\n<!-- coverage-table -->\nstale\n<!-- /coverage-table -->\n\nmore\n")
    added = run_cli("add", CATALOG_SEED, root=root)
    assert added.exit_code == 0, added.output
    assert "updated the coverage table of" in added.output
    text = readme.read_text()
    assert "stale" not in text and f"| `{SEED_SLUG}` | `hanlp/" in text and text.endswith("\n\nmore\n")
    again = run_cli("add", CATALOG_SEED, root=root)  # unchanged: nothing to rewrite
    assert "coverage table" not in again.output


def test_a_readme_without_the_table_is_left_alone(tmp_path):
    root = tmp_path / "catalog"
    (root / "records").mkdir(parents=True)
    readme = root / "README.md"
    readme.write_text("# notes\n")
    assert run_cli("add", CATALOG_SEED, root=root).exit_code == 0
    assert readme.read_text() == "# notes\n"
