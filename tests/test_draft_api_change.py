"""`errkb draft --api-change` over a throwaway library built here at four versions (1.0 and 2.0 have old_load,
3.0 removes it with a module __getattr__ that says so, 4.0 moves the raise a line): the bisection finds 2.0 -> 3.0,
reports exactly the releases it ran, and the filled-in draft's reproduction fails on 3.0 and 4.0, works on 2.0, and
its fix works on the new side. Offline apart from what uv needs to install errkb itself (as tests/test_matrix.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import run_cli
from errkb.reproduce import environments
from test_draft import fill

pytestmark = [pytest.mark.xdist_group("matrix"), pytest.mark.skipif(environments.uv_binary() is None, reason="uv is not installed")]

REMOVED = (
    "def new_load(value):\n    return value\n\n\n"
    "def __getattr__(name):\n{pad}    if name == 'old_load':\n"
    "        raise AttributeError(f\"errkbapi.{{name}} was removed in 3.0: use errkbapi.new_load\")\n"
    "    raise AttributeError(name)\n"
)
VERSIONS = {
    "1.0": "def old_load(value):\n    return value\n",
    "2.0": "def old_load(value):\n    return value\n\n\ndef new_load(value):\n    return value\n",
    "3.0": REMOVED.format(pad=""),
    "4.0": REMOVED.format(pad="    # still removed in 4.0\n"),
}
SNIPPET = "import errkbapi\n\nerrkbapi.old_load(1)\n"


def wheel(folder: Path, version: str) -> None:
    info = f"errkbapi-{version}.dist-info"
    files = {
        "errkbapi/__init__.py": VERSIONS[version],
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: errkbapi\nVersion: {version}\n"
                            "Project-URL: Source, https://github.com/errkb-test/errkbapi\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: errkb-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    with zipfile.ZipFile(folder / f"errkbapi-{version}-py3-none-any.whl", "w") as archive:
        for name, text in files.items():
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            archive.writestr(name, data)
            record.append(f"{name},sha256={digest},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\n".join(record + [f"{info}/RECORD,,"]) + "\n")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheels")
    for version in VERSIONS:
        wheel(folder, version)
    saved = {key: os.environ.get(key) for key in ("ERRKB_ENV_DIR", "PIP_FIND_LINKS", "PIP_NO_INDEX")}
    os.environ.update(ERRKB_ENV_DIR=str(tmp_path_factory.mktemp("envs")), PIP_FIND_LINKS=str(folder), PIP_NO_INDEX="1")
    yield folder
    for key, value in saved.items():
        os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "catalog"
    (folder / "records").mkdir(parents=True)
    (folder / "reproductions").mkdir()
    return folder


def test_bisection_finds_the_release_and_the_filled_draft_proves_both_sides(wheels, root, tmp_path):
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    made = run_cli("draft", "--api-change", "--library", "errkbapi", "--slug", "errkbapi-old-load-removed", "--sha", "2c" * 20,
                   "--", sys.executable, snippet, root=root)
    assert made.exit_code == 0, made.output
    # Every release run, with what it did; 4.0 first (the error), 1.0 (the working side), then the bisection.
    for line in ("errkbapi==1.0: works", "errkbapi==2.0: works", "errkbapi==3.0: fails", "errkbapi==4.0: fails",
                 "last working errkbapi==2.0, first failing errkbapi==3.0"):
        assert line in made.output
    record = json.loads((root / "records" / "errkbapi-old-load-removed.json").read_text())["record"]
    assert (record["repo"], record["filePath"], record["errorClass"]) == ("errkb-test/errkbapi", "errkbapi/__init__.py", "AttributeError")
    assert record["lineNumber"] == 8 and "api-change" in record["tags"] and record["errorType"] == "compatibility"
    text = (root / "reproductions" / "errkbapi-old-load-removed.py").read_text()
    assert "API_CHANGE = {\"library\": 'errkbapi', \"last_working\": '2.0', \"first_failing\": '3.0'" in text
    assert "{'text': 'errkbapi.old_load was removed in 3.0: use errkbapi.new_load', 'source': 'errkbapi==3.0'" in text
    assert "NEEDS = {'packages': {'errkbapi': ''" in text  # any release, so that the old side's run counts

    fill(root, "errkbapi-old-load-removed", "Call errkbapi.new_load, which replaced old_load in 3.0",
         "    import errkbapi\n    assert errkbapi.new_load(1) == 1")
    proved = run_cli("reproduce", "errkbapi-old-load-removed", "--json", *[f"--with=errkbapi=={v}" for v in ("2.0", "3.0", "4.0")],
                     root=root)
    verdicts = {r["environment"]["label"]: r["verdict"] for r in map(json.loads, proved.stdout.splitlines())}
    # The old side runs the snippet without the error; the new side raises it and the fix works there.
    assert verdicts == {"errkbapi==2.0": "not-reproduced", "errkbapi==3.0": "verified", "errkbapi==4.0": "verified"}
    checked = run_cli("validate", root=root)  # the drafted wording is now backed by the 3.0 result
    assert checked.exit_code == 0, checked.output


def test_a_range_with_no_working_side_writes_nothing(wheels, root, tmp_path):
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    made = run_cli("draft", "--api-change", "--library", "errkbapi", "--releases", "3.0,4.0", "--", sys.executable, snippet, root=root)
    assert made.exit_code == 1
    assert "no working side: the oldest release tried, errkbapi==3.0, raises the same error" in made.output
    assert "errkbapi==4.0: fails" in made.output and "2.0" not in re.sub(r"errkbapi\.new_load", "", made.output).split("releases run:")[1]
    assert not list((root / "records").iterdir()) and not list((root / "reproductions").iterdir())


def test_a_library_with_no_releases_writes_nothing(wheels, root, tmp_path):
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    made = run_cli("draft", "--api-change", "--library", "errkb-no-such-dist", "--", sys.executable, snippet, root=root)
    assert made.exit_code == 1 and "no releases of errkb-no-such-dist found in the package index" in made.output
    assert not list((root / "records").iterdir())
