"""Rank the catalog's records against a pasted traceback or log.

1. `paste.parse` finds the exceptions and warnings and spells each message a few ways.
2. Pattern candidates: records whose anchor word (the rarest word every match of the pattern
   contains) occurs in the paste, plus the few patterns without one; each candidate's
   messagePattern is then run, with RE2, on every spelling and on the whole cleaned paste.
3. Word candidates: FTS5 over the records' messages with the rarest words of each pasted message,
   for messages worded differently (older library versions) where no pattern matches.
4. Every candidate is scored (score.py) and those at or above the threshold are returned, best first.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import paste as paste_module
from ..patterns import PatternError, compile_pattern
from . import index
from .patternset import PatternSet
from .score import THRESHOLD, Evidence, coverage, idf, opens_with, same_class
from .tokens import WORD, stem, terms, words

WORD_CANDIDATES = 12  # FTS5 rows kept per pasted message
QUERY_WORDS = 8  # rarest words of a pasted message sent to FTS5
COMMON_SHARE = 0.002  # a word in more of the messages than this share (and than 50) is not sent to FTS5
SET_THRESHOLD = 64  # more unanchored patterns than this: run them as one re2.Set
DATABASE_FILE = "catalog.db"
RECORDS_DIR = "records"


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

    def why(self) -> str:
        parts = []
        if self.pattern:
            parts.append("pattern matched" + (f" {shorten(self.line, 60)!r}" if self.line else " the text"))
        if self.same_class:
            parts.append(f"class {self.error_class}")
        if self.opening:
            parts.append("same opening clause")
        parts.append(f"words {self.words:.2f}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["why"] = {
            "pattern": self.pattern, "class": self.same_class, "opening": self.opening, "words": round(self.words, 3),
            "covered": round(self.covered, 3), "present": round(self.present, 3), "line": self.line,
        }
        for key in ("pattern", "same_class", "opening", "words", "covered", "present", "line"):
            del data[key]
        return data


class Matcher:
    """The match index of one catalog, opened once and used for many pastes."""

    def __init__(self, conn: sqlite3.Connection, source: str):
        self.conn = conn
        self.source = source  # for messages: where the records came from
        self._lock = threading.RLock()
        self._unanchored_set: tuple[list[int], PatternSet] | None = None
        self._df: dict[str, int] = {}

    @classmethod
    def from_entries(cls, entries: list[index.Entry], source: str = "memory") -> "Matcher":
        return cls(index.in_memory(entries), source)

    @classmethod
    def open(cls, root: Path) -> "Matcher":
        """From root/catalog.db when it holds records (refreshing its index), else from root/records/."""
        path = root / DATABASE_FILE
        if path.exists():
            matcher = _open_database(path)
            if matcher:
                return matcher
        folder = root / RECORDS_DIR
        return cls.from_entries(index.entries_from_folder(folder), str(folder))

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
            targets = pasted.targets
            hits = self._pattern_hits(pasted, targets)
            candidates = set(hits) | self._word_candidates(pasted)
            return self._score(pasted, candidates, hits)

    def _pattern_hits(self, pasted: paste_module.Paste, targets: list[str]) -> dict[int, str]:
        """Pattern id -> the pasted line it matched ("" when only the whole text matched)."""
        present = set().union(*(words(text) for text in targets))
        ids = self._anchored(present) | self._unanchored_hits(targets)
        hits: dict[int, str] = {}
        for pid, pattern in paste_module.within_budget(self._patterns(ids)):
            try:
                regex = compile_pattern(pattern)
            except PatternError:
                continue
            for item in pasted.raised:
                if any(regex.search(text) for text in item.spellings):
                    hits[pid] = item.header
                    break
            else:
                if regex.search(pasted.text):
                    hits[pid] = ""
        return hits

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

    def _score(self, pasted: paste_module.Paste, ids: set[int], hits: dict[int, str]) -> list[Match]:
        if not ids:
            return []
        rows = []
        id_list = sorted(ids)
        for start in range(0, len(id_list), 500):
            chunk = id_list[start:start + 500]
            rows += self.conn.execute(
                "SELECT id, slug, message, error_class, literals, opening FROM match_patterns"
                f" WHERE id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
        queries = [(item, terms(item.message)) for item in pasted.raised]
        self._prefetch(term for _, _, message, _, _, _ in rows for term, _ in terms(message))
        openings = {pid: opening for pid, *_, opening in rows if opening}
        claimed = _claimed_openings(pasted, {pid: openings[pid] for pid in hits if pid in openings})
        out = []
        for pid, slug, message, error_class, literals, opening in rows:
            wording = None if literals is None else set(literals.split())
            record_terms = [(term, wording is None or term in wording) for term, _ in terms(message)]
            best = None
            for item, query in queries or [(None, [])]:
                covered, present = coverage(query, record_terms, self._weight) if query else (0.0, 0.0)
                opens = bool(opening and item and (pid in hits or opening.lower() not in claimed[id(item)])
                             and any(opens_with(text, opening) for text in item.spellings))
                evidence = Evidence(
                    pid in hits, same_class(item.cls if item else None, error_class), covered, present, opens
                )
                # Ties: an error before a warning, a later exception (the root cause inside a wrapper) first.
                key = (evidence.score, bool(item) and item.kind != "warning", item.position if item else 0)
                if best is None or key > best[0]:
                    best = (key, evidence, item)
            _, evidence, item = best
            line = hits[pid] if pid in hits else (item.header if item else "")
            out.append(Match(slug, evidence.score, message, error_class, evidence.pattern, evidence.same_class,
                             evidence.words, evidence.covered, evidence.present, line, evidence.opening))
        out.sort(key=lambda m: (-m.score, m.slug))
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
                conn.close()
                return Matcher.from_entries(entries, str(path))
        return Matcher(conn, str(path))
    except sqlite3.DatabaseError:
        conn.close()
        raise
