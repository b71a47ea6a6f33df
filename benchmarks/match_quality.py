"""How well `errkb match` answers on the paste set, and where its threshold should sit (not a test).

Runs the matcher (records/ of this checkout) on every file of tests/data/pastes/ and prints, for
each part of the set (the original pastes, the new pastes from public issues tuned on, and the
held-out pastes nobody tuned on):
- top-1 accuracy over the pastes whose record is in the catalog (known misses included);
- no-match precision: of the pastes answered "no match", how many really have no record;
- negatives rejected: of the pastes with no record, how many got "no match".
Then, over every paste, the threshold the data allows: every wrong record (any rank, any paste)
must score below it and every right top-1 at or above it.

    python benchmarks/match_quality.py [--verbose] [--json]
    PYTHONPATH=/path/to/main python benchmarks/match_quality.py --root /path/to/main   # "before": main's matcher and records
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if not any(Path(entry, "errkb").is_dir() for entry in sys.path[1:] if entry):
    sys.path.insert(0, str(REPO))

PARTS = ("old", "new", "held-out")


def expectation(value) -> dict:
    """One entry of expected.json as a dict: slug (None: no record), known_miss, source, held_out."""
    if isinstance(value, dict):
        return value
    return {"slug": value}


def part_of(entry: dict) -> str:
    if entry.get("held_out"):
        return "held-out"
    return "new" if entry.get("source") else "old"


def evaluate(matcher, pastes: Path, verbose: bool = False) -> dict:
    from errkb.matching.score import THRESHOLD

    expected = json.loads((pastes / "expected.json").read_text(encoding="utf-8"))
    slugs = {row[0] for row in matcher.conn.execute("SELECT slug FROM match_patterns")}
    stats = {part: {"positives": 0, "correct": 0, "answered_none": 0, "none_right": 0, "negatives": 0,
                    "negatives_rejected": 0, "misses": []} for part in PARTS}
    right_top, wrong_any = [], []
    for name, value in sorted(expected.items()):
        entry = expectation(value)
        slug = entry.get("slug")
        if slug and slug not in slugs:
            continue
        part = stats[part_of(entry)]
        ranked = matcher.rank((pastes / name).read_text(encoding="utf-8"))
        top = ranked[0] if ranked and ranked[0].score >= THRESHOLD else None
        wrong_any += [(m.score, name, m.slug) for m in ranked if m.slug != slug]
        if slug:
            part["positives"] += 1
            part["correct"] += bool(top and top.slug == slug)
            if not entry.get("known_miss"):
                right_top.append((next((m.score for m in ranked if m.slug == slug), 0.0), name))
            if not (top and top.slug == slug):
                part["misses"].append(name)
        else:
            part["negatives"] += 1
            part["negatives_rejected"] += top is None
            if top is not None:
                part["misses"].append(name)
        if top is None:
            part["answered_none"] += 1
            part["none_right"] += slug is None
        if verbose:
            print(f"{name}  (expected {slug})")
            for m in ranked[:3]:
                print(f"    {m.slug:48} {m.score:.3f}  {m.why()}")
    return {"parts": stats, "right_top": right_top, "wrong_any": wrong_any, "catalog": len(slugs)}


def share(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verbose", action="store_true", help="print the top candidates of every paste")
    parser.add_argument("--json", action="store_true", help="print the per-part figures as JSON")
    parser.add_argument("--root", type=Path, default=REPO, help="catalog whose records/ are matched (default: this checkout)")
    args = parser.parse_args()

    from errkb.matching import Matcher
    from errkb.matching.score import THRESHOLD

    if hasattr(Matcher, "from_folder"):
        matcher = Matcher.from_folder(args.root)
    else:  # an older errkb (PYTHONPATH=<checkout of main>) for the "before" figures
        from errkb.matching.index import entries_from_folder

        matcher = Matcher.from_entries(entries_from_folder(args.root / "records"), "records/")
    result = evaluate(matcher, REPO / "tests" / "data" / "pastes", args.verbose)
    if args.json:
        print(json.dumps(result["parts"], indent=2))
        return
    print(f"catalog: {result['catalog']} records")
    print(f"{'part':9} {'top-1 accuracy':>18} {'no-match precision':>20} {'negatives rejected':>20}")
    for name, part in result["parts"].items():
        print(f"{name:9} {share(part['correct'], part['positives']):>18} "
              f"{share(part['none_right'], part['answered_none']):>20} "
              f"{share(part['negatives_rejected'], part['negatives']):>20}")
        if part["misses"]:
            print(f"          wrong: {', '.join(part['misses'])}")
    highest_wrong = max(result["wrong_any"], default=(0.0, "-", "-"))
    lowest_right = min(result["right_top"], default=(1.0, "-"))
    print(f"highest wrong score: {highest_wrong[0]:.3f} ({highest_wrong[2]} for {highest_wrong[1]})")
    print(f"lowest right score:  {lowest_right[0]:.3f} ({lowest_right[1]})")
    if highest_wrong[0] < lowest_right[0]:
        print(f"threshold: any value in ({highest_wrong[0]:.3f}, {lowest_right[0]:.3f}] separates them; "
              f"midpoint {(highest_wrong[0] + lowest_right[0]) / 2:.3f}; in use {THRESHOLD}")
    else:
        print(f"threshold: no value separates them; in use {THRESHOLD}")


if __name__ == "__main__":
    main()
