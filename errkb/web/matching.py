"""The match page's one entry point: `errkb.match(text)` when it is importable, else the FTS fallback."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from dataclasses import dataclass, field
from pathlib import Path

from . import fallback_match

MAX_INPUT = 200_000  # characters; a longer paste keeps its end, where the exception line is


@dataclass
class Match:
    slug: str
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Answer:
    matches: list[Match]
    engine: str  # "errkb.match" or "full-text fallback"
    exception_line: str


def load_matcher():
    """errkb.match's `match` function, or None while it does not exist."""
    try:
        module = importlib.import_module("errkb.match")
    except ImportError:
        return None
    function = getattr(module, "match", None)
    return function if callable(function) else None


async def match(datasette, database: str, text: str) -> Answer:
    text = text[-MAX_INPUT:]
    cls, message = fallback_match.last_exception_line(text)
    exception_line = f"{cls}: {message}" if cls else message
    matcher = load_matcher()
    if matcher is not None:
        db = datasette.get_database(database)
        items = await asyncio.to_thread(_call, matcher, text, Path(db.path).parent, Path(db.path))
        return Answer([_as_match(item) for item in items], "errkb.match", exception_line)
    db = datasette.get_database(database)
    items = await db.execute_fn(lambda conn: fallback_match.match(conn, text))
    return Answer([_as_match(item) for item in items], "full-text fallback", exception_line)


def _call(matcher, text: str, root: Path, db_path: Path):
    """Pass the catalog's location when the matcher asks for it by name."""
    parameters = inspect.signature(matcher).parameters
    kwargs = {name: value for name, value in [("root", root), ("db_path", db_path)] if name in parameters}
    result = matcher(text, **kwargs)
    for name in ("matches", "results"):
        if hasattr(result, name):
            return list(getattr(result, name))
    return list(result)


def _as_match(item) -> Match:
    get = item.get if isinstance(item, dict) else (lambda key: getattr(item, key, None))
    reasons = get("reasons") or []
    if isinstance(reasons, str):
        reasons = [reasons]
    return Match(slug=str(get("slug")), score=float(get("score") or 0), reasons=[str(r) for r in reasons])
