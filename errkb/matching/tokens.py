"""Words: of a text, of a message (for similarity), and the words every match of a pattern must contain.

Two word notions, each used consistently on both sides of a comparison:
- `words`: maximal runs of [A-Za-z0-9_], lower-cased. The pattern prefilter compares the words a
  pattern requires with the words of the paste; the same definition on both sides keeps it exact.
- `terms`: `words` without stop words and numbers, a plural "s" dropped, each flagged when it sits
  inside quotes (quoted text in a message is usually a value: a key, an attribute, a module name).

A pattern's *opening clause* (`opening_clause`) is the literal text it starts with, up to a comma,
semicolon or colon, when values (wildcards) follow: the statement of the error before its details.
"""

from __future__ import annotations

import re
import re._constants as sre_constants  # Python's own regex parser, used only to read pattern structure
import re._parser as sre_parser

WORD = re.compile(r"[A-Za-z0-9_]+")
QUOTED_VALUE = re.compile(r"""(?<![A-Za-z0-9])(['"])([^'"\n]{1,200}?)\1(?![A-Za-z0-9])""")  # group 2: the value
_NUMBER = re.compile(r"\d+|0x[0-9a-f]+|\d+(?:x\d+)+|\d+(?:e\d+)?")

STOP_WORDS = frozenset(
    """a an and are as at be been being but by can could did do does for from had has have if in into
    is it its may might must of on or please should so such than that the their then there these this
    those to was were will with would you your we our which who when while also any all""".split()
)
# RE2 syntax that Python's parser reads differently or not at all: such patterns get no required words.
_RE2_ONLY = ("[[:", "\\p", "\\P", "\\C", "\\Q", "\\z", "(?U")


def words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text)}


def stem(word: str) -> str:
    word = word.lower()
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[tuple[str, bool]]:
    """(term, quoted) for each content word of a message, in order."""
    quoted_spans = [m.span(2) for m in QUOTED_VALUE.finditer(text)]
    out = []
    for match in WORD.finditer(text):
        word = match.group().lower()
        if word in STOP_WORDS or _NUMBER.fullmatch(word) or len(word) < 2:
            continue
        start = match.start()
        quoted = any(a <= start < b for a, b in quoted_spans)
        out.append((stem(word), quoted))
    return out


OPENING_TERMS = 4  # content terms an opening clause needs: a short one ("Input and", "The size of") says little
_CLAUSE_END = ",;:"

_BREAK = object()  # any text may stand here: a word next to it may be longer in the matched text
_EDGE = object()  # ^, $, \b: the matched text has no word character here


def analyse(pattern: str) -> tuple[list[set[str]] | None, set[str] | None, str | None]:
    """(word_choices, literal_words, opening_clause) of a pattern; Nones when it cannot be read."""
    parsed = _parse(pattern)
    if parsed is None:
        return None, None, None
    return _choices_of(parsed), _literals_of(parsed), _opening_of(parsed)


def opening_clause(pattern: str) -> str | None:
    """The literal clause a pattern opens with, when the pattern goes on with values; else None.

    "Expected all tensors to be on the same device, but found at least two devices, [\\w:]+ and
    [\\w:]+!" opens with "Expected all tensors to be on the same device". The clause must be plain
    text up to its comma, semicolon or colon (no wildcard, group or alternative before it, no
    sentence ending inside it), hold at least OPENING_TERMS content terms, and be followed, somewhere
    in the rest of the pattern, by a value (a character class or a wildcard). A pattern that goes on
    with a second sentence of fixed wording ("... a new one. This error indicates that ...") has no
    opening clause: that wording tells its error from others that start alike.
    """
    parsed = _parse(pattern)
    return None if parsed is None else _opening_of(parsed)


def _opening_of(parsed) -> str | None:
    items = list(parsed)
    text: list[str] = []
    for position, (op, av) in enumerate(items):
        if position == 0 and op is sre_constants.AT:
            continue  # ^ or \A
        char = _literal_char(op, av)
        if char is None or char in "\n!?":
            return None
        if char == "." and (position + 1 == len(items) or _literal_char(*items[position + 1]) in (None, " ")):
            return None  # a sentence ends before any clause does
        if char in _CLAUSE_END:
            clause = " ".join("".join(text).split())
            enough = len({term for term, _ in terms(clause)}) >= OPENING_TERMS
            return clause if enough and _has_value(items[position + 1:]) else None
        text.append(char)
    return None


def _literal_char(op, av) -> str | None:
    if op is sre_constants.LITERAL:
        return chr(av)
    if op is sre_constants.IN:
        return _one_letter(av)
    return None


def _one_letter(av) -> str | None:
    """The character a class stands for when it is one literal (`[.]`) or one letter in either case (`[Dd]`).

    Words are compared lower-cased, so `[Dd]imension` spells the word "dimension": a case alternative at the
    start of a sentence is wording, not a value.
    """
    if not av or any(op is not sre_constants.LITERAL for op, _ in av):
        return None
    chars = {chr(code) for _, code in av}
    if len(chars) == 1:
        return chars.pop()
    if len({char.lower() for char in chars}) == 1 and len(chars) == 2:
        return min(chars).lower()
    return None


def _has_value(parsed) -> bool:
    """Whether part of a parsed pattern matches variable text (a class, `.`, `\\d`), not only fixed wording."""
    for op, av in parsed:
        if _literal_char(op, av) is not None or op is sre_constants.AT:
            continue
        if op is sre_constants.SUBPATTERN:
            if _has_value(av[-1]):
                return True
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
            if _has_value(av[2]):
                return True
        elif op is sre_constants.BRANCH:
            if any(_has_value(branch) for branch in av[1]):
                return True
        else:  # IN, ANY, CATEGORY, NOT_LITERAL, ...
            return True
    return False


