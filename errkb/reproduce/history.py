"""Keep each reproduction run: its result file in verifications/ (unless told not to) and its row in catalog.db's
`reproduction_runs`, so the catalog shows when and where, on which releases and hardware, a record was proven."""

from __future__ import annotations

import contextlib
from pathlib import Path

import sqlite_utils

from .. import catalog, runs, signing, verifications
from ..lock import catalog_lock


def open_history(root: Path) -> sqlite_utils.Database:
    db = catalog.open_db(root)
    runs.ensure_table(db)
    return db


def keep(root: Path, result, write_file: bool = True, signer=None, trust_unsigned: bool = False) -> Path | None:
    """Write the result file (replacing this environment's earlier one), sign it when given a maintainer's
    signer, and write its row: the lock, then the file, then the row, each taken only now, after the stages
    (a stage never runs while errkb holds a database connection or the lock). Return the file; raise
    lock.CatalogBusy when another process holds the lock past its timeout (nothing written)."""
    verification = verifications.from_result(result)
    with catalog_lock(root), contextlib.closing(open_history(root)) as db:
        path = verifications.write(root, verification) if write_file and not result.authoring_problem else None
        if path is not None:
            stale = signing.signature_path(path)
            if signer is not None:
                signing.sign(root, path, signer)
            elif stale.exists():
                stale.unlink()  # it signed the file this run replaced
        runs.store_result(db, root, verification, path, signing.trusts_unsigned(trust_unsigned))
    return path
