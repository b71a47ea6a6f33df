"""The one regex engine errkb uses for `messagePattern`: RE2, which runs in linear time."""

from __future__ import annotations

import functools

import re2

_options = re2.Options()
_options.log_errors = False


class PatternError(ValueError):
    pass


def _explain(reason: str) -> str:
    if "invalid perl operator: (?=" in reason or "invalid perl operator: (?!" in reason or "(?<" in reason:
        return f"{reason}: RE2 (linear-time) does not support lookarounds; rewrite the pattern without them"
    if "invalid escape sequence: \\" in reason and reason[-1:].isdigit() or "(?P=" in reason:
        return f"{reason}: RE2 (linear-time) does not support backreferences; rewrite the pattern without them"
    return reason


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str):
    """Compile with RE2; raise PatternError saying why a pattern is not accepted."""
    try:
        return re2.compile(pattern, options=_options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"does not compile in RE2: {_explain(reason)}") from None


def pattern_matches(pattern: str, text: str, cache: bool = True) -> bool:
    compiled = compile_pattern(pattern) if cache else compile_pattern.__wrapped__(pattern)
    return compiled.search(text) is not None
