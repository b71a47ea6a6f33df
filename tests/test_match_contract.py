"""Issue 18 Must 7 (the matcher) and WORDINGS with match "matcher": what a reproduction declares `errkb match`
returns must come back from the built catalog, and the red-team findings stay fixed. The pastes themselves are in
tests/data/pastes (device-assert--lowercase-cuda-error, device-assert--kernel-lines-only,
negative--tensor-no-attribute-edge-index), checked by test_match_pastes.py."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from errkb import catalog
from errkb.matching import Matcher
from errkb.matching.matcher import wordings_from_results
from errkb.patterns import PatternError, compile_pattern
from errkb.reproduce.contract import ContractError, read_contract
from errkb.verifications import current_hashes
from trust_support import catalog_with, result, write

PASTES = Path(__file__).parent / "data" / "pastes"
DEVICE_ASSERT = "cuda-device-side-assert-triggered"
TARGET = "cross-entropy-target-out-of-bounds"
KERNEL_ASSERT = "Assertion `t >= 0 && t < n_classes` failed."


def matcher_misses(root: Path) -> list[str]:
    """Each wording a reproduction declares with match "matcher" that `errkb match` (over the built catalog.db)
    does not answer with that record first."""
    declared = []
    for path in sorted((root / "reproductions").glob("*.py")):
        try:
            contract = read_contract(path)
        except ContractError:
            continue  # errkb validate reports it
        declared += [(path.stem, w.text) for w in contract.wordings if w.match == "matcher"]
    if not declared:
        return []
    assert run_cli("build", root=root).exit_code == 0
    matcher = Matcher.open(root)
    misses = []
    for slug, text in declared:
        found = matcher.match(text)
        if not found or found[0].slug != slug:
            misses.append(f"{slug}: {text!r} -> {[m.slug for m in found] or 'no match'}")
    return misses


def test_every_declared_matcher_wording_is_matched_by_the_catalog(tmp_path):
    root = tmp_path / "catalog"
    for folder in ("records", "reproductions", "verifications", "keys"):  # keys: to verify the results
        shutil.copytree(REPO / folder, root / folder)
    assert matcher_misses(root) == []


def test_a_declared_matcher_wording_nobody_matches_is_caught(tmp_path):
    root = tmp_path / "catalog"
    for folder in ("records", "reproductions"):
        shutil.copytree(REPO / folder, root / folder)
    path = root / "reproductions" / f"{TARGET}.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nWORDINGS = [{\"text\": \"Embedding table lookup out of range at row 7\", "
                    "\"source\": \"pytorch/pytorch#1\", \"match\": \"matcher\"}]\n", encoding="utf-8")
    assert matcher_misses(root) == [f"{TARGET}: 'Embedding table lookup out of range at row 7' -> no match"]


def test_kernel_assertion_lines_lead_to_the_device_side_assert_record():
    found = Matcher.from_folder(REPO).match((PASTES / "device-assert--kernel-lines-only.txt").read_text(encoding="utf-8"))
    assert found and found[0].slug == DEVICE_ASSERT


def test_kernel_assertion_lines_lead_to_a_record_whose_pattern_covers_the_assertion(tmp_path):
    """With the target record's pattern accepting the kernel's assertion, both records come back, device-side
    assert first (the error the run ends with)."""
    (tmp_path / "records").mkdir()
    for slug in (DEVICE_ASSERT, TARGET, "embedding-index-out-of-range"):
        shutil.copy(REPO / "records" / f"{slug}.json", tmp_path / "records")
    path = tmp_path / "records" / f"{TARGET}.json"
    envelope = json.loads(path.read_text(encoding="utf-8"))
    envelope["record"]["messagePattern"] += r"|Assertion `t >= 0 && t < n_classes` failed"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    found = Matcher.from_folder(tmp_path).match((PASTES / "device-assert--kernel-lines-only.txt").read_text(encoding="utf-8"))
    assert [m.slug for m in found][:2] == [DEVICE_ASSERT, TARGET]


def test_a_paste_that_holds_the_device_side_assert_gets_no_second_one():
    text = f"Loss.cu:250: kernel: block: [0,0,0], thread: [3,0,0] {KERNEL_ASSERT}\nRuntimeError: CUDA error: device-side assert triggered\n"
    found = Matcher.from_folder(REPO).match(text)
    assert found[0].slug == DEVICE_ASSERT and found[0].seen_as == "final"


def test_a_quoted_name_in_place_of_the_records_own_is_no_match():
    matcher = Matcher.from_folder(REPO)
    assert matcher.match("AttributeError: 'Tensor' object has no attribute 'edge_index'") == []
    found = matcher.match("AttributeError: 'DataParallel' object has no attribute 'edge_index'")
    assert found and found[0].slug == "dataparallel-object-has-no-attribute"


@pytest.mark.parametrize("pattern", [r"\d", r"\d+", "Error", r"\S+: \S+", "e"])
def test_a_pattern_that_matches_almost_any_error_line_is_refused(pattern):
    with pytest.raises(PatternError, match="matches (almost )?any"):
        compile_pattern.__wrapped__(pattern)


def test_every_catalog_pattern_is_specific_enough():
    for path in sorted((REPO / "records").glob("*.json")):
        compile_pattern.__wrapped__(json.loads(path.read_text(encoding="utf-8"))["record"]["messagePattern"])


def test_skipped_and_stale_results_do_not_feed_the_matcher(tmp_path):
    slug = "expected-all-tensors-on-same-device"
    root = catalog_with(tmp_path / "catalog", slug)
    write(root, result(root, slug, "verified", torch="2.1.2", message="current wording"))
    skipped = result(root, slug, "skipped", torch="2.5.1", message="skipped wording")
    skipped["stages"][0]["message"], skipped["observedMessages"] = "skipped wording", ["skipped wording"]
    write(root, skipped)
    write(root, result(root, slug, "verified", torch="2.9.1", message="stale wording", recordHash="0" * 64))
    write(root, result(root, slug, "wrong-error", torch="2.7.1", message="another error's wording"))
    assert wordings_from_results(root / "verifications") == {slug: ["current wording"]}


def test_a_built_catalog_keeps_only_current_wordings(tmp_path):
    slug = "expected-all-tensors-on-same-device"
    for folder in ("records", "reproductions"):
        (tmp_path / folder).mkdir()
    shutil.copy(REPO / "records" / f"{slug}.json", tmp_path / "records")
    shutil.copy(REPO / "reproductions" / f"{slug}.py", tmp_path / "reproductions")
    (result,) = [p for p in sorted((REPO / "verifications" / slug).glob("*.json"))
                 if json.loads(p.read_text())["verdict"] != "skipped" and json.loads(p.read_text())["observedMessages"]][:1]
    (tmp_path / "verifications" / slug).mkdir(parents=True)
    data = json.loads(result.read_text(encoding="utf-8"))
    data["recordHash"], data["reproductionHash"] = current_hashes(tmp_path, slug)
    (tmp_path / "verifications" / slug / result.name).write_text(json.dumps(data), encoding="utf-8")
    catalog.build(tmp_path, trust_unsigned=True)  # the copy is unsigned: this machine trusts it
    assert _observed(tmp_path) == set(data["observedMessages"])
    reproduction = tmp_path / "reproductions" / f"{slug}.py"
    reproduction.write_text(reproduction.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    catalog.build(tmp_path, trust_unsigned=True)  # the result is stale now: its wording no longer speaks for the record
    assert _observed(tmp_path) == set()


def _observed(root: Path) -> set[str]:
    with sqlite3.connect(root / "catalog.db") as conn:
        return {row[0] for row in conn.execute("SELECT message FROM observed_messages")}
