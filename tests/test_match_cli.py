"""`errkb match`: text and JSON output, --limit, stdin, exit status."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from errkb.cli import cli

REPO = Path(__file__).resolve().parents[1]
PASTES = Path(__file__).parent / "data" / "pastes"
RANKING = Path(__file__).parent / "data" / "ranking"
SEED = "dataparallel-not-supported-when-crf-is-used"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "records", tmp_path / "records")
    return tmp_path


def run(root: Path, *args, stdin: str | None = None):
    return CliRunner().invoke(cli, ["--root", str(root), "match", *map(str, args)], input=stdin, catch_exceptions=False)


def test_text_output_leads_with_title_cause_fix_and_where_verified(root):
    result = run(root, PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == f"1. DataParallel not supported when CRF is used   [{SEED}, score 1.00]"
    assert lines[1].startswith("   Cause: ") and len(lines[1]) <= 170
    assert lines[2].startswith("   Fix:   ") and lines[2].endswith("(not run yet)")  # no result file in this root
    assert lines[3] == "   Never verified"
    assert "why: pattern matched the final exception line; same class\n" in result.output


def test_json_output_best_first(root):
    result = run(root, "--json", PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")
    found = json.loads(result.output)
    assert found[0]["slug"] == SEED and found[0]["score"] == 1.0
    assert found[0]["why"]["pattern"] is True and found[0]["why"]["sameClass"] is True
    assert {"title", "cause", "firstSolution", "verifiedOn", "errorClass", "errorMessage", "seenAs", "evidence"} <= set(found[0])
    assert not [key for hit in found for key in hit if "_" in key], "JSON keys are camelCase, as in records and show"
    assert [m["score"] for m in found] == sorted((m["score"] for m in found), reverse=True)


def test_json_output_of_two_matches_is_sorted_by_score(root):
    """One load_state_dict error explained by three records (prefixed keys, a size mismatch, and the generic
    missing/unexpected keys): all above the threshold, in the same place of the paste, the closest first."""
    result = run(root, "--json", RANKING / "state-dict-prefix-and-size-mismatch.txt")
    found = json.loads(result.output)
    assert [m["slug"] for m in found] == ["state-dict-keys-have-module-prefix", "state-dict-size-mismatch",
                                          "state-dict-missing-or-unexpected-keys"]
    assert found[0]["score"] > found[1]["score"] > found[2]["score"]


def test_no_match_is_an_empty_list_and_exit_status_1(root):
    result = run(root, "--json", PASTES / "negative--module-not-found.txt")
    assert (result.exit_code, json.loads(result.output)) == (1, [])
    result = run(root, PASTES / "negative--module-not-found.txt")
    assert result.exit_code == 1 and result.output.startswith("no match:")


def test_reads_stdin_and_limits(root):
    text = (PASTES / "rnn-hidden-device--dataparallel-replica.txt").read_text()
    result = run(root, "--json", "--limit", "1", "--min-score", "0", "-", stdin=text)
    found = json.loads(result.output)
    assert len(found) == 1 and found[0]["slug"] == "rnn-input-and-hidden-on-different-devices"


def test_missing_file_is_a_usage_error(root):
    result = CliRunner().invoke(cli, ["--root", str(root), "match", str(root / "nope.txt")])
    assert result.exit_code == 2 and "no such file" in result.output


def test_a_directory_is_named_as_such(root):
    result = CliRunner().invoke(cli, ["--root", str(root), "match", str(root / "records")])
    assert result.exit_code == 2
    assert "is a directory; expected a file, or - for stdin" in result.output
    assert "no such file" not in result.output


def test_cut_text_ends_with_an_ellipsis(root):
    result = run(root, PASTES / "pack-not-sorted--logging-exception.txt")
    assert result.exit_code == 0
    why = next(line for line in result.output.splitlines() if line.startswith("   why: "))
    assert why == "   why: pattern matched the final exception line; same class"
    message = next(line for line in result.output.splitlines() if line.startswith("   RuntimeError: "))
    assert message.endswith("\u2026") and len(message) == len("   RuntimeError: ") + 110
    result = run(root, PASTES / "state-dict-module-prefix--multiline-keys.txt")  # a multi-line message: first line only
    assert "   RuntimeError: Error(s) in loading state_dict for Net:\u2026\n" in result.output
    result = run(root, PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")  # short enough: as it is
    assert "   ValueError: DataParallel not supported when CRF is used\n" in result.output


def test_a_long_log_keeps_its_top_and_says_it_was_cut(root, tmp_path):
    """A traceback near the top of a 10 MB log, hours of training output after it."""
    traceback = (PASTES / "pack-not-sorted--logging-exception.txt").read_text(encoding="utf-8")
    steps = "".join(f"2026-06-01 10:00:00,123 INFO step {i} loss 0.{i % 9973:04d} lr 1.0e-04\n" for i in range(170_000))
    log = tmp_path / "train.log"
    log.write_text("INFO starting\n" + traceback + steps, encoding="utf-8")
    assert log.stat().st_size > 9_000_000
    result = CliRunner().invoke(cli, ["--root", str(root), "match", str(log)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].endswith("[pack-padded-sequence-lengths-not-sorted, score 1.00]")
    assert "errkb match: the input has" in result.stderr and "characters; only the first" in result.stderr
    assert "characters; only" not in result.stdout
    result = CliRunner().invoke(cli, ["--root", str(root), "match", "--json", str(log)], catch_exceptions=False)
    assert json.loads(result.stdout)[0]["slug"] == "pack-padded-sequence-lengths-not-sorted"
    result = run(root, PASTES / "hanlp-crf-dataparallel--log-timestamps.txt")
    assert result.stderr == ""
