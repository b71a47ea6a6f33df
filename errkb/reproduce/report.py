"""How a run reads: a table for people, JSON for scripts."""

from __future__ import annotations

import json
import shutil
from collections import Counter

from .compare import VERDICTS


def to_json(results) -> str:
    return json.dumps([result.to_json() for result in results], indent=2, ensure_ascii=False)


def progress_line(result, done: int, total: int) -> str:
    return f"[{done}/{total}] {result.verdict:<14} {result.slug} ({result.seconds:.1f} s)"


def proof(result) -> str:
    """What a verified run proved, in a few words: `ValueError at hanlp/…/tagger.py:37, hanlp 2.1.5`."""
    trigger = result.stages[0] if result.stages else None
    library = result.environment.get("library") or {}
    version = f"{library.get('distribution')} {library.get('version')}" if library.get("version") else ""
    site = f"{trigger.exception_class} at {trigger.raise_site}" if trigger and trigger.raise_site else ""
    return ", ".join(part for part in [site, version] if part)


def table(results) -> str:
    """One row per record; below it, in full, each failure's reason and any row cut to fit, the variants that
    ran, and any drift."""
    width = shutil.get_terminal_size((120, 24)).columns
    slug_width = max([len("record"), *(len(r.slug) for r in results)])
    header = f"{'record':<{slug_width}}  {'verdict':<14} {'seconds':>7}  details"
    lines = [header, "-" * min(len(header) + 40, width)]
    notes = []
    for result in results:
        details = proof(result) if result.verdict == "verified" else result.reason
        row = f"{result.slug:<{slug_width}}  {result.verdict:<14} {result.seconds:>7.1f}  {details}"
        cut = len(row) > width
        lines.append(row[: width - 3] + "..." if cut else row)
        if result.verdict not in ("verified", "skipped") or cut:
            notes.append(f"{result.slug}: {result.verdict}: {details}")
        if result.verdict == "verified" and result.variant:
            notes.append(f"{result.slug}: ran {result.variant}")
        if result.drift:
            notes.append(f"{result.slug}: drift: {result.drift}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def summary(results, strict: bool) -> str:
    """`3 records: 2 verified, 1 skipped; ok`, and on a second line the machine they ran on."""
    counts = Counter(result.verdict for result in results)
    parts = [f"{counts[verdict]} {verdict}" for verdict in VERDICTS if counts[verdict]]
    failed = sum(not result.passed(strict) for result in results)
    status = "ok" if not failed else f"{failed} failed" + (" (--strict: skipped counts as failed)" if strict else "")
    lines = [f"{len(results)} record(s): {', '.join(parts) or 'none'}; {status}"]
    if results:
        env = results[0].environment
        names = f" ({', '.join(env['cuda_devices'])})" if env["cuda_devices"] else ""
        lines.append(
            f"on {env['host']}: python {env['python']}, torch {env['torch'] or 'not installed'}, "
            f"{env['cuda_device_count']} CUDA device(s){names}"
        )
    return "\n".join(lines)
