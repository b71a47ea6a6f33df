"""Which installed package a record's `repo` is: the one table to extend when a new library enters the catalog."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .probe import location_of, torch_build, version_of

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
    commit: str | None = None  # the source commit of the installed build, where the package says (torch does)

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


def resolve(repo: str, probed: dict | None = None) -> Library | None:
    """The installed library for a record's repo, or None when the table does not know the repo.

    `probed`: an environment's probe answer (its package folders and versions); without it, this interpreter's,
    found without importing the package.
    """
    if repo not in LIBRARIES:
        return None
    package, distribution = LIBRARIES[repo]
    if probed is None:
        probed = {"locations": {package: location_of(package)},
                  "packages": {distribution: version_of(distribution)} if distribution else {}}
        if package == "torch":
            torch_build(probed)
    location = (probed.get("locations") or {}).get(package)
    version = (probed.get("packages") or {}).get(distribution) if distribution else None
    commit = probed.get("torch_git_version") if package == "torch" else None
    return Library(repo, package, distribution, location, version, commit)


def probe_items(extra_distributions=()) -> list[str]:
    """What to ask an environment's probe: every known library's folder and version, and other distributions' versions."""
    items = [f"{package}={distribution or ''}" for package, distribution in LIBRARIES.values()]
    known = {distribution for _, distribution in LIBRARIES.values()}
    return items + [f"={name}" for name in sorted(set(extra_distributions) - known)]
