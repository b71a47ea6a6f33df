"""The `reproduction_runs` table: every verification result file of verifications/ (one row per file, kept in step
by `errkb build`), plus runs made with `errkb reproduce --no-write` (no file). From them come each record's
lastVerdict and its "verified on" summary."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from pathlib import Path

import sqlite_utils
from packaging.version import InvalidVersion, Version

from . import signing, verifications
from .problems import InvalidInput
from .layout import DATABASE_FILE
from .verifications import Verification

RUNS_TABLE = "reproduction_runs"
COLUMNS = {
    "id": int, "slug": str, "path": str, "environment": str, "record_hash": str, "reproduction_hash": str,
    "current": int, "verdict": str, "reason": str, "failed_claim": str, "claims": str, "variant": str, "drift": str,
    "started_at": str, "seconds": float, "python": str, "torch": str, "torch_git": str, "torch_build": str,
    "library": str, "library_version": str, "packages": str, "cuda_device_count": int, "cuda_devices": str,
    "cpu": str, "platform": str, "ran_at": str, "errkb_version": str, "stages": str, "observed_messages": str,
    "file_size": int, "file_mtime_ns": int, "signer": str, "signature_stat": str, "trusted": int,
}


def ensure_table(db: sqlite_utils.Database) -> None:
    """Not derived from records/, so builds (even --full) keep it; older catalogs gain the new columns."""
    table = db[RUNS_TABLE]
    if RUNS_TABLE not in db.table_names():
        table.create(COLUMNS, pk="id")
        table.create_index(["slug", "started_at"])
        table.create_index(["path"], unique=True)
        return
    missing = {name: kind for name, kind in COLUMNS.items() if name not in table.columns_dict}
    for name, kind in missing.items():
        table.add_column(name, kind)
    if "path" in missing:
        table.create_index(["path"], unique=True)


def library_fields(library: str | None) -> tuple[str | None, str | None]:
    """A result's `library` ("lightning 2.0.8") as the (library, library_version) columns."""
    name, _, version = (library or "").partition(" ")
    return name or None, version or None


def row(verification: Verification, path: str | None, current: bool, stat=None, signer: str | None = None,
        signature_stat: str | None = None, trust_unsigned: bool = False) -> dict:
    v = verification
    library, library_version = library_fields(v.library)
    return {
        "slug": v.slug, "path": path, "environment": v.environment, "record_hash": v.recordHash,
        "reproduction_hash": v.reproductionHash, "current": int(current), "verdict": v.verdict, "reason": v.reason,
        "failed_claim": v.failedClaim, "claims": json.dumps([c.model_dump() for c in v.claims], ensure_ascii=False),
        "variant": "; ".join(f"{s.stage}: {s.variant}" for s in v.stages if s.variant) or None, "drift": v.drift,
        "started_at": v.startedAt, "seconds": v.seconds, "python": v.python, "torch": v.packages.get("torch"),
        "torch_git": v.torchGitVersion, "torch_build": v.torchBuild, "library": library,
        "library_version": library_version, "packages": json.dumps(v.packages, sort_keys=True),
        "cuda_device_count": v.hardware.gpuCount, "cuda_devices": json.dumps(v.hardware.gpus), "cpu": v.hardware.cpu,
        "platform": v.os, "ran_at": v.ranAt.url or v.ranAt.kind, "errkb_version": v.errkbVersion,
        "stages": json.dumps([s.model_dump(by_alias=True) for s in v.stages], ensure_ascii=False),
        "observed_messages": json.dumps(v.observedMessages, ensure_ascii=False),
        "file_size": stat.st_size if stat else None, "file_mtime_ns": stat.st_mtime_ns if stat else None,
        "signer": signer, "signature_stat": signature_stat, "trusted": int(bool(signer) or trust_unsigned),
    }


