"""The CI merge job's environment check of uploaded results (errkb.reproduce.incoming), as the workflow runs it;
and the stage environment never carries CI's signing tokens."""

from __future__ import annotations

import subprocess
import sys

from errkb.reproduce import isolate
from trust_support import catalog_with, result, write

SLUG = "numpy-on-cuda-tensor"


def check(job, folder, file) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "errkb.reproduce.incoming", job, str(folder), str(file)],
                          capture_output=True, text=True, timeout=120)


def test_only_results_of_the_jobs_own_environment_are_added(tmp_path):
    root = catalog_with(tmp_path / "catalog", SLUG, key=False)
    ci = {"kind": "github-actions", "url": "https://github.com/o/r/actions/runs/1"}
    folder = root / "verifications"
    good = write(root, result(root, SLUG, torch="2.5.1+cu121", gpus=["NVIDIA H200"], ranAt=ci), sign=False)
    assert check("verifications-gpu-1-torch2.5.1-cuda", folder, good).returncode == 0
    refused = check("verifications-gpu-2-torch2.5.1-cuda", folder, good)  # a gpu-2 job cannot vouch for a 1-GPU result
    assert refused.returncode == 1 and "but job verifications-gpu-2-torch2.5.1-cuda ran with 2" in refused.stderr
    refused = check("verifications-cpu-torch2.5.1-cpu", folder, good)
    assert refused.returncode == 1 and "ran the cpu build" in refused.stderr
    other = write(root, result(root, SLUG, torch="2.9.1", gpus=["NVIDIA H200"], ranAt=ci), sign=False)
    refused = check("verifications-gpu-1-torch2.5.1-cuda", folder, other)  # another record's or release's forgery
    assert refused.returncode == 1 and "torch 2.9.1, but job" in refused.stderr
    local = write(root, result(root, SLUG, torch="2.5.1", gpus=["NVIDIA H200"]), sign=False)
    assert "expected 'github-actions'" in check("verifications-gpu-1-torch2.5.1-cuda", folder, local).stderr
    broken = write(root, result(root, SLUG, torch="2.5.1", gpus=["NVIDIA H200"], ranAt=ci, startedAt="x"), sign=False)
    assert "$.startedAt" in check("verifications-gpu-1-torch2.5.1-cuda", folder, broken).stderr


def test_stages_never_get_ci_tokens(monkeypatch):
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "secret-token")
    monkeypatch.setenv("ERRKB_SIGNING_KEY", "/keys/maintainer.pem")
    env = isolate.stage_environment(native=False, threads=None)
    assert "ACTIONS_ID_TOKEN_REQUEST_TOKEN" not in env and "ERRKB_SIGNING_KEY" not in env
    assert env["PATH"] == __import__("os").environ["PATH"]
