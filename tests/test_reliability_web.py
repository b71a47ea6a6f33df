"""The web layer under hostile requests: huge SQL values, big pastes, POSTs where none belong, bad _sort,
heavy matches side by side, and a public --host. Each gets a prompt, bounded answer."""

from __future__ import annotations

import asyncio
import base64
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from web_support import REPO, SEED_SLUG, SEED_TRACEBACK, Client, make_root, running_server

from errkb.web import matching
from errkb.web.serve import make_datasette

pytestmark = pytest.mark.xdist_group("web-reliability")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("catalog"))
    client = Client(make_datasette(root / "catalog.db"))
    yield client
    client.close()


def one_megabyte(kind: str) -> str:
    rng = random.Random(5)
    if kind == "base64":
        raw = base64.b64encode(rng.randbytes(750_000)).decode()
        return "\n".join(raw[i : i + 76] for i in range(0, len(raw), 76))
    log = "\n".join(f"2026-06-03 11:20:{i % 60:02d},551 INFO step {i} loss={rng.random():.4f}" for i in range(22_000))
    return log if kind == "log" else log[:500_000] + "\n" + SEED_TRACEBACK + log[:500_000]


def test_sql_that_builds_a_huge_value_fails_fast(client):
    response = client.get("/catalog.json", params={"sql": "select length(hex(zeroblob(400000000)))"})
    assert response.status_code == 400
    assert "string or blob too big" in response.json()["error"]
    assert client.get("/catalog.json", params={"sql": "select count(*) from records"}).status_code == 200


@pytest.mark.parametrize("path", ["/catalog/records", "/catalog/records.json", "/catalog/reproduction_runs"])
def test_a_post_to_a_table_page_is_405_not_500(client, path):
    assert client.post(path, data={"a": "b"}).status_code == 405


@pytest.mark.parametrize("param", ["_sort", "_sort_desc"])
def test_an_unknown_sort_column_is_400_not_500(client, param):
    html = client.get("/catalog/records", params={param: "no_such_column"})
    assert html.status_code == 400 and "Cannot sort table by no_such_column" in html.text
    assert client.get("/catalog/records.json", params={param: "no_such_column"}).status_code == 400
    assert client.get("/catalog/records", params={param: "slug"}).status_code == 200


@pytest.mark.parametrize("kind", ["base64", "log", "traceback"])
def test_the_match_page_answers_a_megabyte_of_anything(client, kind):
    response = client.get("/-/errkb/match")  # the in-process client needs no CSRF token
    response = client.post("/-/errkb/match", data={"traceback": one_megabyte(kind)})
    assert response.status_code == 200
    first = re.search(r'<li class="errkb-match">.*?href="/-/errkb/record/([^"]+)"', response.text, re.S)
    if kind == "traceback":
        assert first and first.group(1) == SEED_SLUG
    else:
        assert first is None and "No match" in response.text


def test_a_paste_over_the_size_limit_is_413(client):
    response = client.post("/-/errkb/match", data={"traceback": "x" * (matching.MAX_BODY_BYTES + 1)})
    assert response.status_code == 413
    assert "larger than 4 MB" in response.text


@pytest.mark.filterwarnings("ignore::errkb.paste.MatchBudgetWarning")
def test_a_match_out_of_time_says_its_answer_is_partial(client, monkeypatch):
    monkeypatch.setattr(matching, "BUDGET_S", -1.0)
    response = client.post("/-/errkb/match", data={"traceback": SEED_TRACEBACK})
    assert response.status_code == 200
    assert "matching stopped after its -1 s budget" in response.text


SIDE_BY_SIDE = 4  # matches the match page must be able to run at once (errkb.web.matching's worker pool)


def test_matches_run_side_by_side(client, monkeypatch):
    """Each match waits, before it runs, until SIDE_BY_SIDE of them have started: a server that ran matches
    one at a time (or on the event loop) could answer none of them. No clock is read; the barrier's timeout
    is a hang guard only."""
    started = threading.Barrier(SIDE_BY_SIDE, timeout=60)
    real_match = matching.matcher.match

    def match_when_all_started(text, root=None, limit=5):
        started.wait()
        return real_match(text, root=root, limit=limit)

    monkeypatch.setattr(matching.matcher, "match", match_when_all_started)

    async def all_at_once():
        posts = [client.ds.client.post("/-/errkb/match", data={"traceback": SEED_TRACEBACK}) for _ in range(SIDE_BY_SIDE)]
        return await asyncio.gather(*posts)

    for response in client.run(all_at_once()):
        assert response.status_code == 200
        assert "errkb.matching failed" not in response.text, re.search(r"errkb.matching failed[^<]*", response.text).group(0)
        first = re.search(r'<li class="errkb-match">.*?href="/-/errkb/record/([^"]+)"', response.text, re.S)
        assert first and first.group(1) == SEED_SLUG


def test_heavy_matches_do_not_hold_up_the_others(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    with running_server(tmp_path) as base, httpx.Client(base_url=base, timeout=120) as http:
        token = re.search(r'name="csrftoken" value="([^"]+)"', http.get("/-/errkb/match").text).group(1)
        cookies = dict(http.cookies)

        def post(text: str) -> httpx.Response:
            with httpx.Client(base_url=base, timeout=120, cookies=cookies) as own:
                return own.post("/-/errkb/match", data={"csrftoken": token, "traceback": text})

        with ThreadPoolExecutor(8) as pool:
            heavy = [pool.submit(post, one_megabyte(kind)) for kind in ["base64", "log", "base64", "log", "base64", "log"]]
            light = pool.submit(post, SEED_TRACEBACK)
            page = pool.submit(http.get, f"/-/errkb/record/{SEED_SLUG}")
            assert light.result().status_code == 200 and f"/-/errkb/record/{SEED_SLUG}" in light.result().text
            assert page.result().status_code == 200
            assert [future.result().status_code for future in heavy] == [200] * 6


def serve_warning(tmp_path, host: str) -> str:
    """The stderr of `errkb serve --host HOST` on a port that is taken, so nothing ever listens."""
    shutil.copytree(REPO / "records", tmp_path / "records", dirs_exist_ok=True)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path), "serve", "--host", host, "--port", str(port)],
            capture_output=True, text=True, timeout=120,
        )
    return done.stderr


def test_serving_beyond_loopback_prints_a_warning(tmp_path):
    assert "warning: --host 0.0.0.0 serves the catalog to other machines" in serve_warning(tmp_path, "0.0.0.0")
    assert "warning: --host" not in serve_warning(tmp_path, "127.0.0.1")
