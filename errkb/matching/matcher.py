"""Rank the catalog's records against a pasted traceback or log.

1. `paste.parse` finds the exceptions and warnings and spells each message a few ways.
2. Pattern candidates: records whose anchor word (the rarest word every match of the pattern
   contains) occurs in the paste, plus the few patterns without one; each candidate's
   messagePattern is then run, with RE2, on every spelling and on the whole cleaned paste.
3. Word candidates: FTS5 over the records' messages with the rarest words of each pasted message,
   for messages worded differently (older library versions) where no pattern matches.
4. Every candidate is scored (score.py) against each pasted message, and placed by the message it
   explains: the exception that ended the run (the last exception line) first, then earlier
   exceptions (handled ones, causes), then warnings; best score first within each.
   Those at or above the threshold are returned.

Besides the records' own messages, a Matcher knows wordings observed by reproduction runs on other
library versions (`add_wordings`; read from catalog.db's `observed_messages` table or from the
result files in verifications/): a pasted message worded like one of them is explained by its record.
A message quoted inside a sentence (in backticks or quotes) is matched on its own.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from .. import paste as paste_module
from .. import verifications
from ..store import raw_records
from ..patterns import PatternError, compile_pattern
from . import index
from .patternset import PatternSet
from .score import THRESHOLD, Evidence, compact, coverage, idf, opens_with, called_owner, same_class, situation_terms
from .tokens import QUOTED_VALUE, WORD, stem, terms, words

WORD_CANDIDATES = 24  # FTS5 rows kept per pasted message (12 lost same-error records once the catalog passed 80)
QUERY_WORDS = 8  # rarest words of a pasted message sent to FTS5
COMMON_SHARE = 0.002  # a word in more of the messages than this share (and than 50) is not sent to FTS5
SET_THRESHOLD = 64  # more unanchored patterns than this: run them as one re2.Set
DATABASE_FILE = "catalog.db"
RECORDS_DIR = "records"
VERIFICATIONS_DIR = "verifications"
OBSERVED_TABLE = "observed_messages"  # (slug, message): wordings seen by reproduction runs, filled by errkb build

# Where a record's evidence was found, in the order matches are listed.
FINAL, EARLIER, WARNING, MESSAGE, TEXT = "final", "earlier", "warning", "message", "text"
_PLACE = {FINAL: 0, MESSAGE: 0, TEXT: 0, EARLIER: 1, WARNING: 2}
_WHERE = {
    FINAL: "the final exception line", EARLIER: "an earlier exception in the paste", WARNING: "a warning in the paste",
    MESSAGE: "the pasted message", TEXT: "the pasted text",
}
# A message quoted in prose: `...`, "..." or '...' (no space just inside a single quote: "'x' object has").
_QUOTED = re.compile(r"`([^`\n]{12,600})`|\"([^\"\n]{12,600})\"|'(\S[^'\n]{10,600}\S)'")
_CLASS_PREFIX = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning)):\s*(.+)$", re.S)
QUOTED_TERMS = 3  # content words a quoted span needs to be taken for a message
# A CUDA kernel's failed assertion as the device prints it ("Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d:
# block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed."). The host then reports a
# device-side assert, which a paste cut after the kernel's lines does not show.
_KERNEL_ASSERT = re.compile(r"Assertion `[^`\n]+` failed\.?")
DEVICE_ASSERT = "CUDA error: device-side assert triggered"


ELLIPSIS = "\u2026"


def shorten(text: str, width: int) -> str:
    """`text` when it has at most `width` characters, else its first ones and an ellipsis (width in all)."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)].rstrip() + ELLIPSIS


