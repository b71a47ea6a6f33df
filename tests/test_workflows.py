"""The GitHub workflows pass zizmor, the GitHub Actions security linter, with no finding."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def zizmor() -> str | None:
    local = Path(sys.executable).with_name("zizmor")
    return str(local) if local.exists() else shutil.which("zizmor")


@pytest.mark.skipif(zizmor() is None, reason="zizmor is not installed (pip install -e '.[test]')")
def test_zizmor_finds_nothing():
    done = subprocess.run([zizmor(), "--offline", str(REPO / ".github" / "workflows")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


def test_pull_requests_never_reach_the_gpu_runners_unapproved():
    text = (REPO / ".github" / "workflows" / "reproduce.yml").read_text(encoding="utf-8")
    assert "pull_request_target" not in text
    assert "github.event.label.name == 'safe-to-reproduce'" in text and "environment: gpu-runners" in text
