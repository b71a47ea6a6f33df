"""catalog.db: built from records/ with sqlite-utils, incrementally, in one transaction."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from .lock import with_catalog_lock
from .model import Envelope, Record
from .problems import InvalidInput, Problem
from .store import DATABASE_FILE, RECORDS_DIR, content_hash, file_hash, record_files
from .validate import envelope_from_data
from .jsonfile import parse_json
from . import runs
from .runs import RUNS_TABLE, last_run, runs_by_slug, verdict_columns  # noqa: F401 (part of this module's interface)
from .runs import ensure_table as ensure_runs_table
from .runs import refresh_records as refresh_last_verdicts

FTS_COLUMNS = ["errorMessage", "documentation", "triggerScenarios", "commonSituations", "solutions"]
LIST_COLUMNS = ["solutions", "preventionTips", "tags"]
RECORD_TABLES = ["record_tags", "tags", "prevention_tips", "solutions", "records"]


BUSY_TIMEOUT_S = 30  # errkb's writers take the catalog lock; this covers other readers and writers of the file


def open_db(root: Path) -> sqlite_utils.Database:
    db = sqlite_utils.Database(sqlite3.connect(root / DATABASE_FILE, timeout=BUSY_TIMEOUT_S))
    db.execute("PRAGMA foreign_keys = ON")
    return db


def ensure_schema(db: sqlite_utils.Database) -> None:
    if "records" not in db.table_names():
        columns = {name: _sql_type(info.annotation) for name, info in Record.model_fields.items()}
        columns.update(datasetVersion=str, contentHash=str, sourceFile=str, lastVerdict=str, lastVerifiedAt=str, verifiedOn=str)
        db["records"].create(columns, pk="slug", not_null={"slug", "contentHash"})
        db["records"].enable_fts(FTS_COLUMNS, tokenize="porter", create_triggers=True)
        for name in ["id", "repo", "errorClass", "errorType", "severity", "lastVerdict"]:
            db["records"].create_index([name])
    elif "verifiedOn" not in db["records"].columns_dict:
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
        db["record_tags"].create_index(["tag"])
    ensure_runs_table(db)


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


@with_catalog_lock
def build(root: Path, full: bool = False) -> BuildReport:
    """Bring catalog.db in line with records/. Any invalid file: InvalidInput, and the database is untouched."""
    if not (root / RECORDS_DIR).is_dir():
        where = root.resolve()
        raise InvalidInput([Problem(str(where), "$", f"no {RECORDS_DIR}/ folder: not an errkb catalog (use --root DIR or ERRKB_ROOT)")])
    files = record_files(root)
    db = open_db(root)
    try:
        with db.atomic():
            if full:
                _drop_record_tables(db)
            ensure_schema(db)
            known = {row["slug"]: row["contentHash"] for row in db.query("select slug, contentHash from records")}
            report, problems, upserts = BuildReport(), [], []
            seen = set()
            for path in files:
                raw = path.read_bytes()
                digest = content_hash(raw)
                slug = path.stem
                seen.add(slug)
                if known.get(slug) == digest:
                    report.unchanged += 1
                    continue
                try:
                    envelope = envelope_from_data(parse_json(raw, str(path)), str(path))
                except InvalidInput as exc:
                    problems.extend(exc.problems)
                    continue
                if envelope.record.slug != slug:
                    problems.append(Problem(str(path), "$.record.slug", f"found {envelope.record.slug!r}, expected {slug!r} (the file name)"))
                    continue
                upserts.append((envelope, digest, path))
                (report.updated if slug in known else report.added).append(slug)
            report.removed = sorted(set(known) - seen)
            problems += _id_conflicts(db, upserts, set(report.removed))
            if problems:
                raise InvalidInput(problems)
            delete_records(db, report.removed)
            upsert_records(db, [(env, digest, path.relative_to(root).as_posix()) for env, digest, path in upserts])
            if report.changed:
                _drop_unused_tags(db)
            runs.sync(db, root)
    finally:
        db.close()
    return report


def _id_conflicts(db: sqlite_utils.Database, upserts: list, removed: set[str]) -> list[Problem]:
    """Two records may not share an id: the new ones against each other and against those that stay."""
    changing = removed | {envelope.record.slug for envelope, _, _ in upserts}
    owners = {id_: slug for id_, slug in db.execute("select id, slug from records") if slug not in changing}
    problems = []
    for envelope, _, path in upserts:
        owner = owners.setdefault(envelope.record.id, envelope.record.slug)
        if owner != envelope.record.slug:
            problems.append(Problem(str(path), "$.record.id", f"id {envelope.record.id!r} is also used by record {owner!r}"))
    return problems


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


def delete_children(db: sqlite_utils.Database, slugs: list[str]) -> None:
    for table in ["solutions", "prevention_tips", "record_tags"]:
        _delete_where_slug_in(db, table, slugs)


def delete_records(db: sqlite_utils.Database, slugs: list[str]) -> None:
    delete_children(db, slugs)
    _delete_where_slug_in(db, "records", slugs)


def _delete_where_slug_in(db: sqlite_utils.Database, table: str, slugs: list[str], chunk: int = 500) -> None:
    for start in range(0, len(slugs), chunk):
        part = slugs[start : start + chunk]
        db.execute(f"delete from [{table}] where slug in ({', '.join('?' * len(part))})", part)


def _drop_unused_tags(db: sqlite_utils.Database) -> None:
    db.execute("delete from tags where name not in (select tag from record_tags)")


def _drop_record_tables(db: sqlite_utils.Database) -> None:
    for name in RECORD_TABLES:
        if name in db.table_names():
            if name == "records" and db["records"].detect_fts():
                db["records"].disable_fts()
            db[name].drop()


@with_catalog_lock
def add_to_database(root: Path, envelopes: list[tuple[Envelope, Path]]) -> None:
    """After `errkb add`: upsert the given records into an existing catalog.db."""
    db = open_db(root)
    try:
        with db.atomic():
            ensure_schema(db)
            upsert_records(
                db,
                [
                    (envelope, file_hash(path), path.relative_to(root).as_posix())
                    for envelope, path in envelopes
                ],
            )
    finally:
        db.close()
