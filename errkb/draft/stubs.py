"""The mark a draft leaves where a person must write: `errkb validate` and `errkb add` refuse a record (or a
record whose reproduction) still carrying it, naming the file and each unfilled field."""

from __future__ import annotations

import json
from pathlib import Path

from ..problems import Problem, json_path

MARKER = "TODO(errkb-draft)"


def stub(what: str) -> str:
    return f"{MARKER}: {what}"


def stub_paths(value, loc: tuple = ()) -> list[tuple]:
    """Locations (JSON path parts) of every string in `value` that carries the marker."""
    if isinstance(value, str):
        return [loc] if MARKER in value else []
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in stub_paths(item, (*loc, key))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in stub_paths(item, (*loc, index))]
    return []


def record_stub_problems(data, name: str) -> list[Problem]:
    return [
        Problem(name, json_path(loc), f"a draft stub is not filled in ({MARKER}): write it, then remove the mark")
        for loc in stub_paths(data)
    ]


def reproduction_stub_problems(path: Path) -> list[Problem]:
    """Each line of a reproduction that still carries the marker (its stub functions, VALID, WORDINGS, ...)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [
        Problem(str(path), f"line {number}", f"a draft stub is not filled in ({MARKER}): {line.strip()[:120]}")
        for number, line in enumerate(lines, 1) if MARKER in line
    ]


def slug_of(record_file: Path) -> str | None:
    """The slug a record file (envelope or bare record) names, or None when it cannot be read."""
    try:
        data = json.loads(record_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    record = data.get("record", data) if isinstance(data, dict) else None
    slug = record.get("slug") if isinstance(record, dict) else None
    return slug if isinstance(slug, str) else None
