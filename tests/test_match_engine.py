"""The matcher's parts: required words of a pattern, the sharded re2.Set, the index in catalog.db."""

import json
import random
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import run_cli
from reproduce_support import record_with

from errkb.matching import Matcher, match
from errkb.matching import index
from errkb.matching.patternset import PatternSet
from errkb.matching.score import THRESHOLD, opens_with
from errkb.matching.tokens import literal_words, opening_clause, required_words, word_choices, words
from errkb.patterns import compile_pattern

REPO = Path(__file__).resolve().parents[1]
PASTES = Path(__file__).parent / "data" / "pastes"
SEED = "dataparallel-not-supported-when-crf-is-used"


def catalog_entries():
    return index.entries_from_folder(REPO / "records")


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"mask of the first timestep must all be on", {"of", "the", "first", "timestep", "must", "all", "be"}),
        (r"^mask of", {"mask"}),
        (r"\bmask of\b", {"mask", "of"}),
        (r"'(Distributed)?DataParallel' object has no attribute '[^']+'", {"object", "has", "no", "attribute"}),
        (r"device (cuda|cpu) and x", {"and"}),
        (r"a+b", set()),
        (r"x\pLy", None),  # RE2-only syntax: unknown, tried on every paste
    ],
)
def test_required_words(pattern, expected):
    assert required_words(pattern) == expected


def test_required_words_are_in_every_match_of_the_catalog_patterns():
    for entry in catalog_entries():
        required = required_words(entry.pattern)
        assert required is not None, entry.slug
        assert required <= words(entry.message), entry.slug
        choices = word_choices(entry.pattern)
        assert any(choice <= words(entry.message) for choice in choices), entry.slug
        assert all(choices), f"{entry.slug}: an alternative with no anchor word would be tried on every paste"


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"x (?:failed finding central directory|Expected hasRecord\(\"version\"\) to be) y",
         [{"failed", "finding", "central", "directory"}, {"expected", "hasrecord", "version", "to", "be"}]),
        (r"cannot import '(?:container_abcs|int_classes)' x", [{"import", "container_abcs"},
                                                               {"import", "int_classes"}]),
        (r"a (b|cc)+ d", [set()]),  # alternatives inside a repeat are not spelled out: the shared words
        ("|".join(f"w{n} x" for n in range(70)), [set()]),  # past MAX_CHOICES: only the shared words
        (r"x\pLy", None),
    ],
)
def test_word_choices_give_each_alternative_its_own_words(pattern, expected):
    assert word_choices(pattern) == expected


def test_word_choices_never_miss_on_random_patterns():
    """Soundness: whenever a pattern matches a text, the text has all the words of one of its alternatives."""
    rng = random.Random(11)
    vocabulary = ["cuda", "device", "state_dict", "error", "x", "0", "lengths", "Tensor"]
    pieces = [r"\w+", r"\d+", ".", ".*", "(a|b)", "(?:cuda|device x)", "(?:error|lengths)?", "|", " ", ":", "'"]
    for _ in range(3000):
        pattern = "".join(rng.choice(vocabulary + pieces) for _ in range(rng.randint(1, 7)))
        try:
            regex = compile_pattern(pattern)
        except ValueError:
            continue
        choices = word_choices(pattern)
        for _ in range(5):
            text = " ".join(rng.choice(vocabulary + [":", "'", "a", "b", "12"]) for _ in range(rng.randint(1, 9)))
            text = rng.choice(["", " ", "z"]) + text.replace(" ", rng.choice([" ", "", "-"]))
            if regex.search(text) and choices is not None:
                assert any(choice <= words(text) for choice in choices), (pattern, text, choices)


def test_required_words_never_miss_on_random_patterns():
    """Soundness: whenever a pattern matches a text, the text has all the pattern's required words."""
    rng = random.Random(7)
    vocabulary = ["cuda", "device", "state_dict", "error", "x", "0", "lengths", "Tensor"]
    pieces = [r"\w+", r"\d+", r"\s", ".", ".*", r"[a-z]+", "(a|b)", "(?:cuda)?", "-", " ", ":", r"\(", "'", "_"]
    for _ in range(3000):
        parts = [rng.choice(vocabulary + pieces) for _ in range(rng.randint(1, 7))]
        pattern = "".join(parts)
        try:
            regex = compile_pattern(pattern)
        except ValueError:
            continue
        required = required_words(pattern)
        for _ in range(5):
            text = " ".join(rng.choice(vocabulary + [":", "(", "'", "a", "b", "12", "x_y"]) for _ in range(rng.randint(1, 9)))
            text = rng.choice(["", " ", "z"]) + text.replace(" ", rng.choice([" ", "", "-"]))
            if regex.search(text) and required is not None:
                assert required <= words(text), (pattern, text, required)


def test_literal_words_include_optional_parts():
    found = literal_words(r"only work with single-device(/multiple-device)? GPU modules( or CPU modules)?, but")
    assert {"multiple", "cpu", "gpu", "module"} <= found


def test_a_letter_in_either_case_is_wording_not_a_value():
    """`[Dd]imension` spells the word "dimension": read as a value slot, it let "list index out of range" (an
    IndexError of a project's own list, RVC-Project/Retrieval-based-Voice-Conversion-WebUI#115) pass for the
    record's "Dimension out of range (...)", the two pasted words standing in for the slot."""
    pattern = r"[Dd]imension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)"
    assert "dimension" in literal_words(pattern)
    assert required_words(r"\b[Dd]imension out of") == {"dimension", "out"}
    assert opening_clause(r"[Ee]xpected all tensors to be on the same device, but found [\w:]+") == (
        "expected all tensors to be on the same device")
    assert "ab" not in literal_words(r"x [ab]c")  # two letters are a value, not one letter in two cases
    text = (PASTES / "negative--list-index-out-of-range-checkpoint-glob.txt").read_text(encoding="utf-8")
    assert match(text, root=REPO) == []


@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"Expected all tensors to be on the same device, but found at least two devices, [\w:]+ and [\w:]+!",
         "Expected all tensors to be on the same device"),
        (r"Input and hidden tensors are not at the same device, found input tensor at [\w:]+",
         "Input and hidden tensors are not at the same device"),
        (r"^Input and hidden tensors are not at the same device; found input tensor at [\w:]+",
         "Input and hidden tensors are not at the same device"),
        # a second sentence of fixed wording tells this error from others that start alike
        (r"Expected to have finished reduction in the prior iteration before starting a new one\. This error indicates", None),
        (r"Default process group has not been initialized, please make sure to call init_process_group", None),  # no value
        (r"Attempting to deserialize object on a \w+ device but torch\.\w+\.is_available\(\) is False", None),  # value first
        (r"The size of tensor a \(\d+\) must match", None),
        (r"Input and, [\w:]+", None),  # too short to say which error
        (r"(Expected|Wanted) all tensors to be on the same device, \w+", None),  # an alternative: not plain text
        (r"DataParallel not supported when CRF is used", None),
    ],
)
def test_opening_clause(pattern, expected):
    assert opening_clause(pattern) == expected


def test_opening_clauses_of_the_catalog_are_in_their_messages():
    for entry in catalog_entries():
        clause = opening_clause(entry.pattern)
        if clause:
            assert opens_with(entry.message, clause), entry.slug


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Expected all tensors to be on the same device, but got index is on cpu", True),
        ("expected all tensors to be on the same\n  device; something else", True),  # case and a wrapped line
        ("Expected all tensors to be on the same device", True),
        ("Expected all tensors to be on the same device type, but", False),  # a longer clause
        ("Expected all tensors to be on the same dev", False),
        ("Error: Expected all tensors to be on the same device, but", False),  # only at the start
    ],
)
def test_opens_with(text, expected):
    assert opens_with(text, "Expected all tensors to be on the same device") is expected


