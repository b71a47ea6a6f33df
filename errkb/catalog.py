"""catalog.db: built from records/ with sqlite-utils, incrementally, in one transaction."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from . import changes, ingest, runs, signing, themes
from .matching import index
from .model import Envelope, Record
from .problems import InvalidInput, Problem
from .layout import DATABASE_FILE, RECORDS_DIR
from .runs import RUNS_TABLE, last_run, runs_by_slug, verdict_columns  # noqa: F401 (part of this module's interface)
from .runs import ensure_table as ensure_runs_table
from .runs import refresh_records as refresh_last_verdicts

FTS_COLUMNS = ["errorMessage", "documentation", "triggerScenarios", "commonSituations", "solutions"]
LIST_COLUMNS = ["solutions", "preventionTips", "tags"]
RECORD_TABLES = ["record_themes", "record_tags", "tags", "prevention_tips", "solutions", "records"]


BUSY_TIMEOUT_S = 30  # errkb's writers take the catalog lock; this covers other readers and writers of the file


def open_db(root: Path) -> sqlite_utils.Database:
    db = sqlite_utils.Database(sqlite3.connect(root / DATABASE_FILE, timeout=BUSY_TIMEOUT_S))
    # WAL: readers (errkb serve, the matcher) see the last committed catalog while a build or add writes.
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA foreign_keys = ON")
    return db


def is_built(root: Path) -> bool:
    """Whether root's catalog.db holds the records (a `reproduce` into an unbuilt root writes only its runs)."""
    path = root / DATABASE_FILE
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")}
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return {"records", "records_fts"} <= tables


def ensure_schema(db: sqlite_utils.Database) -> None:
    fresh = "records" not in db.table_names()
    had_record_tags = "record_tags" in db.table_names()
    had_record_themes = themes.TABLE in db.table_names()
    _create_record_tables(db)
    if fresh:
        _create_deferred(db.conn)
    elif not had_record_tags:
        db.conn.execute('CREATE INDEX "idx_record_tags_tag" ON "record_tags" ("tag")')
    if not fresh and not had_record_themes:  # a catalog built before themes: fill it from record_tags
        db.conn.execute(f'CREATE INDEX "idx_{themes.TABLE}_theme" ON "{themes.TABLE}" ("theme")')
        db.conn.execute(themes.FILL_SQL, {"pairs": themes.pairs_json()})
    changes.ensure_tables(db.conn)
    ensure_runs_table(db)


def _create_record_tables(db: sqlite_utils.Database) -> None:
    """The record tables without what a bulk load fills faster at the end: secondary indexes and full-text search."""
    if "records" not in db.table_names():
        columns = {name: _sql_type(info.annotation) for name, info in Record.model_fields.items()}
        columns.update(datasetVersion=str, contentHash=str, sourceFile=str, lastVerdict=str, lastVerifiedAt=str, verifiedOn=str)
        db["records"].create(columns, pk="slug", not_null={"slug", "contentHash"})
    elif "verifiedOn" not in db["records"].columns_dict:  # a catalog built before results were data
        db["records"].add_column("verifiedOn", str)
    for table in ["solutions", "prevention_tips"]:
        if table not in db.table_names():
            db[table].create(
                {"slug": str, "position": int, "text": str},
                pk=("slug", "position"),
                foreign_keys=[("slug", "records", "slug")],
            )
    if "tags" not in db.table_names():
        db["tags"].create({"name": str}, pk="name")
    if "record_tags" not in db.table_names():
        db["record_tags"].create(
            {"slug": str, "tag": str},
            pk=("slug", "tag"),
            foreign_keys=[("slug", "records", "slug"), ("tag", "tags", "name")],
        )
    if themes.TABLE not in db.table_names():  # derived from the tags (errkb/themes.py)
        db[themes.TABLE].create({"slug": str, "theme": str}, pk=("slug", "theme"), foreign_keys=[("slug", "records", "slug")])


