"""Every reproduction run goes to catalog.db's `reproduction_runs`, so the catalog shows when and where a
record was last proven. Only that table is created when catalog.db is new; `errkb build` adds the records
later and keeps the runs (and copies each record's last verdict onto it)."""

from __future__ import annotations

import json
from pathlib import Path

import sqlite_utils

from .. import catalog
from ..lock import catalog_lock
from ..store import file_hash, record_path


def open_history(root: Path) -> sqlite_utils.Database:
    db = catalog.open_db(root)
    catalog.ensure_runs_table(db)
    return db


def run_row(result, record_hash: str | None = None) -> dict:
    env = result.environment
    return {
        "slug": result.slug,
        "record_hash": record_hash,
        "verdict": result.verdict,
        "reason": result.reason,
        "variant": result.variant,
        "drift": result.drift,
        "started_at": result.started_at,
        "seconds": result.seconds,
        "python": env["python"],
        "torch": env["torch"],
        "library": env["library"]["distribution"],
        "library_version": env["library"]["version"],
        "packages": json.dumps(env["packages"], sort_keys=True),
        "cuda_device_count": env["cuda_device_count"],
        "cuda_devices": json.dumps(env["cuda_devices"]),
        "host": env["host"],
        "platform": env["platform"],
        "stages": json.dumps([stage.to_json() for stage in result.stages], ensure_ascii=False),
    }


def store(db: sqlite_utils.Database, result, root: Path) -> None:
    """One run, with the hash of the record file it was judged against (a later edit makes it stale)."""
    with catalog_lock(root), db.atomic():
        record_hash = file_hash(record_path(root, result.slug))
        db[catalog.RUNS_TABLE].insert(run_row(result, record_hash), alter=True)


def finish(db: sqlite_utils.Database, slugs: list[str]) -> None:
    """Copy the new last verdicts onto the records, when catalog.db has them."""
    if "records" in db.table_names() and slugs:
        with catalog_lock(_root(db)), db.atomic():
            catalog.refresh_last_verdicts(db, slugs)


def _root(db: sqlite_utils.Database) -> Path:
    return Path(db.execute("pragma database_list").fetchone()[2]).parent
