"""A pasted traceback or log, cleaned: the exceptions and warnings it reports, with their messages.

Real pastes are noisy. `parse` removes colour codes and per-line log prefixes (timestamps, levels,
`[rank0]:`), keeps each rank's lines apart, finds every exception and warning line (chained
exceptions, DataParallel's "Original Traceback"), gathers a message's continuation lines, and
offers the message in a few spellings, because a terminal or a log viewer may have wrapped it,
even in the middle of a word. When no exception line is found, each paragraph written mostly in
Latin letters becomes a candidate message (a bare message pasted inside a question).

A paste longer than MAX_PASTE_CHARS is clipped by `clip`: its beginning and its end are kept (a
log may hold the traceback near its top and hours of training output after it), and so are the
lines that look like exception lines in between, found by one cheap scan.

Only fixed regular expressions of our own run here, over bounded input; no user text is compiled.
"""

from __future__ import annotations

import re
import time
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, TypeVar

MATCH_BUDGET_S = 5.0  # seconds of pattern checks per paste (from `parse`); `time_budget` changes it
MAX_PASTE_CHARS = 1_000_000  # a longer paste is clipped (`clip`) to at most this many characters
END_SHARE = 0.4  # of the limit, for the beginning and again for the end of a clipped paste
EXCERPT_CHARS = 8_000  # kept from each exception line found between the two ends
EXCERPT_SCAN = 100_000  # exception-line hits looked at between the two ends, at most (~2 µs each)
MAX_MESSAGE_LINES = 60
MAX_MESSAGE_CHARS = 20_000  # of one message (a record's errorMessage has at most 5,000); the rest is not a message
MAX_MESSAGES = 200  # exceptions (or bare paragraphs) of one paste that are matched: the first and last half

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Colour codes whose ESC byte was lost on the way to the clipboard: "[31mRuntimeError[0m".
_BARE_SGR = re.compile(r"\[\d{1,3}(?:;\d{1,3})*m")

# Prefixes that only say which process said it: kept streams apart, not a new log record.
_STREAM_PREFIX = re.compile(
    r"^(?:\[(?P<rank>(?:rank|default)\d+)\]:(?: )?"  # torchrun: [rank0]:  [default0]:
    r"|\[(?P<mpi>\d+,\d+)\]<std(?:out|err)>:(?: )?"  # mpirun --tag-output: [1,0]<stderr>:
    r"|(?P<srun>\d{1,4}): (?=\S))"  # srun --label: 0: Traceback ...
)
# Prefixes that start a new log record.
_RECORD_PREFIXES = [
    re.compile(r"^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?[ \t]*"),
    re.compile(r"^\[?\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?[ \t]*(?:-[ \t]*)?"),
    re.compile(r"^\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\]?[ \t]+"),
    # glog / c10 style: [W1129 15:00:00.123456 12345 torch/csrc/x.cpp:12] or W1129 15:00:00.1 123 x.cc:1]
    re.compile(r"^\[?[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+\S+:\d+\]\s?"),
    # loguru: | ERROR    | module:function:12 - message
    re.compile(r"^\|\s*[A-Z]+\s*\|\s*[\w.<>]+:[\w.<>]+:\d+\s*-\s*"),
    # logging: ERROR:root:  WARNING:__main__:  [ERROR]  ERROR |  name - ERROR -
    re.compile(r"^\[(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\][ \t]*"),
    re.compile(r"^(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL):[\w.<>-]*:[ \t]?"),
    re.compile(r"^(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)(?:[ \t]*[|\-][ \t]*|[ \t]+)"),
    re.compile(r"^[\w.-]+ - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - "),
    # transformers: [INFO|trainer.py:2134] 2026-06-03 11:20:04,551 >>
    re.compile(r"^\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\|[^\]]*\][ \t]*(?:\d{4}-\d{2}-\d{2} [\d:,.]+[ \t]*)?>>[ \t]?"),
]
# All of them as one expression (tried in the same order): one match per line instead of one per prefix.
_RECORD_PREFIX = re.compile("|".join(f"(?:{prefix.pattern})" for prefix in _RECORD_PREFIXES))
# Decorations of a quoted paste: markdown quotes and fences, pytest's "E   ".
_QUOTE_PREFIX = re.compile(r"^(?:> ?|E {3})")
_FENCE = re.compile(r"^\s*(?:```|~~~)\w*\s*$")

