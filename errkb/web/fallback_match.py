"""Stand-in for `errkb.match` while it is being written: full-text search (FTS5, bm25) over the words
of the last exception line, then a check of each candidate's messagePattern.

To remove: delete this file and the `fallback_match` lines in matching.py.
"""

from __future__ import annotations

import re
import sqlite3

from ..patterns import PatternError, pattern_matches

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
EXCEPTION_LINE = re.compile(
    r"(?P<cls>\b[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit))(?::\s*(?P<message>.*))?$"
)
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
MAX_WORDS = 24
CANDIDATES = 20


def last_exception_line(text: str) -> tuple[str | None, str]:
    """(class, message) of the last line that looks like `SomeError: message`, else (None, last line)."""
    lines = [ANSI.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    for line in reversed(lines):
        if line.startswith("File \""):
            continue
        found = EXCEPTION_LINE.search(line)
        if found:
            return found["cls"], (found["message"] or "").strip()
    return None, lines[-1] if lines else ""


def match(conn: sqlite3.Connection, text: str, limit: int = 10) -> list[dict]:
    """Ranked {slug, score, reasons} for the records that are close to the pasted text."""
    cls, message = last_exception_line(text)
    words = list(dict.fromkeys(w.lower() for w in WORD.findall(message)))[:MAX_WORDS]
    if not words:
        return []
    query = " OR ".join(f'"{word}"' for word in words)
    rows = conn.execute(
        """
        select records.slug, records.errorClass, records.errorMessage, records.messagePattern,
               bm25(records_fts, 10.0, 1.0, 1.0, 1.0, 1.0) as rank
        from records_fts join records on records.rowid = records_fts.rowid
        where records_fts match ? order by rank limit ?
        """,
        [query, CANDIDATES],
    ).fetchall()
    results = [_judge(row, cls, message, words) for row in rows]
    results = [result for result in results if result]
    results.sort(key=lambda result: -result["score"])
    return results[:limit]


def _judge(row, cls: str | None, message: str, words: list[str]) -> dict | None:
    slug, record_class, record_message, pattern, _rank = row
    reasons = []
    try:
        pattern_hit = pattern_matches(pattern, message)
    except PatternError:
        pattern_hit = False
    if pattern_hit:
        reasons.append("messagePattern matches the exception message")
    record_words = {w.lower() for w in WORD.findall(record_message)}
    shared = [w for w in words if w in record_words]
    overlap = len(shared) / len(words)
    if shared:
        reasons.append(f"shares {len(shared)} of {len(words)} words with the message: {', '.join(shared[:8])}")
    class_hit = cls is not None and cls.rsplit(".", 1)[-1] == record_class.rsplit(".", 1)[-1]
    if class_hit:
        reasons.append(f"same class: {record_class}")
    if not pattern_hit and overlap < 0.5:
        return None  # not close: only a few common words in common
    score = 0.6 * pattern_hit + 0.3 * overlap + 0.1 * class_hit
    return {"slug": slug, "score": round(score, 3), "reasons": reasons}