def store_result(db: sqlite_utils.Database, root: Path, verification: Verification, path: Path | None,
                 trust_unsigned: bool = False) -> None:
    """One fresh run: the row of its result file (replacing that file's old row), or a row of its own. An
    unsigned run counts toward the record's verdict only when `trust_unsigned`."""
    rel = path.relative_to(root).as_posix() if path else None
    current = verifications.is_current(verification, verifications.current_hashes(root, verification.slug))
    signer, signature_stat = None, None
    if path:
        keys = signing.maintainer_keys(root)
        signer = signing.signer_of(root, path, path.read_bytes(), keys)
        signature_stat = _signature_stat(path, keys)
    with db.atomic():
        ensure_table(db)
        if rel:
            db.execute(f"delete from {RUNS_TABLE} where path = ?", [rel])
        db[RUNS_TABLE].insert(row(verification, rel, current, path.stat() if path else None, signer, signature_stat, trust_unsigned))
        if "records" in db.table_names():
            refresh_records(db, [verification.slug])


def sync(db: sqlite_utils.Database, root: Path, trust_unsigned: bool = False) -> None:
    """Bring the rows of result files in line with verifications/ (a file whose size and mtime, and whose
    signature file's, are unchanged is not read again), verify each signature against keys/maintainers/, mark
    which results are current and trusted (signed, or any with `trust_unsigned`), and refresh the records'
    verdicts. A malformed file, an inconsistent result or a bad signature raises InvalidInput naming the file
    and the field; the caller's transaction then leaves the database as it was."""
    ensure_table(db)
    known = {r["path"]: (r["file_size"], r["file_mtime_ns"], r["signature_stat"]) for r in db.query(f"select path, file_size, file_mtime_ns, signature_stat from {RUNS_TABLE} where path is not null")}
    keys = signing.maintainer_keys(root)
    seen, problems, changed = set(), [], []
    for file in verifications.result_files(root):
        rel = file.relative_to(root).as_posix()
        seen.add(rel)
        stat = file.lstat()  # a symbolic link is refused by load, never followed
        signature_stat = _signature_stat(file, keys)
        if known.get(rel) == (stat.st_size, stat.st_mtime_ns, signature_stat):
            continue
        try:
            verification, signer = verifications.load_signed(file, root, keys)
            changed.append((rel, verification, stat, signer, signature_stat))
        except InvalidInput as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidInput(problems)
    gone = sorted(set(known) - seen)
    gone_slugs = {r[0] for r in db.execute(f"select distinct slug from {RUNS_TABLE} where path in (select value from json_each(?))", [json.dumps(gone)])}
    for start in range(0, len(gone), 500):
        part = gone[start : start + 500]
        db.execute(f"delete from {RUNS_TABLE} where path in ({', '.join('?' * len(part))})", part)
    for rel, verification, stat, signer, signature_stat in changed:
        db.execute(f"delete from {RUNS_TABLE} where path = ?", [rel])
        db[RUNS_TABLE].insert(row(verification, rel, False, stat, signer, signature_stat))
    before = db.conn.total_changes
    refresh_trusted(db, trust_unsigned)
    trust_changed = db.conn.total_changes != before  # a result became (un)trusted
    slugs, flipped = refresh_current(db, root)
    if "records" in db.table_names():
        refresh_records(db, sorted(slugs | gone_slugs))
    if changed or gone or flipped or trust_changed or OBSERVED_TABLE not in db.table_names():
        refresh_observed_messages(db)


def _signature_stat(result: Path, keys: list[signing.MaintainerKey]) -> str:
    """What must stay the same for a result's signature check to stand: its signature file and the keys."""
    target = signing.signature_path(result)
    try:
        info = target.lstat()
        found = f"{info.st_size}:{info.st_mtime_ns}"
    except FileNotFoundError:
        found = "none"
    return f"{found}:{','.join(sorted(k.key.keyid[:16] for k in keys))}"


def refresh_trusted(db: sqlite_utils.Database, trust_unsigned: bool) -> None:
    """Which rows count: signed results, and unsigned ones (result files or --no-write runs) only when the
    maintainer trusts this machine's own runs."""
    db.execute(
        f"update {RUNS_TABLE} set trusted = (signer is not null or ?) where trusted is null or trusted != (signer is not null or ?)",
        [int(trust_unsigned), int(trust_unsigned)],
    )


