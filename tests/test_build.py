"""errkb build: catalog.db from records/, idempotent and incremental, never half-written."""

import json
import shutil

from sqlite_utils import Database

from conftest import REPO, SEED_RECORD, SEED_SLUG, run_cli, tree_digest
from errkb.store import file_hash

EXAMPLES = REPO / "tests" / "examples"


def add_example(root, name):
    assert run_cli("add", EXAMPLES / "valid" / name, root=root).exit_code == 0


def test_build_twice_changes_nothing(seeded_root):
    before = tree_digest(seeded_root)
    result = run_cli("build", root=seeded_root)
    assert result.exit_code == 0
    assert "0 added, 0 updated, 0 removed, 1 unchanged" in result.stdout
    assert tree_digest(seeded_root) == before


def test_tables_rows_and_foreign_keys(seeded_root):
    db = Database(seeded_root / "catalog.db")
    assert {"records", "solutions", "prevention_tips", "tags", "record_tags", "reproduction_runs"} <= set(db.table_names())
    row = db["records"].get(SEED_SLUG)
    assert row["lineNumber"] == 37 and row["errorClass"] == "ValueError"
    assert json.loads(row["tags"]) == ["python", "pytorch", "crf", "multi-gpu", "dataparallel"]
    assert db["solutions"].count == 3 and db["prevention_tips"].count == 2
    assert {r["tag"] for r in db["record_tags"].rows} == {"python", "pytorch", "crf", "multi-gpu", "dataparallel"}
    assert {fk.other_table for fk in db["record_tags"].foreign_keys} == {"records", "tags"}
    assert db.execute("pragma foreign_key_check").fetchall() == []


def test_full_text_search_covers_message_documentation_and_solutions(seeded_root):
    db = Database(seeded_root / "catalog.db")
    for words in ["DataParallel", "sequence-level", "parallelize", "execute_training_loop"]:
        hits = [r["slug"] for r in db["records"].search(words, quote=True)]
        assert hits == [SEED_SLUG], words
    assert list(db["records"].search("tokenizer")) == []


def test_incremental_build_updates_only_changed_and_removes_deleted(seeded_root):
    path = seeded_root / "records" / f"{SEED_SLUG}.json"
    data = json.loads(path.read_text())
    data["record"]["tags"].append("only-this-record")
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert run_cli("build", root=seeded_root).exit_code == 0
    add_example(seeded_root, "cpp-raise-site.json")
    assert "only-this-record" in {r["name"] for r in Database(seeded_root / "catalog.db")["tags"].rows}
    data["record"]["tags"] = ["pytorch", "crf"]
    path.write_text(json.dumps(data, indent=2) + "\n")
    result = run_cli("build", root=seeded_root)
    assert "0 added, 1 updated, 0 removed, 1 unchanged" in result.stdout
    db = Database(seeded_root / "catalog.db")
    assert {r["tag"] for r in db["record_tags"].rows_where("slug = ?", [SEED_SLUG])} == {"pytorch", "crf"}
    # The tag no record uses any more is dropped; every tag still in use stays.
    assert {r["name"] for r in db["tags"].rows} == {r["tag"] for r in db["record_tags"].rows}
    assert "only-this-record" not in {r["name"] for r in db["tags"].rows}
    path.unlink()
    result = run_cli("build", root=seeded_root)
    assert "0 added, 0 updated, 1 removed, 1 unchanged" in result.stdout
    db = Database(seeded_root / "catalog.db")
    assert [r["slug"] for r in db["records"].rows] == ["cpp-raise-site"]
    assert db["solutions"].count_where("slug = ?", [SEED_SLUG]) == 0
    assert SEED_SLUG not in {r["slug"] for r in db["records"].search("DataParallel")}


def test_invalid_file_in_records_fails_the_build_and_writes_nothing(seeded_root):
    shutil.copy(EXAMPLES / "valid" / "cpp-raise-site.json", seeded_root / "records")
    (seeded_root / "records" / "broken.json").write_text('{"record": {"slug": "broken"')
    before = tree_digest(seeded_root)
    result = run_cli("build", root=seeded_root)
    assert result.exit_code == 1
    assert "broken.json: $: invalid JSON" in result.stderr
    assert tree_digest(seeded_root) == before
    assert Database(seeded_root / "catalog.db")["records"].count == 1


def test_file_name_must_match_slug(seeded_root):
    shutil.copy(SEED_RECORD, seeded_root / "records" / "other-name.json")
    result = run_cli("build", root=seeded_root)
    assert result.exit_code == 1
    assert "other-name.json: $.record.slug: found 'dataparallel-not-supported-when-crf-is-used', expected 'other-name'" in result.stderr


def test_full_rebuild_keeps_reproduction_history(seeded_root):
    db = Database(seeded_root / "catalog.db")
    record_hash = file_hash(seeded_root / "records" / f"{SEED_SLUG}.json")  # a run of today's record, not a stale one
    db["reproduction_runs"].insert({"slug": SEED_SLUG, "verdict": "verified", "started_at": "2026-11-29T15:00:00Z",
                                    "ran_at": "local", "record_hash": record_hash}, alter=True)
    db.close()
    # a run kept without a result file is unsigned: it counts on a machine that trusts its own runs
    result = run_cli("build", "--full", "--trust-unsigned", root=seeded_root)
    assert "1 added" in result.stdout
    db = Database(seeded_root / "catalog.db")
    assert db["reproduction_runs"].count == 1
    assert db["records"].get(SEED_SLUG)["lastVerdict"] == "verified"
    assert [r["slug"] for r in db["records"].search("DataParallel")] == [SEED_SLUG]


def _run(db, verdict, started_at, record_hash=None):
    db["reproduction_runs"].insert(
        {"slug": SEED_SLUG, "verdict": verdict, "started_at": started_at, "ran_at": "local", "record_hash": record_hash},
        alter=True,
    )


def test_last_verdict_ignores_skips_after_a_verification(seeded_root):
    from errkb import catalog

    db = Database(seeded_root / "catalog.db")
    _run(db, "verified", "2026-11-01T00:00:00Z")
    _run(db, "skipped", "2026-11-02T00:00:00Z")
    catalog.refresh_last_verdicts(db, [SEED_SLUG])
    row = db["records"].get(SEED_SLUG)
    assert (row["lastVerdict"], row["lastVerifiedAt"]) == ("verified", "2026-11-01T00:00:00Z")
    _run(db, "fix-failed", "2026-11-03T00:00:00Z")
    catalog.refresh_last_verdicts(db, [SEED_SLUG])
    assert db["records"].get(SEED_SLUG)["lastVerdict"] == "fix-failed"
    db.close()
    assert catalog.last_run(seeded_root, SEED_SLUG)["verdict"] == "fix-failed"


def test_runs_of_an_older_version_of_the_record_do_not_count(seeded_root):
    from errkb import catalog

    db = Database(seeded_root / "catalog.db")
    current = db["records"].get(SEED_SLUG)["contentHash"]
    _run(db, "verified", "2026-11-01T00:00:00Z", record_hash="0" * 64)
    catalog.refresh_last_verdicts(db, [SEED_SLUG])
    assert db["records"].get(SEED_SLUG)["lastVerdict"] is None
    _run(db, "verified", "2026-11-02T00:00:00Z", record_hash=current)
    db.close()
    assert run_cli("build", "--full", "--trust-unsigned", root=seeded_root).exit_code == 0  # runs without files are unsigned
    row = Database(seeded_root / "catalog.db")["records"].get(SEED_SLUG)
    assert (row["lastVerdict"], row["lastVerifiedAt"]) == ("verified", "2026-11-02T00:00:00Z")
