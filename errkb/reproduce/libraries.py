"""Which installed package a record's `repo` is: the one table to extend when a new library enters the catalog."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass

# record repo -> (top-level import package, distribution name for its version, or None for the standard library)
LIBRARIES: dict[str, tuple[str, str | None]] = {
    "hankcs/HanLP": ("hanlp", "hanlp"),
    "pytorch/pytorch": ("torch", "torch"),
    "kmkurn/pytorch-crf": ("torchcrf", "pytorch-crf"),
}


@dataclass(frozen=True)
class Library:
    repo: str
    package: str  # top-level import name, e.g. "hanlp"
    distribution: str | None
    location: str | None  # real path of the installed package folder (or single-module file); None: not installed
    version: str | None

    @property
    def installed(self) -> bool:
        return self.location is not None

    def contains(self, filename: str) -> bool:
        """Whether a traceback frame's file lies inside this library's installed package."""
        if not self.location or not filename or filename.startswith("<"):
            return False
        path = os.path.realpath(filename)
        return path == self.location or path.startswith(self.location + os.sep)

    def relative(self, filename: str) -> str:
        """`hanlp/components/taggers/tagger.py` for a file inside the package (the form `filePath` takes)."""
        return os.path.relpath(os.path.realpath(filename), os.path.dirname(self.location)).replace(os.sep, "/")


def resolve(repo: str) -> Library | None:
    """The installed library for a record's repo, or None when the table does not know the repo.

    Finds the package folder without importing it (importlib.util.find_spec on a top-level name runs no code).
    """
    if repo not in LIBRARIES:
        return None
    package, distribution = LIBRARIES[repo]
    location = None
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        if spec.submodule_search_locations:
            location = os.path.realpath(list(spec.submodule_search_locations)[0])
        elif spec.origin and os.path.isfile(spec.origin):
            location = os.path.realpath(spec.origin)
    try:
        version = importlib.metadata.version(distribution) if distribution else None
    except importlib.metadata.PackageNotFoundError:
        version = None
    return Library(repo, package, distribution, location, version)
