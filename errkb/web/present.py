"""Turn rows of catalog.db into what the templates show. Plain data in, plain data out: Jinja escapes it."""

from __future__ import annotations

import json
import re
from datetime import datetime

from pathlib import Path

from markupsafe import Markup, escape

from .. import search
from ..hits import cut, plain, short_title
from ..reproduce.contract import provenance_summary, read_provenance
from ..runs import release_axis, release_of
from . import urls

LIST_COLUMNS = ["solutions", "preventionTips", "tags"]
VERDICT_TONE = {
    "verified": "good",
    "not-reproduced": "warn",
    "wrong-error": "bad",
    "fix-failed": "bad",
    "claim-failed": "bad",
    "timeout": "bad",
    "crashed": "bad",
    "skipped": "muted",
}
SEVERITY_TONE = {"critical": "bad", "error": "bad", "warning": "warn", "info": "muted"}
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def record_context(datasette, database: str, row: dict, runs: list[dict]) -> dict:
    record = dict(row)
    for name in LIST_COLUMNS:
        record[name] = _json_list(record.get(name))
    return {
        "r": record,
        **crash_first(record, runs),
        "database": database,
        "severity_tone": SEVERITY_TONE.get(record["severity"], "muted"),
        "source_lines": source_lines(record),
        "raise_url": urls.github(record["repo"], record["analyzedSha"], record["filePath"], record["lineNumber"]),
        "excerpt_url": urls.github(
            record["repo"], record["analyzedSha"], record["filePath"], record["sourceCodeStart"], record["sourceCodeEnd"]
        ),
        "commit_url": urls.github_commit(record["repo"], record["analyzedSha"]),
        "provenance": provenance_summary(_provenance(datasette, database, record["slug"])),
        "runs": [run_view(run) for run in runs],
        **proof_context(datasette, database, record, runs),
        "links": {
            "class": urls.records_table(datasette, database, browse=True, errorClass=record["errorClass"]),
            "repo": urls.records_table(datasette, database, browse=True, repo=record["repo"]),
            "row": datasette.urls.row(database, "records", _tilde(record["slug"])),
            "json": datasette.urls.row(database, "records", _tilde(record["slug"]), format="json"),
            "match": urls.match(datasette),
        },
        "tag_urls": {
            tag: urls.records_table(datasette, database, browse=True, _tag=tag)
            for tag in record["tags"]
        },
    }


def _provenance(datasette, database: str, slug: str) -> dict | None:
    """What the record's excerpt was checked against: its reproduction's PROVENANCE, beside catalog.db."""
    path = datasette.get_database(database).path
    return read_provenance(Path(path).parent, slug) if path else None


# -- the record page, crash-first: a title, the message (collapsed when long), runs grouped by environment --

MESSAGE_LINES = 3  # a longer message (or one past MESSAGE_CHARS) starts collapsed under its first line
MESSAGE_CHARS = 240


def crash_first(record: dict, runs: list[dict]) -> dict:
    message = plain(record.get("errorMessage") or "")
    lines = message.splitlines() or [""]
    return {
        "title": short_title(message),
        "message": message,
        "message_first_line": cut(lines[0], 120),
        "message_is_long": len(lines) > MESSAGE_LINES or len(message) > MESSAGE_CHARS,
        "run_groups": run_groups([run for run in runs if _counts(run)]),
    }


def run_groups(runs: list[dict]) -> dict:
    """The current runs, one row per environment (its latest run; how many ran there), and the notes every
    environment shares, said once instead of in every row."""
    by_environment: dict[str, list[dict]] = {}
    axis = release_axis(runs)
    for run in sorted(runs, key=lambda r: (r.get("started_at") or "", r.get("id") or 0), reverse=True):
        by_environment.setdefault(run.get("environment") or _environment_title(run, axis), []).append(run)
    rows = []
    for group in by_environment.values():
        view = run_view(group[0])
        view["environment"] = _environment_title(group[0], axis)
        view["count"] = len(group)
        view["notes"] = _notes(group[0])
        rows.append(view)
    rows.sort(key=lambda v: (v["devices"] != "CPU only (no CUDA devices)", _release_key(v["environment"].split(" ")[1] if " " in v["environment"] else None)))
    shared = [note for note in (rows[0]["notes"] if rows else []) if len(rows) > 1 and all(note in row["notes"] for row in rows)]
    for row in rows:
        row["notes"] = [note for note in row["notes"] if note not in shared]
    return {"rows": rows, "shared_notes": shared}


