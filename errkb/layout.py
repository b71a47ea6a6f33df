"""Where a catalog's parts live, and the content hash they all agree on. It imports nothing of errkb, so that the
files side (store.py) and the database side (catalog.py, ingest.py, runs.py) both build on it without importing
each other; writes.py, above both, puts them together."""

from __future__ import annotations

import hashlib
from pathlib import Path

RECORDS_DIR = "records"
REPRODUCTIONS_DIR = "reproductions"
DATABASE_FILE = "catalog.db"


def content_hash(raw: bytes) -> str:
    """The hash of a record file's bytes: what builds compare and what reproduction runs remember."""
    return hashlib.sha256(raw).hexdigest()


def file_hash(path: Path) -> str | None:
    return content_hash(path.read_bytes()) if path.is_file() else None
