"""The paste set: one realistic paste per file in tests/data/pastes/, its expected record in expected.json.

expected.json maps a file name to a slug, to null (nothing in the catalog may be claimed), or to an
object: {"slug": slug or null, "source": URL of the public issue the paste comes from, "held_out":
true for pastes the matcher was not tuned on, "known_miss": "why" for a paste it is known to get
wrong (xfail)}.
A paste whose record is not in records/ yet is skipped. `benchmarks/match_quality.py` reports
top-1 accuracy and no-match precision over the same set.
"""

import json
from pathlib import Path

import pytest

from errkb.matching import Matcher

REPO = Path(__file__).resolve().parents[1]
PASTES = Path(__file__).parent / "data" / "pastes"
EXPECTED = json.loads((PASTES / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def matcher() -> Matcher:
    return Matcher.from_folder(REPO)  # records/ and the wordings observed in verifications/


def test_every_paste_has_an_expectation_and_back():
    files = {path.name for path in PASTES.glob("*.txt")}
    assert files == set(EXPECTED)


def test_paste_set_covers_every_record_and_has_negatives():
    slugs = {path.stem for path in (REPO / "records").glob("*.json")}
    expected = {_slug(value) for value in EXPECTED.values()}
    assert slugs <= expected, f"records without a paste: {sorted(slugs - expected)}"
    assert sum(_slug(value) is None for value in EXPECTED.values()) >= 8


def _slug(value):
    return value["slug"] if isinstance(value, dict) else value


def test_pastes_from_issues_cite_their_source_and_keep_a_held_out_part():
    sourced = {name: value for name, value in EXPECTED.items() if isinstance(value, dict) and "source" in value}
    assert len(sourced) >= 30
    assert all(value["source"].startswith("https://github.com/") for value in sourced.values())
    held_out = [value for value in sourced.values() if value.get("held_out")]
    assert len(held_out) >= 10 and any(value["slug"] is None for value in held_out)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_paste(name: str, matcher: Matcher):
    expected = EXPECTED[name]
    known_miss = expected.get("known_miss") if isinstance(expected, dict) else None
    if isinstance(expected, dict):
        expected = expected["slug"]
    if expected and not (REPO / "records" / f"{expected}.json").exists():
        pytest.skip(f"record {expected} is not in records/ yet")
    found = matcher.match((PASTES / name).read_text(encoding="utf-8"))
    right = found == [] if expected is None else bool(found) and found[0].slug == expected
    if known_miss:
        # A known miss is still run: once the matcher gets it right, the entry must say so (drop known_miss).
        assert not right, f"{name} is answered right now: remove its known_miss ({known_miss})"
        pytest.xfail(f"known miss: {known_miss}")
    if expected is None:
        assert found == [], f"claimed {[(m.slug, m.score, m.why()) for m in found]} for a paste no record explains"
    else:
        assert found, f"no match; best candidates: {[(m.slug, m.score) for m in matcher.rank((PASTES / name).read_text())[:3]]}"
        assert found[0].slug == expected, [(m.slug, m.score, m.why()) for m in found]