def _notes(run: dict) -> list[str]:
    """A run's notes, one per stage variant, reason part and drift, so equal parts can be told apart."""
    notes = [f"variant {part.strip()}" for part in (run.get("variant") or "").split("; ") if part.strip()]
    notes += [part.strip() for part in re.split(r";\s+", run.get("reason") or "") if part.strip()]
    if run.get("drift"):
        notes.append(f"drift: {run['drift']}")
    return notes


def match_items(datasette, matches, rows: dict[str, dict], summaries: dict[str, dict] | None = None) -> list[dict]:
    """What the match page lists for each match: the match, its record's summary row and fix-first summary
    (errkb.hits: title, cause, first fix and its mark, where verified), a link."""
    items = []
    for match in matches:
        row = rows.get(match.slug)
        verdict = row["lastVerdict"] if row else None
        summary = (summaries or {}).get(match.slug)
        items.append({
            "match": match, "row": row, "url": urls.record(datasette, match.slug), "fix": summary,
            "title": summary["title"] if summary else (short_title(row["errorMessage"]) if row else match.slug),
            "message": plain(row["errorMessage"]) if row else "",
            "verdict": verdict, "tone": VERDICT_TONE.get(verdict, "muted") if verdict else "none",
        })
    return items


def search_words(paste: str, limit: int = 200) -> str:
    """What a "no match" page searches for: the paste's last line that reads like an error message."""
    lines = [plain(line).strip() for line in paste.splitlines() if line.strip()]
    errorish = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Warning)\b", line)] or lines[-1:]
    text = errorish[-1] if errorish else ""
    return text.split(": ", 1)[1][:limit] if ": " in text else text[:limit]


def source_lines(record: dict) -> list[dict]:
    start = int(record["sourceCodeStart"])
    return [
        {
            "number": number,
            "text": text,
            "is_raise": number == record["lineNumber"],
            "url": urls.github(record["repo"], record["analyzedSha"], record["filePath"], number),
        }
        for number, text in enumerate((record["sourceCode"] or "").split("\n"), start)
    ]


def _is_current(run: dict) -> bool:
    return run.get("current") != 0  # None: a run kept without a file by a catalog older than the column


def _counts(run: dict) -> bool:
    """A result is proof when it judged today's files and someone vouches for it (signed, or this machine
    trusts its own unsigned runs: runs.refresh_trusted)."""
    return _is_current(run) and run.get("trusted") != 0


def proof_context(datasette, database: str, record: dict, runs: list[dict]) -> dict:
    """The verification matrix (a column per environment, a row per stage or claim), its one-line summary, each
    claim's mark, and the results kept for earlier versions of the record."""
    from ..runs import matrix_summary

    current = [run for run in runs if _counts(run)]
    axis = release_axis(current)
    current.sort(key=lambda run: (bool(run.get("cuda_device_count")), _release_key(release_of(run, axis)[1])))
    columns = []
    for run in current:
        claims = {_claim_label(c): c for c in _json_list(run.get("claims")) if isinstance(c, dict)}
        columns.append({
            "title": _environment_title(run, axis), **_column_legend(run, axis),
            "url": datasette.urls.row(database, "reproduction_runs", str(run["id"])),
            "verdict": run.get("verdict"), "tone": VERDICT_TONE.get(run.get("verdict"), "muted"), "claims": claims,
            "reason": run.get("reason"), "run": run,
        })
    labels = []
    for column in columns:
        for label in column["claims"]:
            if label not in labels:
                labels.append(label)
    rows = [{"label": "error reproduced", "cells": [_trigger_cell(c) for c in columns]}]
    for label in labels:
        rows.append({"label": label, "cells": [_claim_cell(c, label) for c in columns]})
    marks = {label: _claim_mark(columns, label) for label in labels}
    return {
        "matrix": {"columns": columns, "rows": rows, "groups": _column_groups(columns), "builds": _builds(columns)},
        "proof_summary": matrix_summary(current, record.get("lineNumber")),
        "claim_marks": marks,
        "solution_marks": [marks.get(f"solution {i}") for i in range(1, len(record.get("solutions") or []) + 1)],
        "earlier_runs": [run_view(run) for run in runs if not _is_current(run)],
        "unsigned_runs": [run_view(run) for run in runs if _is_current(run) and not _counts(run)],
    }


