"""Which installed package a record's `repo` is.

A library is data, not code: a reproduction names the distribution it needs in NEEDS["packages"], the probe reads
that distribution's metadata (its import packages, its repository URLs), and `resolve` finds the record's repo
among them: a distribution whose URLs name github.com/<repo>, else one named like the repo. LIBRARIES only keeps
the libraries whose metadata names no repository (HanLP's points elsewhere) or that predate the rule.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .probe import distribution_facts, location_of, torch_build, version_of

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


def resolve(repo: str, probed: dict | None = None, distributions=()) -> Library | None:
    """The installed library for a record's repo, or None when neither the table nor the distributions' metadata
    names the repo.

    `probed`: an environment's probe answer (its package folders, versions, and the metadata of the distributions a
    reproduction needs); without it, this interpreter's, found without importing the package, among `distributions`.
    """
    if repo in LIBRARIES:
        package, distribution = LIBRARIES[repo]
    else:
        if probed is None:
            probed = {"distributions": {name: facts for name in distributions if (facts := distribution_facts(name))}}
        found = from_metadata(repo, probed.get("distributions") or {})
        if found is None:
            return None
        package, distribution = found
        if "packages" not in probed or "locations" not in probed:
            probed = {**probed, "locations": {package: location_of(package)}, "packages": {distribution: version_of(distribution)}}
    if probed is None:
        probed = {"locations": {package: location_of(package)},
                  "packages": {distribution: version_of(distribution)} if distribution else {}}
        if package == "torch":
            torch_build(probed)
    location = (probed.get("locations") or {}).get(package)
    version = (probed.get("packages") or {}).get(distribution) if distribution else None
    commit = probed.get("torch_git_version") if package == "torch" else None
    return Library(repo, package, distribution, location, version, commit)


GITHUB_REPO = re.compile(r"github\.com[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?(?:[/#?]|$)")


def repos_in(urls) -> list[str]:
    """owner/name of each GitHub repository the URLs point into."""
    return [f"{m.group(1)}/{m.group(2)}" for url in urls or [] if (m := GITHUB_REPO.search(url or ""))]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def from_metadata(repo: str, facts: dict) -> tuple[str, str] | None:
    """(package, distribution) for `repo` among the probed distributions' metadata: by repository URL, else by name."""
    by_url = [name for name, f in facts.items() if repo.lower() in (r.lower() for r in repos_in(f.get("urls")))]
    by_name = [name for name in facts if _canonical(name) == _canonical(repo.split("/", 1)[1])]
    for name in by_url + by_name:
        packages = facts[name].get("packages") or []
        if packages:
            same = [p for p in packages if _canonical(p) == _canonical(name)]
            return (same or packages)[0], name
    return None


def probe_items(extra_distributions=()) -> list[str]:
    """What to ask an environment's probe: every known library's folder and version, and other distributions' versions."""
    items = [f"{package}={distribution or ''}" for package, distribution in LIBRARIES.values()]
    known = {distribution for _, distribution in LIBRARIES.values()}
    return items + [f"={name}" for name in sorted(set(extra_distributions) - known)]