@dataclass
class Match:
    slug: str
    score: float
    message: str  # the record's errorMessage
    error_class: str | None
    pattern: bool  # the record's messagePattern matched the paste
    same_class: bool
    words: float  # 0..1 word similarity of the messages
    covered: float  # share of the pasted message's words the record explains
    present: float  # share of the record's wording found in the paste
    line: str  # the pasted line it was matched against ("" when only the whole text matched)
    opening: bool = False  # the pasted message starts with the record's opening clause
    seen_as: str = FINAL  # what it explains: "final" (the exception that ended the run), "earlier", "warning", ...
    pasted_class: str | None = None  # the class the paste gave that message
    situation: bool | None = None  # None: the message identifies the record; else whether the paste shows its situation
    observed: bool = False  # worded like a message observed by a reproduction run, not like errorMessage

    @property
    def also_seen(self) -> bool:
        """Explains a warning or an earlier exception, not the exception that ended the run."""
        return self.seen_as in (EARLIER, WARNING)

    def why(self) -> str:
        """Why it matched, in words: "pattern matched the final exception line; same class"."""
        where = _WHERE.get(self.seen_as, _WHERE[TEXT]) if self.line or not self.pattern else _WHERE[TEXT]
        wording = "a wording seen in reproduction runs" if self.observed else "the record's message"
        if self.pattern:
            parts = [f"pattern matched {where}"]
        elif self.opening:
            parts = [f"{where} opens like {wording}"]
        elif self.words >= 0.5:
            parts = [f"{where} is worded like {wording}"]
        else:
            parts = [f"{where} shares a few words with {wording}"]
        if self.same_class:
            parts.append("same class")
        elif self.pasted_class and self.error_class:
            parts.append(f"other class ({self.pasted_class}, recorded {self.error_class})")
        if self.situation is False:
            parts.append("a generic message, and nothing else in the paste points to this record's situation")
        elif self.situation:
            parts.append("the paste shows the record's situation")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["why"] = {
            "text": self.why(), "seen_as": self.seen_as, "pattern": self.pattern, "class": self.same_class,
            "opening": self.opening, "words": round(self.words, 3), "covered": round(self.covered, 3),
            "present": round(self.present, 3), "situation": self.situation, "observed": self.observed,
            "line": self.line,
        }
        for key in ("pattern", "same_class", "opening", "words", "covered", "present", "line", "situation", "observed",
                    "pasted_class"):
            del data[key]
        return data


