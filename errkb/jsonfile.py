"""Strict reading of a record file: size, encoding, duplicate keys, NaN and depth are checked before the model."""

from __future__ import annotations

import json
from pathlib import Path

from .problems import InvalidInput, Problem

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 20


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON (expected a finite number)")


def _too_deep(value, limit: int = MAX_DEPTH) -> bool:
    """Whether any value sits deeper than `limit` levels (the document itself is level 1), level by level."""
    level, containers = 1, [value] if isinstance(value, (dict, list)) else []
    while containers:
        children = [child for c in containers for child in (c.values() if isinstance(c, dict) else c)]
        if not children:
            return False
        level += 1
        if level > limit:
            return True
        containers = [child for child in children if isinstance(child, (dict, list))]
    return False


def read_json(path: Path, display: str | None = None):
    """Parse one JSON file strictly; raise InvalidInput naming the file on any problem."""
    name = display or str(path)

    def fail(message: str):
        raise InvalidInput([Problem(name, "$", message)])

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            fail(f"file is {size} bytes, expected at most {MAX_FILE_BYTES} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        fail(f"cannot read file: {exc.strerror or exc}")
    return parse_json(raw, name)


def parse_json(raw: bytes, name: str):
    def fail(message: str):
        raise InvalidInput([Problem(name, "$", message)])

    if not raw.strip():
        fail("file is empty, expected a JSON object")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        fail(f"byte {exc.start} is not UTF-8 (found {raw[exc.start:exc.start + 1]!r}), expected UTF-8 text")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except _DuplicateKey as exc:
        fail(f"duplicate key {exc.args[0]!r}, expected each key once per object")
    except RecursionError:
        fail(f"JSON is nested too deeply, expected at most {MAX_DEPTH} levels")
    except json.JSONDecodeError as exc:
        fail(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    except ValueError as exc:
        fail(str(exc))
    if _too_deep(value):
        fail(f"JSON is nested too deeply, expected at most {MAX_DEPTH} levels")
    return value