def _claim_label(claim: dict) -> str:
    return f"solution {claim.get('index')}" if claim.get("kind") == "solution" else str(claim.get("kind"))


def _environment_title(run: dict, axis: str = "torch") -> str:
    name, release = release_of(run, axis)
    if name == "torch":
        release = run.get("torch") or release  # the full version: 2.13.0+cpu names the build
    count = run.get("cuda_device_count") or 0
    names = _json_list(run.get("cuda_devices"))
    hardware = f"{count}× {str(names[0]).replace('NVIDIA ', '')}" if count and names else "CPU"
    build = f", {run['torch_build']} build" if run.get("torch_build") and run.get("torch_build") != "CPU" else ""
    return f"{name} {release} · {hardware}{build}"


def _column_legend(run: dict, axis: str = "torch") -> dict:
    """A compact column head (the release, and torch's build: cpu, cu121), its group (library and hardware) and the
    build's name for the legend."""
    name, release = release_of(run, axis)
    count = run.get("cuda_device_count") or 0
    names = _json_list(run.get("cuda_devices"))
    hardware = f"{count}× {str(names[0]).replace('NVIDIA ', '')}" if count and names else "CPU only"
    build = run.get("torch_build") if name == "torch" else None
    if name == "torch" and build is None and (run.get("torch") or "").endswith("+cpu"):
        build = "CPU"  # a skipped run never imported torch; its version still names the build
    short = "cpu" if build == "CPU" else "cu" + build.split(" ", 1)[1].replace(".", "") if build else ""
    return {"release": release, "group": f"{name} on {hardware}", "build": short, "build_name": f"{build} build" if build else ""}


def _builds(columns: list[dict]) -> list[str]:
    """The legend of the build row: "cu117: CUDA 11.7 build", once per build."""
    return list(dict.fromkeys(f"{c['build']}: {c['build_name']} of torch" for c in columns if c["build"]))


def _column_groups(columns: list[dict]) -> list[dict]:
    """Consecutive columns of one library and hardware: the matrix's top row."""
    groups: list[dict] = []
    for column in columns:
        if groups and groups[-1]["label"] == column["group"]:
            groups[-1]["span"] += 1
        else:
            groups.append({"label": column["group"], "span": 1})
    return groups


MARKS = {"good": "✓", "bad": "✗", "warn": "!", "muted": "–", "none": "·"}


def _trigger_cell(column: dict) -> dict:
    verdict = column["verdict"]
    shown = "reproduced" if verdict in ("verified", "fix-failed", "claim-failed") else verdict
    tone = "good" if shown == "reproduced" else VERDICT_TONE.get(verdict, "muted")
    return {"text": shown, "tone": tone, "url": column["url"], "title": column["reason"], "mark": MARKS.get(tone, "·")}


def _claim_cell(column: dict, label: str) -> dict:
    claim = column["claims"].get(label)
    if claim is None:
        return {"text": "—", "tone": "none", "url": column["url"], "title": "no such claim in this run", "mark": "·"}
    verdict = claim.get("verdict") or "not-run"
    tone = VERDICT_TONE.get(verdict, "muted")
    return {"text": verdict, "tone": tone, "url": column["url"], "title": claim.get("reason"), "mark": MARKS.get(tone, "·")}


def _claim_mark(columns: list[dict], label: str) -> dict:
    ran = [c for c in columns if (c["claims"].get(label) or {}).get("verdict") not in (None, "not-run")]
    held = [c for c in ran if c["claims"][label].get("verdict") == "verified"]
    if not ran:
        return {"text": "not run yet", "tone": "muted", "url": None}
    tone = "good" if len(held) == len(ran) else "bad"
    return {"text": f"verified in {len(held)}/{len(ran)} environments", "tone": tone, "url": (held or ran)[-1]["url"]}


