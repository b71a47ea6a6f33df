"""How well `errkb match` answers on the paste set, and where its threshold should sit (not a test).

Runs the matcher (records/ of this checkout) on every file of tests/data/pastes/ and prints:
- top-1 accuracy over the pastes whose record is in the catalog (known misses included);
- no-match precision: of the pastes answered "no match", how many really have no record;
- negatives rejected: of the pastes with no record, how many got "no match";
- the threshold the data allows: every wrong record (any rank, any paste) must score below it and
  every right top-1 at or above it; the midpoint of that gap is the suggested THRESHOLD.

    python benchmarks/match_quality.py [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", action="store_true", help="print the top candidates of every paste")
    args = parser.parse_args()

    from errkb.matching import Matcher
    from errkb.matching.index import entries_from_folder
    from errkb.matching.score import THRESHOLD

    pastes = REPO / "tests" / "data" / "pastes"
    expected = json.loads((pastes / "expected.json").read_text(encoding="utf-8"))
    matcher = Matcher.from_entries(entries_from_folder(REPO / "records"), "records/")
    slugs = {row[0] for row in matcher.conn.execute("SELECT slug FROM match_patterns")}

    right_top, wrong_any, misses = [], [], []
    positives = correct = answered_none = none_right = negatives = negatives_rejected = 0
    for name, want in sorted(expected.items()):
        known_miss = isinstance(want, dict)
        slug = want["slug"] if known_miss else want
        if slug and slug not in slugs:
            continue
        ranked = matcher.rank((pastes / name).read_text(encoding="utf-8"))
        top = ranked[0] if ranked and ranked[0].score >= THRESHOLD else None
        for m in ranked:
            if m.slug != slug:
                wrong_any.append((m.score, name, m.slug))
        if slug:
            positives += 1
            correct += bool(top and top.slug == slug)
            if not known_miss:
                score = next((m.score for m in ranked if m.slug == slug), 0.0)
                right_top.append((score, name))
            if not (top and top.slug == slug):
                misses.append(name)
        else:
            negatives += 1
            negatives_rejected += top is None
        if top is None:
            answered_none += 1
            none_right += slug is None
        if args.verbose:
            print(f"{name}  (expected {slug})")
            for m in ranked[:3]:
                print(f"    {m.slug:48} {m.score:.3f}  {m.why()}  covered {m.covered:.2f} present {m.present:.2f}")

    print(f"catalog: {len(slugs)} records; paste set: {positives} with a record, {negatives} without")
    print(f"top-1 accuracy: {correct}/{positives} = {correct / max(positives, 1):.1%}"
          + (f"  (missed: {', '.join(misses)})" if misses else ""))
    print(f"no-match precision: {none_right}/{answered_none} = {none_right / max(answered_none, 1):.1%}")
    print(f"negatives rejected: {negatives_rejected}/{negatives} = {negatives_rejected / max(negatives, 1):.1%}")
    highest_wrong = max(wrong_any, default=(0.0, "-", "-"))
    lowest_right = min(right_top, default=(1.0, "-"))
    print(f"highest wrong score: {highest_wrong[0]:.3f} ({highest_wrong[2]} for {highest_wrong[1]})")
    print(f"lowest right score:  {lowest_right[0]:.3f} ({lowest_right[1]})")
    if highest_wrong[0] < lowest_right[0]:
        print(f"threshold: any value in ({highest_wrong[0]:.3f}, {lowest_right[0]:.3f}] separates them; "
              f"midpoint {(highest_wrong[0] + lowest_right[0]) / 2:.3f}; in use {THRESHOLD}")
    else:
        print(f"threshold: no value separates them; in use {THRESHOLD}")


if __name__ == "__main__":
    main()
