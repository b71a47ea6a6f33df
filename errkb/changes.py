"""Which record files a build must read: size and mtime first, the content hash second.

`record_files` remembers each file's size and mtime as the last build saw them. A file whose size and
mtime are unchanged is skipped without being read, unless its mtime is too close to the start of the build
that recorded it: a write in the same clock tick as that build's read would leave both unchanged
(git's "racy" files), so such files are read and hashed again until a later build starts well after them.
The content hash (records.contentHash) decides whether a file that was read has changed.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

TABLE = "record_files"
INFO_TABLE = "build_info"
RACY_NS = 2_000_000_000  # coarser than any file system's mtime resolution that matters (FAT: 2 s)

_TABLES = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (slug TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {INFO_TABLE} (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
"""


def ensure_tables(conn: sqlite3.Connection) -> None:
    for statement in _TABLES.strip().splitlines():
        conn.execute(statement)


def scan(conn: sqlite3.Connection, folder: Path) -> int:
    """Stat every record file into temp.disk_files and queue in temp.todo the ones to read, in file order.

    Returns how many files were skipped on their size and mtime alone.
    """
    conn.execute("DROP TABLE IF EXISTS temp.disk_files")
    conn.execute("DROP TABLE IF EXISTS temp.todo")
    conn.execute("CREATE TEMP TABLE disk_files (slug TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER) WITHOUT ROWID")
    conn.execute("CREATE TEMP TABLE todo (seq INTEGER PRIMARY KEY, slug TEXT NOT NULL, known TEXT)")
    conn.executemany("INSERT INTO disk_files (slug, size, mtime_ns) VALUES (?, ?, ?)", _stats(folder))
    trusted_before = _last_build_start(conn) - RACY_NS
    conn.execute(
        f"""INSERT INTO todo (slug, known)
        SELECT d.slug, r.contentHash FROM disk_files d
        LEFT JOIN records r ON r.slug = d.slug
        LEFT JOIN {TABLE} f ON f.slug = d.slug
        WHERE r.slug IS NULL OR f.slug IS NULL OR f.size != d.size OR f.mtime_ns != d.mtime_ns OR f.mtime_ns >= ?
        ORDER BY d.slug""",
        [trusted_before],
    )
    total = conn.execute("SELECT count(*) FROM disk_files").fetchone()[0]
    return total - conn.execute("SELECT count(*) FROM todo").fetchone()[0]


def _stats(folder: Path):
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".json") and entry.is_file():
                stat = entry.stat()
                yield entry.name[: -len(".json")], stat.st_size, stat.st_mtime_ns


def todo_batches(conn: sqlite3.Connection, size: int):
    """The queued files as lists of (slug, known content hash or None), `size` at a time, in file order."""
    last = 0
    while True:
        rows = conn.execute("SELECT seq, slug, known FROM todo WHERE seq > ? ORDER BY seq LIMIT ?", [last, size]).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        yield [(slug, known) for _, slug, known in rows]


def removed(conn: sqlite3.Connection) -> list[str]:
    """Slugs in the catalog whose file is gone."""
    return [row[0] for row in conn.execute("SELECT slug FROM records WHERE slug NOT IN (SELECT slug FROM disk_files) ORDER BY slug")]


def remember(conn: sqlite3.Connection, stats: list[tuple[str, int, int]]) -> int:
    """Store (slug, size, mtime_ns) as seen by this build; returns how many rows changed."""
    before = conn.total_changes
    conn.executemany(
        f"INSERT INTO {TABLE} (slug, size, mtime_ns) VALUES (?, ?, ?) ON CONFLICT (slug) DO UPDATE SET"
        " size = excluded.size, mtime_ns = excluded.mtime_ns WHERE size != excluded.size OR mtime_ns != excluded.mtime_ns",
        stats,
    )
    return conn.total_changes - before


def forget(conn: sqlite3.Connection, slugs: list[str]) -> None:
    conn.executemany(f"DELETE FROM {TABLE} WHERE slug = ?", [(slug,) for slug in slugs])


def finish(conn: sqlite3.Connection, started_ns: int, wrote: bool) -> None:
    """Remember when this build started, so files older than that can be trusted on their stat next time.

    Only a build that wrote something records it: a no-op build leaves the database byte for byte as it was.
    """
    if wrote:
        conn.execute(
            f"INSERT OR REPLACE INTO {INFO_TABLE} (key, value) VALUES ('started_ns', ?)", [str(started_ns)]
        )
    conn.execute("DROP TABLE IF EXISTS temp.disk_files")
    conn.execute("DROP TABLE IF EXISTS temp.todo")


def _last_build_start(conn: sqlite3.Connection) -> int:
    row = conn.execute(f"SELECT value FROM {INFO_TABLE} WHERE key = 'started_ns'").fetchone()
    return int(row[0]) if row else 0
