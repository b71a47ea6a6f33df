"""A messagePattern from one error message: the variable parts (numbers, shapes, dtypes, devices, quoted names,
paths, addresses) become classes, the rest stays literal, and the result must match the message and none of a
corpus of unrelated messages (the catalog's own and the committed negative set, negatives.txt)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..patterns import PatternError, compile_pattern, pattern_matches

NEGATIVES = Path(__file__).with_name("negatives.txt")
MAX_LENGTH = 160  # characters of the message a pattern covers: the opening words identify an error
MIN_SENTENCE = 20  # a first sentence shorter than this is not distinctive alone

DTYPES = (
    "torch.float16|torch.float32|torch.float64|torch.bfloat16|torch.int8|torch.int16|torch.int32|torch.int64|"
    "torch.uint8|torch.bool|torch.complex64|torch.complex128|torch.half|torch.float|torch.double|torch.long|torch.int|"
    "BFloat16|ComplexFloat|ComplexDouble|Float|Double|Half|Long|Int|Short|Byte|Char|Bool|"
    "float16|float32|float64|bfloat16|int8|int16|int32|int64|uint8"
)
DTYPE_CLASS = r"(?:torch\.)?\w+"
DEVICE_CLASS = r"[\w:]+"

# (name, regex over the message, the class that replaces a hit, the level from which it applies).
# Level 2 generalises everything; level 1 keeps quoted names and dtypes literal; level 0 is the escaped text.
RULES = [
    ("address", r"0x[0-9a-fA-F]+", r"0x[0-9a-fA-F]+", 1),
    ("path", r"(?:[A-Za-z]:\\|/)[^\s'\"(),]+", r"\S+", 1),
    ("shape", r"torch\.Size\(\[[\d, ]*\]\)|\[\d+(?:, ?\d+)*\]|\(\d+(?:, ?\d+)+\)", r"(?:torch\.Size\()?[\[(][\d, ]*[\])]\)?", 1),
    ("device", r"\b(?:cuda:\d+|cuda|cpu|mps|meta|xpu:\d+)\b", DEVICE_CLASS, 2),
    ("dtype", rf"\b(?:{DTYPES})\b", DTYPE_CLASS, 2),
    # A quote opens and closes beside no letter: the apostrophe of "can't" is not one.
    ("quoted", r"(?<![\w\\])(?:'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|`[^`\n]{1,80}`)(?!\w)", None, 2),  # class from the quote
    ("bracketed", r"\[[A-Za-z_][\w.]*\]", r"\[[\w.]+\]", 2),  # Module [Classifier], a class or key name
    # A module or parameter name (encoder.layer); a called name (Trainer.__init__()) names the error: kept.
    ("dotted", r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b(?!\()", r"[\w.]+", 2),
    ("sizes", r"\b\d+(?:x\d+)+\b", r"\d+(?:x\d+)*", 1),  # 64x3136
    ("amount", r"\b\d+(?:\.\d+)? ?(?:[KMGT]i?B|B|bytes)\b", r"\d+(?:\.\d+)? ?(?:[KMGT]i?B|B|bytes)", 1),
    ("number", r"-?\b\d+(?:\.\d+)?\b", r"-?[\d.]+", 1),
]
TOKEN = re.compile("|".join(f"(?P<{name}>{regex})" for name, regex, _, _ in RULES))
_CLASSES = {name: (cls, level) for name, _, cls, level in RULES}


PLAIN = set(" #&~-:!'\"=<>,%@;/`")  # characters re.escape escapes that RE2 reads plainly


class GeneraliseError(ValueError):
    pass


@dataclass(frozen=True)
class Generalised:
    pattern: str
    level: int  # 2: every variable part is a class; 1: only numbers, shapes, paths, addresses; 0: literal
    covered: str  # the part of the message the pattern stands for
    rejected: tuple[str, ...] = ()  # why more general patterns were refused


def head(message: str) -> str:
    """The part of the message a pattern covers: its first line, cut at a sentence end when long."""
    line = message.strip().split("\n", 1)[0].strip()
    if len(line) <= MAX_LENGTH:
        return line
    cut = line.find(". ", MIN_SENTENCE)
    if 0 < cut <= MAX_LENGTH:
        return line[: cut + 1]
    cut = line.rfind(" ", MIN_SENTENCE, MAX_LENGTH)
    return line[: cut if cut > 0 else MAX_LENGTH]


def pattern_at(text: str, level: int) -> str:
    parts, position = [], 0
    for found in TOKEN.finditer(text):
        name = found.lastgroup
        cls, from_level = _CLASSES[name]
        if level < from_level:
            continue
        parts.append(re.escape(text[position:found.start()]))
        if name == "quoted":
            quote = found.group()[0]
            cls = f"{re.escape(quote)}[^{re.escape(quote)}\\n]*{re.escape(quote)}"
        parts.append(cls)
        position = found.end()
    parts.append(re.escape(text[position:]))
    pattern = "".join(parts)
    return _tidy(pattern)


def _tidy(pattern: str) -> str:
    """re.escape escapes spaces and a few harmless characters; RE2 reads them plainly, people read them better."""
    return re.sub(r"\\(.)", lambda found: found.group(1) if found.group(1) in PLAIN else found.group(0), pattern)


def skeleton(text: str) -> str:
    """The message's first line with every variable part replaced by its kind: two wordings of one error share it.
    Not cut to head(): a long path would cut one wording and not the other."""
    return TOKEN.sub(lambda found: f"<{found.lastgroup}>", text.strip().split("\n", 1)[0].strip())


def corpus(extra: list[str] = ()) -> list[str]:
    lines = [line for line in NEGATIVES.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return [*lines, *extra]


def generalise(message: str, negatives: list[str], levels: tuple[int, ...] = (2, 1, 0)) -> Generalised:
    """The most general pattern (level 2, then 1, then 0) that matches `message` and none of `negatives`.
    `levels=(1, 0)` keeps quoted names literal: for a name a library lacks, the name is the error."""
    covered = head(message)
    if len(covered) < 3:
        raise GeneraliseError(f"the message {message!r} is too short to identify an error; write messagePattern by hand")
    rejected = []
    same_error = skeleton(message)
    negatives = [text for text in negatives if skeleton(text) != same_error]  # the same error with other numbers
    for level in levels:
        pattern = pattern_at(covered, level)
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            rejected.append(f"level {level}: {pattern!r} {exc}")
            continue
        if not pattern_matches(pattern, message):
            rejected.append(f"level {level}: {pattern!r} does not match the message")
            continue
        clash = next((text for text in negatives if pattern_matches(pattern, text)), None)
        if clash is not None:
            rejected.append(f"level {level}: {pattern!r} also matches an unrelated message: {clash[:120]!r}")
            continue
        return Generalised(pattern, level, covered, tuple(rejected))
    raise GeneraliseError("no pattern generalised from the message passes the checks: " + "; ".join(rejected))