DISPATCHER = (
    "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
    "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)"
)


def test_a_shared_opening_clause_counts_where_the_details_are_worded_otherwise():
    """PyTorch 2.x's dispatcher wording against the record of the older one, with no record of its own."""
    own = {"expected-all-tensors-on-same-device-but-got-argument", "rnn-input-and-parameters-on-different-devices"}
    entries = [e for e in catalog_entries() if e.slug not in own]  # neither wording below has its record here
    matcher = Matcher.from_entries(entries)
    found = matcher.match(DISPATCHER)
    assert [m.slug for m in found] == ["expected-all-tensors-on-same-device"]
    best = found[0]
    assert best.opening and not best.pattern and best.words > 0.7 and best.score >= THRESHOLD
    assert "opens like the record's message" in best.why() and best.to_dict()["why"]["opening"] is True
    # the look-alike of the other record with an opening clause does not open with it
    lookalike = "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cuda:0"
    assert matcher.match(lookalike) == []
    assert not any(m.opening for m in matcher.rank(lookalike))


def test_a_record_whose_pattern_matched_keeps_the_opening_clause_to_itself():
    """Two records of one error, worded by two versions: each wording's paste does not lift the other record."""
    old = index.Entry("old-wording", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                      r"Expected all tensors to be on the same device, but found at least two devices, [\w:]+ and [\w:]+!",
                      "RuntimeError")
    new = index.Entry("new-wording", DISPATCHER.split(": ", 1)[1],
                      r"Expected all tensors to be on the same device, but got \w+ is on [\w:.-]+, different from other tensors",
                      "RuntimeError")
    others = [e for e in catalog_entries() if not e.slug.startswith("expected-all-tensors-on-same-device")]
    matcher = Matcher.from_entries(others + [old, new])
    for text, right, other in [(DISPATCHER, "new-wording", "old-wording"),
                               ("RuntimeError: " + old.message, "old-wording", "new-wording")]:
        ranked = {m.slug: m for m in matcher.rank(text)}
        assert ranked[right].pattern and ranked[right].score == 1.0
        assert other in ranked  # a candidate, by its words
        assert not ranked[other].opening and ranked[other].score < THRESHOLD
    # a third wording that neither pattern knows: both records open like it
    third = "RuntimeError: Expected all tensors to be on the same device; tensor at cpu, module at cuda:1"
    assert {m.slug for m in matcher.match(third)} == {"old-wording", "new-wording"}


def test_pattern_set_agrees_with_a_plain_loop():
    """re2.Set in shards (max_mem raised) answers exactly what searching pattern by pattern answers."""
    rng = random.Random(3)
    patterns = [entry.pattern for entry in catalog_entries()]
    words_pool = ["cuda", "device", "error", "found", "tensor", "module", "lengths", "mask", "size", "dimension"]
    for n in range(2500):
        a, b = rng.sample(words_pool, 2)
        patterns.append(rf"{a} \w+ {b} {n}\b" if n % 3 else rf"(?i){a}.{{0,40}}{b} #{n}$")
    patterns.append("(unclosed")  # rejected by RE2: must match nothing, not break the set
    pattern_set = PatternSet(patterns, shard_size=1000)
    texts = [entry.message for entry in catalog_entries()]
    texts += [f"{rng.choice(words_pool)} x {rng.choice(words_pool)} {rng.randrange(2600)}" for _ in range(200)]
    texts += [f"{rng.choice(words_pool).upper()} and then {rng.choice(words_pool)} #{rng.randrange(2600)}" for _ in range(200)]
    for text in texts:
        expected = set()
        for i, pattern in enumerate(patterns):
            try:
                if compile_pattern(pattern).search(text):
                    expected.add(i)
            except ValueError:
                pass
        assert pattern_set.search(text) == expected, text


