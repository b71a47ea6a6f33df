"""Where a captured error comes from upstream: repo, commit, file and the excerpt at the raise line, with the
provenance each piece has. Only what the installed distribution itself says is used (at run time a user has no
search tools): torch's git_version, a direct_url.json's VCS commit, a --sha the author gives, or the release's tag
in a local clone (--upstream) whose copy of the file is byte-identical to the installed one; otherwise the commit
is "unresolved" and the draft says so."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ..reproduce.compare import _short as build_relative
from ..reproduce.libraries import LIBRARIES, repos_in
from .capture import Captured
from .upstream import Upstream, find

BEFORE, AFTER = 8, 2  # excerpt lines around the raise statement
FROM_DEF = 20  # a raise this close to its function's def line: the excerpt starts at the def
UNRESOLVED = "unresolved"


@dataclass
class Source:
    repo: str | None
    commit: str | None
    commit_from: str  # how the commit is known: "torch.version.git_version", "direct_url.json", "--sha", "unresolved"
    file_path: str
    line: int
    start: int
    end: int
    excerpt: str | None  # None: a native site whose text is not installed
    provenance: dict


def repo_of(distribution: str, facts: dict) -> str | None:
    """owner/name from the catalog's known libraries, else the distribution's VCS URL or project URLs."""
    for repo, (_, known) in LIBRARIES.items():
        if known and known.lower() == distribution.lower():
            return repo
    vcs = facts.get("direct_url") or {}
    urls = [vcs.get("url", "")] if vcs.get("vcs_info") else []
    repos = [repo for repo in repos_in(urls + (facts.get("urls") or [])) if repo.split("/")[1].lower() not in ("issues", "sponsors")]
    return repos[0] if repos else None


def commit_of(distribution: str, facts: dict, sha: str | None) -> tuple[str | None, str]:
    if sha:
        return sha, "--sha"
    if distribution.lower() == "torch" and re.fullmatch(r"[0-9a-f]{40}", facts.get("git_version") or ""):
        return facts["git_version"], "torch.version.git_version"
    commit = ((facts.get("direct_url") or {}).get("vcs_info") or {}).get("commit_id")
    if commit and re.fullmatch(r"[0-9a-f]{40}", commit):
        return commit, "direct_url.json"
    return None, UNRESOLVED


def excerpt_bounds(text: str, line: int) -> tuple[int, int]:
    """From a few lines before the raise statement to a few after its last line, inside the file."""
    lines = text.splitlines()
    end_of_statement, function_start = line, None
    try:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.stmt) and node.lineno == line and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With, ast.Try)):
                end_of_statement = max(end_of_statement, node.end_lineno or line)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
                function_start = max(function_start or 0, node.lineno)  # the innermost function around the raise
    except SyntaxError:
        pass
    near = function_start is not None and line - function_start <= FROM_DEF
    start = function_start if near else max(1, line - BEFORE)
    end = min(len(lines), end_of_statement + AFTER)
    while end > line and not lines[end - 1].strip():  # no trailing blank lines
        end -= 1
    while start < line and not lines[start - 1].strip():
        start += 1
    return start, end


def resolve(captured: Captured, sha: str | None = None, upstream: Path | None = None) -> Source:
    site = captured.site
    facts = captured.distributions.get(site.distribution, {})
    repo = repo_of(site.distribution, facts)
    commit, commit_from = commit_of(site.distribution, facts, sha)
    file_path = site.relative
    if commit is None and upstream is not None and not site.native:
        found = find(upstream, site.distribution, site.version, Path(site.file), site.relative)
        if isinstance(found, Upstream):
            commit, file_path = found.commit, found.path
            commit_from = f"tag {found.tag} of {upstream}, {found.path} byte-identical to the installed file"
        else:
            commit_from = f"{UNRESOLVED} ({found})"
    if site.native:
        path = build_relative(site.native["file"]).lstrip("/")
        line = site.native["line"]
        provenance = {"checked": "native-build", "dist": site.distribution, "version": site.version,
                      "excerpt": "unverified", "commit": commit or UNRESOLVED, "offset": 0}
        return Source(repo, commit, commit_from, path, line, line, line, None, provenance)
    text = Path(site.file).read_text(encoding="utf-8")
    start, end = excerpt_bounds(text, site.line)
    excerpt = "\n".join(text.splitlines()[start - 1:end])
    provenance = {"checked": "installed", "dist": site.distribution, "version": site.version}
    return Source(repo, commit, commit_from, file_path, site.line, start, end, excerpt, provenance)

