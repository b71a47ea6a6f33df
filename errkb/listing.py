"""`errkb list`: the catalog's records, filtered by tag, verdict and library; and "did you mean" for slugs."""

from __future__ import annotations

import difflib
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from typing import get_args

from . import catalog, evidence, store
from .problems import InvalidInput
from .reproduce.libraries import LIBRARIES
from .validate import check_files
from .verifications import Verification

NEVER = "never"  # --verdict never: records no reproduction has judged yet


@dataclass
class Entry:
    slug: str
    errorClass: str
    library: str  # the record's repo, owner/name
    lastVerdict: str | None  # the key `show --json` and `match --json` use
    errorMessage: str
    tags: list[str]

    def as_dict(self) -> dict:
        return asdict(self)


def list_records(root: Path, tags=(), verdict: str | None = None, library: str | None = None) -> list[Entry]:
    """Every valid record in root's records/ that has all `tags` (any case), the verdict and the library.

    `library` matches the repo (owner/name), its name alone, or the library's package or import name, ignoring
    case: "hanlp" finds hankcs/HanLP, "torch" finds pytorch/pytorch.
    Verdicts come from catalog.db; before the first build, from the committed result files (as `show` reads them).
    """
    tags = {tag.lower() for tag in tags}
    good, problems = check_files(store.record_files(root))
    if problems:
        raise InvalidInput(problems)
    verdicts = last_verdicts(root, [envelope.record.slug for _, envelope in good])
    entries = []
    for _, envelope in good:
        r = envelope.record
        entry = Entry(r.slug, r.errorClass, r.repo, verdicts.get(r.slug), r.errorMessage, list(r.tags))
        if set(tags) <= set(r.tags) and _verdict_is(entry.lastVerdict, verdict) and _library_is(r.repo, library):
            entries.append(entry)
    return sorted(entries, key=lambda e: e.slug)


def last_verdicts(root: Path, slugs: list[str]) -> dict[str, str]:
    path = root / store.DATABASE_FILE
    if not catalog.is_built(root):  # not built yet: the committed results give the same verdicts a build would
        proofs = {slug: evidence.of_record(root, slug)["lastVerdict"] for slug in slugs}
        return {slug: verdict for slug, verdict in proofs.items() if verdict}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return {slug: verdict for slug, verdict in conn.execute("select slug, lastVerdict from records") if verdict}
        finally:
            conn.close()
    except sqlite3.Error:  # unreadable: no verdicts to show
        return {}


def _verdict_is(actual: str | None, wanted: str | None) -> bool:
    return wanted is None or (actual or NEVER) == wanted


def _library_is(repo: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    names = {repo, repo.split("/")[-1], *(name for name in LIBRARIES.get(repo, ()) if name)}
    return wanted.lower() in {name.lower() for name in names}


VERDICTS = [*get_args(Verification.model_fields["verdict"].annotation), NEVER]  # what --verdict accepts


def table(entries: list[Entry]) -> list[str]:
    """`errkb list` as text: a header, then one aligned row per record."""
    rows = [("SLUG", "CLASS", "LIBRARY", "VERDICT")]
    rows += [(e.slug, e.errorClass, e.library, e.lastVerdict or "never verified") for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3] for row in rows]


def did_you_mean(root: Path, slug: str) -> list[str]:
    """The slugs in root's records/ closest to a mistyped one: similar spellings, then slugs containing it."""
    known = [path.stem for path in store.record_files(root)]
    close = difflib.get_close_matches(slug, known, n=3, cutoff=0.6)
    containing = [name for name in known if slug and slug.lower() in name and name not in close]
    return (close + containing)[:3]


def unknown_slug_message(root: Path, slugs: list[str]) -> str:
    """"no record 'x' in records/", with the closest slugs when there are some."""
    message = f"no record {', '.join(map(repr, slugs))} in {root / store.RECORDS_DIR}"
    suggestions = [s for slug in slugs for s in did_you_mean(root, slug)]
    if suggestions:
        message += "; did you mean " + " or ".join(dict.fromkeys(suggestions)) + "?"
    return message
