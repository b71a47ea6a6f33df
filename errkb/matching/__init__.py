"""Matching a pasted traceback or log against the catalog: `match(text)` and the `Matcher` behind it."""

from __future__ import annotations

from .api import find_root, match, matcher_for
from .matcher import Match, Matcher
from .score import THRESHOLD

__all__ = ["Match", "Matcher", "THRESHOLD", "find_root", "match", "matcher_for"]