_FTS_LIST = ", ".join(f'"{name}"' for name in FTS_COLUMNS)
_FTS_NEW = ", ".join(f'new."{name}"' for name in FTS_COLUMNS)
_FTS_OLD = ", ".join(f'old."{name}"' for name in FTS_COLUMNS)
# The full-text index and its triggers as sqlite-utils' enable_fts writes them (it would commit the build's
# transaction: it runs them as a script).
_FTS_SQL = [
    f'CREATE VIRTUAL TABLE "records_fts" USING FTS5 ({_FTS_LIST}, tokenize=\'porter\', content="records")',
    "INSERT INTO records_fts (records_fts) VALUES ('rebuild')",
    f'CREATE TRIGGER "records_ai" AFTER INSERT ON "records" BEGIN\n'
    f'  INSERT INTO "records_fts" (rowid, {_FTS_LIST}) VALUES (new.rowid, {_FTS_NEW});\nEND',
    f'CREATE TRIGGER "records_ad" AFTER DELETE ON "records" BEGIN\n'
    f'  INSERT INTO "records_fts" ("records_fts", rowid, {_FTS_LIST}) VALUES(\'delete\', old.rowid, {_FTS_OLD});\nEND',
    f'CREATE TRIGGER "records_au" AFTER UPDATE ON "records" BEGIN\n'
    f'  INSERT INTO "records_fts" ("records_fts", rowid, {_FTS_LIST}) VALUES(\'delete\', old.rowid, {_FTS_OLD});\n'
    f'  INSERT INTO "records_fts" (rowid, {_FTS_LIST}) VALUES (new.rowid, {_FTS_NEW});\nEND',
]
RECORD_INDEXES = ["id", "repo", "errorClass", "errorType", "severity", "lastVerdict"]


def _create_deferred(conn: sqlite3.Connection) -> None:
    """Secondary indexes and full-text search, built once over whatever rows are there."""
    for name in RECORD_INDEXES:
        conn.execute(f'CREATE INDEX "idx_records_{name}" ON "records" ("{name}")')
    conn.execute('CREATE INDEX "idx_record_tags_tag" ON "record_tags" ("tag")')
    conn.execute(f'CREATE INDEX "idx_{themes.TABLE}_theme" ON "{themes.TABLE}" ("theme")')
    for statement in _FTS_SQL:
        conn.execute(statement)


def _sql_type(annotation) -> type:
    text = str(annotation)
    if "int" in text and "str" not in text and "list" not in text:
        return int
    return str


def record_row(envelope: Envelope, content_hash: str, source_file: str, verdicts: dict[str, list[dict]]) -> dict:
    row = envelope.record.model_dump()
    for name in LIST_COLUMNS:
        row[name] = json.dumps(row[name], ensure_ascii=False)
    last_verdict, last_verified_at, verified_on = verdict_columns(verdicts.get(row["slug"], []), content_hash)
    row.update(
        datasetVersion=envelope.datasetVersion,
        contentHash=content_hash,
        sourceFile=source_file,
        lastVerdict=last_verdict,
        lastVerifiedAt=last_verified_at,
        verifiedOn=verified_on,
    )
    return row


@dataclass
class BuildReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def build(root: Path, full: bool = False, trust_unsigned: bool = False) -> BuildReport:
    """Bring catalog.db in line with records/. Any invalid file: InvalidInput, and the database is untouched.
    Callers that may race other writers take the catalog lock first (writes.build).

    One transaction. Files unchanged since the last build (size and mtime, see changes.py) are not read; the
    others are parsed and validated on every core and written in batches. Into an empty catalog (always with
    `full`) rows go in bare tables and the indexes, full-text search and match index are built once at the end;
    otherwise triggers keep them current and the match index takes the changed records in the same transaction.
    """
    folder = root / RECORDS_DIR
    if not folder.is_dir():
        where = root.resolve()
        raise InvalidInput([Problem(str(where), "$", f"no {RECORDS_DIR}/ folder: not an errkb catalog (use --root DIR or ERRKB_ROOT)")])
    started_ns = time.time_ns()
    db = open_db(root)
    try:
        with db.atomic():
            if full:
                _drop_record_tables(db.conn)
            fresh = "records" not in db.table_names()
            if fresh:
                _create_record_tables(db)
                ensure_runs_table(db)
                changes.ensure_tables(db.conn)
            else:
                ensure_schema(db)
            report = BuildReport(unchanged=changes.scan(db.conn, folder))
            report.removed = changes.removed(db.conn)
            delete_records(db, report.removed)
            changes.forget(db.conn, report.removed)
            writer = _Writer(db, bulk=fresh)
            problems: list[Problem] = []
            remembered = 0
            # The queue is read twice, in the same order: ahead by the workers, in step here.
            batches = changes.todo_batches(db.conn, ingest.BATCH_SIZE)
            todo = db.conn.execute("SELECT count(*) FROM todo").fetchone()[0]
            queued = changes.todo_batches(db.conn, ingest.BATCH_SIZE)
            for batch, results in zip(batches, ingest.prepared_batches(folder, queued, todo)):
                ready, seen = [], []
                for (slug, known), result in zip(batch, results):
                    if isinstance(result, ingest.Invalid):
                        problems += result.problems
                    elif isinstance(result, ingest.Unchanged):
                        report.unchanged += 1
                        seen.append(result.stat)
                    else:
                        (report.updated if known else report.added).append(slug)
                        ready.append(result)
                        seen.append(result.stat)
                if not problems:  # once a file is invalid nothing is written: the rest is only checked
                    writer.write(ready)
                    remembered += changes.remember(db.conn, seen)
            if problems:
                raise InvalidInput(problems)
            conflicts = writer.id_conflicts(folder)
            if conflicts:
                raise InvalidInput(conflicts)
            writer.finish()
            refresh_themes(db.conn, rewrite=not fresh)
            if report.changed:
                _drop_unused_tags(db)
            runs.sync(db, root, signing.trusts_unsigned(trust_unsigned))
            changes.finish(db.conn, started_ns, wrote=report.changed or remembered > 0)
    finally:
        db.close()
    return report


