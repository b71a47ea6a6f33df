"""The match page's one entry point: errkb's matcher (errkb.matching), the same one `errkb match` uses.

Matches run on a small pool of worker threads, each with a Matcher of its own (one Matcher serialises its
callers behind a lock), within a time budget per request; so a heavy paste delays no other request by more
than its budget, and requests queue only when every worker is busy.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import matching as matching_package
from .. import paste
from ..matching import index
from ..paste import clip

MAX_INPUT = 200_000  # characters; a longer paste keeps both ends and the exception lines between (paste.clip)
MAX_BODY_BYTES = 4 * 1024 * 1024  # of a POSTed form (plugin.py answers 413 above): a 1 MB paste, url-encoded
BUDGET_S = 2.0  # of pattern checks per request (paste.time_budget); the answer then says it is partial
WORKERS = 4


class ThreadMatchers:
    """A Matcher per worker thread and catalog, reopened when its catalog's index changes."""

    def __init__(self) -> None:
        self._local = threading.local()

    def matcher_for(self, root: Path):
        cache = self._local.__dict__.setdefault("matchers", {})
        matcher = cache.get(root)
        if matcher is None or not index.is_fresh(matcher.conn):
            matcher = cache[root] = matching_package.Matcher.open(root)
        return matcher

    def match(self, text: str, root: Path | None = None, limit: int = 5):
        return self.matcher_for(root).match(text, limit=limit)


matcher = ThreadMatchers()
_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="errkb-match")


@dataclass
class Match:
    slug: str
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Answer:
    matches: list[Match]
    engine: str  # "errkb.matching", or why it failed
    note: str | None = None  # what a long paste had left out, or that the time budget ran out

    @property
    def failed(self) -> bool:
        """The page names the matcher only when it failed."""
        return self.engine != "errkb.matching"


def prepare(root: Path) -> str | None:
    """Let the matcher bring its index in catalog.db up to date now, before the file is served immutable.

    Returns why it could not, or None.
    """
    try:
        matching_package.matcher_for(root)
    except Exception as exc:  # a broken matcher must not stop the catalog from being browsed
        return f"{type(exc).__name__}: {exc}"
    return None


def _match_within_budget(text: str, root: Path):
    with paste.time_budget(BUDGET_S):
        found = matcher.match(text, root=root)
        return found, paste.over_budget()


async def match(datasette, database: str, text: str) -> Answer:
    clipped = clip(text, MAX_INPUT)
    db = datasette.get_database(database)
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    try:
        found, stopped = await loop.run_in_executor(
            _pool, context.run, _match_within_budget, clipped.text, Path(db.path).parent
        )
    except Exception as exc:  # shown on the page; browsing goes on
        return Answer([], f"errkb.matching failed: {type(exc).__name__}: {exc}", clipped.note())
    notes = [clipped.note()] if clipped.cut else []
    if stopped:
        notes.append(f"matching stopped after its {BUDGET_S:g} s budget, so some records were not checked.")
    return Answer([Match(m.slug, m.score, m.why().split("; ")) for m in found], "errkb.matching", " ".join(notes) or None)