OBSERVED_TABLE = "observed_messages"
FEEDS_MATCHER = ", ".join(f"'{verdict}'" for verdict in verifications.TEACHES_THE_MATCHER)


def refresh_observed_messages(db: sqlite_utils.Database) -> None:
    """Each wording of a record's error that a run actually observed (older releases word some errors
    differently); the matcher accepts them as the record's own."""
    if OBSERVED_TABLE not in db.table_names():
        db[OBSERVED_TABLE].create({"slug": str, "message": str, "releases": str}, pk=("slug", "message"))
    db.execute(f"delete from {OBSERVED_TABLE}")
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    # only what verifications.feeds_matcher lets through: current, trusted and verified
    for run in db.query(f"select slug, torch, library, library_version, observed_messages from {RUNS_TABLE} "
                        f"where observed_messages is not null and current = 1 and trusted is not 0 and verdict in ({FEEDS_MATCHER})"):
        for message in json.loads(run["observed_messages"] or "[]"):
            seen[(run["slug"], message)].add(" ".join(release_of(run)))
    db[OBSERVED_TABLE].insert_all(
        {"slug": slug, "message": message, "releases": ", ".join(sorted(releases))} for (slug, message), releases in seen.items()
    )


def refresh_current(db: sqlite_utils.Database, root: Path) -> tuple[set[str], bool]:
    """A result is current when it judged today's record file and reproduction file. Returns the slugs with runs,
    and whether any run became current or stale.

    The same rule holds for runs kept without a file (`reproduce --no-write`): one of a reproduction since
    edited or reverted must not decide the verdict. Such a run from a catalog older than reproduction hashes
    has none, and counts while its record hash matches."""
    slugs = {r[0] for r in db.execute(f"select distinct slug from {RUNS_TABLE}")}
    flipped = False
    for slug in slugs:
        record_hash, reproduction_hash = verifications.current_hashes(root, slug)
        now = "(record_hash is ? and (reproduction_hash is ? or (path is null and reproduction_hash is null)))"
        cursor = db.execute(
            f"update {RUNS_TABLE} set current = {now} where slug = ? and current is not {now}",
            [record_hash, reproduction_hash, slug, record_hash, reproduction_hash],
        )
        flipped = flipped or cursor.rowcount > 0
    return slugs, flipped


def runs_by_slug(db: sqlite_utils.Database, slugs: list[str] | None = None) -> dict[str, list[dict]]:
    if RUNS_TABLE not in db.table_names():
        return {}
    runs: dict[str, list[dict]] = defaultdict(list)
    for start in range(0, len(slugs), 500) if slugs else [None]:
        part = slugs[start : start + 500] if slugs else None
        where = f" where slug in ({', '.join('?' * len(part))})" if part else ""
        for r in db.query(f"select * from {RUNS_TABLE}{where}", part or []):
            runs[r["slug"]].append(r)
    return runs


def verdict_columns(runs: list[dict], content_hash: str | None) -> tuple[str | None, str | None, str | None]:
    """(lastVerdict, lastVerifiedAt, verifiedOn) of a record from its runs.

    Only current, trusted runs count (an unsigned result counts only on a machine that trusts its own runs,
    `--trust-unsigned`): results of the record and reproduction as they are now (a run without hashes,
    from an old catalog, counts when its record hash matches). Within one environment the latest run decides (a
    skipped run says nothing about the record, so it decides only when no run there got further). Across
    environments the record is `verified` when some environment verified it; `verifiedOn` then names exactly
    which, and the record page shows where it did not. Otherwise the latest environment's verdict stands.
    """
    current = [r for r in runs if _is_current(r, content_hash) and r.get("trusted") != 0]
    if not current:
        return None, None, None
    by_environment: dict[str, list[dict]] = defaultdict(list)
    for run in current:
        by_environment[run.get("environment") or f"{run.get('torch')}|{run.get('cuda_device_count')}"].append(run)
    latest = [max(group, key=lambda r: (r["verdict"] != "skipped", r.get("started_at") or "", r.get("id") or 0))
              for group in by_environment.values()]
    decided = max(latest, key=lambda r: (r["verdict"] == "verified", r["verdict"] != "skipped", r.get("started_at") or "", r.get("id") or 0))
    verified = [r["started_at"] for r in latest if r["verdict"] == "verified" and r.get("started_at")]
    return decided["verdict"], max(verified, default=None), verified_on(latest)


