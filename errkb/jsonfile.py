"""Strict reading of a record file: size, encoding, duplicate keys, NaN and depth are checked before the model."""

from __future__ import annotations

import errno
import json
import os
import stat
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


# The json module's messages stop mid-sentence ("Unterminated string starting at"): say what was found and
# what was expected instead.
JSON_ERRORS = {
    "Unterminated string starting at": "a string starts here and is never closed, expected a closing double quote",
    "Expecting value": "no value here, expected a string, number, object, array, true, false or null",
    "Expecting ',' delimiter": "two items without a comma between them, expected a ','",
    "Expecting ':' delimiter": "a key without a colon after it, expected a ':'",
    "Expecting property name enclosed in double quotes":
        "no key here (a trailing comma, or a key without double quotes), expected a key in double quotes",
    "Extra data": "more text after the JSON value, expected the file to end",
    "Invalid control character at": "a raw control character (tab, newline) inside a string, expected it escaped as \\t or \\n",
    "Invalid \\escape": "an unknown backslash escape in a string, expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",
}


def json_error_sentence(exc: json.JSONDecodeError) -> str:
    reason = JSON_ERRORS.get(exc.msg, f"{exc.msg.rstrip(' :')}, expected valid JSON")
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {reason}"


def read_json(path: Path, display: str | None = None):
    """Parse one JSON file strictly; raise InvalidInput naming the file on any problem."""
    name = display or str(path)

    def fail(message: str):
        raise InvalidInput([Problem(name, "$", message)])

    try:
        raw = read_bounded(path, MAX_FILE_BYTES)
    except OSError as exc:
        fail(f"cannot read file: {exc.strerror or exc}")
    except _NotARecordFile as exc:
        fail(str(exc))
    return parse_json(raw, name)


class _NotARecordFile(ValueError):
    pass


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, reading no more than limit + 1 of them.

    Opened without blocking, so a FIFO with no writer cannot hang us; devices, FIFOs and sockets are
    refused (/dev/zero never ends), and a file that grows past the limit while we read is refused too.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _NotARecordFile("is a directory, expected a record file")
        if not stat.S_ISREG(info.st_mode):
            raise _NotARecordFile(f"is not a regular file (a {_kind(info.st_mode)}), expected a record file")
        if info.st_size > limit:
            raise _NotARecordFile(f"file is {info.st_size} bytes, expected at most {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise _NotARecordFile(f"file grew past {limit} bytes while it was read, expected at most {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


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
        fail(json_error_sentence(exc))
    except ValueError as exc:
        fail(str(exc))
    if _too_deep(value):
        fail(f"JSON is nested too deeply, expected at most {MAX_DEPTH} levels")
    return value


def display_name(path: Path, root: Path | None) -> str:
    """A file's name in messages: relative to the catalog root when it is inside it."""
    return path.relative_to(root).as_posix() if root and path.is_relative_to(root) else str(path)


LINK_REFUSED = "is a symbolic link, expected a plain file (links are neither followed nor read)"


def read_plain(path: Path, name: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a plain file (results, signatures, keys). A symbolic link (the file or its folder) is refused by
    name and never followed, so nothing it points to reaches an error message."""
    if path.is_symlink() or path.parent.is_symlink():
        raise InvalidInput([Problem(name, "$", LINK_REFUSED)])
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
        return read_bounded(path, limit)
    except OSError as exc:
        message = LINK_REFUSED if exc.errno == errno.ELOOP else f"cannot read file: {exc.strerror or exc}"
        raise InvalidInput([Problem(name, "$", message)]) from None
    except ValueError as exc:  # read_bounded's refusal of FIFOs, devices and oversized files
        raise InvalidInput([Problem(name, "$", str(exc))]) from None
