"""The match index: what the matcher needs from each record, prepared so one paste reads little of it.

Tables (in catalog.db, next to `records`; or in memory when matching straight from records/):
- `match_patterns`: one row per record: slug, messagePattern, errorClass, errorMessage, how many
  anchor words the pattern has (0: an alternative has none, so it is tried on every paste), the words its pattern spells out
  (`literals`) and its opening clause (`opening`, see tokens.opening_clause).
- `match_anchors`: for each alternative of each pattern (tokens.word_choices), its rarest required word: every
  text the pattern matches contains one of them, so only patterns with an anchor in the paste are tried.
- `match_required`: in how many patterns each required word occurs (to pick the rarest).
- `match_terms`: in how many messages each term occurs (word weights for text similarity).
- `match_fts`: FTS5 over the messages, to find reworded messages by their rare words.
- `match_dirty` and triggers on `records`: any change to a record marks its slug, and the next
  `refresh` re-indexes only those slugs. `errkb build --full` drops `records` and with it the
  triggers; a missing trigger (or a version or count mismatch) means a full rebuild.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..store import raw_records
from .tokens import analyse, terms, word_choices

VERSION = "8"  # 7: an anchor for each alternative of a pattern; 8: the record's file (for bare exceptions)
ANCHORS_PER_PATTERN = 1  # the rarest: a paste then reads few anchor rows
TRIGGERS = ("match_dirty_insert", "match_dirty_update", "match_dirty_delete")

_TABLES = """
CREATE TABLE IF NOT EXISTS match_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS match_patterns (
  id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, pattern TEXT NOT NULL, error_class TEXT,
  message TEXT NOT NULL, anchors INTEGER NOT NULL, literals TEXT, opening TEXT, file_path TEXT);
