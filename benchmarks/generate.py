"""Varied record files for benchmarks: the real records of records/ as templates, every record worded differently.

    python benchmarks/generate.py N DIR      # writes DIR/records/*.json (N files)

Each generated record keeps its template's structure (source excerpt, lines, URL, lists) and so stays valid
against the models, but its message, pattern, prose and tags are reworded with words drawn from a Zipf-like
vocabulary: near-identical clones would make the build (pattern cache hits, a tiny FTS vocabulary) look
several times cheaper than a real catalog. Two words are planted for the web benchmark:
- BROAD_WORD in the documentation of two records in three (a broad full-text search);
- TAG_WORD as a tag of one record in five (the `_tag=` filter).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROAD_WORD = "workload"
TAG_WORD = "sharded"
COMMON = """the a of to in and is not for on with at by be was were device tensor module argument expected
got found size dimension input output must should cannot when but type value parameter shape error
invalid missing unexpected key state process group batch gradient memory index sequence length
weight bias layer model training loss optimizer rank world backend call function method""".split()
SYLLABLES = ["ka", "to", "ri", "mu", "sen", "dor", "vel", "qi", "an", "lo", "pre", "tor", "ix", "un", "al"]
PROSE_FIELDS = ["documentation", "triggerScenarios", "commonSituations"]


def templates() -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((REPO / "records").glob("*.json"))]


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    words -= {BROAD_WORD, TAG_WORD}
    return COMMON + sorted(words)


def zipf_word(rng: random.Random, words: list[str]) -> str:
    """Rank r drawn with P(r <= k) = log k / log N: Zipf-like, "the" about 7% of words."""
    return words[int(len(words) ** rng.random()) - 1]


def message_and_pattern(rng: random.Random, words: list[str], i: int) -> tuple[str, str]:
    """A sentence with fixed wording, a distinctive name and one or two variable values, and its RE2 pattern."""
    wording = [zipf_word(rng, words) for _ in range(rng.randint(8, 18))]
    wording.insert(rng.randrange(1, len(wording)), f"{rng.choice(words[len(COMMON):])}_{i}")
    cut = rng.randrange(len(wording) // 2, len(wording))
    head, tail = " ".join(wording[:cut]).capitalize(), " ".join(wording[cut:])
    size = f"{rng.randint(1, 512)}x{rng.randint(1, 512)}"
    message, pattern = f"{head} ({size}) {tail}", re.escape(head) + r" \(\d+x\d+\) " + re.escape(tail)
    if rng.random() < 0.5:
        message += f", got cuda:{rng.randint(0, 7)}"
        pattern += r", got \S+"
    return message, pattern.replace("\\ ", " ")


def reword(rng: random.Random, words: list[str], text: str, share: float = 0.2) -> str:
    """The text with about `share` of its words replaced: same length and shape, different wording."""
    tokens = text.split(" ")
    for k in rng.sample(range(len(tokens)), int(len(tokens) * share)):
        if tokens[k].isalpha():
            tokens[k] = zipf_word(rng, words)
    return " ".join(tokens)


def make_record(i: int, bases: list[dict], words: list[str]) -> dict:
    rng = random.Random(i)
    envelope = json.loads(json.dumps(bases[i % len(bases)]))
    r = envelope["record"]
    r["id"] = hashlib.sha256(f"generated-{i}".encode()).hexdigest()[:16]
    r["slug"] = f"{r['slug'][:80]}-{i}"
    r["errorMessage"], r["messagePattern"] = message_and_pattern(rng, words, i)
    for name in PROSE_FIELDS:
        r[name] = reword(rng, words, r[name])
    if i % 3:
        r["documentation"] += f" The {zipf_word(rng, words)} {BROAD_WORD} hits this too."
    r["solutions"] = [reword(rng, words, s) for s in r["solutions"]]
    r["preventionTips"] = [reword(rng, words, s) for s in r["preventionTips"]]
    extra = {f"t-{rng.choice(words[len(COMMON):len(COMMON) + 300])}" for _ in range(2)} - set(r["tags"])
    r["tags"] = r["tags"] + sorted(extra) + ([TAG_WORD] if i % 5 == 0 else [])
    return envelope


def write_records(folder: Path, count: int, start: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    bases, words = templates(), vocabulary(random.Random(0))
    for i in range(start, start + count):
        envelope = make_record(i, bases, words)
        text = json.dumps(envelope, indent=2, ensure_ascii=False) + "\n"
        (folder / f"{envelope['record']['slug']}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_records(Path(sys.argv[2]) / "records", int(sys.argv[1]))
