"""`errkb serve` as a real server: it builds catalog.db, listens on 127.0.0.1 and answers over HTTP."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time

import httpx
from web_support import REPO, SEED_SLUG, SEED_TRACEBACK, running_server


def test_errkb_serve_builds_the_catalog_and_serves_it(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")  # no catalog.db yet: serve must build it
    with running_server(tmp_path) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert (tmp_path / "catalog.db").exists()

        home = http.get("/")
        assert home.status_code == 200 and "errkb: ML error records" in home.text

        record = http.get(f"/-/errkb/record/{SEED_SLUG}")
        assert record.status_code == 200
        assert "DataParallel not supported when CRF is used" in record.text
        assert "never verified" in record.text

        search = http.get("/catalog/records.json", params={"_search": "DataParallel", "_shape": "objects"})
        assert SEED_SLUG in [row["slug"] for row in search.json()["rows"]]

        # The match form posts with Datasette's CSRF token, as a browser would.
        form = http.get("/-/errkb/match")
        token = re.search(r'name="csrftoken" value="([^"]+)"', form.text).group(1)
        answer = http.post("/-/errkb/match", data={"csrftoken": token, "traceback": SEED_TRACEBACK})
        assert answer.status_code == 200
        first = re.search(r'<li class="errkb-match">.*?href="/-/errkb/record/([^"]+)"', answer.text, re.S)
        assert first and first.group(1) == SEED_SLUG


def test_errkb_serve_refuses_an_invalid_catalog(tmp_path):
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "broken.json").write_text("{}", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path), "serve", "--port", "1"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1 and "error:" in result.stderr


def test_the_server_keeps_working_while_the_catalog_changes(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    with running_server(tmp_path) as base, httpx.Client(base_url=base, timeout=30) as http:
        errkb = [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path)]
        (tmp_path / "records" / "batchnorm-one-value-per-channel.json").unlink()
        build = subprocess.Popen(errkb + ["build", "--full"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        paths = ["/catalog/records", f"/-/errkb/record/{SEED_SLUG}", "/catalog/records?_search=DataParallel"]
        while build.poll() is None:  # while the build rewrites every table, pages answer from the last commit
            for path in paths:
                assert http.get(path).status_code == 200, path
        assert build.returncode == 0, build.stdout.read()
        for path in paths:
            assert http.get(path).status_code == 200, path
        # The live catalog is served: the build's changes show without a restart.
        assert http.get("/-/errkb/record/batchnorm-one-value-per-channel").status_code == 404


def test_a_busy_port_is_a_clear_error(tmp_path):
    import socket

    shutil.copytree(REPO / "records", tmp_path / "records")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path), "serve", "--port", str(port)],
            capture_output=True, text=True, timeout=60,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "--port" in result.stderr


def test_with_a_catalog_built_serve_answers_at_once_and_updates_it_in_the_background(tmp_path):
    shutil.copytree(REPO / "records", tmp_path / "records")
    errkb = [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path)]
    subprocess.run(errkb + ["build"], check=True, capture_output=True, timeout=300)
    # A broken file: the background build fails and says so; the server keeps the catalog as it was.
    (tmp_path / "records" / "broken.json").write_text("{}", encoding="utf-8")
    with running_server(tmp_path) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert http.get(f"/-/errkb/record/{SEED_SLUG}").status_code == 200
        deadline = time.monotonic() + 120
        log = tmp_path / "serve.log"
        while "broken.json" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "error:" in log.read_text() and "broken.json" in log.read_text()
        assert http.get(f"/-/errkb/record/{SEED_SLUG}").status_code == 200  # the catalog as it was
    (tmp_path / "records" / "broken.json").unlink()
    (tmp_path / "records" / "batchnorm-one-value-per-channel.json").unlink()
    with running_server(tmp_path) as base, httpx.Client(base_url=base, timeout=30) as http:
        deadline = time.monotonic() + 120
        while http.get("/-/errkb/record/batchnorm-one-value-per-channel").status_code != 404:
            assert time.monotonic() < deadline, "the background build did not remove the deleted record"
            time.sleep(0.2)
