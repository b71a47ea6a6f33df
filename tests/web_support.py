"""Shared by tests/test_web*.py: a catalog root of our own, and a real `errkb serve` to talk to."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
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
# What must never reach a page unescaped: markup that runs, a link that runs, a template that renders.
RAW_MARKUP = ["<script>alert(", "<img src=x onerror=", 'href="javascript:', "href='javascript:", "href=javascript:", "jinjaran"]
# The escaped form Jinja and Datasette write for a probe's quotes and angle brackets.
ESCAPED_SCRIPT = "&lt;script&gt;alert("


def markup(name: str) -> str:
    """Markup naming the field it sits in: a script, an attribute break-out, javascript: links (HTML and
    Markdown) and a Jinja expression (rendered as a template it would print "jinjaran")."""
    return (
        f'<script>alert("{name}")</script> "><img src=x onerror=alert("{name}")> '
        f'<a href="javascript:alert(1)">{name}</a> [{name}](javascript:alert(1)) {{{{ "jinja"~"ran" }}}}'
    )


def shows_escaped(html: str, name: str) -> bool:
    """Whether the page shows markup(name) escaped (as it is, inside a JSON list, or as a regex literal): the
    proof that it rendered that field."""
    return re.search(rf"alert\\?\(&#34;{name}&#34;\\?\)|alert\(\\&#34;{name}\\&#34;\)", html) is not None


SEED_TRACEBACK = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 12, in <module>
[rank0]:     tagger.fit(trn, dev, save_dir, crf=True, devices=[0, 1])
[rank0]:   File "/usr/lib/python3.11/site-packages/hanlp/components/taggers/tagger.py", line 37, in build_criterion
[rank0]:     raise ValueError('DataParallel not supported when CRF is used')
[rank0]: ValueError: DataParallel not supported when CRF is used
"""
# The seed's traceback ending in the probe's message: a paste the match page answers with the probe.
XSS_PASTE = SEED_TRACEBACK.rsplit("[rank0]: ValueError", 1)[0] + f"[rank0]: ValueError: Probe {markup('errorMessage')}\n"
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


def _regex_literal(text: str) -> str:
    return "".join("\\" + c if c in "\\.^$|?*+()[]{}" else c for c in text)


# Every record field whose schema admits markup (the others are identifiers, slugs, numbers, hashes, times,
# or the GitHub URL derived from them).
XSS_RECORD_FIELDS = [
    "errorCode", "errorMessage", "messagePattern", "sourceCode", "documentation", "triggerScenarios", "commonSituations",
    "solutions", "exampleFix", "validationCode", "typeGuard", "tryCatchPattern", "preventionTips",
]


def xss_record(folder: Path) -> Path:
    """A valid record (the seed, renamed) with markup in every field that can hold it, as a file for `errkb add`."""
    envelope = json.loads((REPO / "records" / f"{SEED_SLUG}.json").read_text(encoding="utf-8"))
    record = envelope["record"]
    message = f"Probe {markup('errorMessage')}"
    lines = record["sourceCode"].split("\n")
    raise_line = record["lineNumber"] - record["sourceCodeStart"]
    lines[0] += f"  # {markup('sourceCode')}"
    lines[raise_line] += f"  # {markup('sourceCode')}"
    record.update(
        id="0123456789abcdef",
        slug=XSS_SLUG,
        errorCode='<script>alert("errorCode")</script>"><img src=x onerror=alert(1)>',  # at most 100 characters
        errorMessage=message,
        messagePattern=f"{_regex_literal(message)}|{_regex_literal(markup('messagePattern'))}",
        sourceCode="\n".join(lines),
        documentation=f"Documentation with {markup('documentation')} and `code {markup('documentation')}`.",
        triggerScenarios=f"Scenario {markup('triggerScenarios')}\n\nSecond paragraph {markup('triggerScenarios')}",
        commonSituations=f"Situation {markup('commonSituations')}",
        solutions=[f"Fix {markup('solutions')}", f"Second fix `{markup('solutions')}`"],
        exampleFix=f"# {markup('exampleFix')}\nfit(devices=[0])",
        validationCode=f"# {markup('validationCode')}\nassert True",
        typeGuard=f"# {markup('typeGuard')}\nassert True",
        tryCatchPattern=f"try:\n    pass  # {markup('tryCatchPattern')}\nexcept ValueError:\n    pass",
        preventionTips=[f"Tip {markup('preventionTips')}"],
    )
    path = folder / f"{XSS_SLUG}.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    return path


