"""The served catalog and the terminal refuse what an attacker sends (issue 21, Must 5): another Host header (DNS
rebinding), huge printf() widths, page numbers past any page, POSTs to read-only pages, over-large responses, and
escape sequences in record text. A real `errkb serve` over HTTP and real `errkb` subprocesses."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from errkb.web import guards
from reproduce_support import record_with
from web_support import make_root, running_server

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # writes "evil" to the terminal's clipboard
SLUG = "escape-probe"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("served"), runs=False)
    with running_server(root) as base:
        yield urllib.parse.urlsplit(base)


def request(server, method: str, path: str, host: str | None = None, body: bytes | None = None):
    conn = http.client.HTTPConnection(server.hostname, server.port, timeout=120)
    try:
        headers = {"Host": host or server.netloc}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_a_request_for_another_host_is_refused(server):
    assert request(server, "GET", "/")[0] == 200
    assert request(server, "GET", "/", host=f"localhost:{server.port}")[0] == 200
    status, body = request(server, "GET", "/catalog/records.json", host=f"attacker.example:{server.port}")
    assert status == 421 and b"answers only for" in body


def sql(query: str) -> str:
    return "/catalog.json?" + urllib.parse.urlencode({"sql": query})


def test_printf_widths_are_bounded(server):
    status, body = request(server, "GET", sql("select printf('%.*c', 2147483647, 'x') as s"))
    assert status == 400 and b"function raised exception" in body  # sqlite3 keeps no message of a Python function's error
    status, body = request(server, "GET", sql("select format('%2147483647d', 1) as s"))
    assert status == 400 and b"function raised exception" in body  # sqlite3 keeps no message of a Python function's error
    status, body = request(server, "GET", sql("select printf('%.*c', '2147483647', 'x') as s"))  # text read as a number
    assert status == 400
    status, body = request(server, "GET", sql("select printf('%5.2f|%-4s|%%|%.*c', 3.14159, 'ab', 3, 'z') as s"))
    assert status == 200 and json.loads(body)["rows"] == [[" 3.14|ab  |%|zzz"]]


def test_client_mistakes_are_4xx_not_500(server):
    assert request(server, "GET", "/-/errkb/records?page=99999999999999999999999")[0] == 400
    assert request(server, "GET", "/-/errkb/records?q=cuda&page=10000000000000000000")[0] == 400
    assert request(server, "GET", "/-/errkb/records?page=2")[0] == 200
    for path in ("/-/errkb/records?q=cuda", "/", "/catalog/records"):
        assert request(server, "POST", path, body=b"q=x")[0] == 405, path


def test_a_response_over_the_size_bound_is_refused(server):
    rows = guards.MAX_RESPONSE_BYTES // (8 * 2**20) + 2
    query = (f"with recursive n(i) as (select 1 union all select i + 1 from n where i < {rows}) "
             "select hex(zeroblob(4194304)) as h from n")
    status, body = request(server, "GET", sql(query) + "&_timelimit=20000")
    assert status == 413 and b"larger than" in body and len(body) < 1000


def escape_catalog(root: Path) -> Path:
    (root / "records").mkdir(parents=True)
    envelope = record_with({"slug": SLUG, "errorMessage": "Probe error escape \x1b[2J cleared", "messagePattern": "Probe error escape",
                            "documentation": f"Docs {OSC52} and a C1 CSI \x9b31m red", "solutions": [f"Fix {OSC52}"]})
    (root / "records" / f"{SLUG}.json").write_text(json.dumps(envelope), encoding="utf-8")
    return root


def errkb(root: Path, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), *args], input=stdin,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


@pytest.mark.parametrize("args", [["show", SLUG], ["show", SLUG, "--json"], ["match", "-"], ["match", "-", "--json"],
                                  ["search", "probe"], ["search", "probe", "--json"], ["list", "--json"],
                                  ["run", "--", sys.executable, "-c", "raise ValueError('Probe error escape now')"]])
def test_escape_sequences_in_record_text_are_shown_inert(tmp_path, args):
    root = escape_catalog(tmp_path / "catalog")
    outcome = errkb(root, *args, stdin="ValueError: Probe error escape \\x1b[2J cleared\n")
    shown = outcome.stdout + (outcome.stderr if args[0] == "run" else "")
    assert "Probe error escape" in shown, outcome.stderr
    assert not any(c in shown for c in ("\x1b", "\x07", "\x9b")), repr(shown[:400])
    assert ("\\u001b" if "--json" in args else "\\x1b") in shown
    if "--json" in args:
        json.loads(outcome.stdout)  # still valid JSON
