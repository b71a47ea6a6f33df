"""The match page's one entry point: errkb's matcher (errkb.matching), the same one `errkb match` uses."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from .. import matching as matcher
from ..paste import clip

MAX_INPUT = 200_000  # characters; a longer paste keeps both ends and the exception lines between (paste.clip)


@dataclass
class Match:
    slug: str
    score: float
    reasons: list[str] = field(default_factory=list)


@dataclass
class Answer:
    matches: list[Match]
    engine: str  # "errkb.matching", or why it failed
    note: str | None = None  # what a long paste had left out

    @property
    def failed(self) -> bool:
        """The page names the matcher only when it failed."""
        return self.engine != "errkb.matching"


def prepare(root: Path) -> str | None:
    """Let the matcher bring its index in catalog.db up to date now, before the file is served immutable.

    Returns why it could not, or None.
    """
    try:
        matcher.matcher_for(root)
    except Exception as exc:  # a broken matcher must not stop the catalog from being browsed
        return f"{type(exc).__name__}: {exc}"
    return None


async def match(datasette, database: str, text: str) -> Answer:
    clipped = clip(text, MAX_INPUT)
    db = datasette.get_database(database)
    try:
        found = await asyncio.to_thread(matcher.match, clipped.text, root=Path(db.path).parent)
    except Exception as exc:  # shown on the page; browsing goes on
        return Answer([], f"errkb.matching failed: {type(exc).__name__}: {exc}", clipped.note())
    return Answer([Match(m.slug, m.score, m.why().split("; ")) for m in found], "errkb.matching", clipped.note())
