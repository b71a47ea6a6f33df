"""Many RE2 patterns tried in one pass: `re2.Set`, in shards.

RE2::Set fails to compile at the default memory budget even for ~2,000 patterns, so each shard
gets a larger `max_mem` and holds at most SHARD_SIZE patterns. A shard that still fails is split
in two; a single pattern that fails is kept aside and tried on its own.
"""

from __future__ import annotations

import re2

from ..patterns import compile_pattern

SHARD_SIZE = 5_000
MAX_MEM = 256 << 20  # bytes per shard


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = MAX_MEM
    return options


class PatternSet:
    """Which of `patterns` (`re.search` semantics, RE2 syntax) match a text."""

    def __init__(self, patterns: list[str], shard_size: int = SHARD_SIZE):
        self.patterns = list(patterns)
        self._shards: list[tuple[re2.Set, list[int]]] = []
        self._alone: list[int] = []
        for start in range(0, len(self.patterns), shard_size):
            self._build(list(range(start, min(start + shard_size, len(self.patterns)))))

    def _build(self, ids: list[int]) -> None:
        shard = re2.Set.SearchSet(_options())
        try:
            for i in ids:
                shard.Add(self.patterns[i])
            shard.Compile()
        except re2.error:
            if len(ids) == 1:
                self._alone.append(ids[0])
                return
            half = len(ids) // 2
            self._build(ids[:half])
            self._build(ids[half:])
            return
        self._shards.append((shard, ids))

    def search(self, text: str) -> set[int]:
        """Indexes of the patterns that match somewhere in `text`."""
        hits: set[int] = set()
        for shard, ids in self._shards:
            for local in shard.Match(text) or ():
                hits.add(ids[local])
        for i in self._alone:
            try:
                if compile_pattern(self.patterns[i]).search(text):
                    hits.add(i)
            except ValueError:
                pass  # a pattern RE2 rejects matches nothing
        return hits
