"""The docs are tested against the code: the CLI reference, and the README's commands in CI."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def fresh_machine_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)[:2]
    return [next(line for line in block.splitlines() if line and not line.startswith("#")) for block in blocks]


def test_cli_reference_is_current():
    from errkb.clidoc import with_reference

    assert README == with_reference(README), "run: python -m errkb.clidoc README.md"


def test_every_command_is_documented():
    from errkb.cli import cli

    for name in cli.commands:
        assert f"### errkb {name}\n" in README


def test_readme_starts_with_the_two_fresh_machine_commands():
    serve, tests = fresh_machine_commands()
    assert "errkb serve" in serve and "pip install" in serve
    assert "pytest" in tests and "pip install" in tests


def test_ci_runs_the_readme_test_command():
    _, tests = fresh_machine_commands()
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci.splitlines()


def test_coverage_table_lists_every_record():
    section = README.split("## Coverage", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.M))
    assert listed == {p.stem for p in (REPO / "records").glob("*.json")}


def test_coverage_table_is_generated_from_the_records_and_results():
    from errkb.clidoc import coverage_table

    assert f"<!-- coverage-table -->\n{coverage_table(REPO)}\n<!-- /coverage-table -->" in README


def test_ci_stops_and_says_why_when_chromium_cannot_be_installed(tmp_path):
    """Run .ci/run where neither chromium nor apt-get can be found: it must fail before installing anything,
    rather than let the browser tests skip."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ["bash", "dirname"]:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    result = subprocess.run([str(bin_dir / "bash"), str(REPO / ".ci" / "run")], env={"PATH": str(bin_dir)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "could not install chromium" in result.stderr and "test_web_browser.py" in result.stderr


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium, which .ci/run installs")
def test_ci_stops_and_says_why_when_bubblewrap_cannot_be_installed(tmp_path):
    """Chromium is there, bubblewrap and apt-get are not: .ci/run must stop before installing anything, rather
    than let the sandbox tests skip and the reproductions run unprotected."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ["bash", "dirname"]:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "chromium").symlink_to("/usr/bin/chromium")
    result = subprocess.run([str(bin_dir / "bash"), str(REPO / ".ci" / "run")], env={"PATH": str(bin_dir)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "could not install bubblewrap" in result.stderr and "test_sandbox_bwrap.py" in result.stderr
