"""`errkb mcp`: the catalog as a Model Context Protocol server over stdio, for coding agents.

Tools: match(paste), show(slug), search(query), list(tag, verdict, library). Each record comes with its
evidence: the releases and hardware it was verified on, each claim's mark, the committed result files
(paths relative to the catalog root) and where it was not proven, so an agent can cite a proven fix and
say where it was not proven. No match and no catalog are answered as such, never as an empty success.
Built on the official `mcp` SDK (MCPServer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from . import evidence, hits, listing, search
from .bundled import NoCatalog, locate
from .matching import matcher_for
from .problems import InvalidInput
from .store import is_safe_slug, record_path
from .validate import load_envelope

INSTRUCTIONS = (
    "errkb is a catalog of PyTorch-stack errors, each proven by a reproduction run on named releases. "
    "Call `match` with the user's traceback first. Cite a fix only with its evidence: `verifiedOn` names the "
    "releases and hardware where it was verified; `notProvenOn` and `claimMarks` say where it failed or never ran. "
    "`match` answering no match means errkb has nothing proven for this error: say so instead of guessing."
)


def _catalog(root: Path | None) -> Path:
    return locate(root)


def _no_catalog(exc: NoCatalog) -> dict:
    return {"status": "no-catalog", "answer": f"errkb has no catalog to answer from: {exc}"}


def _problem(exc: InvalidInput) -> dict:
    return {"status": "invalid-catalog", "answer": "; ".join(str(problem) for problem in exc.problems)}


def match_tool(root: Path | None, paste: str, limit: int = 3) -> dict:
    try:
        catalog = _catalog(root)
        matcher = matcher_for(catalog)
        found = matcher.match(paste, limit=limit)
    except NoCatalog as exc:
        return _no_catalog(exc)
    if not found:
        return {"status": "no-match", "answer": f"no match: no record of the {matcher.size} in {matcher.source} is close "
                "enough to this error, so errkb has no proven fix for it", "matches": []}
    return {"status": "match", "matches": [hits.match_entry(catalog, m) for m in found]}


def show_tool(root: Path | None, slug: str) -> dict:
    try:
        catalog = _catalog(root)
        if not is_safe_slug(slug) or not record_path(catalog, slug).is_file():
            return {"status": "unknown-slug", "answer": listing.unknown_slug_message(catalog, [slug])}
        record = load_envelope(record_path(catalog, slug)).record
        return {"status": "record", "record": {**record.model_dump(), **evidence.of_record(catalog, slug)}}
    except NoCatalog as exc:
        return _no_catalog(exc)
    except InvalidInput as exc:
        return _problem(exc)


def search_tool(root: Path | None, query: str, limit: int = 10) -> dict:
    try:
        catalog = _catalog(root)
        found, total, planned = search.run(catalog, query, limit)
    except NoCatalog as exc:
        return _no_catalog(exc)
    except InvalidInput as exc:
        return _problem(exc)
    if not found:
        return {"status": "no-match", "answer": f"no record matches {query!r}", "notes": planned.notes, "hits": []}
    return {"status": "hits", "total": total, "notes": planned.notes,
            "hits": [hit.as_dict() | {"evidence": evidence.brief(catalog, hit.slug)} for hit in found]}


def list_tool(root: Path | None, tag: list[str] | None = None, verdict: str | None = None, library: str | None = None) -> dict:
    try:
        catalog = _catalog(root)
        entries = listing.list_records(catalog, tuple(tag or ()), verdict, library)
    except NoCatalog as exc:
        return _no_catalog(exc)
    except InvalidInput as exc:
        return _problem(exc)
    return {"status": "records", "count": len(entries),
            "records": [entry.as_dict() | {"evidence": evidence.brief(catalog, entry.slug)} for entry in entries]}


def make_server(root: Path | None = None) -> MCPServer:
    server = MCPServer("errkb", instructions=INSTRUCTIONS)

    @server.tool()
    def match(paste: str, limit: int = 3) -> dict[str, Any]:  # structured content, and the same as JSON text
        """Find the catalog records that explain a pasted traceback or log. Each match leads with a title, the
        cause, the first fix and its verified mark, and carries the record's evidence."""
        return match_tool(root, paste, limit)

    @server.tool()
    def show(slug: str) -> dict[str, Any]:
        """The whole record SLUG with its evidence: verifiedOn, claimMarks, notProvenOn and the committed
        result files (verifications[].path)."""
        return show_tool(root, slug)

    @server.tool(name="search")
    def search_records(query: str, limit: int = 10) -> dict[str, Any]:
        """Search records by words, tags and synonyms ("OOM", "NCCL"); misspelt words are corrected. Each hit
        says why it matched and carries its evidence (verifiedOn, claimMarks, notProvenOn, resultPaths)."""
        return search_tool(root, query, limit)

    @server.tool(name="list")
    def list_records(tag: list[str] | None = None, verdict: str | None = None, library: str | None = None) -> dict[str, Any]:
        """The catalog's records, filtered by tags (all must hold, any case), verdict (verified, claim-failed,
        never, ...) and library (pytorch, torch, hanlp, owner/name). Each carries its evidence, as search hits do."""
        return list_tool(root, tag, verdict, library)

    return server


def serve(root: Path | None = None) -> None:
    make_server(root).run("stdio")