def _release_key(text: str | None):
    from packaging.version import InvalidVersion, Version

    try:
        return Version((text or "0").split("+")[0])
    except InvalidVersion:
        return Version("0")


def run_view(run: dict) -> dict:
    versions = [f"Python {run['python']}"] if run.get("python") else []
    if run.get("torch"):
        versions.append(f"torch {run['torch']}")
    if run.get("library") and run.get("library") != "torch":
        versions.append(f"{run['library']} {run.get('library_version') or ''}".strip())
    shown = {v.split(" ", 1)[0].lower() for v in versions}
    for name, version in _pairs(run.get("packages")):
        if name.lower() not in shown:
            versions.append(f"{name} {version}".strip())
    return {
        "verdict": run.get("verdict") or "unknown",
        "tone": VERDICT_TONE.get(run.get("verdict"), "muted"),
        "when": human_time(run.get("started_at")),
        "started_at": run.get("started_at"),
        "versions": versions,
        "devices": devices(run),
        "ran_at": run.get("ran_at") or run.get("host"),
        "platform": run.get("platform"),
        "variant": run.get("variant"),
        "drift": run.get("drift"),
        "reason": run.get("reason"),
        "seconds": run.get("seconds"),
        "current": _is_current(run),
        "signer": run.get("signer"),
    }


def devices(run: dict) -> str:
    count = run.get("cuda_device_count") or 0
    names = _json_list(run.get("cuda_devices")) if _looks_like_json(run.get("cuda_devices")) else run.get("cuda_devices")
    if isinstance(names, list):
        names = ", ".join(str(name) for name in names)
    if not count:
        return "CPU only (no CUDA devices)"
    return f"{count} CUDA device{'s' if count != 1 else ''}" + (f": {names}" if names else "")


def human_time(value: str | None) -> str:
    """"2026-11-29T15:00:00Z" -> "2026-11-29 15:00 UTC"; anything unparseable as it is."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    offset = moment.utcoffset()
    zone = "" if offset is None else " UTC" if not offset else moment.strftime(" %z")
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def prose(text: str | None) -> Markup:
    """Paragraphs from blank lines; `backticks` as code. Escapes first, so the text cannot add markup."""
    if not text:
        return Markup("")
    paragraphs = re.split(r"\n\s*\n", str(text).strip())
    return Markup("").join(Markup("<p>{}</p>").format(inline(p)) for p in paragraphs)


def marked(text: str) -> Markup:
    """A search snippet with its matched words in <mark> (escaped first: the text cannot add markup)."""
    escaped = str(escape(plain(text)))
    return Markup(escaped.replace(search.MARK_START, "<mark>").replace(search.MARK_END, "</mark>"))


def inline(text: str) -> Markup:
    escaped = str(escape(text)).replace("\n", "<br>")
    return Markup(INLINE_CODE.sub(r"<code>\1</code>", escaped))


def _json_list(value) -> list:
    if isinstance(value, list):
        return value
    try:
        parsed = json.loads(value) if value else []
    except (TypeError, ValueError):
        return [value]
    return parsed if isinstance(parsed, list) else [parsed]


def _pairs(value) -> list[tuple[str, str]]:
    """Installed packages as (name, version), from a JSON object, a JSON list or "name==version" text."""
    if not value:
        return []
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        parsed = [part.strip() for part in str(value).split(",")]
    if isinstance(parsed, dict):
        return [(str(k), "" if v is None else str(v)) for k, v in parsed.items()]
    if isinstance(parsed, list):
        return [tuple((re.split(r"==|\s+", str(item), maxsplit=1) + [""])[:2]) for item in parsed if item]
    return [(str(parsed), "")]


def _looks_like_json(value) -> bool:
    return isinstance(value, str) and value[:1] in "[{\""


def _tilde(slug: str) -> str:
    from datasette.utils import tilde_encode  # how Datasette spells a primary key in a row URL

    return tilde_encode(slug)
