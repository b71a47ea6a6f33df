"""How close a record is to a pasted error: pattern, words, class, combined into one score.

- pattern: the record's messagePattern (RE2) matches the pasted message. Patterns are written to
  match the message and tolerate its variable parts, so a hit is strong evidence.
- words: IDF-weighted overlap of the pasted message's terms with the record's message. Mostly how
  much of the *pasted* message the record explains (`covered`), partly how much of the record's
  message is present (`present`): an older, shorter wording of the same error is still explained
  by the record, while a look-alike ("Input and parameter tensors ..." against "Input and hidden
  tensors ...") brings a rare word the record does not explain. Quoted values (key, attribute and
  module names) that the other side lacks are left out of the sums: they are data, not wording.
- opening clause: the pasted message starts with the record's opening clause (tokens.opening_clause:
  the statement of the error, before the values its pattern leaves open), and goes on with details
  of its own. Another library version words the details its own way ("..., but got index is on
  cpu, different from other tensors on cuda:0 (when checking ...)" for "..., but found at least
  two devices, cuda:0 and cpu!"); the whole pasted message then counts as explained (`covered` 1)
  and the words score is what `present` finds of the record's wording.
- class: the exception class agrees (errorClass, compared by its last dotted part). Weak: several
  errors changed class across library versions. A message pasted without its class (quoted in a
  sentence, `str(exc)`) neither gains nor loses by it when the pattern matched: its class is
  unknown, not different, so the same error scores the same from every entry point.
- situation: some records' messages are generic ("The size of tensor a (5) must match ...", raised
  by broadcasting anywhere): the message names none of the record's topics. For those the rest of
  the paste (its frames, file names, the words around it) must show the record's situation (a tag
  such as "crf"); when nothing does, the score is scaled by SITUATION_FACTOR, below the threshold.

THRESHOLD is the score below which a record is not reported; see `docs/matching.md` for how it was
chosen from the paste set in tests/data/pastes/.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Callable

PATTERN_WEIGHT = 0.6
WORDS_WEIGHT = 0.3
CLASS_WEIGHT = 0.1
# Without a pattern hit the words carry the score alone, scaled so a perfect wording match with the
# right class scores like a pattern hit with middling words.
WORDS_ONLY_WEIGHT = 0.75
THRESHOLD = 0.57
COVERED_POWER = 4.0
VALUE_WORDS = 2  # pasted words one value of the record may stand for
PRESENT_POWER = 0.3
SITUATION_FACTOR = 0.5  # a generic message in a paste that shows nothing of the record's situation


@dataclass(frozen=True)
class Evidence:
    pattern: bool
    same_class: bool
    covered: float = 0.0  # share of the pasted message's words the record explains
    present: float = 0.0  # share of the record's wording found in the paste
    opening: bool = False  # the pasted message starts with the record's opening clause
    class_known: bool = True  # the paste names the exception's class
    situation: bool | None = None  # None: the message identifies its record; else whether the paste shows its situation

    @property
    def words(self) -> float:
        return words_similarity(1.0 if self.opening else self.covered, self.present)

    @property
    def score(self) -> float:
        agrees = self.same_class or (self.pattern and not self.class_known)
        if self.pattern:
            value = PATTERN_WEIGHT + WORDS_WEIGHT * self.words + CLASS_WEIGHT * agrees
        else:
            value = WORDS_ONLY_WEIGHT * self.words + CLASS_WEIGHT * agrees
        if self.situation is False:
            value *= SITUATION_FACTOR
        return round(value, 4)


_NOT_ALNUM = re.compile(r"[\W_]+")
# Say nothing of a situation: "broadcasting" and "shape-mismatch" describe the generic message itself (mse_loss's
# "... due to broadcasting" warning is no sign of a CRF layer).
GENERIC_TAGS = frozenset({"pytorch", "python", "warning", "error", "training", "broadcasting", "shape-mismatch"})


def compact(text: str) -> str:
    """Lower-case letters and digits only: "shape-mismatch", "shape_mismatch" and "ShapeMismatch" agree."""
    return _NOT_ALNUM.sub("", text.lower())


def situation_terms(slug: str, tags: list[str], message: str) -> frozenset[str] | None:
    """The record's topics a paste must show when its message is generic; None when the message is specific.

    Generic: the message names none of the record's tags and under half of the words of its slug
    (the record's own title). "The size of tensor a (5) must match ..." for `crf-forward-size-mismatch`
    (tags crf, broadcasting, ...) is generic; "DataParallel not supported when CRF is used" is not.
    """
    said = compact(message)
    topics = {compact(tag) for tag in tags if tag.lower() not in GENERIC_TAGS} - {""}
    if not topics or any(topic in said for topic in topics):
        return None
    title = [word for word in slug.split("-") if len(word) > 2 and word not in ("not", "the", "and", "with")]
    if title and sum(word in said for word in title) / len(title) >= 0.5:
        return None
    return frozenset(topics)


# Python's own words for a bad call, as 3.10+ qualifies them: "LoraConfig.__init__() got an unexpected keyword ...".
_QUALIFIED_CALL = re.compile(
    r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\.[A-Za-z_]\w*\(\) (?:got an unexpected|got multiple|missing \d+ required"
    r"|takes \d+|takes from \d+)"
)


def called_owner(message: str) -> str | None:
    """The class a record's message names a method of (`LoraConfig` in `LoraConfig.__init__() got an unexpected
    keyword argument 'x'`), compacted. Python 3.10+ qualifies a TypeError with it; without it the same words
    (`__init__() got an unexpected keyword argument`) are anybody's. None when the message names no such call."""
    found = _QUALIFIED_CALL.match(message)
    return compact(found.group(1).rsplit(".", 1)[-1]) if found else None


def same_class(pasted: str | None, recorded: str | None) -> bool:
    if not pasted or not recorded:
        return False
    return pasted.rsplit(".", 1)[-1] == recorded.rsplit(".", 1)[-1]


def opens_with(text: str, clause: str) -> bool:
    """Whether a pasted message starts with a record's opening clause, and the clause ends there too.

    Case and runs of white space (a wrapped line) aside. After the clause comes the end of the
    message or punctuation ("..., but got"), not more words of a longer clause ("... device type").
    """
    head = " ".join(text[: 4 * len(clause) + 64].split()).lower()
    clause = clause.lower()
    if not clause or not head.startswith(clause):
        return False
    rest = head[len(clause):].lstrip()
    return not rest or rest[0] in ",;:.!?(-"


def idf(df: int, n: int) -> float:
    return math.log((n + 1) / (df + 0.5))


def words_similarity(covered: float, present: float) -> float:
    """0..1: how well the record's message explains the pasted one (see `coverage`)."""
    return covered ** COVERED_POWER * present ** PRESENT_POWER


def coverage(
    query: list[tuple[str, bool]], record: list[tuple[str, bool]], weight: Callable[[str], float],
    named: frozenset[str] = frozenset(),
) -> tuple[float, float]:
    """(covered, present) for a pasted message's terms `(term, quoted)` and a record's `(term, essential)`.

    The two are aligned word by word. Pasted words the record also has are explained (in any
    order: older wordings reorder). Pasted words left over are explained as values only where the
    record has a value there too (a stretch of its message that its pattern leaves to wildcards),
    or, for quoted words, where it has an unused value anywhere. A pasted word standing where the
    record has wording of its own (pattern text) is a substitution: "parameter" for "hidden".
    `covered`: weight of explained pasted words / all pasted words; `present`: weight of the
    record's wording found in the paste / all its wording.
    A pasted message made only of quoted values (a bare KeyError: 'model') has no wording: (0, 0).
    `named`: the record's quoted words its pattern spells out ('DataParallel' in "'DataParallel' object has no
    attribute"). A pasted quoted word standing in place of one names another thing ("'Tensor' object has no
    attribute 'edge_index'"): the record explains nothing of that message, however many words they share.
    """
    if query and all(is_quoted for _, is_quoted in query):
        # Nothing but quoted values ("KeyError: 'model'", a dict key): no wording of its own to compare, so no
        # record explains it by its words (a record whose pattern matches it still can).
        return 0.0, 0.0
    q = [term for term, _ in query]
    r = [term for term, _ in record]
    quoted = {term for term, is_quoted in query if is_quoted}
    essential = [is_essential for _, is_essential in record]
    q_set, r_set = set(q), set(r)
    explained: set[str] = set()
    leftover: set[str] = set()
    used_slots: set[str] = set()
    blocks = SequenceMatcher(None, q, r, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in blocks:
        extra = [term for term in q[i1:i2] if term not in r_set]
        explained.update(term for term in q[i1:i2] if term in r_set)
        if tag == "replace":
            if any(term in quoted for term in extra) and any(r[k] in named and r[k] not in q_set for k in range(j1, j2)):
                return 0.0, 0.0
            own_wording = any(essential[k] and r[k] not in q_set for k in range(j1, j2))
            slots = {r[k] for k in range(j1, j2) if not essential[k] and r[k] not in q_set}
            if slots and not own_wording:
                # A value is a word or two ("cuda:0", "module.fc"): a long stretch is not one.
                room = VALUE_WORDS * len(slots)
                explained.update(extra[:room])
                leftover.update(extra[room:])
                used_slots |= slots
                continue
        leftover.update(extra)
    free_slots = {r[k] for k in range(len(r)) if not essential[k] and r[k] not in q_set} - used_slots
    for term in sorted(leftover & quoted, key=weight):
        if free_slots:
            free_slots.pop()
            leftover.discard(term)
            explained.add(term)
    if q and q[-1] in leftover and any(term.startswith(q[-1]) for term in r_set):
        leftover.discard(q[-1])  # the last word of a cut-off paste may be cut too: "... two dev"
        explained.add(q[-1])
    wording = {r[k] for k in range(len(r)) if essential[k]}
    q_weight = sum(weight(term) for term in explained | leftover)
    r_weight = sum(weight(term) for term in wording)
    if q_weight <= 0 or r_weight <= 0:
        return 0.0, 0.0
    covered = sum(weight(term) for term in explained) / q_weight
    present = sum(weight(term) for term in wording & q_set) / r_weight
    return covered, present