def _parse(pattern: str):
    if any(marker in pattern for marker in _RE2_ONLY):
        return None
    try:
        return sre_parser.parse(pattern)
    except Exception:  # noqa: BLE001 - any syntax this parser does not know: stay safe
        return None


def required_words(pattern: str) -> set[str] | None:
    """Words (as `words` spells them) that every text the pattern matches contains.

    None when the pattern cannot be read here (its words are then unknown, and it is tried on every paste).
    The set may be empty (a pattern made of wildcards).
    """
    parsed = _parse(pattern)
    return None if parsed is None else _required(parsed)


def _required(parsed) -> set[str] | None:
    items: list = []
    try:
        _flatten(parsed, items)
    except _Unreadable:
        return None
    return _words_of_items(items)


MAX_CHOICES = 64  # alternatives spelled out before a pattern falls back to the words all of them share


def word_choices(pattern: str) -> list[set[str]] | None:
    """The required words of each alternative of a pattern: every text it matches contains all the words of at
    least one of the sets. `(?:A|B) tail` gives the words of `A tail` and of `B tail`, so two wordings that share
    no word (torch.load's `failed finding central directory` and `Expected hasRecord("version")`) each keep an
    anchor. Alternatives inside a repeat are not spelled out; past MAX_CHOICES, one set: the shared words.
    None when the pattern cannot be read here."""
    parsed = _parse(pattern)
    return None if parsed is None else _choices_of(parsed)


def _choices_of(parsed) -> list[set[str]] | None:
    try:
        sequences = _expand(parsed, [[]])
    except _Unreadable:
        return None
    if sequences is None:
        shared = _required(parsed)
        return None if shared is None else [shared]
    choices: list[set[str]] = []
    for items in sequences:
        found = _words_of_items(items)
        if found not in choices:
            choices.append(found)
    return choices


def _expand(parsed, prefixes: list[list]) -> list[list] | None:
    """Every flattened item sequence the pattern's alternatives give, each after one of `prefixes`; None past
    MAX_CHOICES."""
    for op, av in parsed:
        if op is sre_constants.SUBPATTERN:
            prefixes = _expand(av[-1], prefixes)
        elif op is sre_constants.BRANCH:
            grown = []
            for branch in av[1]:
                expanded = _expand(branch, [list(prefix) for prefix in prefixes])
                if expanded is None:
                    return None
                grown += expanded
            if len(grown) > MAX_CHOICES:
                return None
            prefixes = grown
        else:
            for prefix in prefixes:
                _flatten([(op, av)], prefix)
        if prefixes is None:
            return None
    return prefixes


def _words_of_items(items: list) -> set[str]:
    found: set[str] = set()
    current: list[str] = []
    left_closed = False  # search semantics: the match may start inside a longer word
    for item in items + [_BREAK]:
        if isinstance(item, str):
            current.append(item)
            continue
        found |= _complete_words("".join(current), left_closed, item is _EDGE)
        current = []
        left_closed = item is _EDGE
    return found


def literal_words(pattern: str) -> set[str] | None:
    """Terms (as `terms` spells them) written literally anywhere in the pattern, optional parts included.

    The words of a record's message that the pattern spells out are its wording; the others
    (matched by wildcards) are values. None when the pattern cannot be read here.
    """
    parsed = _parse(pattern)
    return None if parsed is None else _literals_of(parsed)


def _literals_of(parsed) -> set[str]:
    runs: list[str] = []
    _literal_runs(parsed, runs, [])
    return {stem(word) for run in runs for word in WORD.findall(run)}


def _literal_runs(parsed, runs: list[str], current: list[str]) -> None:
    def flush():
        if current:
            runs.append("".join(current))
            current.clear()

    for op, av in parsed:
        if op is sre_constants.LITERAL:
            current.append(chr(av))
        elif op is sre_constants.SUBPATTERN:
            _literal_runs(av[-1], runs, current)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
            flush()
            _literal_runs(av[2], runs, current)
            flush()
        elif op is sre_constants.BRANCH:
            flush()
            for branch in av[1]:
                _literal_runs(branch, runs, current)
                flush()
        elif op is sre_constants.IN and (letter := _one_letter(av)) is not None:
            current.append(letter)
        else:
            flush()
    flush()


class _Unreadable(Exception):
    pass


def _flatten(parsed, items: list) -> None:
    for op, av in parsed:
        if op is sre_constants.LITERAL:
            items.append(chr(av))
        elif op is sre_constants.SUBPATTERN:
            _flatten(av[-1], items)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
            low, _high, body = av
            items.append(_BREAK)
            if low >= 1:
                _flatten(body, items)
                items.append(_BREAK)
        elif op is sre_constants.IN and (letter := _one_letter(av)) is not None:
            items.append(letter)
        elif op is sre_constants.AT:
            if av in (sre_constants.AT_NON_BOUNDARY,):
                items.append(_BREAK)
            else:
                items.append(_EDGE)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT, sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS):
            raise _Unreadable  # not RE2 syntax; the pattern would not compile anyway
        else:  # ANY, IN, NOT_LITERAL, BRANCH, CATEGORY, ...
            items.append(_BREAK)


def _complete_words(run: str, left_closed: bool, right_closed: bool) -> set[str]:
    """Words of a literal run that are whole words in any match: bounded on both sides."""
    out = set()
    for match in WORD.finditer(run):
        left_ok = match.start() > 0 or left_closed
        right_ok = match.end() < len(run) or right_closed
        if left_ok and right_ok:
            out.add(match.group().lower())
    return out