def _is_current(run: dict, content_hash: str | None) -> bool:
    if run.get("path"):
        return bool(run.get("current"))
    # a run kept without a file: `current` also checks its reproduction hash (None: a row older than that column)
    return run.get("current") != 0 and run.get("record_hash") in (None, content_hash)


def refresh_records(db: sqlite_utils.Database, slugs: list[str] | None = None) -> None:
    """Copy each record's verdict and "verified on" onto its row, for facets and the records table (a row whose
    values stay the same is not written: every write re-indexes the row's full text)."""
    if slugs is None:
        slugs = [r[0] for r in db.execute("select slug from records")]
    runs = runs_by_slug(db, slugs)
    for slug in slugs:
        found = db.execute("select contentHash from records where slug = ?", [slug]).fetchone()
        if found:
            values = verdict_columns(runs.get(slug, []), found[0])
            db.execute(
                "update records set lastVerdict = ?, lastVerifiedAt = ?, verifiedOn = ? where slug = ? "
                "and (lastVerdict is not ? or lastVerifiedAt is not ? or verifiedOn is not ?)",
                [*values, slug, *values],
            )


def _version_key(text: str | None):
    try:
        return Version(text or "0")
    except InvalidVersion:
        return Version("0")


def release_axis(runs: list[dict]) -> str:
    """What varies across a record's environments: "library" when its runs differ in the release of the record's
    own library on one torch (an API-change record run on lightning 1.9.5, 2.0.0 and 2.0.8), else "torch"."""
    libraries = {r.get("library_version") for r in runs if r.get("library") not in (None, "torch")}
    torches = {(r.get("torch") or "").split("+")[0] for r in runs}
    return "library" if len(libraries) > 1 and len(torches) <= 1 else "torch"


def release_of(run: dict, axis: str = "torch") -> tuple[str, str]:
    """The (name, release) a run is labelled by along `axis` (release_axis)."""
    library = run.get("library")
    if axis == "library" and library and run.get("library_version"):
        return library, run["library_version"].split("+")[0]
    if run.get("torch"):
        return "torch", run["torch"].split("+")[0]
    return library or "?", (run.get("library_version") or "?").split("+")[0]


def _hardware(run: dict) -> str:
    count = run.get("cuda_device_count") or 0
    if not count:
        return "CPU"
    names = json.loads(run.get("cuda_devices") or "[]")
    return f"{count}× {names[0].replace('NVIDIA ', '') if names else 'GPU'}"


def verified_on(runs: list[dict]) -> str | None:
    """`torch 2.1.2, 2.5.1, 2.13.0 (CPU); torch 2.14.1 (1× H200)`: the releases each hardware class verified.

    It names the releases that ran, one by one, and never a range: a release in between may behave otherwise.
    """
    by_hardware: dict[tuple[str, str], set[str]] = defaultdict(set)
    axis = release_axis(runs)
    for run in runs:
        if run["verdict"] == "verified":
            name, release = release_of(run, axis)
            by_hardware[(_hardware(run), name)].add(release)
    parts = [
        f"{name} {', '.join(sorted(releases, key=_version_key))} ({hardware})"
        for (hardware, name), releases in sorted(by_hardware.items(), key=lambda item: item[0][0] != "CPU")
    ]
    return "; ".join(parts) or None


