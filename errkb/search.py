"""Search that finds what people type: synonyms ("OOM"), tags (any case), and words misspelt.

A query becomes a Plan over catalog.db's full-text index (records_fts, porter-stemmed):
- a known synonym adds the words records use ("OOM" also searches "out of memory");
- a word that is a tag also finds the records with that tag;
- a word the index does not know is replaced by the closest word it does know (difflib over the index's
  vocabulary, read once per catalog file), and the answer says so.
Each hit says why it matched: the tag, or a snippet with the matched words marked.
`errkb search`, the records browser (/-/errkb/records?q=) and the MCP server's search use it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import catalog, writes
from .store import DATABASE_FILE

WORD = re.compile(r"\w+")
MARK_START, MARK_END = "\x02", "\x03"  # around matched words in snippets; the web and the terminal style them
# Words people type -> what the records say. Each alternative is an FTS5 phrase.
SYNONYMS = {
    "oom": ["out of memory", "oom"],
    "out of memory": ["out of memory", "oom"],
    "nccl": ["nccl", "process group", "distributed"],
    "device mismatch": ["same device", "different device", "different devices", "devices"],
    "wrong device": ["same device", "different device", "different devices"],
    "shape mismatch": ["shape", "size mismatch", "must match the size"],
    "dtype mismatch": ["dtype", "double and float"],
    "nan": ["nan", "inf"],
    "ddp": ["ddp", "distributeddataparallel"],
    "multi gpu": ["dataparallel", "distributeddataparallel", "multi gpu"],
}
CLOSE_ENOUGH = 0.75  # difflib ratio for a misspelt word's replacement
SNIPPET_WORDS = 12
_vocabularies: dict[tuple, list[str]] = {}
_vocabulary_lock = threading.Lock()


@dataclass
class Plan:
    query: str
    fts: str = ""  # the FTS5 expression; "" when nothing is left to search for in the text
    tags: list[str] = field(default_factory=list)  # tags named by the query: their records match too
    notes: list[str] = field(default_factory=list)  # what was widened or corrected, in words

    @property
    def empty(self) -> bool:
        return not self.fts and not self.tags


def _quoted(phrase: str) -> str:
    return '"' + phrase.replace('"', "") + '"'


def _known(conn: sqlite3.Connection, word: str) -> bool:
    return conn.execute("select 1 from records_fts where records_fts match ? limit 1", [_quoted(word)]).fetchone() is not None


def vocabulary(conn: sqlite3.Connection, first: str) -> list[str]:
    """The index's words (stems) that start with `first`, read once per catalog file, version and letter.

    fts5vocab answers a range of terms from the index's term list; the whole list (200,000 terms at 100,000
    generated records) took seconds, one letter's part about a twentieth of that."""
    path = conn.execute("pragma database_list").fetchone()[2]
    stat = os.stat(path) if path else None
    key = (path, stat.st_size, stat.st_mtime_ns, first) if stat else None
    with _vocabulary_lock:
        if key in _vocabularies:
            return _vocabularies[key]
    conn.execute("create virtual table if not exists temp.errkb_search_vocab using fts5vocab(main, 'records_fts', 'row')")
    words = [row[0] for row in conn.execute(
        "select term from temp.errkb_search_vocab where term >= ? and term < ? and length(term) between 3 and 30",
        [first, chr(ord(first) + 1)])]
    if key:
        with _vocabulary_lock:
            if any(k[:3] != key[:3] for k in _vocabularies):
                _vocabularies.clear()  # one catalog version at a time: a rebuilt file replaces the old lists
            _vocabularies[key] = words
    return words


def closest_word(conn: sqlite3.Connection, word: str) -> tuple[str, str] | None:
    """The known word closest to a misspelt one (same first letter) as (the index's stem, the word as shown),
    or None. The index holds porter stems ("memori"), so each is also compared as a word would end ("memory")."""
    best, best_ratio = None, CLOSE_ENOUGH - 1e-9
    matcher = difflib.SequenceMatcher(b=word)
    for term in vocabulary(conn, word[0]):
        if abs(len(term) - len(word)) > 2:
            continue
        for form in (term, term[:-1] + "y" if term.endswith("i") else term + "e"):
            matcher.set_seq1(form)
            if matcher.real_quick_ratio() >= best_ratio and matcher.quick_ratio() >= best_ratio and matcher.ratio() > best_ratio:
                best, best_ratio = (term, form), matcher.ratio()
    return best


