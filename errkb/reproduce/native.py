"""Is a C++ raise site the library's own? The location PyTorch appends ("Exception raised from FUNC at FILE:LINE")
is text a stage could print itself. The library's compiled code holds the same names as string constants
(`__FILE__` and `__func__` of c10::SourceLocation): a site whose file path and function name appear in none of
the library's shared objects did not come from them. Read through mmap, once per name."""

from __future__ import annotations

import functools
import mmap
import os
from pathlib import Path


def shared_objects(location: str) -> list[Path]:
    """The library's compiled code: every .so under its package folder."""
    root = Path(location)
    folder = root if root.is_dir() else root.parent
    return sorted(p for p in folder.rglob("*.so*") if p.is_file() and not p.is_symlink())


@functools.lru_cache(maxsize=256)
def in_binaries(location: str, text: str) -> bool:
    needle = text.encode() + b"\0"  # a C string constant ends with NUL
    for path in shared_objects(location):
        try:
            with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                if data.find(needle) >= 0:
                    return True
        except (OSError, ValueError):
            continue
    return False


def site_problem(location: str | None, file: str, func: str | None) -> str | None:
    """Why the C++ site named in a message is not in the library's binaries, or None (also when there are none
    to check, e.g. a pure-Python package)."""
    if not location or not os.path.exists(location) or not shared_objects(location):
        return None
    missing = [f"file {file!r}" for _ in [0] if not in_binaries(location, file)]
    if func and not in_binaries(location, func):
        missing.append(f"function {func!r}")
    if missing:
        return f"{' and '.join(missing)} of the C++ location appear in none of the library's binaries"
    return None
