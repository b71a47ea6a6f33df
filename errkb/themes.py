"""Themes: a few broad groups of records (install and versions, shapes and dtypes, devices, ...), read off their tags.

A record belongs to every theme one of its tags names; most belong to one or two. The themes are data kept
here, beside the tag vocabulary, not a field of the record schema: a new record joins its themes through the
tags it already carries, and a new tag joins a theme by a word added below.

The build writes each record's themes into catalog.db's `record_themes` (slug, theme), indexed by theme, so
the browser, the home page and the Datasette records table count and filter themes like a column, at any size
(reading them off record_tags on each request took over a second at 100,000 records). When THEMES changes, the
next build rewrites the table (`fingerprint`, kept in build_info).
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable

PARAM = "_theme"  # ?_theme=checkpoints; repeated: records of any of the themes
TABLE = "record_themes"

# name -> (label, tags). Order: how the themes are listed when their counts tie.
THEMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "install-and-versions": ("install and versions", (
        "installation", "install", "import", "import-error", "upgrade", "version", "versions", "api-change",
        "deprecation", "deprecated", "removed", "compatibility", "driver", "build", "cpp-extension", "wheel",
        "environment", "dependency", "dependencies", "abi", "pip", "conda", "config", "configuration", "legacy-api",
    )),
    "shapes-and-dtypes": ("shapes, dtypes and values", (
        "shape", "shape-mismatch", "broadcasting", "dtype", "view", "contiguous", "indexing", "loss", "labels",
        "cross-entropy", "batch-size", "packed-sequence", "padding", "mask", "mixed-precision", "fp16", "bf16",
        "half", "amp", "linear", "dimensions", "reshape", "nan", "masks", "boolean",
    )),
    "devices-and-distributed": ("devices and distributed", (
        "device", "cuda", "gpu", "multi-gpu", "cpu", "mps", "cudnn", "dataparallel", "ddp", "distributed", "fsdp",
        "torchrun", "nccl", "gloo", "process-group", "deepspeed", "accelerate", "memory", "oom",
    )),
    "data-loading": ("data loading", (
        "dataloader", "dataset", "datasets", "collate", "sampler", "workers", "multiprocessing", "pickle",
        "tokenizer", "preprocessing", "transforms",
    )),
    "checkpoints": ("checkpoints and weights", (
        "state-dict", "serialization", "torch-load", "safetensors", "pretrained", "from-pretrained", "weights",
        "checkpoint-loading", "save", "model-loading",
    )),
    "autograd": ("autograd", (
        "autograd", "backward", "requires-grad", "retain-graph", "inplace", "detach", "gradient", "gradients",
        "grad", "gradient-checkpointing",
    )),
    "modules-and-training": ("modules, parameters and the training loop", (
        "nn-module", "module", "module-list", "forward", "parameters", "optimizer", "scheduler", "lr-scheduler",
        "hooks", "trainer", "training-loop", "metrics", "logging", "fine-tuning", "lora", "model-registry",
    )),
}


def label(theme: str) -> str:
    return THEMES[theme][0] if theme in THEMES else theme


def of(tags: Iterable[str]) -> list[str]:
    """The themes of a record with these tags, in THEMES order."""
    carried = set(tags)
    return [name for name, (_, words) in THEMES.items() if carried.intersection(words)]


def pairs_json() -> str:
    """[[tag, theme], ...] as JSON, for FILL_SQL (one parameter: no SQL is built from the data)."""
    return json.dumps([[tag, name] for name, (_, words) in THEMES.items() for tag in words])


def fingerprint() -> str:
    """Changes when THEMES does: the build then rewrites record_themes."""
    return hashlib.sha256(pairs_json().encode()).hexdigest()[:16]


# Every record's themes from its tags, into an empty record_themes. :pairs is pairs_json().
FILL_SQL = f"""
insert or ignore into {TABLE} (slug, theme)
select record_tags.slug, json_extract(pairs.value, '$[1]')
from record_tags join json_each(:pairs) as pairs on record_tags.tag = json_extract(pairs.value, '$[0]')
"""


def count_sql(slugs_sql: str | None = None) -> str:
    """Records per theme (value, count), of the records whose slug `slugs_sql` selects (None: every record)."""
    among = f" where slug in ({slugs_sql})" if slugs_sql else ""
    return f"select theme as value, count(*) as count from {TABLE}{among} group by theme"


def ordered(rows: Iterable) -> list[dict]:
    """(value, count) rows as [{"value", "label", "count"}], most records first, ties in THEMES order."""
    rank = {name: i for i, name in enumerate(THEMES)}
    found = [{"value": row[0], "label": label(row[0]), "count": row[1]} for row in rows if row[0] in THEMES]
    return sorted(found, key=lambda item: (-item["count"], rank[item["value"]]))


def filter_sql(column: str, param: str) -> str:
    """A condition: `column` (a slug) is a record of one of the themes listed, as JSON, in :param."""
    return f"{column} in (select slug from {TABLE} where theme in (select value from json_each(:{param})))"
