"""How fast `errkb match` is on a 100,000-record catalog (a benchmark, not a test).

Generates, in a temporary folder, a catalog.db of N records shaped like the seed (the real records
of records/ as templates: every field, ~6.7 KB each, messages reworded with words drawn from a
Zipf-distributed vocabulary, each pattern tolerating its message's values), builds the match
index, then measures:
- warm match: one Matcher, many pastes (~2 KB tracebacks around a record's message, and misses): p50/p95;
- cold `errkb match FILE`: a fresh process each time, wall time;
- a naive loop over the same patterns compiled with Python `re`, on the same pastes;
- for context, a sharded re2.Set over all patterns (its build time is why it is not used per command).

    python benchmarks/match_speed.py            # 100,000 records
    python benchmarks/match_speed.py --records 20000 --pastes 100
Targets: warm p95 <= 20 ms, cold <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COMMON = """the a of to in and is not for on with at by be was were device tensor module argument expected
got found size dimension input output must should cannot when but type value parameter shape error
invalid missing unexpected key state process group batch gradient memory index sequence length
weight bias layer model training loss optimizer rank world backend call function method""".split()


def vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "to", "ri", "mu", "sen", "dor", "vel", "qi", "an", "lo", "pre", "tor", "ix", "un", "al"]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return COMMON + sorted(words)


def zipf_word(rng: random.Random, words: list[str]) -> str:
    """Rank r drawn with P(r <= k) = log k / log N: Zipf-like, "the" about 7% of words."""
    return words[int(len(words) ** rng.random()) - 1]


def synthetic_message(rng: random.Random, words: list[str], i: int) -> tuple[str, str, list[str]]:
    """(message, pattern, values): a sentence with fixed wording and 1-2 variable values."""
    n = rng.randint(8, 18)
    wording = [zipf_word(rng, words) for _ in range(n)]
    wording.insert(rng.randrange(1, len(wording)), f"{rng.choice(words[len(COMMON):])}_{i}")  # a distinctive name
    values = [f"{rng.randint(1, 512)}x{rng.randint(1, 512)}", f"cuda:{rng.randint(0, 7)}"][: rng.randint(1, 2)]
    cut = rng.randrange(len(wording) // 2, len(wording))
    head, tail = " ".join(wording[:cut]), " ".join(wording[cut:])
    message = f"{head.capitalize()} ({values[0]}) {tail}" + (f", got {values[1]}" if len(values) > 1 else "")
    pattern = re.escape(head.capitalize()) + r" \(\d+x\d+\) " + re.escape(tail) + (r", got \S+" if len(values) > 1 else "")
    pattern = pattern.replace("\\ ", " ")  # RE2 accepts both; keep it readable
    return message, pattern, values


def templates() -> list[dict]:
    out = []
    for path in sorted((REPO / "records").glob("*.json")):
        out.append(json.loads(path.read_text(encoding="utf-8"))["record"])
    return out


def generate_catalog(root: Path, count: int, rng: random.Random) -> list[dict]:
    from errkb import catalog

    words = vocabulary(rng, 20_000)
    bases = templates()
    db = catalog.open_db(root)
    rows, kept = [], []
    with db.atomic():
        catalog.ensure_schema(db)
        for i in range(count):
            base = dict(rng.choice(bases))
            message, pattern, values = synthetic_message(rng, words, i)
            base.update(
                id="".join(rng.choice("0123456789abcdef") for _ in range(16)),
                slug=f"synthetic-{i:06d}",
                errorMessage=message,
                messagePattern=pattern,
                errorClass=rng.choice(["RuntimeError", "ValueError", "TypeError", "AssertionError", "UserWarning"]),
            )
            row = dict(base)
            for name in ("solutions", "preventionTips", "tags"):
                row[name] = json.dumps(row[name], ensure_ascii=False)
            row.update(datasetVersion="2026-11-29T15:00:00Z", contentHash=f"{i:064x}", sourceFile=f"records/{base['slug']}.json")
            rows.append(row)
            if i % 997 == 0:
                kept.append({"slug": base["slug"], "message": message, "class": base["errorClass"]})
            if len(rows) == 2000:
                db["records"].insert_all(rows)
                rows = []
        if rows:
            db["records"].insert_all(rows)
    db.close()
    return kept


def paste_for(record: dict, rng: random.Random) -> str:
    frames = "".join(
        f'  File "/home/user/project/{rng.choice(string.ascii_lowercase)}{k}.py", line {rng.randint(1, 900)}, in step_{k}\n'
        f"    out = self.layer_{k}(x, mask=mask, lengths=lengths)\n"
        for k in range(14)
    )
    message = re.sub(r"\(\d+x\d+\)", f"({rng.randint(1, 99)}x{rng.randint(1, 99)})", record["message"])
    return f"2026-11-29 10:00:00 INFO step 120 loss 0.41\nTraceback (most recent call last):\n{frames}{record['class']}: {message}\n"


def errkb_command() -> list[str]:
    script = Path(sys.executable).parent / "errkb"
    return [str(script)] if script.exists() else [sys.executable, "-c", "from errkb.cli import main; main()"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--pastes", type=int, default=200)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--naive-pastes", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(1)

    from errkb.matching import Matcher
    from errkb.matching.patternset import PatternSet
    from errkb.matching.score import THRESHOLD

    with tempfile.TemporaryDirectory(prefix="errkb-match-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        kept = generate_catalog(root, args.records, rng)
        size_mb = (root / "catalog.db").stat().st_size / 1e6
        print(f"catalog: {args.records:,} records, catalog.db {size_mb:,.0f} MB, generated in {time.perf_counter() - start:.1f} s")

        start = time.perf_counter()
        matcher = Matcher.open(root)
        print(f"match index built into catalog.db in {time.perf_counter() - start:.1f} s (once; then incremental)")

        misses = [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests/data/pastes").glob("negative--*.txt"))]
        chosen = [rng.choice(kept) for _ in range(args.pastes)]
        pastes = [(paste_for(record, rng), record["slug"]) for record in chosen]
        pastes += [(text, None) for text in misses]

        matcher.match(pastes[0][0])  # first call pays for lazy statements and caches
        timings, correct = [], 0
        for text, slug in pastes:
            start = time.perf_counter()
            found = matcher.match(text)
            timings.append((time.perf_counter() - start) * 1000)
            top = found[0].slug if found and found[0].score >= THRESHOLD else None
            correct += top == slug
        mean_paste = statistics.mean(len(text) for text, _ in pastes)
        print(f"warm match: {len(pastes)} pastes (~{mean_paste:,.0f} chars), p50 {percentile(timings, .5):.1f} ms, "
              f"p95 {percentile(timings, .95):.1f} ms, max {max(timings):.1f} ms; top-1 right {correct}/{len(pastes)}")

        paste_file = root / "paste.txt"
        paste_file.write_text(pastes[0][0], encoding="utf-8")
        cold = []
        for _ in range(args.cold_runs):
            start = time.perf_counter()
            subprocess.run([*errkb_command(), "--root", str(root), "match", str(paste_file)],
                           capture_output=True, check=False, cwd=REPO)
            cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare = time.perf_counter() - start
        print(f"cold `errkb match FILE`: median {statistics.median(cold):.2f} s, max {max(cold):.2f} s "
              f"(bare python start {bare:.2f} s)")

        patterns = [row[0] for row in matcher.conn.execute("SELECT pattern FROM match_patterns")]
        start = time.perf_counter()
        compiled = [re.compile(p) for p in patterns]
        compile_s = time.perf_counter() - start
        naive = []
        for text, _ in pastes[: args.naive_pastes]:
            start = time.perf_counter()
            [regex for regex in compiled if regex.search(text)]
            naive.append((time.perf_counter() - start) * 1000)
        print(f"naive loop over Python `re`: compile {compile_s:.1f} s, then per paste p50 {percentile(naive, .5):.0f} ms, "
              f"p95 {percentile(naive, .95):.0f} ms ({len(naive)} pastes)")

        start = time.perf_counter()
        pattern_set = PatternSet(patterns)
        set_build = time.perf_counter() - start
        set_times = []
        for text, _ in pastes[: args.naive_pastes]:
            start = time.perf_counter()
            pattern_set.search(text)
            set_times.append((time.perf_counter() - start) * 1000)
        print(f"re2.Set, shards of 5,000 (context): build {set_build:.1f} s, then per paste p50 "
              f"{percentile(set_times, .5):.1f} ms")
        matcher.conn.close()


if __name__ == "__main__":
    main()
