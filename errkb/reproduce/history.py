"""Keep each reproduction run: its result file in verifications/ (unless told not to) and its row in catalog.db's
`reproduction_runs`, so the catalog shows when and where, on which releases and hardware, a record was proven."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from .. import catalog, runs, verifications
from ..lock import catalog_lock


def open_history(root: Path) -> sqlite_utils.Database:
    db = catalog.open_db(root)
    runs.ensure_table(db)
    return db


def keep(db: sqlite_utils.Database, root: Path, result, write_file: bool = True) -> Path | None:
    """Write the result file (replacing this environment's earlier one) and its row, under the catalog lock;
    return the file."""
    verification = verifications.from_result(result)
    with catalog_lock(root):
        path = verifications.write(root, verification) if write_file and not result.authoring_problem else None
        runs.store_result(db, root, verification, path)
    return path
