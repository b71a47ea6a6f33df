"""`match(text)`: the Python entry point, with the catalog found and its Matcher kept warm."""

from __future__ import annotations

import threading
from pathlib import Path

from ..bundled import locate
from ..store import find_root
from . import index
from .matcher import DATABASE_FILE, RECORDS_DIR, Match, Matcher
from .score import THRESHOLD

_cache: dict[Path, tuple[tuple, Matcher]] = {}
_cache_lock = threading.Lock()


def _signature(root: Path) -> tuple:
    """Changes when the records the Matcher was built from may have changed."""
    database = root / DATABASE_FILE
    if database.is_file():
        return ("db", str(database))  # freshness inside the file is tracked by the index itself
    folder = root / RECORDS_DIR
    if not folder.is_dir():
        return ("none",)
    stats = []
    for path in sorted(folder.glob("*.json")):
        stat = path.stat()
        stats.append((path.name, stat.st_mtime_ns, stat.st_size))
    return ("records", tuple(stats))


def matcher_for(root: Path | None = None) -> Matcher:
    """The Matcher of a catalog root (default: `errkb.bundled.locate`), reused while its records are unchanged.

    Raises errkb.bundled.NoCatalog when there is no catalog to match against.
    """
    root = locate(root).resolve()
    signature = _signature(root)
    with _cache_lock:
        cached = _cache.get(root)
        if cached and cached[0] == signature:
            matcher = cached[1]
            if signature[0] != "db" or index.is_fresh(matcher.conn):
                return matcher
        matcher = Matcher.open(root)
        _cache[root] = (signature, matcher)
        return matcher


def match(text: str, root: Path | str | None = None, limit: int = 5, threshold: float = THRESHOLD) -> list[Match]:
    """Records of the catalog that explain the error in a pasted traceback or log, best first.

    [] when nothing is close enough. `root` is the catalog (default: the nearest catalog folder, else
    the one bundled with errkb; see `errkb.bundled.locate`). Raises NoCatalog when there is none.
    """
    return matcher_for(Path(root) if root else None).match(text, limit=limit, threshold=threshold)