def test_no_user_text_is_compiled_as_a_regex():
    """A paste full of regex syntax is data: nothing blows up, and a catastrophic pattern costs nothing."""
    matcher = Matcher.from_entries(catalog_entries())
    evil = "RuntimeError: (a+)+$ [unclosed (?P<x> \\1 " + "a" * 5000 + "b\n" + "(((((" * 1000
    start = time.perf_counter()
    assert matcher.match(evil) == []
    # A hang guard only, not a speed check (benchmarks/ measures speed): compiled as a backtracking regex,
    # this paste would take longer than any test run.
    assert time.perf_counter() - start < 60


def build_catalog(tmp_path: Path, slugs=None) -> Path:
    (tmp_path / "records").mkdir()
    for path in sorted((REPO / "records").glob("*.json")):
        if slugs is None or path.stem in slugs:
            shutil.copy(path, tmp_path / "records")
    from errkb import catalog

    catalog.build(tmp_path)
    return tmp_path


def index_rows(conn: sqlite3.Connection) -> dict:
    return {
        "patterns": sorted(conn.execute(
            "SELECT slug, pattern, error_class, message, anchors, literals, opening FROM match_patterns"
        )),
        "anchors": sorted(conn.execute("SELECT a.word, p.slug FROM match_anchors a JOIN match_patterns p USING (id)")),
        "terms": sorted(conn.execute("SELECT term, df FROM match_terms")),
        "fts": sorted(conn.execute(
            "SELECT p.slug FROM match_fts f JOIN match_patterns p ON p.id = f.rowid WHERE match_fts MATCH 'device'"
        )),
    }


def test_index_is_built_in_catalog_db_and_kept_in_step_with_records(tmp_path):
    root = build_catalog(tmp_path)
    matcher = Matcher.open(root)
    assert matcher.source.endswith("catalog.db")
    conn = sqlite3.connect(root / "catalog.db")
    assert index.is_fresh(conn)
    n = conn.execute("SELECT count(*) FROM records").fetchone()[0]
    assert conn.execute("SELECT count(*) FROM match_patterns").fetchone()[0] == n

    # A record changes, another goes: the triggers mark them, refresh re-indexes only those.
    conn.execute("UPDATE records SET errorMessage = errorMessage || ' (changed)' WHERE slug = ?", [SEED])
    conn.execute("DELETE FROM records WHERE slug = 'torchcrf-first-timestep-mask-off'")
    conn.commit()
    assert not index.is_fresh(conn)
    assert index.refresh(conn) == 2
    conn.commit()
    incremental = index_rows(conn)

    full = sqlite3.connect(":memory:")
    conn.backup(full)
    full.execute("DELETE FROM match_meta WHERE key = 'version'")  # forces a full rebuild
    index.refresh(full)
    assert index_rows(full) == incremental
    assert index.is_fresh(conn)


def test_errkb_build_updates_an_indexed_catalog(tmp_path):
    # sqlite-utils' upsert fires the update trigger; marking the same slug twice must not fail the build.
    from errkb import catalog

    root = build_catalog(tmp_path)
    Matcher.open(root)
    path = root / "records" / f"{SEED}.json"
    data = json.loads(path.read_text())
    data["record"]["tags"].append("changed")
    path.write_text(json.dumps(data))
    assert catalog.build(root).updated == [SEED]
    assert index.is_fresh(sqlite3.connect(root / "catalog.db"))


def index_entry(root: Path, slug: str):
    conn = sqlite3.connect(root / "catalog.db")
    try:
        return conn.execute("SELECT message, pattern FROM match_patterns WHERE slug = ?", [slug]).fetchone()
    finally:
        conn.close()