class _Writer:
    """Writes prepared records in batches: plain inserts into bare tables (bulk), or upserts under triggers."""

    def __init__(self, db: sqlite_utils.Database, bulk: bool):
        self.db, self.conn, self.bulk = db, db.conn, bulk
        self.match_index = index.BulkLoad(self.conn) if bulk else None
        columns = ", ".join(f'"{name}"' for name in ingest.RECORD_COLUMNS)
        values = ", ".join("?" * len(ingest.RECORD_COLUMNS))
        self.insert_record = f"INSERT INTO records ({columns}) VALUES ({values})"
        if not bulk:
            updates = ", ".join(f'"{name}" = excluded."{name}"' for name in ingest.RECORD_COLUMNS if name != "slug")
            self.insert_record += f" ON CONFLICT (slug) DO UPDATE SET {updates}"
        self.hash_column = ingest.RECORD_COLUMNS.index("contentHash")
        self.conn.execute("DROP TABLE IF EXISTS temp.written")
        self.conn.execute("CREATE TEMP TABLE written (seq INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE)")

    def write(self, items: list[ingest.Prepared]) -> None:
        if not items:
            return
        slugs = [item.slug for item in items]
        if not self.bulk:
            delete_children(self.db, slugs)
        verdicts = runs_by_slug(self.db, slugs)
        for item in items:
            item.row[-3:] = verdict_columns(verdicts.get(item.slug, []), item.row[self.hash_column])
        conn = self.conn
        conn.executemany(self.insert_record, [item.row for item in items])
        conn.executemany(
            "INSERT INTO solutions (slug, position, text) VALUES (?, ?, ?)",
            [(item.slug, i, text) for item in items for i, text in enumerate(item.solutions)],
        )
        conn.executemany(
            "INSERT INTO prevention_tips (slug, position, text) VALUES (?, ?, ?)",
            [(item.slug, i, text) for item in items for i, text in enumerate(item.tips)],
        )
        conn.executemany("INSERT OR IGNORE INTO tags (name) VALUES (?)", [(tag,) for item in items for tag in item.tags])
        conn.executemany(
            "INSERT INTO record_tags (slug, tag) VALUES (?, ?)", [(item.slug, tag) for item in items for tag in item.tags]
        )
        conn.executemany(
            f"INSERT INTO {themes.TABLE} (slug, theme) VALUES (?, ?)",
            [(item.slug, theme) for item in items for theme in themes.of(item.tags)],
        )
        conn.executemany("INSERT INTO written (slug) VALUES (?)", [(slug,) for slug in slugs])
        if self.match_index:
            self.match_index.add([(item.entry, item.analysis) for item in items])

    def id_conflicts(self, folder: Path) -> list[Problem]:
        """Two records may not share an id. The one that keeps it: a record this build did not touch, else the
        first written; each other one is a problem."""
        rows = self.conn.execute(
            """SELECT r.id, r.slug, w.seq FROM records r LEFT JOIN written w ON w.slug = r.slug
            WHERE r.id IN (SELECT id FROM records GROUP BY id HAVING count(*) > 1)
            ORDER BY r.id, w.seq IS NOT NULL, w.seq"""
        ).fetchall()
        found, owner = [], {}
        for record_id, slug, seq in rows:
            owner.setdefault(record_id, slug)
            if seq is not None and owner[record_id] != slug:
                message = f"id {record_id!r} is also used by record {owner[record_id]!r}"
                found.append((seq, Problem(str(folder / f"{slug}.json"), "$.record.id", message)))
        return [problem for _, problem in sorted(found, key=lambda pair: pair[0])]

    def finish(self) -> None:
        self.conn.execute("DROP TABLE temp.written")
        if self.bulk:
            _create_deferred(self.conn)
            self.match_index.finish()
        else:
            index.refresh(self.conn)


