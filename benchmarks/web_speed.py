"""How fast the Datasette pages are on a large catalog of seed-shaped records.

    python benchmarks/web_speed.py [N] [--repeat R] [--keep DIR]     (default N=100000, R=30)

Builds an N-record catalog.db in a temporary folder (rows shaped like the seed, with varied slugs,
messages, classes, repos, tags and verdicts, some with reproduction runs), then times pages through
datasette.client (in process: the cost of Datasette and the plugin, without the network):
the record page, the records table with its facets, full-text search, the canned search query and
the match page. Prints median and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import sqlite_utils  # noqa: E402

from errkb import catalog  # noqa: E402
from errkb.validate import load_envelope  # noqa: E402

SEED_SLUG = "dataparallel-not-supported-when-crf-is-used"
CLASSES = ["RuntimeError", "ValueError", "TypeError", "AssertionError", "UserWarning", "AttributeError",
           "KeyError", "IndexError", "NotImplementedError", "torch.OutOfMemoryError"]
TYPES = ["validation", "configuration", "device", "shape", "type", "state", "runtime", "resource", "io",
         "compatibility", "distributed", "deprecation"]
SEVERITIES = ["critical", "error", "error", "error", "warning", "info"]
VERDICTS = [None, None, None, "verified", "verified", "not-reproduced", "wrong-error", "fix-failed", "skipped"]
REPOS = [f"{owner}/{name}" for owner in ["pytorch", "huggingface", "hankcs", "allenai", "kmkurn", "NVIDIA",
                                         "microsoft", "google"] for name in ["core", "nlp", "vision", "crf", "train"]]
TAGS = [f"tag-{name}" for name in ["cuda", "ddp", "rnn", "crf", "checkpoint", "dtype", "shape", "device", "amp",
                                  "optimizer", "dataloader", "tokenizer", "onnx", "jit", "quantization", "lora",
                                  "fsdp", "deepspeed", "xla", "mps", "cpu", "memory", "io", "config", "version"]]
WORDS = ("tensor expected found mismatch gradient buffer shape dimension index memory allocate kernel stream "
         "batch sequence padding mask embedding layer weight bias optimizer scheduler checkpoint state dict key "
         "missing unexpected contiguous stride dtype float half bfloat16 replica gather scatter rank process group "
         "backend timeout reduce broadcast autograd graph leaf view inplace version counter storage offset "
         "pinned host transfer copy async event sync barrier collective allreduce world size port address "
         "tokenizer vocab special token pad truncation attention head hidden projection norm dropout "
         "activation softmax logits loss target label class weight sampler worker pickle lambda closure "
         "hook forward backward module buffer register parameter frozen requires grad accumulate clip scale "
         "amp autocast scaler overflow underflow nan inf quantize observer calibrate export trace script "
         "compile graph break guard recompile dynamic shape symbolic").split()
TEMPLATES = [
    "Expected {a} and {b} to be on the same {c}, but found {n} {d}",
    "{A} {b} is not supported when {c} is used",
    "Error(s) in loading {a}: missing {b} {c}",
    "{A} of {b} {c} does not match {d} ({n} vs {m})",
    "Cannot {a} {b}: {c} {d} already released",
    "{A} {b} must be {c}, got {d}",
    "Unexpected {a} in {b} {c} at position {n}",
    "Trying to {a} through the {b} a second time ({c})",
]
SEED_TRACEBACK = """Traceback (most recent call last):
  File "train.py", line 12, in <module>
    tagger.fit(trn, dev, save_dir, crf=True, devices=[0, 1])
  File "hanlp/components/taggers/tagger.py", line 37, in build_criterion
    raise ValueError('DataParallel not supported when CRF is used')
