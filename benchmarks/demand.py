"""How much of the real demand `errkb match` answers (issue 20, not a test).

The demand sample (benchmarks/demand/, method in METHOD.md) holds real error pastes from public GitHub
issue threads, each with the family it belongs to: a record's slug when the catalog has a record for
it, another stable name otherwise ("project-bug" for errors of one project's own code). This script
builds a catalog from records/ (and verifications/) of --root into a temporary folder, runs the same
matcher `errkb match` runs (`errkb.matching.api.match` on the clipped paste, default threshold) on
each paste of the chosen split, and prints:

- coverage: pastes answered with the right record / all pastes of the split;
- precision: right answers / all answers (an answer to a paste whose family has no record is wrong);
- for each family that has a record, the share of its pastes answered with it;
- the families without a record, most frequent first (what to write next).

    python benchmarks/demand.py                       # the held-out third: never used to tune or choose wording
    python benchmarks/demand.py --split tune          # also lists the pastes answered wrongly or missed
    python benchmarks/demand.py --split all --json    # all 306; its families without a record are the demand rank
    PYTHONPATH=/path/to/main python benchmarks/demand.py --root /path/to/main   # another checkout's records

The held-out split is for reporting only: tune on `tune`, look at `held-out` when a change is done. Which
pastes were answered wrongly or missed is listed for `tune` only; other splits give the counts.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if not any(Path(entry, "errkb").is_dir() for entry in sys.path[1:] if entry):
    sys.path.insert(0, str(REPO))

from errkb import paste  # noqa: E402
from errkb.catalog import build  # noqa: E402
from errkb.matching.api import match  # noqa: E402

DATA = Path(__file__).resolve().parent / "demand"
ALIASES = DATA / "aliases.json"  # family -> the record of another slug that describes the same error (see the file)
SPLITS = {"tune": "tune.jsonl", "held-out": "held-out.jsonl"}
SEED = 20  # the number; see split()
FIELDS = {"citation", "query", "family", "raised_by", "error"}
CITATION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+#[1-9][0-9]*$")
FAMILY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_PER_REPO = 2
PROJECT_BUG = "project-bug"


def load(path: Path) -> list[dict]:
    """The entries of one JSONL file (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def repo_of(citation: str) -> str:
    """owner/repo of an `owner/repo#number` citation, lower-cased (GitHub names are case-insensitive)."""
    return citation.split("#", 1)[0].lower()


def problems(entries: list[dict]) -> list[str]:
    """What is wrong with a list of entries: fields, citation and family format, duplicates, >2 per repository."""
    found = []
    per_repo: Counter = Counter()
    seen = set()
    for entry in entries:
        name = entry.get("citation", "?")
        if set(entry) != FIELDS:
            found.append(f"{name}: fields {sorted(entry)}, expected {sorted(FIELDS)}")
        if not all(isinstance(entry.get(key), str) and entry.get(key).strip() for key in FIELDS):
            found.append(f"{name}: every field must be a non-empty string")
            continue
        if not CITATION.match(entry["citation"]):
            found.append(f"{name}: citation is not owner/repo#number")
        if not FAMILY.match(entry["family"]):
            found.append(f"{name}: family {entry['family']!r} is not kebab-case")
        if entry["citation"] in seen:
            found.append(f"{name}: cited twice")
        seen.add(entry["citation"])
        per_repo[repo_of(entry["citation"])] += 1
    found += [f"{repo}: {n} reports (at most {MAX_PER_REPO})" for repo, n in sorted(per_repo.items()) if n > MAX_PER_REPO]
    return found


def split(entries: list[dict], seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """(tune, held-out): the entries sorted by citation, shuffled with `seed`; the first third is held out.

    Each part comes back sorted by citation, as the files store it.
    """
    ordered = sorted(entries, key=lambda entry: entry["citation"])
    random.Random(seed).shuffle(ordered)
    cut = len(ordered) // 3
    by_citation = lambda entry: entry["citation"]  # noqa: E731
    return sorted(ordered[cut:], key=by_citation), sorted(ordered[:cut], key=by_citation)


def entries_of(name: str, data: Path = DATA) -> list[dict]:
    if name == "all":
        return [entry for part in SPLITS.values() for entry in load(data / part)]
    return load(data / SPLITS[name])


def build_catalog(source: Path, into: Path) -> Path:
    """A catalog at `into` built from source/records/ and the evidence beside them: verifications/ (the observed
    wordings), reproductions/ (which results are current) and keys/ (which signatures count)."""
    for folder in ("records", "reproductions", "verifications", "keys"):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, into / folder)
    build(into)
    return into


def answer(text: str, root: Path):
    """What `errkb match` answers for a paste: the best record's slug, or None ("no match")."""
    found = match(paste.clip(text).text, root=root, limit=1)
    return found[0].slug if found else None


def aliases(path: Path = ALIASES) -> dict[str, str]:
    """family -> record slug, for families named before their record took another slug."""
    if not path.exists():
        return {}
    return {family: entry["record"] for family, entry in json.loads(path.read_text(encoding="utf-8")).items()
            if not family.startswith("_")}


def evaluate(entries: list[dict], root: Path, renamed: dict[str, str] | None = None) -> dict:
    """Coverage, precision, per-family shares and the families without a record, for `entries` on catalog `root`.
    A family is counted under the record `renamed` (default: aliases.json) gives it, else under its own name."""
    slugs = {path.stem for path in (root / "records").glob("*.json")}
    renamed = aliases() if renamed is None else renamed
    rows = []
    for entry in entries:
        got = answer(entry["error"], root)
        family = renamed.get(entry["family"], entry["family"])
        rows.append({"citation": entry["citation"], "family": family, "answer": got,
                     "right": got is not None and got == family})
    answered = [row for row in rows if row["answer"] is not None]
    right = [row for row in rows if row["right"]]
    covered: dict[str, dict] = {}
    for row in rows:
        if row["family"] in slugs:
            family = covered.setdefault(row["family"], {"pastes": 0, "right": 0})
            family["pastes"] += 1
            family["right"] += row["right"]
    missing = Counter(row["family"] for row in rows if row["family"] not in slugs)
    return {
        "catalog": len(slugs),
        "pastes": len(rows),
        "with_record": sum(family["pastes"] for family in covered.values()),
        "answered": len(answered),
        "right": len(right),
        "coverage": len(right) / len(rows) if rows else 0.0,
        "precision": len(right) / len(answered) if answered else None,
        "families_with_record": dict(sorted(covered.items(), key=lambda item: (-item[1]["pastes"], item[0]))),
        "families_without_record": dict(sorted(missing.items(), key=lambda item: (-item[1], item[0]))),
        "wrong_answers": [row for row in answered if not row["right"]],
        "missed": [row for row in rows if row["family"] in slugs and not row["right"]],
    }


def share(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def report(result: dict, split_name: str, top: int) -> str:
    lines = [
        f"split: {split_name}, {result['pastes']} pastes; catalog: {result['catalog']} records",
        f"coverage:  {share(result['right'], result['pastes'])} answered with the right record",
        f"precision: {share(result['right'], result['answered'])} of the answers are right",
        f"ceiling:   {share(result['with_record'], result['pastes'])} of the pastes belong to a family that has a record",
        "",
        "families with a record (pastes answered with it):",
    ]
    for slug, family in result["families_with_record"].items():
        lines.append(f"  {share(family['right'], family['pastes']):>16}  {slug}")
    others = result["families_without_record"]
    bug = others.get(PROJECT_BUG, 0)
    general = {family: n for family, n in others.items() if family != PROJECT_BUG}
    lines += ["", f"families without a record: {len(general)} ({sum(general.values())} pastes), "
                  f"plus {bug} pastes of project-specific bugs ({PROJECT_BUG})"]
    for family, n in list(general.items())[:top]:
        lines.append(f"  {n:4}  {family}")
    if len(general) > top:
        lines.append(f"  ... {len(general) - top} more with --top")
    if isinstance(result["wrong_answers"], int):
        lines += ["", f"wrong answers: {result['wrong_answers']}; missed: {result['missed']} "
                      f"(listed for --split tune only)"]
        return "\n".join(lines)
    if result["wrong_answers"]:
        lines += ["", "wrong answers (paste family -> answered record):"]
        lines += [f"  {row['citation']}: {row['family']} -> {row['answer']}" for row in result["wrong_answers"]]
    if result["missed"]:
        lines += ["", "missed (family has a record, answer was not it):"]
        lines += [f"  {row['citation']}: {row['family']} -> {row['answer'] or 'no match'}" for row in result["missed"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="held-out", help="which pastes (default: held-out)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--root", type=Path, default=REPO, help="checkout whose records/ form the catalog (default: this one)")
    parser.add_argument("--data", type=Path, default=DATA, help=argparse.SUPPRESS)
    parser.add_argument("--top", type=int, default=25, help="families without a record to list (default 25)")
    args = parser.parse_args(argv)

    entries = entries_of(args.split, args.data)
    wrong = problems(entries_of("all", args.data))
    if wrong:
        sys.exit("benchmarks/demand: " + "; ".join(wrong))
    with tempfile.TemporaryDirectory(prefix="errkb-demand-") as tmp:
        result = evaluate(entries, build_catalog(args.root, Path(tmp)))
    if args.split != "tune":  # which held-out pastes fail is not shown: nobody tunes on them
        result["wrong_answers"], result["missed"] = len(result["wrong_answers"]), len(result["missed"])
    if args.json:
        print(json.dumps({"split": args.split, **result}, indent=2))
    else:
        print(report(result, args.split, args.top))


if __name__ == "__main__":
    main()
