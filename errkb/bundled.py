"""Which catalog a command uses, and the catalog that ships inside the installed package.

A wheel carries records/, verifications/ and reproductions/ as package data in errkb/_catalog/ (see
setup.py): a result counts only while it judged today's record and reproduction, checked by their hashes,
so an install shows the verdicts of the clone it was built from.
Outside any catalog folder, `errkb match`, `run`, `show`, `serve` and the Python API use it: its
catalog.db is built once into the user cache folder (platformdirs) and reused until the bundled
files change (a new errkb version, or files added, removed or rewritten), as a complete catalog root
of its own: records/, verifications/ and catalog.db with its match index. Folders of other
versions are left alone: another environment may still use them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from .store import DATABASE_FILE, RECORDS_DIR, find_root, is_catalog

PACKAGE_DATA = Path(__file__).resolve().parent / "_catalog"
# folders of the bundled catalog (keys: the public halves that verify the results' signatures)
SHIPPED = {"records": ("*.json",), "verifications": ("**/*.json", "**/*.intoto.jsonl"), "reproductions": ("*.py",),
           "keys": ("maintainers/*.pub",)}
CACHE_ENV = "ERRKB_CACHE_DIR"  # overrides the platform's user cache folder


class NoCatalog(LookupError):
    """No catalog to answer from: no --root, none here or above, and no bundled one."""

    def __str__(self) -> str:
        return self.args[0] if self.args else no_catalog_message()


def no_catalog_message(root: Path | None = None) -> str:
    if root is not None:
        return f"no catalog: {root} has no {RECORDS_DIR}/*.json (check --root or $ERRKB_ROOT)"
    return (f"no catalog found: no {RECORDS_DIR}/ folder here or in a parent folder, no --root or $ERRKB_ROOT, "
            "and this errkb installation ships no records (reinstall it from a wheel, or pass --root DIR)")


def locate(root: Path | str | None = None) -> Path:
    """The catalog root to use: `root` when given, else the nearest catalog (store.find_root), else the bundled one.

    Raises NoCatalog when `root` holds no records, or when nothing is found at all.
    """
    if root is not None:
        root = Path(root)
        if not is_catalog(root) and not (root / DATABASE_FILE).is_file():
            raise NoCatalog(no_catalog_message(root))
        return root
    found = find_root()
    if found is not None:
        if not is_catalog(found):  # $ERRKB_ROOT names a folder without records
            raise NoCatalog(no_catalog_message(found))
        return found
    bundled = bundled_root()
    if bundled is None:
        raise NoCatalog()
    return bundled


def shipped_files(data: Path = PACKAGE_DATA) -> list[Path]:
    """The bundled catalog's files (records, verification results, their signatures and the maintainers'
    public keys), sorted; [] when none ship."""
    if not (data / RECORDS_DIR).is_dir():
        return []
    return sorted(path for folder, patterns in SHIPPED.items() for pattern in patterns
                  for path in (data / folder).glob(pattern) if path.is_file())


def bundle_key(files: list[Path], data: Path = PACKAGE_DATA) -> str:
    """Changes when the bundled content may have: the errkb version and each file's name, size and time."""
    digest = hashlib.sha256(_version().encode())
    for path in files:
        stat = path.stat()
        digest.update(f"\0{path.relative_to(data).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def cache_folder() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("errkb", appauthor=False))


def bundled_root(data: Path = PACKAGE_DATA, cache: Path | None = None) -> Path | None:
    """The bundled catalog as a ready root in the user cache (built on first use); None when none ships."""
    files = shipped_files(data)
    if not files:
        return None
    cache = cache or cache_folder()
    root = cache / f"catalog-{bundle_key(files, data)}"
    if (root / DATABASE_FILE).is_file():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".catalog-building-", dir=cache))
    try:
        _build(files, data, building)
        try:
            os.replace(building, root)  # atomic: a reader sees no root or a complete one
        except OSError:
            if not (root / DATABASE_FILE).is_file():  # not another process that got there first
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return root


def _build(files: list[Path], data: Path, root: Path) -> None:
    from . import writes
    from .matching.matcher import Matcher

    for path in files:
        target = root / path.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    writes.build(root)
    Matcher.open(root).conn.close()  # writes the match index into catalog.db now, not on the first paste


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("errkb")
    except PackageNotFoundError:
        return "unknown"
