"""What the matcher puts first (the exception that ended the run), and how it generalises: quoted
messages, wordings observed by reproduction runs, and generic messages judged by their surroundings."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from errkb import catalog
from errkb.matching import THRESHOLD, Matcher
from errkb.matching.matcher import wordings_from_results
from trust_support import catalog_with, result, write
from errkb.matching.score import situation_terms

REPO = Path(__file__).resolve().parents[1]
PASTES = Path(__file__).parent / "data" / "pastes"
RANKING = Path(__file__).parent / "data" / "ranking"  # pastes that two or three records explain
OLD_WORDING = "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_addmm"

WARNING_THEN_FATAL = (Path(__file__).parent / "data" / "warning-then-fatal.txt").read_text(encoding="utf-8")
SIZE_MISMATCH = "RuntimeError: The size of tensor a (17) must match the size of tensor b (64) at non-singleton dimension 1\n"


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher.from_folder(REPO)


def test_the_exception_that_ended_the_run_comes_before_a_warning(matcher: Matcher):
    found = matcher.match(WARNING_THEN_FATAL)
    assert [m.slug for m in found] == ["dataparallel-object-has-no-attribute", "dataparallel-gather-scalars-warning"]
    assert [m.seen_as for m in found] == ["final", "warning"]
    assert found[1].score == 1.0 and found[1].also_seen and not found[0].also_seen
    assert found[0].why() == "pattern matched the final exception line; same class"
    assert found[1].why() == "pattern matched a warning in the paste; same class"


def test_a_handled_exception_comes_after_the_one_that_ended_the_run(matcher: Matcher):
    text = (
        "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
        "AttributeError: 'DataParallel' object has no attribute 'predict'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n  File \"a.py\", line 5, in <module>\n"
        "ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 8])\n"
    )
    found = matcher.match(text)
    assert [(m.slug, m.seen_as) for m in found] == [
        ("batchnorm-one-value-per-channel", "final"), ("dataparallel-object-has-no-attribute", "earlier")]


def test_why_has_no_numbers(matcher: Matcher):
    for m in matcher.match((PASTES / "cuda-checkpoint--old-map-location-cpu.txt").read_text()):
        assert not any(char.isdigit() for char in m.why()), m.why()


def test_a_message_quoted_in_a_sentence_is_matched_alone(matcher: Matcher):
    text = ("I keep getting `Default process group has not been initialized, please make sure to call "
            "init_process_group` when I start training on one GPU, any idea?")
    found = matcher.match(text)
    assert found and found[0].slug == "default-process-group-not-initialized"
    assert found[0].seen_as == "message"


def test_observed_wordings_are_alternative_messages(tmp_path: Path):
    plain = Matcher.from_folder(REPO)
    paste = f"RuntimeError: {OLD_WORDING}\n"
    assert plain.match(paste) == []
    root = catalog_with(tmp_path / "catalog", "expected-all-tensors-on-same-device")
    old = "Expected object of device type cuda but got device type cpu for argument #2 'mat2' in call to _th_mm"
    write(root, result(root, "expected-all-tensors-on-same-device", "verified", torch="1.4.0", message=old))
    observed = wordings_from_results(root / "verifications")
    learned = Matcher.from_folder(REPO)
    assert learned.add_wordings(observed) == 1
    found = learned.match(paste)
    assert found and found[0].slug == "expected-all-tensors-on-same-device"
    assert found[0].observed and "a wording seen in reproduction runs" in found[0].why()


def test_observed_wordings_are_read_from_the_catalog_database(tmp_path: Path):
    (tmp_path / "records").mkdir()
    shutil.copy(REPO / "records" / "expected-all-tensors-on-same-device.json", tmp_path / "records")
    catalog.build(tmp_path)
    with sqlite3.connect(tmp_path / "catalog.db") as conn:  # build made the table; a result file would fill it
        conn.execute("INSERT INTO observed_messages (slug, message) VALUES (?, ?)", ["expected-all-tensors-on-same-device", OLD_WORDING])
    found = Matcher.open(tmp_path).match(f"RuntimeError: {OLD_WORDING.replace('addmm', 'mm')}\n")
    assert found and found[0].slug == "expected-all-tensors-on-same-device"


def test_a_generic_message_needs_the_records_situation_in_the_paste(matcher: Matcher):
    unrelated = (
        "Traceback (most recent call last):\n"
        '  File "augment.py", line 88, in mixup\n'
        "    mixed = lam * images + (1 - lam) * images[index]\n" + SIZE_MISMATCH
    )
    crf = (
        "Traceback (most recent call last):\n"
        '  File "tagger/crf_layer.py", line 52, in _log_partition\n'
        "    alpha = alpha.unsqueeze(1) + self.trans\n" + SIZE_MISMATCH
    )
    # Ordinary broadcasting: the general record answers; the CRF record stays below the threshold.
    assert [m.slug for m in matcher.match(unrelated)] == ["broadcast-tensor-size-must-match"]
    crf_rank = next(m for m in matcher.rank(unrelated) if m.slug == "crf-forward-size-mismatch")
    assert crf_rank.pattern and crf_rank.score < THRESHOLD
    assert "nothing else in the paste points to this record's situation" in crf_rank.why()
    found = matcher.match(crf)
    assert found and found[0].slug == "crf-forward-size-mismatch" and found[0].score >= 0.9


def test_which_messages_are_generic():
    records = {path.stem: json.loads(path.read_text())["record"] for path in (REPO / "records").glob("*.json")}
    generic = {slug for slug, r in records.items() if situation_terms(slug, r["tags"], r["errorMessage"]) is not None}
    # the torch.load records' messages name no topic of theirs: pastes must show torch.load/serialization frames;
    # torch-too-old-for-code's message names none of its tags either (its attribute-error tag is the class name);
    # "'GCNConv' object has no attribute 'weight'" could be any project's own layer: a paste must show PyG;
    # "numpy.core.multiarray failed to import" is also numpy too old for a NumPy 1.x build: a paste must show NumPy 2
    assert generic == {"crf-forward-size-mismatch", "torch-load-file-is-not-a-checkpoint",
                       "torch-load-pickled-class-not-importable", "torch-too-old-for-code", "pyg-gcnconv-weight-moved-to-lin",
                       "numpy-2-abi-incompatible-module"}


@pytest.mark.parametrize("paste", [
    'RuntimeError: Error(s) in loading state_dict for Net: Unexpected key(s) in state_dict: "module.fc.weight"',
    'RuntimeError: Error(s) in loading state_dict for DataParallel:\n\tMissing key(s) in state_dict: "module.fc.weight", '
    '"module.fc.bias". \n\tUnexpected key(s) in state_dict: "fc.weight", "fc.bias". ',
])
def test_state_dict_prefix_in_both_directions(matcher: Matcher, paste: str):
    found = matcher.match(paste)
    assert found and found[0].slug == "state-dict-keys-have-module-prefix" and found[0].pattern


def test_state_dict_keys_prefixed_on_both_sides_are_another_problem(matcher: Matcher):
    paste = ('RuntimeError: Error(s) in loading state_dict for DataParallel:\n\tMissing key(s) in state_dict: '
             '"module.bn.weight". \n\tUnexpected key(s) in state_dict: "module.bn1.weight". ')
    assert all(not m.pattern for m in matcher.rank(paste) if m.slug == "state-dict-keys-have-module-prefix")


def test_a_catalog_database_knows_the_situations_too(tmp_path: Path):
    (tmp_path / "records").mkdir()
    shutil.copy(REPO / "records" / "crf-forward-size-mismatch.json", tmp_path / "records")
    catalog.build(tmp_path)
    opened = Matcher.open(tmp_path)
    assert opened.match(SIZE_MISMATCH) == []
    assert opened.match("  File \"model/crf.py\", line 40, in forward\n" + SIZE_MISMATCH)[0].slug == "crf-forward-size-mismatch"


def test_an_observed_wording_keeps_the_words_its_record_spells_out():
    learned = Matcher.from_folder(REPO)
    learned.add_wordings({"dataparallel-object-has-no-attribute": ["'DataParallel' object has no attribute 'predict'"]})
    assert learned.match("AttributeError: 'Net' object has no attribute 'module'\n") == []


# Each paste, with the records that explain it, in the order the matcher must give them and where each was seen.
SEVERAL = {
    # Two warnings, then the exception that ended the run: the fatal one first, then the warnings, closest first.
    "two-warnings-then-fatal.txt": [
        ("dataparallel-object-has-no-attribute", "final"),
        ("dataparallel-gather-scalars-warning", "warning"),
        ("rnn-weights-not-contiguous", "warning"),
    ],
    # A chained exception: a generic shape message in CRF code (its situation is in the paste), then, while
    # handling it, torchcrf's specific one, which ended the run.
    "crf-shape-error-then-torchcrf-chained.txt": [
        ("torchcrf-emissions-must-have-3-dimensions", "final"),
        ("crf-forward-size-mismatch", "earlier"),
        ("broadcast-tensor-size-must-match", "earlier"),  # the generic broadcasting record explains it too
    ],
    # One message three records explain: prefixed keys and a size mismatch in the same load_state_dict error,
    # then the generic missing/unexpected-keys record: true of the Missing/Unexpected lines (checkpoint names
    # that do not line up with the model's), but the "module." prefix is the closer cause, so it comes last.
    "state-dict-prefix-and-size-mismatch.txt": [
        ("state-dict-keys-have-module-prefix", "final"),
        ("state-dict-size-mismatch", "final"),
        ("state-dict-missing-or-unexpected-keys", "final"),
    ],
}


@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_several_records_above_the_threshold_come_in_order(matcher: Matcher, name: str):
    found = matcher.match((RANKING / name).read_text(encoding="utf-8"))
    assert [(m.slug, m.seen_as) for m in found] == SEVERAL[name], [(m.slug, m.seen_as, m.score) for m in found]
    for first, second in zip(found, found[1:]):  # within a place of the paste, the higher score first
        if first.seen_as == second.seen_as:
            assert first.score >= second.score, (first.slug, first.score, second.slug, second.score)


@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_rank_puts_the_matches_first_and_in_the_same_order(matcher: Matcher, name: str):
    text = (RANKING / name).read_text(encoding="utf-8")
    ranked = matcher.rank(text)
    assert [m.slug for m in ranked[: len(SEVERAL[name])]] == [slug for slug, _ in SEVERAL[name]]
    below = [m.score for m in ranked[len(SEVERAL[name]):]]
    assert below and max(below) < THRESHOLD and below == sorted(below, reverse=True)