class Matcher:
    """The match index of one catalog, opened once and used for many pastes."""

    def __init__(self, conn: sqlite3.Connection, source: str, tags: dict[str, list[str]] | None = None):
        self.conn = conn
        self.source = source  # for messages: where the records came from
        self._lock = threading.RLock()
        self._unanchored_set: tuple[list[int], PatternSet] | None = None
        self._df: dict[str, int] = {}
        self._tags = tags  # slug -> tags; None: read from the catalog database's record_tags
        self._situations: dict[str, frozenset[str] | None] = {}
        self._owners: dict[str, str | None] = {}  # slug -> the class its message names a method of
        self._wordings = sqlite3.connect(":memory:", check_same_thread=False)
        self._wordings.execute("CREATE VIRTUAL TABLE wordings USING fts5(slug UNINDEXED, message, tokenize='porter unicode61')")
        self._wording_count = 0

    @classmethod
    def from_entries(cls, entries: list[index.Entry], source: str = "memory", tags: dict[str, list[str]] | None = None) -> "Matcher":
        return cls(index.in_memory(entries), source, tags if tags is not None else {})

    @classmethod
    def from_folder(cls, root: Path) -> "Matcher":
        """From root/records/ (and the observed wordings in root/verifications/), without a database."""
        folder = root / RECORDS_DIR
        tags = {record.get("slug"): list(record.get("tags") or []) for record in raw_records(folder)}
        matcher = cls.from_entries(index.entries_from_folder(folder), str(folder), tags)
        matcher.add_wordings(wordings_from_results(root / VERIFICATIONS_DIR))
        return matcher

    @classmethod
    def open(cls, root: Path) -> "Matcher":
        """From root/catalog.db when it holds records (refreshing its index), else from root/records/."""
        path = root / DATABASE_FILE
        if path.exists():
            matcher = _open_database(path)
            if matcher:
                matcher.add_wordings(wordings_from_database(matcher.conn) or wordings_from_results(root / VERIFICATIONS_DIR))
                return matcher
        return cls.from_folder(root)

    def add_wordings(self, observed: dict[str, Iterable[str]]) -> int:
        """Learn other wordings of records' messages (slug -> messages seen, e.g. on older library versions).

        A pasted message worded like one of them is explained by that record as if it were its
        errorMessage. Returns how many new wordings were added.
        """
        added = 0
        with self._lock:
            known = set(self._wordings.execute("SELECT slug, message FROM wordings"))
            for slug, messages in observed.items():
                for message in messages:
                    if isinstance(message, str) and message.strip() and (slug, message) not in known:
                        self._wordings.execute("INSERT INTO wordings (slug, message) VALUES (?, ?)", [slug, message])
                        known.add((slug, message))
                        added += 1
            self._wording_count += added
        return added

    @property
    def size(self) -> int:
        return index.indexed_count(self.conn)

    # -- matching -----------------------------------------------------------------------------

    def match(self, text: str, limit: int = 5, threshold: float = THRESHOLD) -> list[Match]:
        """Records close to the error in `text`, best first; [] when none reaches `threshold`."""
        return [m for m in self.rank(text) if m.score >= threshold][:limit]

    def rank(self, text: str) -> list[Match]:
        """Every candidate record with its score, best first (no threshold)."""
        with self._lock:
            pasted = paste_module.parse(text, known=self._known)
            pasted.raised.extend(self._quoted(pasted))
            pasted.raised.extend(self._kernel_asserts(pasted))
            targets = pasted.targets
            hits = self._pattern_hits(pasted, targets)
            for pid, item_ids in self._bare_site_hits(pasted).items():
                hits.setdefault(pid, []).extend(item_ids)
            observed = self._observed_candidates(pasted)
            candidates = set(hits) | self._word_candidates(pasted) | set(observed)
            return self._score(pasted, candidates, hits, observed)

    def _quoted(self, pasted: paste_module.Paste) -> list[paste_module.Raised]:
        """Messages quoted inside the sentences of a paste that has no exception line of its own."""
        found = []
        for item in pasted.raised:
            if item.kind != "bare":
                continue
            for match in _QUOTED.finditer("\n".join(item.lines)):
                span = next(group for group in match.groups() if group is not None).strip()
                cls, message = None, span
                prefixed = _CLASS_PREFIX.match(span)
                if prefixed:
                    cls, message = prefixed.group(1), prefixed.group(2).strip()
                if len({term for term, _ in terms(message)}) < QUOTED_TERMS:
                    continue
                quoted = paste_module.Raised(cls, [message], "quoted", item.position)
                quoted.spellings = paste_module.spellings([message], self._known)
                found.append(quoted)
        return found

    def _kernel_asserts(self, pasted: paste_module.Paste) -> list[paste_module.Raised]:
        """A CUDA kernel's failed assertions, each a message of its own, and the device-side assert they imply
        when the paste does not hold it (the run's final error, cut off or never copied)."""
        found = []
        position = max((item.position for item in pasted.raised), default=0)
        for message in dict.fromkeys(match.group() for match in _KERNEL_ASSERT.finditer(pasted.text)):
            item = paste_module.Raised(None, [message], "bare", position)
            item.spellings = [message]
            found.append(item)
        if found and "device-side assert triggered" not in pasted.text.lower():
            implied = paste_module.Raised(None, [DEVICE_ASSERT], "bare", position + 1)
            implied.spellings = [DEVICE_ASSERT]
            found.append(implied)
        return found

    def _pattern_hits(self, pasted: paste_module.Paste, targets: list[str]) -> dict[int, list[int]]:
        """Pattern id -> the pasted messages it matched (their ids; [] when only the whole text matched)."""
        present = set().union(*(words(text) for text in targets))
        ids = self._anchored(present) | self._unanchored_hits(targets)
        hits: dict[int, list[int]] = {}
        for pid, pattern in paste_module.within_budget(self._patterns(ids)):
            try:
                regex = compile_pattern(pattern)
            except PatternError:
                continue
            matched = [id(item) for item in pasted.raised if any(regex.search(text) for text in item.spellings)]
            if matched or regex.search(pasted.text):
                hits[pid] = matched
        return hits

    def _bare_site_hits(self, pasted: paste_module.Paste) -> dict[int, list[int]]:
        """A final exception with no message at all (`raise NotImplementedError` in an old release) says nothing a
        pattern could read; the frame that raised it does. A record of that class raised in the file of the
        paste's innermost frame (`.../torch/autograd/function.py`) explains it as its pattern would."""
        errors = [item for item in pasted.raised if item.kind == "error" and item.cls]
        if not errors or errors[-1].message.strip():
            return {}
        bare = errors[-1]
        frames = paste_module.frame_paths(pasted.text)
        if not frames:
            return {}
        innermost = frames[-1].replace("\\", "/")
        found = {}
        for pid, error_class, file_path in self.conn.execute(
            "SELECT id, error_class, file_path FROM match_patterns WHERE file_path IS NOT NULL AND error_class = ?",
            [bare.cls.rpartition(".")[2]],
        ):
            if innermost == file_path or innermost.endswith("/" + file_path):
                found[pid] = [id(bare)]
        return found

    def _anchored(self, present: set[str]) -> set[int]:
        """Patterns whose anchor word occurs in the paste."""
        found: set[int] = set()
        words_list = sorted(present)
        for start in range(0, len(words_list), 500):  # keep under SQLite's bound-parameter limit
            chunk = words_list[start:start + 500]
            found.update(row[0] for row in self.conn.execute(
                f"SELECT id FROM match_anchors WHERE word IN ({', '.join('?' * len(chunk))})", chunk
            ))
        return found

    def _unanchored_hits(self, targets: list[str]) -> set[int]:
        ids = [row[0] for row in self.conn.execute("SELECT id FROM match_patterns WHERE anchors = 0 ORDER BY id")]
        if len(ids) <= SET_THRESHOLD:
            return set(ids)  # few: verified one by one with the others
        if self._unanchored_set is None or self._unanchored_set[0] != ids:
            patterns = [pattern for _, pattern in self._patterns(set(ids))]
            self._unanchored_set = (ids, PatternSet(patterns))
        ordered, pattern_set = self._unanchored_set
        return {ordered[i] for text in targets for i in pattern_set.search(text)}

    def _patterns(self, ids: set[int]) -> list[tuple[int, str]]:
        out = []
        id_list = sorted(ids)
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            out += self.conn.execute(
                f"SELECT id, pattern FROM match_patterns WHERE id IN ({', '.join('?' * len(chunk))}) ORDER BY id", chunk
            ).fetchall()
        return out

    def _word_candidates(self, pasted: paste_module.Paste) -> set[int]:
        found: set[int] = set()
        self._prefetch(term for item in pasted.raised for term, _ in terms(item.message))
        for item in pasted.raised:
            ranked = sorted({term for term, _ in terms(item.message)}, key=self._weight, reverse=True)
            # Words in more than a few percent of the messages find everything and rank nothing.
            query = [term for term in ranked if self._weight(term) >= self._common_weight()][:QUERY_WORDS] or ranked[:3]
            if not query:
                continue
            fts = " OR ".join(f'"{word}"' for word in query)
            rows = self.conn.execute(
                "SELECT rowid FROM match_fts WHERE match_fts MATCH ? ORDER BY bm25(match_fts) LIMIT ?",
                [fts, WORD_CANDIDATES],
            )
            found |= {row[0] for row in rows}
        return found

    def _observed_candidates(self, pasted: paste_module.Paste) -> dict[int, list[str]]:
        """Records with an observed wording that shares rare words with a pasted message: id -> those wordings."""
        if not self._wording_count:
            return {}
        slugs: dict[str, list[str]] = {}
        for item in pasted.raised:
            query = sorted({term for term, _ in terms(item.message)}, key=self._weight, reverse=True)[:QUERY_WORDS]
            if not query:
                continue
            rows = self._wordings.execute(
                "SELECT slug, message FROM wordings WHERE wordings MATCH ? ORDER BY bm25(wordings) LIMIT ?",
                [" OR ".join(f'"{word}"' for word in query), WORD_CANDIDATES],
            )
            for slug, message in rows:
                slugs.setdefault(slug, [])
                if message not in slugs[slug]:
                    slugs[slug].append(message)
        out: dict[int, list[str]] = {}
        for slug, messages in slugs.items():
            row = self.conn.execute("SELECT id FROM match_patterns WHERE slug = ?", [slug]).fetchone()
            if row:
                out[row[0]] = messages
        return out

    def _situation(self, slug: str, message: str) -> frozenset[str] | None:
        if slug not in self._situations:
            self._situations[slug] = situation_terms(slug, self._record_tags(slug), message)
        return self._situations[slug]

    def _owner(self, slug: str, message: str) -> str | None:
        if slug not in self._owners:
            self._owners[slug] = called_owner(message)
        return self._owners[slug]

    def _record_tags(self, slug: str) -> list[str]:
        if self._tags is not None:
            return self._tags.get(slug, [])
        try:
            return [row[0] for row in self.conn.execute("SELECT tag FROM record_tags WHERE slug = ?", [slug])]
        except sqlite3.OperationalError:  # a database without the tag tables
            return []

    def _score(self, pasted: paste_module.Paste, ids: set[int], hits: dict[int, list[int]],
               observed: dict[int, list[str]] | None = None) -> list[Match]:
        if not ids:
            return []
        rows = []
        id_list = sorted(ids)
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            rows += self.conn.execute(
                "SELECT id, slug, message, error_class, literals, opening, pattern FROM match_patterns"
                f" WHERE id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
        queries = [(item, terms(item.message)) for item in pasted.raised]
        observed = observed or {}
        self._prefetch(term for _, _, message, *_ in rows for term, _ in terms(message))
        self._prefetch(term for messages in observed.values() for message in messages for term, _ in terms(message))
        openings = {pid: opening for pid, *_, opening, _ in rows if opening}
        claimed = _claimed_openings(pasted, {pid: openings[pid] for pid in hits if pid in openings})
        places = _places(pasted.raised)
        # A pasted message that a record's pattern accepts is that record's: another record's words alone
        # ("Sizes of tensors must match" beside "The size of tensor a must match") are no evidence for it.
        explained = {item_id for pid in hits for item_id in hits[pid]}
        context: list[str] = []  # the paste in compact form, made only when a generic record needs it
        out = []
        for pid, slug, message, error_class, literals, opening, regex_text in rows:
            wording = None if literals is None else set(literals.split())
            own = [(term, wording is None or term in wording) for term, _ in terms(message)]
            named = frozenset(term for term, quoted in terms(message) if quoted and wording is not None and term in wording)
            values = [found.group(2) for found in QUOTED_VALUE.finditer(message)]  # the record's quoted values
            wordings = [(own, False)] + [(_observed_terms(other, wording), True) for other in observed.get(pid, [])]
            topics = self._situation(slug, message)
            owner = self._owner(slug, message)
            if (topics is not None or owner) and not context:
                context.append(compact(pasted.text))
            situation = None if topics is None else any(topic in context[0] for topic in topics)
            # Matched by its words only, a record whose message is a method of one class (LoraConfig.__init__())
            # needs the paste to name that class somewhere: else the same words are another class's error.
            unnamed = owner is not None and owner not in context[0]
            best: dict[int, tuple] = {}  # place rank -> (key, evidence, item, observed wording?, place)
            for item, query in queries or [(None, [])]:
                place = places.get(id(item), TEXT) if item else TEXT
                pattern = pid in hits and (not hits[pid] or (item is not None and id(item) in hits[pid]))
                opens = bool(opening and item and (pid in hits or opening.lower() not in claimed[id(item)])
                             and any(opens_with(text, opening) for text in item.spellings))
                taken = item is not None and not pattern and (
                    id(item) in explained or bool(values and _refused_for_values(regex_text, values, item)))
                for record_terms, is_observed in wordings:
                    covered, present = coverage(query, record_terms, self._weight, named) if query and not taken else (0.0, 0.0)
                    evidence = Evidence(
                        pattern, same_class(item.cls if item else None, error_class), covered, present,
                        opens and not is_observed, class_known=bool(item and item.cls),
                        situation=False if unnamed and not pattern else situation,
                    )
                    # Ties: a later exception (the root cause inside a wrapper) first.
                    key = (evidence.score, item.position if item else 0)
                    rank = _PLACE[place]
                    if rank not in best or key > best[rank][0]:
                        best[rank] = (key, evidence, item, is_observed, place)
            # The first place (final exception, then earlier ones, then warnings) the record explains well enough.
            chosen = next((best[rank] for rank in sorted(best) if best[rank][1].score >= THRESHOLD),
                          max(best.values(), key=lambda entry: entry[0]))
            _, evidence, item, is_observed, place = chosen
            line = item.header if item else ""
            out.append(Match(slug, evidence.score, message, error_class, evidence.pattern, evidence.same_class,
                             evidence.words, evidence.covered, evidence.present, line, evidence.opening, place,
                             item.cls if item else None, evidence.situation, is_observed))
        # At equal scores a record whose situation the paste shows (a CRF layer in the frames) comes before the
        # general record of the same message (broadcasting anywhere).
        out.sort(key=lambda m: (_PLACE[m.seen_as] if m.score >= THRESHOLD else 3, -m.score, m.situation is not True, m.slug))
        return out

    # -- word statistics ------------------------------------------------------------------------

    def _weight(self, term: str) -> float:
        if term not in self._df:
            self._prefetch([term])
        return idf(self._df[term], self._records())

    def _prefetch(self, wanted) -> None:
        """Document frequencies of many terms in one query (kept for the Matcher's life)."""
        missing = sorted({term for term in wanted if term not in self._df})
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            found = dict(self.conn.execute(
                f"SELECT term, df FROM match_terms WHERE term IN ({', '.join('?' * len(chunk))})", chunk
            ))
            for term in chunk:
                self._df[term] = found.get(term, 0)
        if len(self._df) > 200_000:
            self._df.clear()

    @functools.lru_cache(maxsize=1)  # noqa: B019
    def _common_weight(self) -> float:
        n = self._records()
        return idf(max(COMMON_SHARE * n, 50), n)

    @functools.lru_cache(maxsize=1)  # noqa: B019
    def _records(self) -> int:
        return max(self.size, 1)

    @functools.lru_cache(maxsize=65536)  # noqa: B019
    def _known(self, word: str) -> bool:
        if not WORD.fullmatch(word):
            return False
        return self.conn.execute("SELECT 1 FROM match_terms WHERE term = ?", [stem(word)]).fetchone() is not None


def _places(raised: list[paste_module.Raised]) -> dict[int, str]:
    """What each pasted message is: the exception that ended the run (the last exception line), an earlier
    exception (handled, or the cause of a later one), a warning, or a message found without a class."""
    errors = [item for item in raised if item.kind == "error"]
    final = max(errors, key=lambda item: item.position) if errors else None
    places = {}
    for item in raised:
        if item is final:
            places[id(item)] = FINAL
        elif item.kind == "error":
            places[id(item)] = EARLIER
        elif item.kind == "warning":
            places[id(item)] = WARNING if errors else FINAL
        else:
            places[id(item)] = MESSAGE
    return places


def _refused_for_values(pattern: str, ours: list[str], item: paste_module.Raised) -> bool:
    """Whether the record's pattern turns the pasted message away only for its quoted values.

    Put the record's own quoted values (`ours`) in place of the pasted ones (same count, in order): if the pattern then
    matches, the wording is the record's and the values are what the pattern refused. A pattern that spells
    out which values are its error ("Can't get attribute 'X' on <module 'M'" for a user's module M, not
    torch._utils) has said the message is not this record's; its words must not bring it back.
    """
    try:
        regex = compile_pattern(pattern)
    except PatternError:
        return False
    for text in item.spellings:
        theirs = list(QUOTED_VALUE.finditer(text))
        if len(theirs) != len(ours):
            continue
        swapped, end = [], 0
        for found, value in zip(theirs, ours):
            swapped += [text[end:found.start(2)], value]
            end = found.end(2)
        swapped.append(text[end:])
        if regex.search("".join(swapped)):
            return True
    return False


def _observed_terms(message: str, wording: set[str] | None) -> list[tuple[str, bool]]:
    """(term, essential) of an observed message. It has no pattern of its own: words the record's pattern
    spells out (`wording`) stay wording; other quoted words and identifiers (with a digit or an
    underscore: "mat2", "_th_mm") count as values."""
    def essential(term: str, quoted: bool) -> bool:
        if wording is not None and term in wording:
            return True
        return not (quoted or "_" in term or any(c.isdigit() for c in term))

    return [(term, essential(term, quoted)) for term, quoted in terms(message)]


def wordings_from_database(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """slug -> observed messages, from the catalog's observed_messages table ({} when it has none)."""
    try:
        rows = conn.execute(f"SELECT slug, message FROM {OBSERVED_TABLE}").fetchall()
    except sqlite3.OperationalError:
        return {}
    out: dict[str, list[str]] = {}
    for slug, message in rows:
        out.setdefault(slug, []).append(message)
    return out


def wordings_from_results(folder: Path, root: Path | None = None) -> dict[str, list[str]]:
    """slug -> observed messages, from the committed result files verifications/<slug>/<environment>.json: only
    those verifications.feeds_matcher lets through (current for the record and reproduction files in `root`,
    default the folder's parent; signed by a key listed there; the trigger raised)."""
    return verifications.observed_wordings(folder.parent, root)


def _claimed_openings(pasted: paste_module.Paste, hit_openings: dict[int, str]) -> dict[int, set[str]]:
    """For each pasted message (by id), the opening clauses of records whose pattern matched it.

    An opening clause stands for details worded by a version the catalog does not know. Where a
    record's pattern matched a message that opens with its clause, the details are that record's
    known wording: the other records with the same clause (the same error, worded otherwise) get
    no opening-clause evidence from that message.
    """
    claimed: dict[int, set[str]] = {}
    for item in pasted.raised:
        claimed[id(item)] = {
            clause.lower() for clause in set(hit_openings.values())
            if any(opens_with(text, clause) for text in item.spellings)
        }
    return claimed


def _open_database(path: Path) -> Matcher | None:
    """A Matcher over catalog.db, its index refreshed (in place when writable, else in memory)."""
    conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
    try:
        if not index._has_table(conn, "records"):
            conn.close()
            return None
        if not index.is_fresh(conn):
            try:
                conn.execute("BEGIN IMMEDIATE")
                index.refresh(conn)
                conn.commit()
            except sqlite3.OperationalError:  # read-only file or folder: index in memory instead
                conn.rollback()
                entries = [index.Entry(*row) for row in conn.execute(f"SELECT {index._RECORD_COLUMNS} FROM records")]
                tags: dict[str, list[str]] = {}
                if index._has_table(conn, "record_tags"):
                    for slug, tag in conn.execute("SELECT slug, tag FROM record_tags"):
                        tags.setdefault(slug, []).append(tag)
                conn.close()
                return Matcher.from_entries(entries, str(path), tags)
        return Matcher(conn, str(path))
    except sqlite3.DatabaseError:
        conn.close()
        raise
