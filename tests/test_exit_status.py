"""The README's exit-status table is what the commands do: one real case per documented cell."""

from __future__ import annotations

import json
import re
import shutil
import sys

import pytest
from conftest import REPO, SEED_SLUG, run_cli

from errkb.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")


def documented() -> dict[str, list[str]]:
    """command -> its cells for status 0, 1 and 2."""
    section = README.split("## Exit status\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z]+)` \| (.*) \|$", section, flags=re.M)
    return {name: [cell.strip() for cell in re.split(r"\s*\|\s*", cells)] for name, cells in rows}


def test_the_table_has_every_command_and_only_those():
    assert set(documented()) == set(cli.commands)


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(REPO / "records", root / "records")
    shutil.copytree(REPO / "reproductions", root / "reproductions")
    return root


@pytest.fixture
def broken(root, tmp_path):
    """A copy of the catalog with one record file made invalid."""
    broken = tmp_path / "broken"
    shutil.copytree(root, broken)
    path = broken / "records" / f"{SEED_SLUG}.json"
    envelope = json.loads(path.read_text())
    envelope["record"]["severity"] = "catastrophic"
    path.write_text(json.dumps(envelope))
    return broken


PASTE = "ValueError: DataParallel not supported when CRF is used\n"


def cases(root, broken, empty, tmp_path) -> list[tuple[str, int, list[str], str | None]]:
    """(command, status, arguments after errkb, stdin)."""
    paste = tmp_path / "paste.txt"
    paste.write_text(PASTE)
    nothing = tmp_path / "nothing.txt"
    nothing.write_text("KeyError: 'banana split with sprinkles'\n")
    invalid = tmp_path / "invalid.json"
    invalid.write_text("{}")
    return [
        ("add", 0, ["--root", str(root), "add", str(REPO / "records" / f"{SEED_SLUG}.json")], None),
        ("add", 1, ["--root", str(root), "add", str(invalid)], None),
        ("add", 2, ["--root", str(root), "add"], None),
        ("build", 0, ["--root", str(root), "build"], None),
        ("build", 1, ["--root", str(broken), "build"], None),
        ("build", 2, ["--root", str(root), "build", "--banana"], None),
        ("draft", 1, ["--root", str(root), "draft", "--", "ls"], None),
        ("draft", 2, ["--root", str(root), "draft", "--timeout", "banana", "--", "python", str(paste)], None),
        ("list", 0, ["--root", str(root), "list", "--tag", "no-such-tag"], None),
        ("list", 1, ["--root", str(broken), "list"], None),
        ("list", 2, ["--root", str(root), "list", "--verdict", "banana"], None),
        ("match", 0, ["--root", str(root), "match", str(paste)], None),
        ("match", 1, ["--root", str(root), "match", str(nothing)], None),
        ("match", 2, ["--root", str(empty), "match", str(paste)], None),
        ("mcp", 2, ["mcp", "--banana"], None),
        ("reproduce", 2, ["--root", str(root), "reproduce", "no-such-record"], None),
        ("schema", 0, ["schema"], None),
        ("schema", 2, ["schema", "--banana"], None),
        ("search", 0, ["--root", str(root), "search", "OOM"], None),
        ("search", 1, ["--root", str(root), "search", "zzzqx"], None),
        ("search", 2, ["--root", str(empty), "search", "OOM"], None),
        ("serve", 2, ["serve", "--port", "banana"], None),
        ("show", 0, ["--root", str(root), "show", SEED_SLUG], None),
        ("show", 1, ["--root", str(broken), "show", SEED_SLUG], None),
        ("show", 2, ["--root", str(root), "show", "no-such-record"], None),
        ("sign", 0, ["--root", str(root), "sign", "--new-key", "tester", "--key", str(tmp_path / "tester.pem"), "--all"], None),
        ("sign", 1, ["--root", str(root), "sign", "--key", str(tmp_path / "missing.pem"), "--all"], None),
        ("sign", 2, ["--root", str(root), "sign", "--key", str(tmp_path / "tester.pem")], None),
        ("validate", 0, ["--root", str(empty), "validate", str(REPO / "tests" / "examples" / "valid" / "seed-bare.json")], None),
        ("validate", 1, ["--root", str(empty), "validate", str(invalid)], None),
        ("validate", 2, ["validate", str(tmp_path / "missing")], None),
    ]


def test_each_documented_status_is_what_the_command_returns(root, broken, tmp_path):
    from click.testing import CliRunner

    empty = tmp_path / "empty"
    empty.mkdir()
    table = documented()
    checked = set()
    for command, status, argv, stdin in cases(root, broken, empty, tmp_path):
        assert table[command][status], f"{command} returned {status} in a case, but the README documents none"
        result = CliRunner().invoke(cli, argv, input=stdin)
        assert result.exit_code == status, (command, argv, result.output)
        checked.add((command, status))
    undocumented_cases = {(name, status) for name, cells in table.items() for status, cell in enumerate(cells) if cell} - checked
    # run passes the command's status through (tested below); mcp and serve end when stopped; reproduce's 0 and 1
    # and draft's 0 need real runs (tests/test_reproduce.py, tests/test_draft.py)
    assert undocumented_cases <= {("run", 0), ("run", 1), ("run", 2), ("mcp", 0), ("serve", 0), ("serve", 1),
                                  ("reproduce", 0), ("reproduce", 1), ("draft", 0)}


@pytest.mark.parametrize("status", [0, 1, 2, 3])
def test_run_passes_the_commands_status_through(root, status):
    result = run_cli("run", "--", sys.executable, "-c", f"raise SystemExit({status})", root=root)
    assert result.exit_code == status


def test_run_says_127_for_a_missing_command(root):
    assert run_cli("run", "--", "/no/such/command", root=root).exit_code == 127