# Result-file fields with markup, and the ones a record page shows (the rest are data for the JSON and tables).
XSS_RESULT_FIELDS_SHOWN = ["reason", "drift", "variant", "library", "python", "gpus", "os", "claims"]


def write_xss_results(root: Path) -> list[Path]:
    """Two signed result files for the probe with markup in every free-text field: one current (verified, the
    newest run of the catalog, so the home page lists it), one for an earlier version of the record. Both are
    consistent results as the build demands (errkb/verifications.py `consistency_problems`): the environment key
    derived from the file's packages, Python and GPUs, a start time not in the future, a stage for every claim of
    the record, observed messages that a stage saw. The key pair is a throwaway one of this root's, its private
    half beside the root."""
    from datetime import datetime, timedelta, timezone

    from errkb import signing, verifications
    from errkb.store import file_hash

    claims = [("solution", 1), ("solution", 2), ("exampleFix", None), ("validationCode", None), ("typeGuard", None),
              ("tryCatchPattern", None)]
    observed = f"Probe {markup('observedMessages')}"

    def result(record_hash: str, verdict: str, started: str, gpus: list[str], torch: str = "2.13.0") -> verifications.Verification:
        packages = {"hanlp": markup("packages"), "torch": torch}
        python = f"3.11.{markup('python')}"  # no dots in the markup: the key's Python is still py3.11
        return verifications.Verification.model_validate({
            "schemaVersion": 1, "slug": XSS_SLUG, "environment": verifications.environment_key(packages, python, gpus),
            "recordHash": record_hash, "reproductionHash": None, "verdict": verdict, "reason": markup("reason"),
            "failedClaim": markup("failedClaim"), "drift": markup("drift"),
            "stages": [{
                "stage": "trigger", "function": markup("function"), "outcome": "raised", "seconds": 1.0,
                "variant": markup("variant"), "kind": "exception", "exceptionClass": "ValueError",
                "message": observed, "raiseSite": markup("raiseSite"),
                "warnings": [{"class": "UserWarning", "message": markup("warning"), "location": markup("location")}],
                "executed": [],
            }, *[{
                "stage": f"solution {index}" if kind == "solution" else kind, "function": markup("function"),
                "outcome": "returned", "seconds": 1.0, "message": markup("message"),
            } for kind, index in claims]],
            "claims": [{"kind": kind, "index": index, "verdict": "verified", "reason": markup("claims")}
                       for kind, index in claims],
            "packages": packages, "library": markup("library"), "python": python,
            "torchGitVersion": markup("torchGitVersion"), "torchBuild": markup("torchBuild"),
            "hardware": {"cpu": markup("cpu"), "cpuCount": 2, "gpus": gpus, "gpuCount": len(gpus), "cuda": markup("cuda")},
            "os": markup("os"), "startedAt": started, "seconds": 1.0, "errkbVersion": markup("errkbVersion"),
            "ranAt": {"kind": "github-actions", "url": "javascript:alert(1)"},
            "observedMessages": [observed],
        })

    private = root.parent / f"{root.name}-probe-maintainer.pem"
    if not private.exists():
        signing.generate_key(private, root / signing.KEYS_DIR / "probe-maintainer.pub")
    signer = signing.load_private_key(private)
    now = (datetime.now(timezone.utc) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")  # the newest run
    current = file_hash(root / "records" / f"{XSS_SLUG}.json")
    paths = [
        verifications.write(root, result(current, "verified", now, [markup("gpus")])),
        verifications.write(root, result("0" * 64, "fix-failed", "2026-01-01T00:00:00Z", [markup("gpus")], torch="2.12.0")),  # run_row: devices
    ]
    for path in paths:
        signing.sign(root, path, signer)
    return paths


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


@contextlib.contextmanager
def datasette_client(root: Path):
    """A Client over the catalog.db in `root`, with errkb's plugin as `errkb serve` sets it up."""
    from errkb.web.serve import make_datasette

    client = Client(make_datasette(root / "catalog.db"))
    try:
        yield client
    finally:
        client.close()


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
