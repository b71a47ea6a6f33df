"""`errkb match`: text and JSON output, --limit, stdin, exit status."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from errkb.cli import cli

REPO = Path(__file__).resolve().parents[1]
PASTES = Path(__file__).parent / "data" / "pastes"
SEED = "dataparallel-not-supported-when-crf-is-used"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "records", tmp_path / "records")
    return tmp_path


def run(root: Path, *args, stdin: str | None = None):
    return CliRunner().invoke(cli, ["--root", str(root), "match", *map(str, args)], input=stdin, catch_exceptions=False)


def test_text_output_names_slug_score_and_why(root):
    result = run(root, PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")
    assert result.exit_code == 0
    assert result.output.startswith(f"1. {SEED}  (score 1.00)")
    assert "why: pattern matched 'ValueError: DataParallel not supported when CRF is used'; class ValueError" in result.output


def test_json_output_best_first(root):
    result = run(root, "--json", PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")
    found = json.loads(result.output)
    assert found[0]["slug"] == SEED and found[0]["score"] == 1.0
    assert found[0]["why"]["pattern"] is True and found[0]["why"]["class"] is True
    assert [m["score"] for m in found] == sorted((m["score"] for m in found), reverse=True)


def test_no_match_is_an_empty_list_and_exit_status_1(root):
    result = run(root, "--json", PASTES / "negative--cuda-oom-bare-old.txt")
    assert (result.exit_code, json.loads(result.output)) == (1, [])
    result = run(root, PASTES / "negative--cuda-oom-bare-old.txt")
    assert result.exit_code == 1 and result.output.startswith("no match:")


def test_reads_stdin_and_limits(root):
    text = (PASTES / "rnn-hidden-device--dataparallel-replica.txt").read_text()
    result = run(root, "--json", "--limit", "1", "--min-score", "0", "-", stdin=text)
    found = json.loads(result.output)
    assert len(found) == 1 and found[0]["slug"] == "rnn-input-and-hidden-on-different-devices"


def test_missing_file_is_a_usage_error(root):
    assert CliRunner().invoke(cli, ["--root", str(root), "match", str(root / "nope.txt")]).exit_code == 2