CREATE INDEX IF NOT EXISTS match_patterns_anchors ON match_patterns (anchors);
CREATE TABLE IF NOT EXISTS match_anchors (word TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (word, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS match_anchors_id ON match_anchors (id);
CREATE TABLE IF NOT EXISTS match_required (word TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS match_terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS match_fts USING fts5(message, content='', tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS match_dirty (slug TEXT PRIMARY KEY);
"""
_DROP = "".join(f"DROP TRIGGER IF EXISTS {name};\n" for name in TRIGGERS) + "".join(
    f"DROP TABLE IF EXISTS {name};\n"
    for name in ["match_patterns", "match_anchors", "match_required", "match_terms", "match_fts", "match_dirty", "match_meta"]
)
# Guarded inserts, not INSERT OR IGNORE: inside a trigger the outer statement's conflict policy wins, and
# sqlite-utils' upsert (INSERT ... ON CONFLICT DO UPDATE) would turn a second mark of a slug into an error.
_MARK = "INSERT INTO match_dirty (slug) SELECT {0}.slug WHERE NOT EXISTS (SELECT 1 FROM match_dirty WHERE slug = {0}.slug);"
_TRIGGER_SQL = f"""
CREATE TRIGGER IF NOT EXISTS match_dirty_insert AFTER INSERT ON records
  BEGIN {_MARK.format("new")} END;
CREATE TRIGGER IF NOT EXISTS match_dirty_update AFTER UPDATE OF slug, errorMessage, messagePattern, errorClass ON records
  BEGIN {_MARK.format("old")}
        {_MARK.format("new")} END;
CREATE TRIGGER IF NOT EXISTS match_dirty_delete AFTER DELETE ON records
  BEGIN {_MARK.format("old")} END;
"""
_RECORD_COLUMNS = "slug, errorMessage, messagePattern, errorClass, filePath"


@dataclass(frozen=True)
class Entry:
    """What the matcher knows of one record."""

    slug: str
    message: str
    pattern: str
    error_class: str | None
    file_path: str | None = None  # where the library raises it: names a bare exception (no message) by its frame


def entries_from_folder(folder: Path) -> list[Entry]:
    """Records read straight from JSON files (envelope or bare record); unreadable files are skipped."""
    out = []
    for record in raw_records(folder):
        try:
            out.append(Entry(record["slug"], record["errorMessage"], record["messagePattern"], record.get("errorClass"),
                             record.get("filePath")))
        except KeyError:
            continue
    return out


def in_memory(entries: list[Entry]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.executescript(_TABLES)
    entries = list({entry.slug: entry for entry in reversed(entries)}.values())[::-1]  # first of each slug
    _bulk_add(conn, entries)
    _set_meta(conn, len(entries))
    return conn


def refresh(conn: sqlite3.Connection) -> int:
    """Bring the index in a catalog database in line with its `records` table.

    Returns how many records were (re)indexed. Call inside the caller's transaction, or let the
    matcher call it lazily. Cheap when nothing changed.
    """
    if not _has_table(conn, "records"):
        return 0
    if _needs_full_rebuild(conn):
        for statement in _split(_DROP):
            conn.execute(statement)
        for statement in _split(_TABLES) + _split(_TRIGGER_SQL):
            conn.execute(statement)
        entries = [Entry(*row) for row in conn.execute(f"SELECT {_RECORD_COLUMNS} FROM records")]
        _bulk_add(conn, entries)
        conn.execute("DELETE FROM match_dirty")
        _set_meta(conn, len(entries))
        return len(entries)
    dirty = [row[0] for row in conn.execute("SELECT slug FROM match_dirty")]
    for slug in dirty:
        _remove(conn, slug)
        row = conn.execute(f"SELECT {_RECORD_COLUMNS} FROM records WHERE slug = ?", [slug]).fetchone()
        if row:
            _add(conn, Entry(*row))
    if dirty:
        conn.execute("DELETE FROM match_dirty")
        _set_meta(conn, _count(conn, "match_patterns"))
    return len(dirty)


def is_fresh(conn: sqlite3.Connection) -> bool:
    """True when `refresh` would do nothing (a few cheap queries)."""
    if _needs_full_rebuild(conn):
        return False
    return conn.execute("SELECT 1 FROM match_dirty LIMIT 1").fetchone() is None


def _needs_full_rebuild(conn: sqlite3.Connection) -> bool:
    if not _has_table(conn, "match_meta") or not _has_table(conn, "match_dirty"):
        return True
    version = conn.execute("SELECT value FROM match_meta WHERE key = 'version'").fetchone()
    if not version or version[0] != VERSION:
        return True
    triggers = conn.execute(
        f"SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ({', '.join('?' * len(TRIGGERS))})",
        TRIGGERS,
    ).fetchone()[0]
    # With the triggers in place since the last full build, every change since is in match_dirty.
    return triggers != len(TRIGGERS)


def _split(script: str) -> list[str]:
    """The statements of a script (one or more lines each), to run inside the caller's transaction."""
    out, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if sqlite3.complete_statement(text):
            out.append(text)
            current = []
    return out


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [name]).fetchone() is not None


def _count(conn: sqlite3.Connection, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _set_meta(conn: sqlite3.Connection, count: int) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO match_meta (key, value) VALUES (?, ?)",
        [("version", VERSION), ("records", str(count))],
    )


def _message_terms(message: str) -> set[str]:
    return {term for term, _quoted in terms(message)}


def _literals(found: set[str] | None) -> str | None:
    return None if found is None else " ".join(sorted(found))


def _all_words(choices: list[set[str]] | None) -> set[str]:
    return set().union(*choices) if choices else set()


def _anchor_count(choices: list | None) -> int:
    """What `match_patterns.anchors` holds: how many alternatives are anchored, 0 when one cannot be."""
    return len(choices) if choices and all(choices) else 0


def _choose_anchors(choices: list[set[str]] | None, frequency) -> list[str]:
    """The rarest word of each alternative; none when some alternative requires no word (it is tried on every paste)."""
    if not choices or not all(choices):
        return []
    chosen = []
    for words in choices:
        for word in sorted(words, key=lambda word: (frequency(word), -len(word), word))[:ANCHORS_PER_PATTERN]:
            if word not in chosen:
                chosen.append(word)
    return chosen


def _bulk_add(conn: sqlite3.Connection, entries: list[Entry]) -> None:
    analysed = [analyse(entry.pattern) for entry in entries]
    required = [choices for choices, _, _ in analysed]
    counts = Counter(word for choices in required for word in _all_words(choices))
    term_df = Counter(term for entry in entries for term in _message_terms(entry.message))
    patterns, anchors = [], []
    for entry, (words, literals, opening) in zip(entries, analysed):
        chosen = _choose_anchors(words, counts.__getitem__)
        patterns.append(
            (entry.slug, entry.pattern, entry.error_class, entry.message, _anchor_count(words), _literals(literals), opening,
             entry.file_path)
        )
        anchors.append(chosen)
    conn.executemany(
        "INSERT INTO match_patterns (slug, pattern, error_class, message, anchors, literals, opening, file_path)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        patterns,
    )
    ids = dict(conn.execute("SELECT slug, id FROM match_patterns"))
    conn.executemany(
        "INSERT OR IGNORE INTO match_anchors (word, id) VALUES (?, ?)",
        ((word, ids[entry.slug]) for entry, chosen in zip(entries, anchors) for word in chosen),
    )
    conn.executemany("INSERT INTO match_required (word, n) VALUES (?, ?)", counts.items())
    conn.executemany("INSERT INTO match_terms (term, df) VALUES (?, ?)", term_df.items())
    conn.executemany(
        "INSERT INTO match_fts (rowid, message) VALUES (?, ?)", ((ids[entry.slug], entry.message) for entry in entries)
    )


Analysis = tuple  # (word choices or None, literals text or None, opening clause or None, message terms)


def analysis(pattern: str, message: str) -> Analysis:
    """What the index keeps of one record, computed apart from the database (in build's worker processes)."""
    choices, literals, opening = analyse(pattern)
    choices = None if choices is None else [sorted(words) for words in choices]
    return choices, _literals(literals), opening, sorted(_message_terms(message))


class BulkLoad:
    """Fill the index from scratch in one pass over the records, in batches, inside the caller's transaction.

    The same tables as `refresh` makes from scratch, but each pattern's analysis comes precomputed and
    nothing is held per record in memory: required words wait in a temporary table until the last batch,
    when their counts are known and each alternative's anchor (its rarest required word) is chosen in SQL.
    """

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        for statement in _split(_DROP) + _split(_TABLES):
            conn.execute(statement)
        conn.execute("DROP TABLE IF EXISTS temp.index_required")
        conn.execute("CREATE TEMP TABLE index_required (id INTEGER NOT NULL, choice INTEGER NOT NULL, word TEXT NOT NULL)")
        self.term_df: Counter = Counter()
        self.count = 0

    def add(self, items: list[tuple[Entry, Analysis]]) -> None:
        cursor = self.conn.cursor()
        required = []
        for entry, (choices, literals, opening, message_terms) in items:
            cursor.execute(
                "INSERT INTO match_patterns (slug, pattern, error_class, message, anchors, literals, opening, file_path)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [entry.slug, entry.pattern, entry.error_class, entry.message, _anchor_count(choices), literals, opening,
                 entry.file_path],
            )
            if _anchor_count(choices):
                required += [(cursor.lastrowid, n, word) for n, words in enumerate(choices) for word in words]
            self.term_df.update(message_terms)
        self.conn.executemany("INSERT INTO index_required (id, choice, word) VALUES (?, ?, ?)", required)
        self.count += len(items)

    def finish(self) -> None:
        conn = self.conn
        conn.execute(
            "INSERT INTO match_required (word, n) SELECT word, count(DISTINCT id) FROM index_required GROUP BY word"
        )
        conn.execute(
            "INSERT OR IGNORE INTO match_anchors (word, id) SELECT word, id FROM ("
            " SELECT r.id, r.word,"
            " row_number() OVER (PARTITION BY r.id, r.choice ORDER BY q.n, -length(r.word), r.word) AS k"
            " FROM index_required r JOIN match_required q ON q.word = r.word)"
            f" WHERE k <= {ANCHORS_PER_PATTERN} ORDER BY word, id"
        )
        conn.executemany("INSERT INTO match_terms (term, df) VALUES (?, ?)", sorted(self.term_df.items()))
        conn.execute("INSERT INTO match_fts (rowid, message) SELECT id, message FROM match_patterns")
        conn.execute("DROP TABLE temp.index_required")
        for statement in _split(_TRIGGER_SQL):
            conn.execute(statement)
        _set_meta(conn, self.count)


def _add(conn: sqlite3.Connection, entry: Entry) -> None:
    choices, literals, opening = analyse(entry.pattern)
    for word in _all_words(choices):
        conn.execute(
            "INSERT INTO match_required (word, n) VALUES (?, 1) ON CONFLICT (word) DO UPDATE SET n = n + 1", [word]
        )

    def frequency(word: str) -> int:
        row = conn.execute("SELECT n FROM match_required WHERE word = ?", [word]).fetchone()
        return row[0] if row else 0

    chosen = _choose_anchors(choices, frequency)
    cursor = conn.execute(
        "INSERT INTO match_patterns (slug, pattern, error_class, message, anchors, literals, opening, file_path)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [entry.slug, entry.pattern, entry.error_class, entry.message, _anchor_count(choices), _literals(literals), opening,
         entry.file_path],
    )
    pid = cursor.lastrowid
    conn.executemany("INSERT OR IGNORE INTO match_anchors (word, id) VALUES (?, ?)", [(word, pid) for word in chosen])
    for term in _message_terms(entry.message):
        conn.execute(
            "INSERT INTO match_terms (term, df) VALUES (?, 1) ON CONFLICT (term) DO UPDATE SET df = df + 1", [term]
        )
    conn.execute("INSERT INTO match_fts (rowid, message) VALUES (?, ?)", [pid, entry.message])


def _remove(conn: sqlite3.Connection, slug: str) -> None:
    row = conn.execute("SELECT id, pattern, message FROM match_patterns WHERE slug = ?", [slug]).fetchone()
    if not row:
        return
    pid, pattern, message = row
    for word in _all_words(word_choices(pattern)):
        conn.execute("UPDATE match_required SET n = n - 1 WHERE word = ?", [word])
    for term in _message_terms(message):
        conn.execute("UPDATE match_terms SET df = df - 1 WHERE term = ?", [term])
    conn.execute("DELETE FROM match_required WHERE n <= 0")
    conn.execute("DELETE FROM match_terms WHERE df <= 0")
    conn.execute("INSERT INTO match_fts (match_fts, rowid, message) VALUES ('delete', ?, ?)", [pid, message])
    conn.execute("DELETE FROM match_anchors WHERE id = ?", [pid])
    conn.execute("DELETE FROM match_patterns WHERE id = ?", [pid])


def indexed_count(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM match_meta WHERE key = 'records'").fetchone()
    return int(row[0]) if row else _count(conn, "match_patterns")
