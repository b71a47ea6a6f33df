"""`errkb reproduce --with`: real uv environments over a throwaway library built here at three versions (the error
absent, present, reworded and moved), and one real torch environment from the local 2.13.0 wheel.

Offline apart from what the environments need to install errkb itself (its build backend comes from uv's cache).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest
from sqlite_utils import Database

from conftest import REPO, run_cli
from errkb.reproduce import environments, libraries
from reproduce_support import record_with

pytestmark = [pytest.mark.xdist_group("matrix"), pytest.mark.skipif(environments.uv_binary() is None, reason="uv is not installed")]

SLUG = "widget-count-not-positive"
OLD_MESSAGE = "widget count must be positive, got 0"
NEW_MESSAGE = "widgets must be > 0 (got 0)"
# version -> the library's source: 1.0 accepts 0; 2.0 raises at line 4; 3.0 rewords the message and raises at line 6.
VERSIONS = {
    "1.0": "def count(n):\n    return max(n, 0)\n",
    "2.0": "def count(n):\n    if n <= 0:\n        message = f'widget count must be positive, got {n}'\n        raise ValueError(message)\n    return n\n",
    "3.0": "def count(n):\n    # checked first since 3.0\n    if n <= 0:\n        message = f'widgets must be > 0 (got {n})'\n        # reworded in 3.0\n        raise ValueError(message)\n    return n\n",
}
REPRODUCTION = '''"""The throwaway library rejects a count of zero."""
NEEDS = {"packages": {"errkbdemo": ">=1.0"}, "cuda_devices": 0, "timeout_s": 30}
SOLUTIONS = {1: "positive_count"}

import errkbdemo


def trigger():
    errkbdemo.count(0)


def positive_count():
    assert errkbdemo.count(3) == 3
'''


def wheel(folder: Path, version: str) -> Path:
    """A pure-Python wheel, written by hand (no build backend, no network)."""
    path = folder / f"errkbdemo-{version}-py3-none-any.whl"
    info = f"errkbdemo-{version}.dist-info"
    files = {
        "errkbdemo/__init__.py": VERSIONS[version],
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: errkbdemo\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: errkb-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            archive.writestr(name, data)
            record.append(f"{name},sha256={digest},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join(record + [f"{info}/RECORD,,"]) + "\n")
    return path


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    wheels = tmp_path_factory.mktemp("wheels")
    for version in VERSIONS:
        wheel(wheels, version)
    (root / "records").mkdir()
    (root / "reproductions").mkdir()
    source = VERSIONS["2.0"].split("\n")[:5]
    envelope = record_with({
        "slug": SLUG, "repo": "errkb-test/errkbdemo", "filePath": "errkbdemo/__init__.py", "lineNumber": 4,
        "sourceCodeStart": 1, "sourceCodeEnd": 5, "sourceCode": "\n".join(source), "errorClass": "ValueError",
        "errorMessage": OLD_MESSAGE, "messagePattern": r"widget(?: count)?s? must be (?:positive|> 0)",
        "solutions": ["Pass a positive count"], "exampleFix": None, "validationCode": None, "typeGuard": None,
        "tryCatchPattern": None,
    })
    (root / "records" / f"{SLUG}.json").write_text(json.dumps(envelope, indent=2), encoding="utf-8")
    (root / "reproductions" / f"{SLUG}.py").write_text(REPRODUCTION, encoding="utf-8")
    saved = {key: os.environ.get(key) for key in ("ERRKB_ENV_DIR", "PIP_FIND_LINKS")}
    os.environ["ERRKB_ENV_DIR"] = str(tmp_path_factory.mktemp("envs"))
    os.environ["PIP_FIND_LINKS"] = str(wheels)
    libraries.LIBRARIES["errkb-test/errkbdemo"] = ("errkbdemo", "errkbdemo")
    try:
        outcome = run_cli("reproduce", SLUG, *[f"--with=errkbdemo=={v}" for v in VERSIONS], "--json", root=root)
        again = run_cli("reproduce", SLUG, "--with", "errkbdemo==2.0", root=root)  # reuses the environment
    finally:
        del libraries.LIBRARIES["errkb-test/errkbdemo"]
        for key, value in saved.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    results = [json.loads(line) for line in outcome.stdout.splitlines() if line.strip()]
    return root, outcome, results, again


@pytest.mark.slow
def test_each_version_gets_its_own_verdict(matrix):
    _, outcome, results, _ = matrix
    verdicts = {r["environment"]["label"]: r["verdict"] for r in results}
    assert verdicts == {"errkbdemo==1.0": "not-reproduced", "errkbdemo==2.0": "verified", "errkbdemo==3.0": "verified"}
    assert outcome.exit_code == 1  # 1.0 does not reproduce
    assert "environment errkbdemo==1.0: creating" in outcome.stderr


@pytest.mark.slow
def test_drift_and_the_new_wording_are_recorded(matrix):
    root, _, results, _ = matrix
    by_label = {r["environment"]["label"]: r for r in results}
    assert by_label["errkbdemo==2.0"]["drift"] is None
    assert "raise line 6" in by_label["errkbdemo==3.0"]["drift"] and "record says errkbdemo/__init__.py:4" in by_label["errkbdemo==3.0"]["drift"]
    files = sorted((root / "verifications" / SLUG).glob("*.json"))
    assert [f.name for f in files] == [f"errkbdemo-{v}_py{'.'.join(map(str, __import__('sys').version_info[:2]))}_cpu.json" for v in VERSIONS]
    newest = json.loads(files[-1].read_text())
    assert newest["observedMessages"] == [NEW_MESSAGE] and newest["packages"] == {"errkbdemo": "3.0"}


@pytest.mark.slow
def test_build_shows_the_releases_that_verified_and_the_stale_rule(matrix, tmp_path):
    root = tmp_path / "copy"
    import shutil

    shutil.copytree(matrix[0], root)
    assert run_cli("build", "--trust-unsigned", root=root).exit_code == 0  # this machine's own, unsigned results
    db = Database(root / "catalog.db")
    assert db.execute("select verifiedOn from records").fetchone()[0] == "errkbdemo 2.0, 3.0 (CPU)"
    # Each wording a release actually produced is kept for the matcher.
    observed = dict(db.execute("select message, releases from observed_messages").fetchall())
    assert observed == {OLD_MESSAGE: "errkbdemo 2.0", NEW_MESSAGE: "errkbdemo 3.0"}
    record = root / "records" / f"{SLUG}.json"
    envelope = json.loads(record.read_text())
    envelope["record"]["preventionTips"] = ["Validate counts where they enter the program"]
    record.write_text(json.dumps(envelope, indent=2))
    assert run_cli("build", "--trust-unsigned", root=root).exit_code == 0
    assert db.execute("select lastVerdict, verifiedOn from records").fetchone() == (None, None)
    assert db.execute("select count(*) from reproduction_runs where current = 0").fetchone()[0] == 3


@pytest.mark.slow
def test_environments_are_reused(matrix):
    again = matrix[3]
    assert "environment errkbdemo==2.0: reusing" in again.stderr and again.exit_code == 0


@pytest.mark.parametrize("spec", ["torch", "torch>=2.1", "torch==2.*", "not a spec!"])
def test_a_with_spec_that_does_not_parse_is_a_usage_error(tmp_path, spec):
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "x.json").write_text("{}")
    outcome = run_cli("reproduce", "x", "--with", spec, root=tmp_path)
    assert outcome.exit_code == 2 and "--with" in outcome.stderr


@pytest.mark.slow
def test_a_release_that_does_not_exist_is_named_and_skipped(matrix, tmp_path, monkeypatch):
    monkeypatch.setenv("ERRKB_ENV_DIR", str(tmp_path / "envs"))
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setitem(libraries.LIBRARIES, "errkb-test/errkbdemo", ("errkbdemo", "errkbdemo"))
    outcome = run_cli("reproduce", SLUG, "--with", "errkbdemo==9.9", "--no-write", root=matrix[0])
    assert outcome.exit_code == 1
    assert "cannot install errkbdemo==9.9" in outcome.stderr and "skipping the records for errkbdemo==9.9" in outcome.stderr
    assert not [p for p in (tmp_path / "envs").glob("*") if p.suffix != ".lock"], "a half-made environment was left behind"


def test_a_full_disk_removes_the_half_made_environment(tmp_path, monkeypatch):
    fake_uv = tmp_path / "uv"
    fake_uv.write_text("#!/bin/sh\nmkdir -p \"$5\" && echo 'error: failed to write: No space left on device (os error 28)' >&2\nexit 2\n")
    fake_uv.chmod(0o755)
    monkeypatch.setattr(environments, "uv_binary", lambda: str(fake_uv))
    monkeypatch.setenv("ERRKB_ENV_DIR", str(tmp_path / "envs"))
    prepared = environments.prepare([environments.parse_spec("torch==2.5.1")], {})
    assert prepared.problem.startswith("the disk filled while creating the environment for torch==2.5.1")
    assert [p.suffix for p in (tmp_path / "envs").iterdir()] == [".lock"]  # only the environment's lock file stays


def local_torch_wheel() -> bool:
    return any(Path(folder).glob("torch-2.13.0*.whl") for folder in os.environ.get("PIP_FIND_LINKS", "").split() if folder)


@pytest.mark.slow
@pytest.mark.skipif(not local_torch_wheel(), reason="no local torch 2.13.0 wheel in $PIP_FIND_LINKS (it would download several GB)")
def test_a_real_torch_environment_from_the_local_wheel(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("ERRKB_ENV_DIR", str(tmp_path / "envs"))
    root = tmp_path / "catalog"
    slug = "batchnorm-one-value-per-channel"
    (root / "records").mkdir(parents=True)
    (root / "reproductions").mkdir()
    shutil.copy(REPO / "records" / f"{slug}.json", root / "records")
    shutil.copy(REPO / "reproductions" / f"{slug}.py", root / "reproductions")
    outcome = run_cli("reproduce", slug, "--with", "torch==2.13.0", "--json", root=root)
    (result,) = [json.loads(line) for line in outcome.stdout.splitlines() if line.strip()]
    assert result["verdict"] == "verified", result["reason"]
    assert result["environment"]["torch"] == "2.13.0+cpu" and "(CPU build)" in outcome.stderr
    assert result["environment"]["torch_facts"]["git_version"] == "cf30153c4c131c8164ee7798e5022d810682e2cb"
    (path,) = (root / "verifications" / slug).glob("*.json")
    assert path.name == "torch-2.13.0+cpu_py3.11_cpu.json" or path.name.startswith("torch-2.13.0+cpu_py")


def test_old_torch_releases_get_what_their_users_had_beside_them():
    from packaging.requirements import Requirement

    from errkb.reproduce.environments import era_constraints

    assert era_constraints([Requirement("torch==2.1.2")], {}) == {"numpy": "<2", "packaging": ""}
    assert era_constraints([Requirement("torch==1.13.1")], {"numpy": ">=1.20"}) == {"packaging": ""}
    assert era_constraints([Requirement("torch==1.13.1")], {"numpy": ""}) == {"numpy": "<2", "packaging": ""}
    assert era_constraints([Requirement("torch==2.5.1")], {}) == {}
    assert era_constraints([Requirement("hanlp==2.1.5")], {}) == {}