@pytest.mark.parametrize("replace", [False, True], ids=["add", "add --replace"])
def test_errkb_add_indexes_the_record_for_matching_in_the_same_transaction(tmp_path, replace):
    """`errkb add` into a built catalog: the match index holds the new text when the command returns, so the
    next match pays for no refresh (read from catalog.db before any matcher opens it)."""
    root = build_catalog(tmp_path)
    slug = SEED if replace else "index-after-add-probe"
    message = "DataParallel not supported when CRF is used (reworded for the index test)"
    envelope = record_with({"slug": slug, "errorMessage": message, "messagePattern": r"reworded for the index test"})
    if replace:
        envelope["record"]["id"] = json.loads((root / "records" / f"{SEED}.json").read_text())["record"]["id"]
    incoming = tmp_path / "incoming.json"
    incoming.write_text(json.dumps(envelope), encoding="utf-8")
    assert index_entry(root, slug) != (message, r"reworded for the index test")

    result = run_cli("add", *(["--replace"] if replace else []), incoming, root=root)
    assert result.exit_code == 0, result.output
    assert ("replaced" if replace else "added") in result.output
    conn = sqlite3.connect(root / "catalog.db")
    assert conn.execute("SELECT slug FROM match_dirty").fetchall() == []
    assert index.is_fresh(conn)
    conn.close()
    assert index_entry(root, slug) == (message, r"reworded for the index test")
    assert [m.slug for m in match(f"ValueError: {message}", root=root)][:1] == [slug]


def test_build_full_rebuilds_the_index_and_its_triggers(tmp_path):
    root = build_catalog(tmp_path)
    Matcher.open(root)
    from errkb import catalog

    catalog.build(root, full=True)  # drops and recreates `records`, and with it our triggers: build restores both
    conn = sqlite3.connect(root / "catalog.db")
    assert index.is_fresh(conn)
    found = match("ValueError: DataParallel not supported when CRF is used", root=root)
    assert found[0].slug == SEED
    assert index.is_fresh(conn)


def test_matches_from_records_folder_without_a_database(tmp_path):
    (tmp_path / "records").mkdir()
    shutil.copy(REPO / "records" / f"{SEED}.json", tmp_path / "records")
    found = match("ValueError: DataParallel not supported when CRF is used", root=tmp_path)
    assert [m.slug for m in found] == [SEED]
    assert not (tmp_path / "catalog.db").exists()


def test_read_only_catalog_is_indexed_in_memory(tmp_path, monkeypatch):
    root = build_catalog(tmp_path, {SEED})
    conn = sqlite3.connect(root / "catalog.db")
    conn.executescript(index._DROP)  # a catalog whose index is missing (built by an older errkb)
    conn.close()

    def refuse(conn):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(index, "refresh", refuse)
    matcher = Matcher.open(root)
    assert matcher.source.endswith("catalog.db")
    assert matcher.match("ValueError: DataParallel not supported when CRF is used")[0].slug == SEED
    assert not index._has_table(sqlite3.connect(root / "catalog.db"), "match_patterns")


def test_match_api_reuses_the_matcher_until_records_change(tmp_path):
    from errkb.matching.api import matcher_for

    (tmp_path / "records").mkdir()
    shutil.copy(REPO / "records" / f"{SEED}.json", tmp_path / "records")
    first = matcher_for(tmp_path)
    assert matcher_for(tmp_path) is first
    shutil.copy(REPO / "records" / "torchcrf-first-timestep-mask-off.json", tmp_path / "records")
    assert matcher_for(tmp_path) is not first
    assert match("ValueError: mask of the first timestep must all be on", root=tmp_path)[0].slug == "torchcrf-first-timestep-mask-off"


