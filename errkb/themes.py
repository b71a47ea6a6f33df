"""Themes: a few broad groups of records (install and versions, shapes and dtypes, devices, ...), read off their tags.

A record belongs to every theme one of its tags names; most belong to one or two. The themes are data kept
here, beside the tag vocabulary, not a field of the record schema: a new record joins its themes through the
tags it already carries, and a new tag joins a theme by a word added below. The browser, the home page and
the Datasette records table count and filter themes through the indexed record_tags table (`count_sql`,
`filter_sql`), so the cost grows like the tag facet's.
"""

from __future__ import annotations

import json
from typing import Iterable

PARAM = "_theme"  # ?_theme=checkpoints; repeated: records of any of the themes

# name -> (label, tags). Order: how the themes are listed when their counts tie.
THEMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "install-and-versions": ("install and versions", (
        "installation", "install", "import", "import-error", "upgrade", "version", "versions", "api-change",
        "deprecation", "deprecated", "removed", "compatibility", "driver", "build", "cpp-extension", "wheel",
        "environment", "dependency", "dependencies", "abi", "pip", "conda",
    )),
    "shapes-and-dtypes": ("shapes, dtypes and values", (
        "shape", "shape-mismatch", "broadcasting", "dtype", "view", "contiguous", "indexing", "loss", "labels",
        "cross-entropy", "batch-size", "packed-sequence", "padding", "mask", "mixed-precision", "fp16", "bf16",
        "half", "amp", "linear", "dimensions", "reshape", "nan",
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
        "checkpoint-loading", "save",
    )),
    "autograd": ("autograd", (
        "autograd", "backward", "requires-grad", "retain-graph", "inplace", "detach", "gradient", "gradients",
        "grad", "gradient-checkpointing", "optimizer",
    )),
}


def label(theme: str) -> str:
    return THEMES[theme][0]


def of(tags: Iterable[str]) -> list[str]:
    """The themes of a record with these tags, in THEMES order."""
    carried = set(tags)
    return [name for name, (_, words) in THEMES.items() if carried.intersection(words)]


def tags_of(themes: Iterable[str]) -> list[str]:
    """Every tag of these themes, once each; an unknown theme has none."""
    return list(dict.fromkeys(tag for name in themes if name in THEMES for tag in THEMES[name][1]))


def pairs_json() -> str:
    """[[tag, theme], ...] as JSON: the SQL below reads it with json_each (one parameter, no SQL built from data)."""
    return json.dumps([[tag, name] for name, (_, words) in THEMES.items() for tag in words])


# Records per theme, of the records whose slugs `{among}` selects (empty: all). {param}: pairs_json().
COUNT_SQL = """
with theme_tags(tag, theme) as (
  select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(:{param})
)
select theme_tags.theme as value, count(distinct record_tags.slug) as count
from theme_tags join record_tags on record_tags.tag = theme_tags.tag {among}
group by theme_tags.theme
"""


def count_sql(param: str, slugs_sql: str | None = None) -> str:
    """COUNT_SQL over the records whose slug `slugs_sql` selects (None: every record). Order with `ordered`."""
    among = f"where record_tags.slug in ({slugs_sql})" if slugs_sql else ""
    return COUNT_SQL.format(param=param, among=among)


def ordered(rows: Iterable) -> list[dict]:
    """(value, count) rows as [{"value", "label", "count"}], most records first, ties in THEMES order."""
    rank = {name: i for i, name in enumerate(THEMES)}
    found = [{"value": row[0], "label": label(row[0]), "count": row[1]} for row in rows if row[0] in THEMES]
    return sorted(found, key=lambda item: (-item["count"], rank[item["value"]]))


def filter_sql(column: str, param: str) -> str:
    """A condition: `column` (a slug) is a record of the themes whose tags, as a JSON list, are in :param."""
    return f"{column} in (select slug from record_tags where tag in (select value from json_each(:{param})))"
