"""The built wheel, installed into a fresh virtual environment, used from an empty folder: match, run, the
Python API and serve answer from the catalog it ships. Slow (builds a wheel): one xdist group of its own.

The fresh environment gets errkb only from the wheel; its dependencies come from this test
environment's site-packages through a plain path entry (no downloads; the editable errkb there is
not loaded, because .pth files of an added path are not run).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

REPO = Path(__file__).resolve().parents[1]
SOURCE_FILES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md"]
SOURCE_FOLDERS = ["errkb", "records", "verifications", "reproductions", "keys"]  # keys: the public halves that verify the results
STATE_DICT_PASTE = 'RuntimeError: Error(s) in loading state_dict for Net: Unexpected key(s) in state_dict: "module.fc.weight"\n'
WARNING_THEN_FATAL = (REPO / "tests" / "data" / "warning-then-fatal.txt").read_text(encoding="utf-8")  # a warning, then the fatal error


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"  # a copy: the build writes build/ and *.egg-info, other tests may write beside it
    for name in SOURCE_FILES:
        if (REPO / name).is_file():
            source.mkdir(exist_ok=True)
            shutil.copy(REPO / name, source / name)
    for name in SOURCE_FOLDERS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = base / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(wheels), str(source)],
        capture_output=True, text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("errkb-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True, capture_output=True, text=True,
    )
    empty = base / "empty"
    empty.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "ERRKB_ROOT"}
    env.update(ERRKB_CACHE_DIR=str(base / "cache"), HOME=str(base / "home"), PYTHONDONTWRITEBYTECODE="1")
    return {"bin": venv / "bin", "python": python, "site": site, "cwd": empty, "env": env, "cache": base / "cache"}


def run(installed: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(installed["bin"] / args[0]), *args[1:]], cwd=installed["cwd"], env=installed["env"],
                          input=stdin, capture_output=True, text=True, timeout=300)


def test_the_wheel_ships_the_records(installed: dict):
    shipped = {path.name for path in (installed["site"] / "errkb" / "_catalog" / "records").glob("*.json")}
    assert shipped == {path.name for path in (REPO / "records").glob("*.json")}


SHOW_EVERY_RECORD = """
import json, sys
from click.testing import CliRunner
from errkb.cli import cli
shown = {}
for slug in json.loads(sys.stdin.read()):
    result = CliRunner().invoke(cli, ["show", slug, "--json"])
    shown[slug] = json.loads(result.output) if result.exit_code == 0 else result.output
print(json.dumps(shown))
"""


@pytest.mark.slow
def test_every_record_shows_the_same_proof_as_the_clone(installed: dict):
    """Verdicts, verifiedOn, claim marks and which results are current: the install answers as the clone does."""
    slugs = sorted(path.stem for path in (REPO / "records").glob("*.json"))
    result = run(installed, "python", "-c", SHOW_EVERY_RECORD, stdin=json.dumps(slugs))
    assert result.returncode == 0, result.stderr
    from_wheel = json.loads(result.stdout)
    verified = 0
    for slug in slugs:
        from_clone = json.loads(run_cli("show", slug, "--json", root=REPO).stdout)
        assert isinstance(from_wheel[slug], dict), from_wheel[slug]
        for key in ("lastVerdict", "lastVerifiedAt", "verifiedOn", "claimMarks", "proofSummary"):
            assert from_wheel[slug][key] == from_clone[key], (slug, key)
        assert from_wheel[slug] == from_clone, slug
        verified += from_clone["lastVerdict"] == "verified"
    assert verified, "the clone itself shows no verified record: nothing was compared"


def test_the_wheel_ships_the_reproductions(installed: dict):
    shipped = {path.name for path in (installed["site"] / "errkb" / "_catalog" / "reproductions").glob("*.py")}
    assert shipped == {path.name for path in (REPO / "reproductions").glob("*.py")}


def test_match_from_an_empty_folder(installed: dict):
    result = run(installed, "errkb", "match", "-", stdin=STATE_DICT_PASTE)
    assert result.returncode == 0, result.stderr
    assert "[state-dict-keys-have-module-prefix, score" in result.stdout.splitlines()[0]
    assert list(installed["cwd"].iterdir()) == []  # the database went to the cache, not here
    assert [path.name for path in installed["cache"].iterdir() if path.name.startswith("catalog-")]


def test_a_warning_then_a_fatal_error_answers_the_fatal_one(installed: dict):
    result = run(installed, "errkb", "match", "--json", "-", stdin=WARNING_THEN_FATAL)
    found = json.loads(result.stdout)
    assert found[0]["slug"] == "dataparallel-object-has-no-attribute"


def test_run_explains_from_an_empty_folder(installed: dict):
    script = installed["cwd"].parent / "train.py"
    script.write_text("raise AttributeError(\"'DataParallel' object has no attribute 'generate'\")\n")
    result = run(installed, "errkb", "run", "--", str(installed["python"]), str(script))
    assert result.returncode == 1
    assert "errkb: this looks like `dataparallel-object-has-no-attribute`" in result.stderr


def test_show_from_an_empty_folder(installed: dict):
    result = run(installed, "errkb", "show", "state-dict-keys-have-module-prefix")
    assert result.returncode == 0, result.stderr
    assert "Fixes" in result.stdout


def test_python_api_from_an_empty_folder(installed: dict):
    code = (
        "import errkb, sys\n"
        "assert '/venv/' in errkb.__file__, errkb.__file__\n"
        "print(errkb.match(sys.stdin.read())[0].slug)\n"
    )
    result = run(installed, "python", "-c", code, stdin=STATE_DICT_PASTE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "state-dict-keys-have-module-prefix"


def test_serve_from_an_empty_folder(installed: dict):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(installed["bin"] / "errkb"), "serve", "--port", str(port)], cwd=installed["cwd"],
                              env=installed["env"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/-/errkb/record/state-dict-keys-have-module-prefix"
    try:
        page = None
        for _ in range(600):  # wait for it to listen; a failure to start ends the loop early
            if server.poll() is not None:
                break
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert page is not None, server.stdout.read() if server.poll() is not None else "server did not answer"
        assert "Missing key(s)" in page or "Unexpected key(s)" in page
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_without_the_shipped_records_it_says_there_is_no_catalog(installed: dict):
    shipped = installed["site"] / "errkb" / "_catalog"
    moved = shipped.with_name("_catalog-moved")
    shipped.rename(moved)
    try:
        result = run(installed, "errkb", "match", "-", stdin=STATE_DICT_PASTE)
    finally:
        moved.rename(shipped)
    assert result.returncode == 2
    assert "no catalog found" in result.stderr
    assert "no match" not in result.stdout + result.stderr