ValueError: DataParallel not supported when CRF is used
"""


def seed_row() -> dict:
    """The seed as a row of the records table (lists as JSON text, plus the build's own columns)."""
    envelope = load_envelope(REPO / "records" / f"{SEED_SLUG}.json")
    row = envelope.record.model_dump()
    for name in catalog.LIST_COLUMNS:
        row[name] = json.dumps(row[name], ensure_ascii=False)
    row.update(datasetVersion=envelope.datasetVersion, contentHash="0" * 64, sourceFile="", lastVerdict=None,
               lastVerifiedAt=None)
    return row


def generate(db: sqlite_utils.Database, n: int, rng: random.Random) -> None:
    base = seed_row()
    catalog.ensure_schema(db)

    def rows():
        for i in range(n):
            a, b, c, d = rng.sample(WORDS, 4)
            values = dict(a=a, b=b, c=c, d=d, A=a.capitalize(), n=rng.randint(1, 64), m=rng.randint(65, 999))
            message = rng.choice(TEMPLATES).format(**values)
            pattern = re.escape(message).replace(str(values["n"]), r"\d+")
            if i % 100 == 0:
                message = f"DataParallel {message}"
            slug = f"{a}-{b}-{c}-{i}"
            row = dict(base)
            row.update(
                slug=slug, id=f"{i:016x}", errorMessage=message, messagePattern=pattern,
                errorClass=rng.choice(CLASSES), errorType=rng.choice(TYPES), severity=rng.choice(SEVERITIES),
                repo=rng.choice(REPOS), tags=json.dumps(rng.sample(TAGS, rng.randint(2, 5))),
                lastVerdict=rng.choice(VERDICTS), sourceFile=f"records/{slug}.json",
                # ~1% of records share the rare word ("batch7x"), ~8% each common word, every record "training"
                documentation=f"{message}. Seen in batch{i % 100}x. {' '.join(rng.sample(WORDS, 12))}.",
            )
            yield row

    with db.atomic():
        db["records"].insert_all(rows(), batch_size=500)
        slugs_tags = [(row["slug"], json.loads(row["tags"])) for row in db.query("select slug, tags from records")]
        db["tags"].insert_all(({"name": tag} for tag in TAGS), ignore=True)
        db["record_tags"].insert_all(({"slug": s, "tag": t} for s, tags in slugs_tags for t in tags), batch_size=2000)
        runs = []
        for slug, _ in slugs_tags[:: 3]:
            for k in range(rng.randint(1, 3)):
                runs.append({
                    "slug": slug, "verdict": rng.choice(VERDICTS[3:]), "reason": None, "variant": None, "drift": None,
                    "started_at": f"2026-11-{10 + k:02d}T12:00:00Z", "seconds": 1.5, "python": "3.11.7",
                    "torch": "2.13.0", "library": "torch", "library_version": "2.13.0", "packages": "{}",
                    "cuda_device_count": rng.choice([0, 1, 2]), "cuda_devices": "[]", "ran_at": "local",
                    "platform": "Linux", "stages": "{}",
                })
        db["reproduction_runs"].insert_all(runs, batch_size=1000)


def timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label:<48} {time.perf_counter() - start:8.2f} s")
    return result


def measure(client, label: str, paths: list[str], loop) -> None:
    times = []
    for path in paths:
        start = time.perf_counter()
        response = loop.run_until_complete(client.get(path))
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (path, response.status_code)
        if "These facets timed out" in response.text:
            print(f"  note: facets timed out on {path}")
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"{label:<48} median {statistics.median(times):8.1f} ms   p95 {p95:8.1f} ms   (n={len(times)})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="build the catalog in this folder and keep it")
    args = parser.parse_args()
    rng = random.Random(42)

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        db_path = root / "catalog.db"
        if not db_path.exists():
            db = sqlite_utils.Database(db_path)
            timed(f"generate catalog.db with {args.n} records", lambda: generate(db, args.n, rng))
            db.close()
        print(f"{'catalog.db size':<48} {db_path.stat().st_size / 1e6:8.1f} MB")

        from errkb.web.serve import make_datasette

        ds = timed("start Datasette (incl. the matcher's index)", lambda: make_datasette(db_path))
        loop = asyncio.new_event_loop()
        loop.run_until_complete(ds.invoke_startup())
        client = ds.client
        slugs = [row[0] for row in sqlite_utils.Database(db_path).execute(
            "select slug from records order by random() limit ?", [args.repeat]).fetchall()]
        rare = [f"batch{rng.randrange(100)}x" for _ in range(args.repeat)]  # ~1% of records
        common = [rng.choice(WORDS) for _ in range(args.repeat)]  # ~8% of records each
        browse = "_col=errorMessage&_col=errorClass&_col=repo&_col=severity&_col=tags&_col=lastVerdict"
        r = args.repeat
        loop.run_until_complete(client.get("/"))  # warm up: first request runs startup work
        measure(client, "home page", ["/"] * r, loop)
        measure(client, "record page /-/errkb/record/<slug>", [f"/-/errkb/record/{s}" for s in slugs], loop)
        measure(client, "Datasette row page /catalog/records/<slug>", [f"/catalog/records/{s}" for s in slugs], loop)
        measure(client, "records table, 6 facets (browse columns)", [f"/catalog/records?{browse}"] * r, loop)
        measure(client, "records table, 6 facets, all columns", ["/catalog/records"] * r, loop)
        measure(client, "records table, filtered errorClass=ValueError",
                [f"/catalog/records?{browse}&errorClass=ValueError"] * r, loop)
        measure(client, "records table, filtered by a tag (_tag=)",
                [f"/catalog/records?{browse}&_tag={rng.choice(TAGS)}" for _ in range(r)], loop)
        measure(client, "search, rare word (~1% of records), 6 facets",
                [f"/catalog/records?{browse}&_search={w}" for w in rare], loop)
        measure(client, "search, common word (~8%), 6 facets",
                [f"/catalog/records?{browse}&_search={w}" for w in common], loop)
        measure(client, "search, word in every record, 6 facets",
                [f"/catalog/records?{browse}&_search=training"] * r, loop)
        measure(client, "canned query /catalog/search?q=<common word>", [f"/catalog/search?q={w}" for w in common], loop)
        from urllib.parse import quote

        measure(client, "match page (paste the seed traceback)",
                [f"/-/errkb/match?traceback={quote(SEED_TRACEBACK)}"] * r, loop)


if __name__ == "__main__":
    main()