def test_a_message_of_quoted_values_only_is_explained_by_no_record_s_words():
    """"KeyError: 'model'" names a dict key and nothing else; its one word, quoted, is not wording that a record's
    message ('Unknown model (resnet_18)', timm-unknown-model) can explain (edwardnguyen1705/robotic-grasping-cornell#11
    loads checkpoint['model'] from a file saved without that key)."""
    from errkb.matching.score import coverage
    from errkb.matching.tokens import terms

    record = [(term, term != "resnet_18") for term, _ in terms("Unknown model (resnet_18)")]
    assert coverage(terms("'model'"), record, lambda term: 1.0) == (0.0, 0.0)
    assert coverage(terms("Unknown model 'vit_h'"), record, lambda term: 1.0)[0] > 0.5  # wording of its own: compared
    text = (PASTES / "negative--keyerror-model-checkpoint-dict.txt").read_text(encoding="utf-8")
    assert match(text, root=REPO) == []


def test_each_alternative_of_a_pattern_keeps_its_own_anchor(tmp_path):
    """Two wordings that share no word: each has an anchor row, after `errkb add` (incremental) and after a full
    rebuild, and a paste of either wording reaches the pattern."""
    root = build_catalog(tmp_path)
    slug = "two-wordings-probe"
    pattern = r"(?:zzqx first wording|yyqw second phrasing) of the probe"
    envelope = record_with({"slug": slug, "errorMessage": "zzqx first wording of the probe", "messagePattern": pattern})
    incoming = tmp_path / "incoming.json"
    incoming.write_text(json.dumps(envelope), encoding="utf-8")
    assert run_cli("add", incoming, root=root).exit_code == 0

    def anchors(conn):
        return sorted(word for (word,) in conn.execute(
            "SELECT a.word FROM match_anchors a JOIN match_patterns p USING (id) WHERE p.slug = ?", [slug]))

    conn = sqlite3.connect(root / "catalog.db")
    assert anchors(conn) == ["phrasing", "wording"]
    full = sqlite3.connect(":memory:")
    conn.backup(full)
    full.execute("DELETE FROM match_meta WHERE key = 'version'")
    index.refresh(full)
    assert anchors(full) == ["phrasing", "wording"] and index_rows(full) == index_rows(conn)
    for wording in ("zzqx first wording of the probe", "yyqw second phrasing of the probe"):
        assert [m.slug for m in match(f"ValueError: {wording}", root=root)][:1] == [slug]


BARE_IN_TORCH = (
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    loss.backward()\n'
    '  File "/opt/conda/lib/python3.6/site-packages/torch/autograd/function.py", line 181, in backward\n'
    "    raise NotImplementedError\nNotImplementedError\n"
)


@pytest.mark.parametrize("text, expected", [
    (BARE_IN_TORCH, "autograd-function-backward-not-implemented"),
    # the start of the frame line cut off in the paste
    ('    loss.backward()\n......\ntorch/autograd/function.py", line 181, in backward\n    raise NotImplementedError\n'
     "NotImplementedError", "autograd-function-backward-not-implemented"),
    # raised in the user's own file: no record's raise site
    (BARE_IN_TORCH.replace("/opt/conda/lib/python3.6/site-packages/torch/autograd/function.py", "/home/u/model.py"), None),
    # another class in the same file
    (BARE_IN_TORCH.replace("NotImplementedError\n", "KeyError\n"), None),
])
def test_a_bare_exception_is_named_by_the_frame_that_raised_it(text, expected):
    found = Matcher.from_folder(REPO).match(text)
    assert (found[0].slug if found else None) == expected


@pytest.mark.parametrize("text, expected", [
    # Python 3.10+ names the class; the record's pattern accepts it
    ("TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'", "peft-config-from-newer-peft"),
    # the same words for another class (torchvision's old model constructors): not the peft record's error
    ("TypeError: __init__() got an unexpected keyword argument 'pretrained'", None),
    ("TypeError: ResNet.__init__() got an unexpected keyword argument 'pretrained'", None),
])
def test_a_method_of_one_class_is_that_class_s_error(text, expected):
    found = [m.slug for m in Matcher.from_folder(REPO).match(text)]
    if expected:
        assert found[:1] == [expected]
    else:
        assert "peft-config-from-newer-peft" not in found
