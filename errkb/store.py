"""The records/ folder: one canonical JSON file per record, written atomically. Files only: the database is
catalog.py's, and writes.py, above both, holds the lock and writes files and rows together."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .jsonfile import parse_json
from .layout import DATABASE_FILE, RECORDS_DIR, REPRODUCTIONS_DIR, content_hash, file_hash  # noqa: F401 (store's interface)
from .model import SLUG_PATTERN, Envelope
from .problems import InvalidInput, Problem
from .validate import envelope_from_data, load_envelope


def canonical_text(envelope: Envelope) -> str:
    """The one form a record file has: key order of the seed, 2-space indent, UTF-8, final newline."""
    return json.dumps(envelope.model_dump(), indent=2, ensure_ascii=False) + "\n"


def record_path(root: Path, slug: str) -> Path:
    return root / RECORDS_DIR / f"{slug}.json"


def record_files(root: Path) -> list[Path]:
    folder = root / RECORDS_DIR
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def write_atomically(path: Path, text: str | bytes, scratch: Path | None = None) -> None:
    """Replace `path` in one step; a crash leaves the old file or the new one, never a mix.

    The temp file is written in `scratch` (a folder on the same file system; default: beside `path`). The file
    keeps its mode when it exists; a new one gets the mode an ordinary new file gets (umask), not mkstemp's 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if scratch is not None:
        scratch.mkdir(exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(dir=scratch or path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


TEMP_SUFFIX = ".tmp"
# Record files are written through records/.tmp/: finding a dead writer's temp file then reads that small folder,
# not the 100,000 names of records/ on every command that takes the catalog lock.
SCRATCH_DIR = ".tmp"


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete the temp files of writers that died before their rename, in `folder`'s scratch folder (call it under
    the catalog lock, when no other writer can be half-way)."""
    removed = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError), os.scandir(folder / SCRATCH_DIR) as entries:
        for entry in entries:
            if entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(OSError):  # gone already, or a read-only checkout
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    _remove_if_empty(folder / SCRATCH_DIR)
    return removed


def _remove_if_empty(scratch: Path) -> None:
    with contextlib.suppress(OSError):  # not there, or holds a file: leave it
        scratch.rmdir()


def differences(old: dict, new: dict) -> list[str]:
    """Field names whose values differ between two records, for a short summary."""
    return [key for key in new if old.get(key) != new[key]] + [key for key in old if key not in new]


@dataclass
class AddResult:
    slug: str
    status: str  # "added", "replaced", "unchanged", or "indexed" (file unchanged, catalog.db row written)
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


def envelope_of(data: bytes, path: Path) -> Envelope:
    return envelope_from_data(parse_json(data, str(path)), str(path))


def write_files(writes: list[tuple[Path, bytes]]) -> list[tuple[Path, bytes | None]]:
    """Write each file atomically; return what each held before, for `restore`. On failure, restore and raise."""
    done: list[tuple[Path, bytes | None]] = []
    try:
        for path, data in writes:
            before = path.read_bytes() if path.exists() else None
            write_atomically(path, data, path.parent / SCRATCH_DIR)
            done.append((path, before))
    except BaseException:
        restore(done)
        raise
    finally:
        for folder in {path.parent for path, _ in writes}:
            _remove_if_empty(folder / SCRATCH_DIR)
    return done


def restore(done: list[tuple[Path, bytes | None]]) -> None:
    for path, before in reversed(done):
        if before is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            write_atomically(path, before, path.parent / SCRATCH_DIR)


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


def is_safe_slug(slug: str) -> bool:
    return re.fullmatch(SLUG_PATTERN, slug) is not None


def is_catalog(folder: Path) -> bool:
    """A catalog root has a records/ folder with record files in it."""
    try:
        with os.scandir(folder / RECORDS_DIR) as entries:  # not Path.glob: it lists the whole folder first
            return any(entry.name.endswith(".json") for entry in entries)
    except (FileNotFoundError, NotADirectoryError):
        return False


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