_CLASS = r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning|Interrupt|Exit|Failure|Fault)"
_EXCEPTION_LINE = re.compile(rf"^(?P<cls>{_CLASS})(?::[ \t]?(?P<msg>.*))?$")
_WARNING_LINE = re.compile(rf"^(?P<path>\S.*?):(?P<line>\d+): (?P<cls>{_CLASS}): (?P<msg>.*)$")
_FRAME_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_TRACEBACK_START = re.compile(r"^(?:Original )?Traceback \(most recent call last\):\s*$")
_CHAIN_LINE = re.compile(
    r"^(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)\s*$"
)
# An exception or warning line anywhere in raw text (colour codes may sit before the colon).
_RAISED_HINT = re.compile(r"[A-Za-z_](?:Error|Exception|Warning|Interrupt|Exit|Failure|Fault)(?:\x1b?\[[0-9;]*m)*:")
_PROMPT = re.compile(r"^(?:\(\S+\) )?(?:\$|#|>>>|In \[\d+\]:|\w+@[\w.-]+:\S*\$) ")
_WORD = re.compile(r"[A-Za-z0-9_]")


@dataclass
class Line:
    text: str
    new_record: bool = False  # a timestamp or log level was stripped: a new log record starts here


@dataclass
class Raised:
    """One exception or warning found in the paste."""

    cls: str | None  # None for a bare message found without a class
    lines: list[str]  # the message, first line first (continuation lines as printed)
    kind: str = "error"  # "error", "warning" or "bare"
    position: int = 0  # order of appearance in the paste
    spellings: list[str] = field(default_factory=list)  # the message as it may have read before wrapping

    @property
    def message(self) -> str:
        """The message unwrapped into one best guess."""
        return self.spellings[0] if self.spellings else "\n".join(self.lines)

    @property
    def header(self) -> str:
        first = self.lines[0] if self.lines else ""
        return f"{self.cls}: {first}" if self.cls else first


@dataclass
class Paste:
    text: str  # cleaned: colour codes and prefixes gone, one stream after another
    raised: list[Raised]

    @property
    def targets(self) -> list[str]:
        """Every text a message pattern is tried on: each spelling of each message, then the whole paste."""
        seen, out = set(), []
        for item in self.raised:
            for text in item.spellings:
                if text not in seen:
                    seen.add(text)
                    out.append(text)
        if self.text not in seen:
            out.append(self.text)
        return out


@dataclass
class Clipped:
    """A paste cut to a bounded size (`clip`): both ends, and excerpts around exception lines in between."""

    text: str
    length: int  # characters of the original paste
    head: int = 0  # characters kept from its beginning (0: nothing was cut)
    tail: int = 0  # characters kept from its end
    excerpts: int = 0  # excerpts kept from between the two ends
    incomplete: bool = False  # exception lines between the ends were left unread: no room, or too many to scan

    @property
    def cut(self) -> bool:
        return len(self.text) < self.length

    def note(self) -> str | None:
        """What was left out, in words; None when nothing was."""
        if not self.cut:
            return None
        read = f"the first {self.head:,} and the last {self.tail:,} characters"
        if self.excerpts:
            read += f", and {self.excerpts:,} excerpt{'s' if self.excerpts != 1 else ''} around exception lines in between,"
        more = " (further exception lines in between were not read)" if self.incomplete else ""
        return f"the input has {self.length:,} characters; only {read} were read{more}."