def tag_names(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """The tags the query names: its hyphenated whole ("multi gpu" -> multi-gpu), else every word when each is a
    tag ("cuda oom"); [] otherwise (a tag among other words is searched as a word)."""
    if not words or "record_tags" not in {r[0] for r in conn.execute("select name from sqlite_master")}:
        return []
    wanted = list(dict.fromkeys([*words, "-".join(words)]))
    found = {row[0] for row in conn.execute(
        f"select distinct tag from record_tags where tag in ({', '.join('?' * len(wanted))})", wanted)}
    if "-".join(words) in found:
        return ["-".join(words)]
    return sorted(found) if set(words) <= found else []


def plan(conn: sqlite3.Connection, query: str) -> Plan:
    """How `query` is searched: synonyms, tags and corrected words, as an FTS5 expression and tag names."""
    text = " ".join(WORD.findall(query.lower()))
    result = Plan(query)
    if not text:
        return result
    result.tags = tag_names(conn, text.split())
    closest: dict[str, tuple[str, str] | None] = {}  # each misspelt word is looked up once
    text = _correct_into_synonyms(conn, text, result, closest)
    groups: list[str] = []
    for phrase, alternatives in SYNONYMS.items():
        if re.search(rf"\b{re.escape(phrase)}\b", text):
            groups.append("(" + " OR ".join(_quoted(a) for a in alternatives) + ")")
            result.notes.append(f"“{phrase}” also searches " + ", ".join(f"“{a}”" for a in alternatives if a != phrase))
            text = re.sub(rf"\b{re.escape(phrase)}\b", " ", text)
    for word in text.split():
        if _known(conn, word):
            groups.append(_quoted(word))
            continue
        if word in result.tags or "-".join(text.split()) in result.tags:
            continue  # the tag finds its records
        replacement = _correction(conn, word, closest)
        if replacement:
            stem, shown = replacement
            groups.append(_quoted(stem))  # a stem of the index: exact (a prefix query costs twice as much)
            result.notes.append(_searched_instead(word, shown))
        else:
            result.notes.append(f"no record has “{word}”")
            groups.append(_quoted(word))  # keeps the search honest: an unknown word finds nothing
    result.fts = " AND ".join(groups)
    return result


SYNONYM_WORDS = {word for phrase in SYNONYMS for word in phrase.split()}


def _correct_into_synonyms(conn: sqlite3.Connection, text: str, result: Plan, closest: dict) -> str:
    """Correct the misspelt words whose correction is a synonym's word ("devise mismatch" -> "device mismatch"), so
    the synonym applies; the other misspelt words are corrected later, one by one."""
    words = text.split()
    for index, word in enumerate(words):
        if word in SYNONYM_WORDS or word in result.tags or _known(conn, word):
            continue
        replacement = _correction(conn, word, closest)
        if replacement and replacement[1] in SYNONYM_WORDS:
            words[index] = replacement[1]
            result.notes.append(_searched_instead(word, replacement[1]))
    return " ".join(words)


def _correction(conn: sqlite3.Connection, word: str, closest: dict) -> tuple[str, str] | None:
    """closest_word for a misspelt word of 4 or more letters, not a number; read once per query (`closest`)."""
    if word not in closest:
        closest[word] = closest_word(conn, word) if len(word) >= 4 and not word.isdigit() else None
    return closest[word]


def _searched_instead(word: str, shown: str) -> str:
    return f"no record has “{word}”: searched “{shown}” instead"


@dataclass
class Hit:
    slug: str
    errorMessage: str
    errorClass: str
    library: str
    lastVerdict: str | None
    verifiedOn: str | None
    tags: list[str]
    why: list[str]  # "tagged oom", "message: …\x02memory\x03…"

    def as_dict(self) -> dict:
        return {**self.__dict__, "why": [plain_marks(w) for w in self.why]}


def plain_marks(text: str) -> str:
    """A snippet with its marks as «» (terminal and JSON)."""
    return text.replace(MARK_START, "«").replace(MARK_END, "»")


def matching_rowids(conn: sqlite3.Connection, planned: Plan, limit: int) -> tuple[list[int], int]:
    """The rowids of the `limit` best hits and how many records match."""
    tagged: list[int] = []
    if planned.tags:
        tagged = [r[0] for r in conn.execute(
            f"select records.rowid from records where slug in ({_all_tags_sql(planned.tags)}) order by slug limit {int(limit)}",
            planned.tags)]
    ranked: list[int] = []
    if planned.fts:
        ranked = [r[0] for r in conn.execute(
            "select rowid from records_fts where records_fts match ? and rank match 'bm25(10.0, 1.0, 1.0, 1.0, 1.0)' "
            f"order by rank limit {int(limit)}", [planned.fts])]
    order = list(dict.fromkeys(ranked + tagged))[:limit]  # by relevance, then records found by their tags alone
    parts, params = [], []
    if planned.fts:
        parts.append("select rowid from records_fts where records_fts match ?")
        params.append(planned.fts)
    if planned.tags:
        parts.append(f"select records.rowid from records where slug in ({_all_tags_sql(planned.tags)})")
        params.extend(planned.tags)
    total = conn.execute(f"select count(*) from ({' union '.join(parts)})", params).fetchone()[0] if parts else 0
    return order, total


def _all_tags_sql(tags: list[str]) -> str:
    """The slugs having every one of `tags` (bound as parameters, in order)."""
    return f"select slug from record_tags where tag in ({', '.join('?' * len(tags))}) group by slug having count(*) = {len(tags)}"


def snippets(conn: sqlite3.Connection, planned: Plan, rowids: list[int]) -> dict[int, str]:
    """The matched words in context, per rowid (only for the rows shown)."""
    if not planned.fts or not rowids:
        return {}
    rows = conn.execute(
        f"select rowid, snippet(records_fts, -1, ?, ?, '…', {SNIPPET_WORDS}) from records_fts "
        f"where records_fts match ? and rowid in ({', '.join('?' * len(rowids))})",
        [MARK_START, MARK_END, planned.fts, *rowids],
    )
    return {rowid: text for rowid, text in rows}


def why_matched(planned: Plan, tags: list[str], snippet: str | None) -> list[str]:
    named = [tag for tag in planned.tags if tag in tags]
    why = [f"tagged {', '.join(named)}"] if named else []
    if snippet:  # the solutions column holds a JSON list: show its text
        snippet = " ".join(snippet.split())
        why.append(re.sub(r'^\["|"\]$|", "', lambda m: " · " if m.group(0) == '", "' else "", snippet.replace('["', '', 1) if snippet.startswith('["') else snippet))
    return why


def search(conn: sqlite3.Connection, query: str, limit: int = 20) -> tuple[list[Hit], int, Plan]:
    """The hits for `query` (at most `limit`), how many records match, and the plan (for its notes)."""
    planned = plan(conn, query)
    if planned.empty:
        return [], 0, planned
    order, total = matching_rowids(conn, planned, limit)
    if not order:
        return [], total, planned
    marks = ", ".join("?" * len(order))
    rows = {row[0]: row for row in conn.execute(
        f"select rowid, slug, errorMessage, errorClass, repo, lastVerdict, verifiedOn, tags from records where rowid in ({marks})",
        order)}
    found = snippets(conn, planned, order)
    hits = []
    for rowid in order:
        if rowid not in rows:
            continue
        _, slug, message, error_class, repo, verdict, verified_on, tags = rows[rowid]
        tags = json.loads(tags or "[]")
        hits.append(Hit(slug, message, error_class, repo, verdict, verified_on, tags, why_matched(planned, tags, found.get(rowid))))
    return hits, total, planned


def run(root: Path, query: str, limit: int = 20) -> tuple[list[Hit], int, Plan]:
    """`search` over root's catalog.db, built first when it is missing (InvalidInput when a record is invalid)."""
    if not catalog.is_built(root):
        writes.build(root)  # under the catalog lock
    conn = sqlite3.connect(f"file:{root / DATABASE_FILE}?mode=ro", uri=True)
    try:
        return search(conn, query, limit)
    finally:
        conn.close()
