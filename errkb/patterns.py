"""The one regex engine errkb uses for `messagePattern`: RE2, which runs in linear time, within a cost budget.

Linear is not cheap enough on its own: RE2's time per character grows with its compiled program, and past its
DFA memory it falls back to a much slower engine (`(?i)(?:\\w+\\s*){1,999}x` took 122 s on a 1 MB log). So a
pattern whose program is larger than MAX_PROGRAM_SIZE is refused (the catalog's largest is about 220; a
60-fold repeated group is about 900), and so is a pattern that matches any text (`.*`, `(?s).*`): it would
match every paste. So is one that matches almost any error line (a digit, `Error`, two words): it is tried on
every pasted message and on the whole paste, so it claims pastes its record has nothing to do with. UNRELATED
holds error lines of Python itself and of libraries the catalog does not cover; a pattern matching more than
UNRELATED_ALLOWED of them is refused.
"""

from __future__ import annotations

import functools

import re2

_options = re2.Options()
_options.log_errors = False


MAX_PROGRAM_SIZE = 1_000
# A pattern that matches one of these matches anything: no error message looks like them.
ANY_TEXT = ("", "\n", "x", "lorem ipsum dolor sit amet")
UNRELATED = (
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "KeyError: 'label'",
    "IndexError: list index out of range",
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train_2024.csv'",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "ZeroDivisionError: division by zero",
    "ModuleNotFoundError: No module named 'sklearn'",
    "OSError: [Errno 28] No space left on device",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.com', port=443): Max retries exceeded",
    "  File \"/home/user/project/train.py\", line 42, in main",
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
)
UNRELATED_ALLOWED = 2


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
        regex = re2.compile(pattern, options=_options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"does not compile in RE2: {_explain(reason)}") from None
    if regex.programsize > MAX_PROGRAM_SIZE:
        raise PatternError(
            f"is too costly to match: its RE2 program has {regex.programsize} instructions, expected at most "
            f"{MAX_PROGRAM_SIZE} (use fewer or smaller repetitions such as {{1,999}})"
        )
    generic = next((text for text in ANY_TEXT if regex.search(text)), None)
    if generic is not None:
        raise PatternError(f"matches any text (it matches {generic!r}); expected a pattern that only the error message matches")
    unrelated = [text for text in UNRELATED if regex.search(text)]
    if len(unrelated) > UNRELATED_ALLOWED:
        raise PatternError(
            f"matches almost any error line (it matches {len(unrelated)} of {len(UNRELATED)} unrelated ones, e.g. "
            f"{unrelated[0]!r}); expected a pattern that only the error message matches"
        )
    return regex


def pattern_matches(pattern: str, text: str, cache: bool = True) -> bool:
    compiled = compile_pattern(pattern) if cache else compile_pattern.__wrapped__(pattern)
    return compiled.search(text) is not None
