"""The records/ folder: one canonical JSON file per record, written atomically."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .model import SLUG_PATTERN, Envelope
from .problems import InvalidInput, Problem
from .validate import load_envelope

RECORDS_DIR = "records"
REPRODUCTIONS_DIR = "reproductions"
DATABASE_FILE = "catalog.db"


def canonical_text(envelope: Envelope) -> str:
    """The one form a record file has: key order of the seed, 2-space indent, UTF-8, final newline."""
    return json.dumps(envelope.model_dump(), indent=2, ensure_ascii=False) + "\n"


def record_path(root: Path, slug: str) -> Path:
    return root / RECORDS_DIR / f"{slug}.json"


def record_files(root: Path) -> list[Path]:
    folder = root / RECORDS_DIR
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def differences(old: dict, new: dict) -> list[str]:
    """Field names whose values differ between two records, for a short summary."""
    return [key for key in new if old.get(key) != new[key]] + [key for key in old if key not in new]


@dataclass
class AddResult:
    slug: str
    status: str  # "added", "replaced" or "unchanged"
    path: Path


def plan_add(root: Path, files: list[Path], replace: bool = False) -> list[tuple[Envelope, AddResult]]:
    """Validate every file and decide what each would do; raise InvalidInput with every problem, write nothing."""
    problems: list[Problem] = []
    planned: dict[str, tuple[Path, Envelope]] = {}
    ids: IdOwners | None = None  # made only when a file is valid
    results = []
    for file in files:
        try:
            envelope = load_envelope(file)
        except InvalidInput as exc:
            problems.extend(exc.problems)
            continue
        slug = envelope.record.slug
        if slug in planned and planned[slug][1].record != envelope.record:
            problems.append(Problem(str(file), "$.record.slug", f"slug {slug!r} is also given by {planned[slug][0]} with other content"))
            continue
        planned[slug] = (file, envelope)
        if ids is None:
            ids = IdOwners(root)
        owner = ids.claim(envelope.record.id, slug)
        if owner != slug:
            problems.append(Problem(str(file), "$.record.id", f"id {envelope.record.id!r} is already used by record {owner!r}; expected a new id"))
            continue
        target = record_path(root, slug)
        status = "added"
        if target.exists():
            try:
                existing = load_envelope(target)
            except InvalidInput:
                existing = None
            if existing is not None and existing.record == envelope.record:
                status = "unchanged"
            elif not replace:
                changed = differences(existing.record.model_dump(), envelope.record.model_dump()) if existing else ["(existing file is invalid)"]
                problems.append(
                    Problem(
                        str(file),
                        "$.record.slug",
                        f"slug {slug!r} already exists in {target} with different content "
                        f"(differs in: {', '.join(changed)}); use --replace to overwrite",
                    )
                )
                continue
            else:
                status = "replaced"
        results.append((envelope, AddResult(slug, status, target)))
    if problems:
        raise InvalidInput(problems)
    return results


def add_files(root: Path, files: list[Path], replace: bool = False) -> list[AddResult]:
    plan = plan_add(root, files, replace)
    for envelope, result in plan:
        if result.status != "unchanged":
            write_atomically(result.path, canonical_text(envelope))
    return [result for _, result in plan]


class IdOwners:
    """Which record uses an id: asked of catalog.db (indexed) when it has the records, else read from records/."""

    def __init__(self, root: Path):
        self.claimed: dict[str, str] = {}
        self.conn = None
        database = root / DATABASE_FILE
        if database.is_file():
            try:
                self.conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
                self.conn.execute("select id, slug from records limit 1")
            except sqlite3.Error:
                self.conn = None
        if self.conn is None:
            self.claimed = _ids_in_files(root)

    def claim(self, record_id: str, slug: str) -> str:
        """The slug that owns `record_id` once `slug` claims it: `slug` itself unless another record has it."""
        if record_id not in self.claimed and self.conn is not None:
            row = self.conn.execute("select slug from records where id = ?", [record_id]).fetchone()
            if row:
                self.claimed[record_id] = row[0]
        return self.claimed.setdefault(record_id, slug)


def _ids_in_files(root: Path) -> dict[str, str]:
    ids = {}
    for record in raw_records(root / RECORDS_DIR):
        try:
            ids[record["id"]] = record["slug"]
        except (KeyError, TypeError):
            continue  # an invalid file is errkb validate's business, not add's
    return ids


def raw_records(folder: Path):
    """The record dicts of the JSON files in a folder, unvalidated; unreadable files are skipped.

    For quick lookups that must not fail on a bad file; everything that trusts a record validates it.
    """
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        record = data.get("record", data) if isinstance(data, dict) else None
        if isinstance(record, dict):
            yield record


def content_hash(raw: bytes) -> str:
    """The hash of a record file's bytes: what builds compare and what reproduction runs remember."""
    return hashlib.sha256(raw).hexdigest()


def file_hash(path: Path) -> str | None:
    return content_hash(path.read_bytes()) if path.is_file() else None


def is_safe_slug(slug: str) -> bool:
    return re.fullmatch(SLUG_PATTERN, slug) is not None


def is_catalog(folder: Path) -> bool:
    """A catalog root has a records/ folder with record files in it."""
    records = folder / RECORDS_DIR
    return records.is_dir() and any(records.glob("*.json"))


def find_root(start: Path | None = None) -> Path | None:
    """The catalog to look things up in: $ERRKB_ROOT, else the nearest catalog from `start` (or the current
    folder) upwards, else the checkout errkb itself runs from (an editable install)."""
    env = os.environ.get("ERRKB_ROOT")
    if env:
        return Path(env)
    here = (start or Path.cwd()).resolve()
    checkout = Path(__file__).resolve().parents[1]
    for folder in [here, *here.parents, checkout]:
        if is_catalog(folder):
            return folder
    return None
