"""How a run reads: a table for people, JSON for scripts."""

from __future__ import annotations

import shutil
from collections import Counter

from .compare import VERDICTS


def progress_line(result, done: int, total: int, environment: str | None = None) -> str:
    where = f"{environment}: " if environment else ""
    return f"[{done}/{total}] {where}{result.headline:<14} {result.slug} ({result.seconds:.1f} s)"


def build_line(environment) -> str:
    """`python 3.11.7, torch 2.5.1 (CUDA 12.4 build), 0 CUDA devices`: which build of torch runs the stages."""
    facts = environment.facts
    torch = facts.get("torch")
    cuda = facts.get("cuda_version")
    if torch and cuda is None and "+cpu" not in torch:
        cuda = _cuda_of_wheel(facts)
    build = f" ({'CUDA ' + cuda if cuda else 'CPU'} build)" if torch else ""
    return (f"python {facts.get('python')}, torch {torch or 'not installed'}{build}, "
            f"{environment.cuda_device_count} CUDA device(s)")


def _cuda_of_wheel(facts: dict) -> str | None:
    """A PyPI wheel's CUDA release, when torch was not imported: it names its nvidia-cuda-runtime dependency."""
    for name, version in (facts.get("packages") or {}).items():
        if name.startswith("nvidia-cuda-runtime") and version:
            return ".".join(version.split(".")[:2])
    return None


def proof(result) -> str:
    """What a verified run proved, in a few words: `ValueError at hanlp/…/tagger.py:37, hanlp 2.1.5; claims 4/4`."""
    trigger = result.stages[0] if result.stages else None
    library = result.environment.get("library") or {}
    version = f"{library.get('distribution')} {library.get('version')}" if library.get("version") else ""
    site = f"{trigger.exception_class} at {trigger.raise_site}" if trigger and trigger.raise_site else ""
    return ", ".join(part for part in [site, version] if part) + (f"; {result.claims_held()}" if result.claims else "")


def table(results) -> str:
    """One row per record; below it, in full, each failure's reason, each claim that did not hold, the variants
    that ran, and any drift. Rows are never cut: a long one wraps."""
    slug_width = max([len("record"), *(len(r.slug) for r in results)])
    verdict_width = max([len("verdict"), *(len(r.headline) for r in results)])
    header = f"{'record':<{slug_width}}  {'verdict':<{verdict_width}} {'seconds':>7}  details"
    width = shutil.get_terminal_size((120, 24)).columns
    lines = [header, "-" * min(len(header) + 40, width)]
    notes = []
    for result in results:
        details = proof(result) if result.verdict == "verified" else result.reason
        lines.append(f"{result.slug:<{slug_width}}  {result.headline:<{verdict_width}} {result.seconds:>7.1f}  {details}")
        for claim in result.claims:
            if claim.verdict not in ("verified", "not-run"):
                notes.append(f"{result.slug}: {claim.label}: {claim.verdict}: {claim.reason}")
        if result.verdict == "verified" and result.variant:
            notes.append(f"{result.slug}: ran {result.variant}")
        if result.drift:
            notes.append(f"{result.slug}: drift: {result.drift}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def summary(results, strict: bool, outcomes: list[str] | None = None, hardware=None) -> str:
    """`3 records: 2 verified, 1 skipped; ok`, and on a second line what they ran on (never a host name).

    With `outcomes` (plan.classify of each result under a declared `hardware`), the skips that declaration
    explains are listed apart, so that what remains under "failed" is only what went wrong."""
    counts = Counter(result.verdict for result in results)
    parts = [f"{counts[verdict]} {verdict}" for verdict in VERDICTS if counts[verdict]]
    lines = []
    if outcomes is None:
        failed = sum(not result.passed(strict) for result in results)
        status = "ok" if not failed else f"{failed} failed" + (" (--strict: skipped counts as failed)" if strict else "")
    else:
        failed = [r for r, outcome in zip(results, outcomes) if outcome == "failed"]
        expected = [r for r, outcome in zip(results, outcomes) if outcome == "expected-skip"]
        status = "ok" if not failed else f"{len(failed)} failed (--strict on {hardware.describe()})"
        if expected:
            lines.append(f"expected skips ({len(expected)}, explained by {hardware.describe()}):")
            lines += [f"  {r.slug}: {r.reason}" for r in expected]
        if failed:
            lines.append(f"failed ({len(failed)}):")
            lines += [f"  {r.slug}: {r.headline}: {r.reason}" for r in failed]
    lines.insert(0, f"{len(results)} run(s): {', '.join(parts) or 'none'}; {status}")
    seen = set()
    for result in results:
        env = result.environment
        names = f" ({', '.join(env['cuda_devices'])})" if env.get("cuda_devices") else ""
        line = (f"on python {env.get('python')}, torch {env.get('torch') or 'not installed'}, "
                f"{env.get('cuda_device_count', 0)} CUDA device(s){names}")
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return "\n".join(lines)


def plan_table(planned, label: str, hardware) -> str:
    """What each record would do in one environment on the declared hardware, unexpected skips flagged."""
    width = max([len("record"), *(len(p.slug) for p in planned)])
    lines = [f"plan for {label} on {hardware.describe()}", f"{'record':<{width}}  action", "-" * (width + 30)]
    for p in planned:
        action = "run" if p.action == "run" else ("skip (expected)" if p.expected else "SKIP (UNEXPECTED)")
        reason = f": {'; '.join(p.reasons)}" if p.reasons else ""
        lines.append(f"{p.slug:<{width}}  {action}{reason}")
    runs = sum(p.action == "run" for p in planned)
    unexpected = sum(not p.expected for p in planned)
    lines.append(f"{len(planned)} record(s): {runs} run, {len(planned) - runs - unexpected} expected skip(s), "
                 f"{unexpected} unexpected skip(s)")
    return "\n".join(lines)


def install_hint(results) -> str | None:
    """Say how to get the libraries when records were skipped for want of them."""
    missing = [r for r in results if r.verdict == "skipped" and "not installed" in r.reason]
    if not missing:
        return None
    return (f"hint: {len(missing)} record(s) skipped for a library that is not installed; "
            "install the reproductions' libraries with: pip install 'errkb[repro]' (or pip install -e '.[repro]' in a clone)")
