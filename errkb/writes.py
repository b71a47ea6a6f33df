"""The one write path: every change to a catalog goes lock -> files -> rows (and results) through here.

store.py writes files and knows nothing of the database; catalog.py, runs.py and the match index write rows and
know nothing of records/ files beyond their bytes; lock.py, verifications.py and signing.py sit below. This
module, above them all, holds the catalog lock while it writes the files and then the rows, so that a reader
never sees rows without their files, nor a writer two half-done changes.
"""

from __future__ import annotations

import contextlib
import errno
from pathlib import Path

from . import catalog, runs, signing, store, verifications
from .coverage import reproduction_path
from .draft.stubs import reproduction_stub_problems
from .layout import DATABASE_FILE, content_hash
from .lock import catalog_lock
from .matching import index
from .problems import InvalidInput
from .verifications import Verification


def build(root: Path, full: bool = False, trust_unsigned: bool = False) -> catalog.BuildReport:
    """catalog.build under the catalog lock (lock.CatalogBusy when it cannot be had)."""
    with catalog_lock(root):
        return catalog.build(root, full, trust_unsigned)


def add_files(root: Path, files: list[Path], replace: bool = False) -> list[store.AddResult]:
    """Validate FILES and write them to records/ and, when it exists, catalog.db: all of it or nothing.

    Runs under the catalog's write lock (lock.CatalogBusy when it cannot be had), so the id and slug
    checks still hold when the files are written. Each database row is made from the exact bytes written, and
    the match index takes the new records in the same transaction. A record whose file is already there is
    `unchanged` only when catalog.db has it too; otherwise its row is written and it is reported as `indexed`.
    A record whose reproduction still carries a draft stub is refused (InvalidInput): its slug is taken from
    the validated record, so a file is read once, bounded, and never before it is checked.
    """
    root.mkdir(parents=True, exist_ok=True)
    with catalog_lock(root):  # which also removes dead writers' temp files
        plan = store.plan_add(root, files, replace)
        stubs = [p for envelope, _ in plan for p in reproduction_stub_problems(reproduction_path(root, envelope.record.slug))]
        if stubs:
            raise InvalidInput(stubs)
        writes, rows = [], []
        for envelope, result in plan:
            if result.status == "unchanged":
                data = result.path.read_bytes()
                envelope = store.envelope_of(data, result.path)
            else:
                data = store.canonical_text(envelope).encode("utf-8")
                writes.append((result.path, data))
            rows.append((envelope, content_hash(data), result))
        if not (root / DATABASE_FILE).exists():
            store.write_files(writes)
            return [result for _, result in plan]
        db = catalog.open_db(root)
        try:
            catalog.ensure_schema(db)  # outside the transaction below: sqlite-utils commits its DDL
            known = catalog.indexed_hashes(db, [result.slug for _, _, result in rows])
            stale = [(env, digest, result) for env, digest, result in rows if known.get(result.slug) != digest]
            for _, _, result in stale:
                if result.status == "unchanged":
                    result.status = "indexed"
            undo: list[tuple[Path, bytes | None]] = []
            try:
                with db.atomic():
                    catalog.upsert_records(
                        db, [(env, digest, result.path.relative_to(root).as_posix()) for env, digest, result in stale]
                    )
                    index.refresh(db.conn)  # the match index takes them in the same transaction
                    undo = store.write_files(writes)
            except BaseException:
                store.restore(undo)
                raise
        finally:
            db.close()
    return [result for _, result in plan]


def keep_result(root: Path, verification: Verification, write_file: bool = True, signer=None,
                trust_unsigned: bool = False) -> Path | None:
    """One reproduction run: under the lock, its result file (replacing this environment's earlier one, signed
    when given a maintainer's signer), then its row in catalog.db. Return the file; raise lock.CatalogBusy when
    another process holds the lock past its timeout (nothing written)."""
    with catalog_lock(root), contextlib.closing(catalog.open_db(root)) as db:
        path = verifications.write(root, verification) if write_file else None
        if path is not None:
            stale = signing.signature_path(path)
            if signer is not None:
                signing.sign(root, path, signer)
            elif stale.exists():
                stale.unlink()  # it signed the file this run replaced
        runs.ensure_table(db)
        runs.store_result(db, root, verification, path, signing.trusts_unsigned(trust_unsigned))
    return path


def sign_results(root: Path, files: list[Path], signer, remove_orphans: bool = False) -> tuple[int, list[Path]]:
    """`errkb sign`: under the lock, check each result file and sign the bytes it holds (no errkb writer can
    replace it between the check and the signature); with `remove_orphans`, drop signatures whose result is
    gone. Returns (signatures written, signatures removed). Raises InvalidInput naming a file that fails to load."""
    with catalog_lock(root):
        for path in files:
            verifications.load(path, root)
        keys = signing.maintainer_keys(root)
        written = sum(signing.sign(root, path, signer, keys) for path in files)
        stale = signing.orphans(root) if remove_orphans else []
        for orphan in stale:
            orphan.unlink()
    return written, stale


def add_new_files(root: Path, texts: dict[Path, str]) -> None:
    """`errkb draft`: write new files (a draft record and its reproduction) under the lock, all or none; raise
    FileExistsError naming the first that exists."""
    with catalog_lock(root):
        for path in texts:
            if path.exists():
                raise FileExistsError(errno.EEXIST, "exists", str(path))
        written: list[Path] = []
        try:
            for path, text in texts.items():
                store.write_atomically(path, text)
                written.append(path)
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise
