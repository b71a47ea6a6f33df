"""A match told fix-first: a short title, the cause in one line, the first solution with its verified mark,
where it was verified, then the rest. `errkb match`, the match page and the MCP server show it.

Titles are derived from the record's message (schema v2 has no title field): its first sentence, without
colour codes, cut on a word.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import evidence
from .matching.matcher import ELLIPSIS, shorten
from .problems import InvalidInput
from .store import record_path
from .validate import load_envelope

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # terminal escape sequences (colour, bold)
TITLE_CHARS = 72
LINE_CHARS = 160


def plain(text: str) -> str:
    """Text without terminal colour codes (some library messages carry them)."""
    return ANSI.sub("", text or "")


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut on a word, with "…" when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:(") + "…"


def first_sentence(text: str) -> str:
    found = re.search(r"^(.+?[.!?])(?:\s|$)", " ".join(plain(text).split()))
    return found.group(1) if found else " ".join(plain(text).split())


def short_title(error_message: str) -> str:
    """"CUDA out of memory", "Error(s) in loading state_dict for Net": the message's first clause."""
    line = plain(error_message).strip().splitlines()[0] if error_message.strip() else ""
    sentence = first_sentence(line).rstrip(".:")
    if len(sentence) > 60:  # the clause before ", but …" names the error; the rest is detail
        clause = re.search(r"^(.{30,}?)(?:,| - | but )", sentence)
        sentence = clause.group(1) if clause else sentence
    return cut(sentence, TITLE_CHARS)


def one_line_cause(documentation: str) -> str:
    return cut(first_sentence(documentation), LINE_CHARS)


def fix_first(root: Path, slug: str) -> dict | None:
    """The record's fix-first summary with its evidence (camelCase), or None when its file is missing or invalid."""
    try:
        record = load_envelope(record_path(root, slug)).record
        proof = evidence.of_record(root, slug)
    except InvalidInput:
        return None
    return {
        "title": short_title(record.errorMessage),
        "cause": one_line_cause(record.documentation),
        "firstSolution": {"text": plain(record.solutions[0]), "mark": evidence.first_solution_mark(proof)},
        "otherSolutions": [plain(text) for text in record.solutions[1:]],
        "verifiedOn": proof["verifiedOn"],
        "lastVerdict": proof["lastVerdict"],
        "errorClass": record.errorClass,
        "errorMessage": plain(record.errorMessage),
        "library": record.repo,
        "tags": list(record.tags),
        "evidence": proof,
    }


def match_entry(root: Path, match) -> dict:
    """One hit of `errkb match --json`: the match (camelCase) and its record's fix-first summary."""
    why = match.to_dict()["why"]
    return {
        "slug": match.slug,
        "score": round(match.score, 3),
        **(fix_first(root, match.slug) or {"title": match.slug, "errorClass": match.error_class, "errorMessage": match.message}),
        "seenAs": match.seen_as,
        "why": {
            "text": why["text"], "pattern": why["pattern"], "sameClass": why["class"], "opening": why["opening"],
            "words": why["words"], "covered": why["covered"], "present": why["present"], "situation": why["situation"],
            "observed": why["observed"], "line": why["line"],
        },
    }


def first_line(message: str, limit: int = 110) -> str:
    """The message's first line, cut to `limit` characters; "…" when cut or when more lines follow."""
    lines = plain(message).splitlines() or [""]
    first = lines[0] + (ELLIPSIS if len(lines) > 1 and len(lines[0]) < limit else "")
    return shorten(first, limit)


def verified_line(hit: dict) -> str:
    if hit.get("verifiedOn"):
        return f"verified on {hit['verifiedOn']}"
    verdict = hit.get("lastVerdict")
    summary = (hit.get("evidence") or {}).get("proofSummary")
    if summary:
        return f"not verified ({verdict}): {summary}"
    return f"not verified ({verdict})" if verdict else "never verified"


def as_text(number: int, hit: dict, show_command: str) -> list[str]:
    """The lines `errkb match` prints for one hit, fix first."""
    lines = [f"{number}. {hit['title']}   [{hit['slug']}, score {hit['score']:.2f}]"]
    if hit.get("cause"):
        lines.append(f"   Cause: {hit['cause']}")
        first = hit["firstSolution"]
        lines.append(f"   Fix:   {cut(first['text'], 240)} ({first['mark']})")
        lines.append(f"   {verified_line(hit)[0].upper()}{verified_line(hit)[1:]}")
        more = len(hit.get("otherSolutions") or [])
        if more:
            lines.append(f"   {more} more fix{'es' if more > 1 else ''}: {show_command} {hit['slug']}")
    lines.append(f"   {hit.get('errorClass') or 'error'}: {first_line(hit['errorMessage'])}")
    lines.append(f"   why: {hit['why']['text']}")
    if hit.get("seenAs") == "warning":
        lines.append("   also seen: a warning in the paste, not the error that ended the run")
    return lines
