"""The commit of an installed release, found in a local clone of its upstream repository (`errkb draft --upstream
CLONE`): the release's tag whose copy of the raise site's file is byte-identical to the installed file. Nothing is
fetched; a tag that is missing, or whose file differs (a patched or vendored copy), leaves the commit unresolved."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TAG_FORMS = ("{version}", "v{version}", "release/{version}", "{name}-{version}", "{name}-v{version}", "{name}@{version}")


@dataclass(frozen=True)
class Upstream:
    commit: str
    tag: str
    path: str  # the file's path in the repository (src/pkg/mod.py for an installed pkg/mod.py)


def _git(clone: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, timeout=60)


def tag_commit(clone: Path, name: str, version: str) -> tuple[str, str] | None:
    """(tag, commit) of the first tag spelling of `version` the clone has."""
    for form in TAG_FORMS:
        tag = form.format(name=name, version=version)
        done = _git(clone, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
        if done.returncode == 0:
            return tag, done.stdout.decode().strip()
    return None


def find(clone: Path, name: str, version: str, installed: Path, relative: str) -> Upstream | str:
    """The Upstream of `installed` (a file of distribution `name` at `version`, `relative` to site-packages), or
    why none was found."""
    if _git(clone, "rev-parse", "--git-dir").returncode != 0:
        return f"{clone} is not a git repository"
    found = tag_commit(clone, name, version)
    if found is None:
        return f"no tag for {name} {version} in {clone} (tried {', '.join(f.format(name=name, version=version) for f in TAG_FORMS)})"
    tag, commit = found
    listed = _git(clone, "ls-tree", "-r", "--name-only", commit).stdout.decode().splitlines()
    candidates = [p for p in listed if p == relative or p.endswith("/" + relative)]
    wanted = installed.read_bytes()
    for path in sorted(candidates, key=len):
        if _git(clone, "show", f"{commit}:{path}").stdout == wanted:
            return Upstream(commit, tag, path)
    if not candidates:
        return f"tag {tag} ({commit[:12]}) has no file {relative}"
    return f"tag {tag} ({commit[:12]}): {', '.join(candidates)} differs from the installed {relative}"
