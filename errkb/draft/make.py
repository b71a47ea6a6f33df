"""`errkb draft`: capture the snippet's error, generalise its message, find its source, write the draft pair."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .. import store, writes
from ..coverage import reproduction_path
from ..patterns import PatternError, pattern_matches
from . import api_change
from .capture import Captured, DraftError, capture
from .compose import needs_packages, plain_version, record_of, reproduction_of, suggested_slug, suggested_tags
from .generalise import GeneraliseError, corpus, generalise
from .snippet import SnippetError, read_snippet
from .source import UNRESOLVED, Source, resolve
from .stubs import stub_paths


@dataclass
class Draft:
    slug: str
    record_path: Path
    reproduction_path: Path
    captured: Captured
    source: Source
    pattern_level: int
    stubs: list[str] = field(default_factory=list)  # the record's fields still to write
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        c, s = self.captured, self.source
        lines = [
            f"drafted {self.slug}:",
            f"  {self.record_path}",
            f"  {self.reproduction_path}",
            f"captured {c.cls}: {c.message.splitlines()[0][:160] if c.message else ''}",
            f"  raise site {s.file_path}:{s.line} in {c.site.distribution} {c.site.version}"
            + (" (C++, from TORCH_SHOW_CPP_STACKTRACES=1)" if c.site.native else ""),
            f"  repo {s.repo or 'unknown'}, commit {s.commit or UNRESOLVED} ({s.commit_from})",
            f"  messagePattern (level {self.pattern_level}) {json.dumps(json.loads(self.record_path.read_text())['record']['messagePattern'])}",
            *[f"  {note}" for note in self.notes],
            f"stubs to write (marked TODO(errkb-draft)): {', '.join(self.stubs)}, and the reproduction's marked lines",
            "review the guesses: errorType, handlingStrategy, backgroundTag, tags",
            f"then: errkb validate {self.record_path} && errkb reproduce {self.slug}",
        ]
        return "\n".join(lines)


def catalog_messages(root: Path) -> list[tuple[str, str, str]]:
    """(slug, errorMessage, messagePattern) of every readable record file, drafts included."""
    found = []
    for path in store.record_files(root):
        try:
            record = json.loads(path.read_text(encoding="utf-8")).get("record", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(record.get("errorMessage"), str) and isinstance(record.get("messagePattern"), str):
            found.append((path.stem, record["errorMessage"], record["messagePattern"]))
    return found


def covering_record(message: str, catalog: list[tuple[str, str, str]]) -> str | None:
    for slug, _, pattern in catalog:
        try:
            if pattern_matches(pattern, message):
                return slug
        except PatternError:
            continue
    return None


def draft(root: Path, snippet: Path, python: str | None = None, slug: str | None = None, tags: tuple[str, ...] = (),
          sha: str | None = None, timeout_s: float = 120, allow_no_gpu: bool = False, gpus: int = 0,
          upstream: Path | None = None) -> Draft:
    """Write records/<slug>.json and reproductions/<slug>.py for the error `snippet` raises; raise DraftError (with
    nothing written) when the snippet gives nothing to draft or the files exist."""
    try:
        text = read_snippet(snippet)
    except SnippetError as exc:
        raise DraftError(str(exc)) from None
    if slug is not None and not store.is_safe_slug(slug):
        raise DraftError(f"--slug {slug!r}: expected kebab-case (lowercase letters and digits joined by single hyphens)")
    if sha is not None and not (len(sha) == 40 and all(c in "0123456789abcdef" for c in sha)):
        raise DraftError(f"--sha {sha!r}: expected a full 40-hex commit")
    captured = capture(text, snippet.name, timeout_s, python, gpus, allow_no_gpu)
    return write_draft(root, snippet, text, captured, slug, tags, sha, upstream=upstream)


def draft_api_change(root: Path, snippet: Path, library: str, slug: str | None = None, tags: tuple[str, ...] = (),
                     sha: str | None = None, timeout_s: float = 120, since: str | None = None, until: str | None = None,
                     only: list[str] | None = None, pre: bool = False, say=lambda text: None, pins=(),
                     upstream: Path | None = None) -> Draft:
    """Bisect `library`'s releases for the one that introduced the snippet's error, and draft its record."""
    try:
        text = read_snippet(snippet)
    except SnippetError as exc:
        raise DraftError(str(exc)) from None
    if slug is not None and not store.is_safe_slug(slug):
        raise DraftError(f"--slug {slug!r}: expected kebab-case (lowercase letters and digits joined by single hyphens)")
    pinned = api_change.parse_pins(pins)
    releases = api_change.select(api_change.list_releases(library, pre), since, until, only)
    say(f"{library}: {len(releases)} release(s) from {releases[0]} to {releases[-1]}")
    found = api_change.bisect(text, snippet.name, library, releases, timeout_s, say, pinned)
    made = write_draft(root, snippet, text, found.captured, slug, tags, sha, api_change=True, upstream=upstream,
                       wording_source=f"{found.captured.site.distribution}=={found.first_failing}",
                       extra_doc=api_change.extra_doc(found),
                       needs=api_change.needs_of(found, found.captured), extra_code=api_change.api_literal(found))
    made.notes[:1] = [*found.report(), f"last working {library}=={found.last_working}, first failing {library}=={found.first_failing}"]
    return made


def write_draft(root: Path, snippet: Path, text: str, captured: Captured, slug: str | None, tags, sha: str | None,
                api_change: bool = False, wording_source: str | None = None, extra_doc: str = "",
                needs: dict | None = None, extra_code: str = "", upstream: Path | None = None) -> Draft:
    catalog = catalog_messages(root)
    covered_by = covering_record(captured.message, catalog)
    if covered_by:
        raise DraftError(f"the catalog's record {covered_by!r} already matches this message "
                         f"({captured.message.splitlines()[0][:160]!r}): see errkb show {covered_by}")
    try:
        levels = (1, 0) if captured.site.missing_name else (2, 1, 0)
        generalised = generalise(captured.message, corpus([message for _, message, _ in catalog]), levels)
    except GeneraliseError as exc:
        raise DraftError(str(exc)) from None
    source = resolve(captured, sha, upstream)
    slug = slug or suggested_slug(captured, captured.site.distribution)
    record_file, reproduction_file = store.record_path(root, slug), reproduction_path(root, slug)
    for path in (record_file, reproduction_file):
        if path.exists():
            raise DraftError(f"{path} exists: choose another --slug, or remove the old draft first")
    tags = suggested_tags(captured, captured.site.distribution, tags, api_change)
    extra_doc = extra_doc.replace("errkb reproduce SLUG", f"errkb reproduce {slug}")
    envelope = record_of(captured, source, generalised.pattern, slug, tags, api_change)
    site = captured.site
    wording_source = wording_source or f"{site.distribution}=={plain_version(site.version)}"
    reproduction = reproduction_of(captured, source, text, snippet.name, slug, wording_source, extra_doc, needs, extra_code)
    try:
        writes.add_new_files(root, {record_file: json.dumps(envelope, indent=2, ensure_ascii=False) + "\n",
                                    reproduction_file: reproduction})
    except FileExistsError as exc:  # written meanwhile by another draft
        raise DraftError(f"{exc.filename} exists: choose another --slug, or remove the old draft first") from None
    stubs = sorted({str(loc[1]) for loc in stub_paths(envelope) if len(loc) > 1})
    notes = [f"NEEDS pins {', '.join(f'{k}{v}' for k, v in needs_packages(captured).items())}"]
    if generalised.rejected:
        notes.append("more general patterns refused: " + "; ".join(generalised.rejected))
    if captured.chain:
        notes.append("chained from: " + " <- ".join(captured.chain))
    return Draft(slug, record_file, reproduction_file, captured, source, generalised.level, stubs, notes)