def clip(text: str, limit: int = MAX_PASTE_CHARS) -> Clipped:
    """`text` when it has at most `limit` characters; else its beginning and end, and excerpts between.

    Each end gets END_SHARE of the limit, cut at a line break. Between them, lines that look like
    exception or warning lines (one regular-expression scan, at most EXCERPT_SCAN hits) are kept
    with what follows them up to a blank line, the next such line or EXCERPT_CHARS (the message
    and its continuation lines), each distinct line once, in order, while the rest of the limit
    lasts. Parts are joined with a blank line, which ends a message. The result never exceeds
    `limit`: clipping a clipped paste changes nothing.
    """
    if len(text) <= limit:
        return Clipped(text, len(text))
    end = int(limit * END_SHARE)
    head_end = _line_start(text, end, end // 2)
    tail_start = _line_start(text, len(text) - end, len(text) - end // 2, forward=True)
    budget = limit - head_end - (len(text) - tail_start) - 2
    parts, seen = [text[:head_end]], set()
    excerpts = scanned = 0
    incomplete = False
    position = head_end
    while True:
        found = _RAISED_HINT.search(text, position, tail_start)
        if not found:
            break
        if scanned == EXCERPT_SCAN:
            incomplete = True
            break
        scanned += 1
        start = _line_start(text, found.start(), max(found.start() - 1_000, position))
        if start == found.start():  # no line break near: at least keep the whole class name
            while start > position and start > found.start() - 200 and (text[start - 1].isalnum() or text[start - 1] in "_."):
                start -= 1
        line_end = text.find("\n", found.end(), min(found.end() + 400, tail_start))
        key = text[found.start():line_end if line_end >= 0 else found.end() + 200]
        if key in seen:
            position = found.end()
            continue
        seen.add(key)
        stop = min(start + EXCERPT_CHARS, tail_start)
        following = _RAISED_HINT.search(text, found.end(), stop)
        if following:  # the next exception line ends this message; it gets an excerpt of its own, once
            stop = max(_line_start(text, following.start(), found.end()), found.end())
        else:
            stop = _line_start(text, stop, found.end())
        blanks = [at for at in (text.find("\n\n", found.end(), stop), text.find("\n\r\n", found.end(), stop)) if at >= 0]
        if blanks:  # so does a blank line
            stop = min(blanks) + 1
        if stop - start + 2 > budget:  # keep what fits, whole lines, if that holds the exception line
            stop = _line_start(text, start + budget - 2, found.end())
            if stop - start + 2 > budget or stop <= found.end():
                incomplete = True
                break
        parts.append(text[start:stop])
        budget -= stop - start + 2
        excerpts += 1
        position = stop
    parts.append(text[tail_start:])
    return Clipped("\n\n".join(parts), len(text), head_end, len(text) - tail_start, excerpts, incomplete)


def _line_start(text: str, at: int, bound: int, forward: bool = False) -> int:
    """The start of a line: the last one beginning in (bound, at], or with `forward` the first in (at, bound].

    `at` itself when no line begins there (a line longer than the window is cut).
    """
    if forward:
        found = text.find("\n", at, bound)
    else:
        found = max(text.rfind("\n", bound, at), text.rfind("\r", bound, at))
    return found + 1 if found >= 0 else at


# A frame line, also when the paste cut its start off (`...torch/autograd/function.py", line 181, in backward`).
_FRAME_FILE = re.compile(r'(?:^\s*File "|^)(?P<path>[^"\n]+)", line \d+')


def frame_paths(text: str) -> list[str]:
    """The files of the traceback frames in a paste, outermost first."""
    return [found.group("path") for line in text.splitlines() if (found := _FRAME_FILE.match(line))]


def strip_colour(text: str) -> str:
    return _BARE_SGR.sub("", _ANSI.sub("", text))


def clean_lines(text: str) -> dict[str, list[Line]]:
    """Lines without colour codes or prefixes, grouped by the process (rank) that wrote them."""
    text = strip_colour(clip(text).text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    streams: dict[str, list[Line]] = {}
    for raw in text.split("\n"):
        stream, line, new_record = "", raw, False
        for _ in range(6):  # prefixes nest: "[rank1]: 2024-01-01 12:00:00 ERROR ..."
            before = line
            found = _STREAM_PREFIX.match(line)
            if found:
                stream = stream or found.group("rank") or found.group("mpi") or found.group("srun")
                line = line[found.end():]
            found = _RECORD_PREFIX.match(line)
            if found and found.end() > 0:
                line = line[found.end():]
                new_record = True
            found = _QUOTE_PREFIX.match(line)
            if found:
                line = line[found.end():]
            if line == before:
                break
        if _FENCE.match(line):
            continue
        streams.setdefault(stream, []).append(Line(line.rstrip("\n"), new_record))
    return streams


def is_foreign(line: str) -> bool:
    """Mostly CJK or Hangul: commentary around the error, not part of an English message."""
    if line.isascii():
        return False
    letters = [c for c in line if not c.isspace()]
    if not letters:
        return False
    wide = sum(1 for c in letters if ord(c) >= 0x2E80)
    return wide / len(letters) > 0.3


def _ends_message(line: Line, kind: str) -> bool:
    text = line.text
    stripped = text.strip()
    if not stripped or line.new_record:
        return True
    if kind == "warning" and text[:1].isspace():
        return True  # the source line Python prints under a warning
    return bool(
        _TRACEBACK_START.match(stripped)
        or _CHAIN_LINE.match(stripped)
        or _FRAME_LINE.match(text)
        or _WARNING_LINE.match(stripped)
        or _EXCEPTION_LINE.match(stripped) and not text[:1].isspace()
        or _PROMPT.match(stripped)
        or is_foreign(stripped)
        or stripped.startswith("^^^") or stripped.startswith("~~~")
    )


def _find_raised(lines: list[Line]) -> list[Raised]:
    found: list[Raised] = []
    i = 0
    while i < len(lines):
        text = lines[i].text.strip()
        kind, match = "error", None
        warning = _WARNING_LINE.match(text)
        if warning:
            kind, match = "warning", warning
        else:
            match = _EXCEPTION_LINE.match(text)
            if match and match.group("cls").endswith("Warning"):
                kind = "warning"
        if not match:
            i += 1
            continue
        message = [match.group("msg") or ""]
        j = i + 1
        while j < len(lines) and len(message) < MAX_MESSAGE_LINES and not _ends_message(lines[j], kind):
            message.append(lines[j].text)
            j += 1
        while len(message) > 1 and not message[-1].strip():
            message.pop()
        found.append(Raised(match.group("cls"), _bounded(message), kind))
        i = j
    return found


def _bounded(lines: list[str]) -> list[str]:
    """At most MAX_MESSAGE_LINES lines and MAX_MESSAGE_CHARS characters of a message."""
    out, room = [], MAX_MESSAGE_CHARS
    for line in lines[:MAX_MESSAGE_LINES]:
        if room <= 0:
            break
        out.append(line[:room])
        room -= len(out[-1]) + 1
    return out


def _bare_messages(lines: list[Line]) -> list[Raised]:
    """Paragraphs of mostly Latin text: a message pasted without its class or traceback."""
    found, block = [], []
    for line in lines + [Line("")]:
        text = line.text.strip()
        if text and not is_foreign(text) and not line.new_record:
            block.append(line.text)
            continue
        if block:
            found.append(Raised(None, _bounded(block), "bare"))
            block = []
        if text and not is_foreign(text):
            block = [line.text]  # a new log record starts a new paragraph
    return found


def spellings(lines: list[str], known: Callable[[str], bool] | None = None) -> list[str]:
    """The message as it may have read before wrapping: best guess first, then as printed."""
    known = known or (lambda word: False)
    first = [lines[0].strip()] + lines[1:]
    guess = _unwrap(first, known)
    as_printed = "\n".join(line.rstrip() for line in first)
    # A tab may have become spaces on the way (load_state_dict indents its key lists with one).
    tabbed = "\n".join([first[0]] + [("\t" + line.lstrip()) if line[:1].isspace() else line for line in first[1:]])
    spaced = " ".join(line.strip() for line in first)
    glued = "".join(first)  # a terminal's hard wrap keeps every character, spaces included
    out = []
    for text in (guess, as_printed, tabbed, spaced, glued):
        if text not in out:
            out.append(text)
    return out


TAIL_CHARS = 200  # of the text so far that a join looks at: a word cut in two is shorter than this
_WORD_AT_START = re.compile(r"[A-Za-z0-9_]+")


def _unwrap(lines: list[str], known: Callable[[str], bool]) -> str:
    """The lines joined back into one message. Linear in the text: each join looks only at the end so far."""
    parts = [lines[0]]
    for line in lines[1:]:
        trim, addition = _join(_tail(parts), line, known)
        if trim:
            while parts and parts[-1][-1:].isspace():
                parts[-1] = parts[-1].rstrip()
                if not parts[-1] and len(parts) > 1:
                    parts.pop()
        parts.append(addition)
    return "".join(parts)


def _tail(parts: list[str]) -> str:
    collected, size = [], 0
    for part in reversed(parts):
        collected.append(part)
        size += len(part)
        if size >= TAIL_CHARS:
            break
    return "".join(reversed(collected))[-TAIL_CHARS:]


def _join(left: str, right: str, known: Callable[[str], bool]) -> tuple[bool, str]:
    """How a wrapped line joins the text before it (whose end is `left`): (strip the trailing spaces of
    the text before, what to append). With a space, or none when a word was cut in two."""
    if right[:1].isspace() or not left or left[-1:].isspace():
        return True, " " + right.strip()  # an indented line, or the space survived
    right = right.strip()
    a, b = left[-1], right[:1]
    if _WORD.match(a) and _WORD.match(b):
        head = _WORD_AT_START.match(left[::-1]).group()[::-1]
        tail = _WORD_AT_START.match(right).group()
        glued = known((head + tail).lower()) and not (known(head.lower()) and known(tail.lower()))
        return False, right if glued else " " + right
    if a in ",;!?)]}" or (a == "." and b.isupper()):
        return False, " " + right
    if a in ":([{/'\"`=.-_" or b in ".,;:!?)]}":
        return False, right
    return False, " " + right


def parse(text: str, known: Callable[[str], bool] | None = None) -> Paste:
    """Find the exceptions and warnings in a pasted traceback or log.

    `known(word)` tells whether a lower-case word is in the catalog's vocabulary; it decides
    whether a line break cut a word in two ("cp" + "u" is "cpu") or replaced a space.
    """
    start_budget()
    streams = clean_lines(text)
    raised: list[Raised] = []
    for lines in streams.values():
        raised.extend(_find_raised(lines))
    if not raised:
        for lines in streams.values():
            raised.extend(_bare_messages(lines))
    unique: dict[tuple, Raised] = {}
    for position, item in enumerate(raised):
        item.position = position
        item.spellings = spellings(item.lines, known)
        unique.setdefault((item.cls, item.message), item)
    kept = list(unique.values())
    if len(kept) > MAX_MESSAGES:  # a long log of distinct warnings: its first and last ones
        kept = kept[: MAX_MESSAGES // 2] + kept[-(MAX_MESSAGES - MAX_MESSAGES // 2):]
    cleaned = "\n\n".join("\n".join(line.text for line in lines) for lines in streams.values())
    return Paste(cleaned, kept)


class MatchBudgetWarning(UserWarning):
    """Matching a paste ran out of its time budget: the patterns not yet checked were skipped."""


_budget_s: ContextVar[float] = ContextVar("errkb_match_budget_s", default=MATCH_BUDGET_S)
_deadline: ContextVar[float | None] = ContextVar("errkb_match_deadline", default=None)
_over_budget: ContextVar[bool] = ContextVar("errkb_match_over_budget", default=False)
T = TypeVar("T")


@contextmanager
def time_budget(seconds: float):
    """Give each paste parsed in this context `seconds` of pattern checks (instead of MATCH_BUDGET_S)."""
    token = _budget_s.set(seconds)
    try:
        yield
    finally:
        _budget_s.reset(token)


def start_budget() -> None:
    """The clock of one paste starts now (`parse` calls it)."""
    _deadline.set(time.monotonic() + _budget_s.get())
    _over_budget.set(False)


def within_budget(items: Iterable[T]) -> Iterator[T]:
    """`items` while the current paste's time budget lasts; then stop, with a MatchBudgetWarning."""
    deadline = _deadline.get()
    for item in items:
        if deadline is not None and time.monotonic() > deadline:
            _over_budget.set(True)
            warnings.warn(
                f"matching stopped after its {_budget_s.get():g} s budget; some patterns were not checked",
                MatchBudgetWarning, stacklevel=2,
            )
            return
        yield item


def over_budget() -> bool:
    """Whether the last paste matched in this context ran out of its budget."""
    return _over_budget.get()
