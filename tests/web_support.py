"""Shared by tests/test_web*.py: a catalog root of our own, and a real `errkb serve` to talk to."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import sqlite_utils
from click.testing import CliRunner

from errkb import catalog
from errkb.cli import cli

REPO = Path(__file__).resolve().parents[1]
SEED_SLUG = "dataparallel-not-supported-when-crf-is-used"
XSS_SLUG = "xss-probe-in-every-field"
XSS_SCRIPT = '<script>alert("doc")</script>'
XSS_IMG = "<img src=x onerror=alert(1)>"
SEED_TRACEBACK = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 12, in <module>
[rank0]:     tagger.fit(trn, dev, save_dir, crf=True, devices=[0, 1])
[rank0]:   File "/usr/lib/python3.11/site-packages/hanlp/components/taggers/tagger.py", line 37, in build_criterion
[rank0]:     raise ValueError('DataParallel not supported when CRF is used')
[rank0]: ValueError: DataParallel not supported when CRF is used
"""
RUNS = [
    {
        "slug": SEED_SLUG, "verdict": "skipped", "reason": "needs 2 CUDA devices, found 0", "variant": None,
        "drift": None, "started_at": "2026-11-28T10:00:00Z", "seconds": 0.4, "python": "3.11.7", "torch": "2.13.0",
        "library": "hanlp", "library_version": "2.1.5", "packages": '{"torch": "2.13.0", "hanlp": "2.1.5"}',
        "cuda_device_count": 0, "cuda_devices": "[]", "ran_at": "local", "platform": "Linux-6.1-x86_64",
        "stages": "{}",
    },
    {
        "slug": SEED_SLUG, "verdict": "verified", "reason": None, "variant": "cuda: 2 devices", "drift": None,
        "started_at": "2026-11-29T15:00:00Z", "seconds": 12.3, "python": "3.11.7", "torch": "2.13.0",
        "library": "hanlp", "library_version": "2.1.5", "packages": '{"torch": "2.13.0", "hanlp": "2.1.5"}',
        "cuda_device_count": 2, "cuda_devices": '["NVIDIA H200", "NVIDIA H200"]', "ran_at": "https://github.com/errkb/errkb/actions/runs/1",
        "platform": "Linux-6.1-x86_64", "stages": "{}",
    },
]


def make_root(path: Path, runs: bool = True) -> Path:
    """A catalog root with the repository's records (the seed as it was given), a built catalog.db and, optionally,
    two runs of the seed."""
    shutil.copytree(REPO / "records", path / "records")
    shutil.copy(REPO / "tests" / "data" / "seed-record.json", path / "records" / f"{SEED_SLUG}.json")
    catalog.build(path)
    if runs:
        db = sqlite_utils.Database(path / "catalog.db")
        db["reproduction_runs"].insert_all(RUNS)
        catalog.refresh_last_verdicts(db)
        db.close()
    return path


def xss_record(folder: Path) -> Path:
    """A valid record (the seed, renamed) with markup in its text fields, as a file for `errkb add`."""
    envelope = json.loads((REPO / "records" / f"{SEED_SLUG}.json").read_text(encoding="utf-8"))
    record = envelope["record"]
    record.update(
        id="0123456789abcdef",
        slug=XSS_SLUG,
        errorMessage=f"Probe {XSS_SCRIPT} with {XSS_IMG}",
        messagePattern=r'Probe <script>alert\("doc"\)</script> with <img src=x onerror=alert\(1\)>',
        documentation=f"Documentation with {XSS_SCRIPT} and {XSS_IMG} and `code {XSS_IMG}`.",
        solutions=[f"Fix {XSS_SCRIPT}"],
        preventionTips=[f"Tip {XSS_IMG}"],
        exampleFix=f"# {XSS_SCRIPT}",
    )
    path = folder / f"{XSS_SLUG}.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    return path


def add_record(root: Path, file: Path) -> None:
    result = CliRunner().invoke(cli, ["--root", str(root), "add", str(file)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


class Client:
    """Synchronous calls through datasette.client, on one event loop of its own."""

    def __init__(self, datasette):
        self.ds = datasette
        self.loop = asyncio.new_event_loop()

    def get(self, path: str, **kwargs):
        return self.loop.run_until_complete(self.ds.client.get(path, **kwargs))

    def post(self, path: str, **kwargs):
        return self.loop.run_until_complete(self.ds.client.post(path, **kwargs))

    def run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def close(self):
        self.loop.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(root: Path, timeout: float = 60.0):
    """`errkb serve` on a free port as a subprocess; yields its base URL; stops it afterwards."""
    port = free_port()
    log = open(root / "serve.log", "w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "errkb.cli", "--root", str(root), "serve", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise AssertionError(f"errkb serve exited with {process.returncode}:\n{log.read()}")
            try:
                with urllib.request.urlopen(base + "/", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"errkb serve did not answer on {base} within {timeout} s")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