def upsert_records(db: sqlite_utils.Database, items: list[tuple[Envelope, str, str]]) -> None:
    """Insert or replace records (envelope, content hash, source file) with their child rows, in bulk."""
    records = [envelope.record for envelope, _, _ in items]
    delete_children(db, [record.slug for record in records])
    verdicts = runs_by_slug(db, [record.slug for record in records])
    db["records"].upsert_all((record_row(*item, verdicts) for item in items), pk="slug")
    db["solutions"].insert_all(
        {"slug": r.slug, "position": i, "text": text} for r in records for i, text in enumerate(r.solutions)
    )
    db["prevention_tips"].insert_all(
        {"slug": r.slug, "position": i, "text": text} for r in records for i, text in enumerate(r.preventionTips)
    )
    db["tags"].insert_all(({"name": tag} for r in records for tag in r.tags), ignore=True)
    db["record_tags"].insert_all({"slug": r.slug, "tag": tag} for r in records for tag in r.tags)
    db[themes.TABLE].insert_all({"slug": r.slug, "theme": theme} for r in records for theme in themes.of(r.tags))


def delete_children(db: sqlite_utils.Database, slugs: list[str]) -> None:
    for table in ["solutions", "prevention_tips", "record_tags", themes.TABLE]:
        _delete_where_slug_in(db, table, slugs)


def delete_records(db: sqlite_utils.Database, slugs: list[str]) -> None:
    delete_children(db, slugs)
    _delete_where_slug_in(db, "records", slugs)


def _delete_where_slug_in(db: sqlite_utils.Database, table: str, slugs: list[str], chunk: int = 500) -> None:
    for start in range(0, len(slugs), chunk):
        part = slugs[start : start + chunk]
        db.execute(f"delete from [{table}] where slug in ({', '.join('?' * len(part))})", part)


def refresh_themes(conn: sqlite3.Connection, rewrite: bool) -> None:
    """Note which THEMES record_themes follows; when it followed others (rewrite), fill it again from record_tags.

    The writer puts each record it writes under its themes; records this build did not touch keep the themes of
    the build that wrote them, so a change of errkb/themes.py rewrites the whole table (once). Nothing is written
    when the themes have not changed: a no-op build leaves the database as it was.
    """
    current = themes.fingerprint()
    row = conn.execute(f"SELECT value FROM {changes.INFO_TABLE} WHERE key = 'themes'").fetchone()
    if row and row[0] == current:
        return
    if rewrite and row:
        conn.execute(f"DELETE FROM {themes.TABLE}")
        conn.execute(themes.FILL_SQL, {"pairs": themes.pairs_json()})
    conn.execute(f"INSERT OR REPLACE INTO {changes.INFO_TABLE} (key, value) VALUES ('themes', ?)", [current])


def _drop_unused_tags(db: sqlite_utils.Database) -> None:
    db.execute("delete from tags where name not in (select tag from record_tags)")


def _drop_record_tables(conn: sqlite3.Connection) -> None:
    """Everything derived from records/ (children first, for the foreign keys); reproduction_runs stays."""
    for name in ["records_fts", *RECORD_TABLES, changes.TABLE, changes.INFO_TABLE]:
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')


def indexed_hashes(db: sqlite_utils.Database, slugs: list[str]) -> dict[str, str]:
    """slug -> contentHash of the rows catalog.db has for these slugs."""
    found = {}
    for start in range(0, len(slugs), 500):
        part = slugs[start : start + 500]
        found.update(db.execute(f"select slug, contentHash from records where slug in ({', '.join('?' * len(part))})", part))
    return found
