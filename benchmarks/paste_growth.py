"""How the cost of a paste grows with its size (a benchmark, not a test): cleaning and matching must be linear.

For three kinds of paste (random base64 with no exception line, a plain training log, and a log full of real
tracebacks) at 100 KB, 1 MB and 10 MB, prints the seconds of `paste.parse` (cleaning and finding the
messages) and of a warm `errkb.match` against this checkout's catalog (parse included), and the growth factor
per 10x of size: ~10 means linear; a paste past paste.MAX_PASTE_CHARS is clipped first, so 10 MB costs about
what 1 MB does.

    python benchmarks/paste_growth.py
    python benchmarks/paste_growth.py --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import base64
import random
import time
from pathlib import Path

from errkb import paste
from errkb.matching.api import matcher_for

ROOT = Path(__file__).resolve().parents[1]
TRACEBACK = (ROOT / "tests" / "data" / "pastes").glob("*.txt")


def base64_text(size: int, rng: random.Random) -> str:
    raw = base64.b64encode(rng.randbytes(size * 3 // 4 + 3)).decode()[:size]
    return "\n".join(raw[i : i + 76] for i in range(0, len(raw), 76))


def training_log(size: int, rng: random.Random) -> str:
    lines, total, step = [], 0, 0
    while total < size:
        step += 1
        line = (f"2026-06-03 11:{step // 60 % 60:02d}:{step % 60:02d},551 INFO trainer.py:2134 >> step {step} "
                f"loss={rng.random() * 3:.4f} lr={rng.random() / 1000:.6f} grad_norm={rng.random() * 10:.3f} "
                f"tokens/s={rng.randint(1000, 90000)}")
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def tracebacks(size: int, rng: random.Random) -> str:
    samples = [path.read_text(encoding="utf-8") for path in sorted(TRACEBACK)] or ["RuntimeError: boom\n"]
    parts, total = [], 0
    while total < size:
        part = rng.choice(samples) + "\n" + training_log(2000, rng) + "\n"
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]


KINDS = {"random base64": base64_text, "plain log": training_log, "real tracebacks": tracebacks}


def seconds(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    args = parser.parse_args()
    rng = random.Random(11)
    matcher = matcher_for(ROOT)
    matcher.match("RuntimeError: warm up")
    print(f"catalog: {ROOT} ({matcher.size} records); MAX_PASTE_CHARS = {paste.MAX_PASTE_CHARS:,}")
    print(f"{'paste':<16} {'size':>11} {'parse s':>9} {'match s':>9} {'growth':>7}")
    for kind, make in KINDS.items():
        previous = None
        for size in args.sizes:
            text = make(size, rng)
            parse_s = seconds(paste.parse, text)
            match_s = seconds(matcher.match, text)
            growth = f"{match_s / previous[1] * previous[0] / size * 10:.1f}" if previous else "-"
            print(f"{kind:<16} {size:>11,} {parse_s:>9.3f} {match_s:>9.3f} {growth:>7}")
            previous = (size, match_s)


if __name__ == "__main__":
    main()