def last_run(root: Path, slug: str) -> dict | None:
    """The latest current run of a record that got further than `skipped` (else the latest skipped one), or
    None (also without catalog.db or its runs table)."""
    path = root / DATABASE_FILE
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        try:
            columns = {r[1] for r in conn.execute(f"pragma table_info({RUNS_TABLE})")}
            current = "(current = 1 or (path is null and current is null))" if "current" in columns else "1"
            if "trusted" in columns:
                current += " and trusted is not 0"  # an unsigned result is never shown as the record's last run
            found = conn.execute(
                f"select * from {RUNS_TABLE} where slug = ? and {current} "
                "order by verdict = 'skipped', started_at desc, id desc limit 1",
                [slug],
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # no runs table yet, or an unreadable file
        return None
    return dict(found) if found else None


REPRODUCED = ("verified", "fix-failed", "claim-failed")  # the documented error happened; the claims are another matter
DRIFT_LINE = re.compile(r"raise (?:line (\d+)|site moved to (\S+))")


def _label(run: dict, axis: str = "torch") -> str:
    name, release = release_of(run, axis)
    return f"{name} {release}"


def _joined(labels: list[str]) -> str:
    """`torch 2.1.2, 2.5.1` for labels of one library, else the labels as they are."""
    names = {label.split(" ", 1)[0] for label in labels}
    if len(names) == 1:
        return f"{names.pop()} " + ", ".join(label.split(" ", 1)[1] for label in labels)
    return ", ".join(labels)


def matrix_summary(runs: list[dict], line_number: int | None) -> str | None:
    """One line over a record's current results, e.g. `reproduces on torch 2.1.2, 2.5.1 (CPU); every claim held;
    raise line moved in torch 2.14.1 (2854 → 2860); GPU: never run`. Releases are named one by one."""
    ran = [r for r in runs if r["verdict"] != "skipped"]
    if not runs:
        return None
    axis = release_axis(runs)
    parts = []
    by_hardware: dict[str, list[str]] = defaultdict(list)
    for run in sorted(ran, key=lambda r: _version_key(release_of(r, axis)[1])):
        if run["verdict"] in REPRODUCED:
            by_hardware[_hardware(run)].append(_label(run, axis))
    if by_hardware:
        parts.append("reproduces on " + "; ".join(f"{_joined(labels)} ({hw})" for hw, labels in by_hardware.items()))
    missing = [r for r in ran if r["verdict"] not in REPRODUCED]
    if missing:
        parts.append("not on " + ", ".join(f"{_label(r, axis)} ({r['verdict']})" for r in missing))
    reproduced = sorted((r for r in ran if r["verdict"] in REPRODUCED), key=lambda r: _version_key(release_of(r, axis)[1]))
    if reproduced:
        failed = [r for r in reproduced if r["verdict"] != "verified"]
        parts.append("every claim held" + (" in each" if len(reproduced) > 1 else "") if not failed else
                     "claims failed on " + ", ".join(f"{_label(r, axis)} ({r.get('failed_claim') or r['verdict']})" for r in failed))
    moved = {}
    for run in reproduced:
        found = DRIFT_LINE.search(run.get("drift") or "")
        if found and line_number is not None:
            to = f"raise line {line_number} → {found.group(1)}" if found.group(1) else f"raise site moved to {found.group(2)}"
            moved.setdefault(to, []).append(_label(run, axis))
    for to, labels in moved.items():
        parts.append(f"{to} in {_joined(labels)}")
    skipped = [r for r in runs if r["verdict"] == "skipped"]
    gpu_reasons = sorted({r["reason"] for r in skipped if "CUDA device" in (r.get("reason") or "")})
    other = [r for r in skipped if r.get("reason") not in gpu_reasons]
    for reason in sorted({_skip_reason(r.get("reason") or "") for r in other}):
        labels = sorted((_label(r, axis) for r in other if _skip_reason(r.get("reason") or "") == reason),
                        key=lambda label: _version_key(label.split(" ")[-1]))
        parts.append(f"skipped on {_joined(labels)} ({reason})")
    if not any(r.get("cuda_device_count") for r in ran):
        parts.append("GPU: never run" + (f" ({gpu_reasons[0]})" if gpu_reasons else ""))
    return "; ".join(parts)


def _skip_reason(reason: str) -> str:
    """The part of a skip reason that is the same on every release: "needs a CPU build of torch"."""
    return re.sub(r", found .*$", "", reason)
