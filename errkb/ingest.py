"""Record files to the rows catalog.db stores, batch by batch, on every core.

Reading, hashing, parsing, validating and analysing a pattern for the match index take most of a build's
CPU and need no database, so worker processes do them; the building process only writes rows, in order.
At most a few batches are in flight, so memory does not grow with the catalog.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .jsonfile import parse_json
from .matching import index
from .model import Record
from .problems import InvalidInput, Problem
from .layout import content_hash
from .validate import envelope_from_data

LIST_COLUMNS = ["solutions", "preventionTips", "tags"]
RECORD_COLUMNS = [*Record.model_fields, "datasetVersion", "contentHash", "sourceFile", "lastVerdict", "lastVerifiedAt", "verifiedOn"]
BATCH_SIZE = 500
IN_PROCESS_BELOW = 2_000  # files: fewer than this are not worth starting workers for


@dataclass
class Prepared:
    """One valid record file, ready to insert: `row` follows RECORD_COLUMNS, verdict columns left None."""

    slug: str
    stat: tuple[str, int, int]  # (slug, size, mtime_ns)
    row: list
    solutions: list[str]
    tips: list[str]
    tags: list[str]
    entry: index.Entry
    analysis: index.Analysis


@dataclass
class Unchanged:
    """Read and hashed again, same content: only its size and mtime are new."""

    stat: tuple[str, int, int]


@dataclass
class Invalid:
    problems: list[Problem]


def prepare_file(folder: Path, slug: str, known: str | None) -> Prepared | Unchanged | Invalid:
    path = folder / f"{slug}.json"
    name = str(path)
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            raw = handle.read()
    except OSError as exc:
        return Invalid([Problem(name, "$", f"cannot read file: {exc.strerror or exc}")])
    seen = (slug, stat.st_size, stat.st_mtime_ns)
    digest = content_hash(raw)
    if digest == known:
        return Unchanged(seen)
    try:
        envelope = envelope_from_data(parse_json(raw, name), name)
    except InvalidInput as exc:
        return Invalid(exc.problems)
    record = envelope.record
    if record.slug != slug:
        return Invalid([Problem(name, "$.record.slug", f"found {record.slug!r}, expected {slug!r} (the file name)")])
    fields = record.model_dump()
    for column in LIST_COLUMNS:
        fields[column] = json.dumps(fields[column], ensure_ascii=False)
    row = [*fields.values(), envelope.datasetVersion, digest, f"records/{slug}.json", None, None, None]
    entry = index.Entry(slug, record.errorMessage, record.messagePattern, record.errorClass, record.filePath)
    return Prepared(
        slug, seen, row, record.solutions, record.preventionTips, record.tags, entry,
        index.analysis(record.messagePattern, record.errorMessage),
    )


def prepare_batch(folder: Path, batch: list[tuple[str, str | None]]) -> list:
    return [prepare_file(folder, slug, known) for slug, known in batch]


def prepared_batches(folder: Path, batches, total: int):
    """prepare_batch over `batches` (lists of (slug, known hash)), results in the same order."""
    workers = os.cpu_count() or 1
    if total < IN_PROCESS_BELOW or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for batch in batches:
            yield prepare_batch(folder, batch)
        return
    # fork: the workers start at once with errkb imported; they never touch the parent's database connection.
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.apply_async(prepare_batch, (folder, batch)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
