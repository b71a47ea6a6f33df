"""errkb add: canonical files, idempotence, conflicts, several files at once."""

import json
import shutil

from conftest import CATALOG_SEED, REPO, SEED_RECORD, SEED_SLUG, SHARED_SEED, run_cli, tree_digest

EXAMPLES = REPO / "tests" / "examples"


def test_seed_fixture_is_the_shared_seed_unchanged():
    stored = json.loads(SEED_RECORD.read_text())
    if SHARED_SEED.exists():
        assert stored == json.loads(SHARED_SEED.read_text())
    text = SEED_RECORD.read_text(encoding="utf-8")
    assert text.endswith("}\n") and text.startswith('{\n  "record": {\n    "id"')


def test_the_catalog_copy_of_the_seed_keeps_its_id_and_slug():
    seed, ours = json.loads(SEED_RECORD.read_text())["record"], json.loads(CATALOG_SEED.read_text())["record"]
    assert (ours["id"], ours["slug"], ours["errorMessage"]) == (seed["id"], seed["slug"], seed["errorMessage"])


def test_add_writes_the_canonical_form(tmp_path):
    result = run_cli("add", EXAMPLES / "valid" / "seed-envelope.txt", root=tmp_path)
    assert result.exit_code == 0
    assert (tmp_path / "records" / f"{SEED_SLUG}.json").read_bytes() == SEED_RECORD.read_bytes()
    assert not [p for p in (tmp_path / "records").iterdir() if p.name.startswith(".")]


def test_readding_the_same_record_in_any_form_is_unchanged(seeded_root):
    before = tree_digest(seeded_root)
    for name in ["seed-envelope.txt", "seed-bare.json", "seed-crlf.json"]:
        result = run_cli("add", EXAMPLES / "valid" / name, root=seeded_root)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith(f"unchanged: {SEED_SLUG}")
    assert tree_digest(seeded_root) == before


def test_conflicting_record_is_refused_with_a_summary_then_replaced(seeded_root):
    conflict = EXAMPLES / "invalid" / "slug-conflict.json"
    result = run_cli("add", conflict, root=seeded_root)
    assert result.exit_code == 1
    assert "differs in: documentation" in result.stderr
    result = run_cli("add", "--replace", conflict, root=seeded_root)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"replaced: {SEED_SLUG}")
    stored = json.loads((seeded_root / "records" / f"{SEED_SLUG}.json").read_text())
    assert stored["record"]["documentation"] == "Another story about the same slug."
    # catalog.db existed, so add updated it too
    from sqlite_utils import Database

    row = Database(seeded_root / "catalog.db")["records"].get(SEED_SLUG)
    assert row["documentation"] == "Another story about the same slug."


def test_all_files_are_validated_before_any_is_written(seeded_root):
    before = tree_digest(seeded_root)
    good = EXAMPLES / "valid" / "cpp-raise-site.json"
    bad = EXAMPLES / "invalid" / "bad-enum.json"
    result = run_cli("add", good, bad, root=seeded_root)
    assert result.exit_code == 1
    assert "bad-enum.json" in result.stderr
    assert tree_digest(seeded_root) == before
    result = run_cli("add", good, EXAMPLES / "valid" / "nulls-and-empty-tips.json", root=seeded_root)
    assert result.exit_code == 0
    assert len(list((seeded_root / "records").glob("*.json"))) == 3


def test_two_inputs_with_one_slug_and_different_content_are_refused(tmp_path):
    result = run_cli("add", EXAMPLES / "valid" / "seed-bare.json", EXAMPLES / "invalid" / "slug-conflict.json", root=tmp_path)
    assert result.exit_code == 1
    assert "other content" in result.stderr
    assert not (tmp_path / "records").exists() or not list((tmp_path / "records").iterdir())


def test_records_dir_is_created_on_first_add(tmp_path):
    root = tmp_path / "fresh"
    root.mkdir()
    assert run_cli("add", SEED_RECORD, root=root).exit_code == 0
    assert (root / "records" / f"{SEED_SLUG}.json").exists()
    assert not (root / "catalog.db").exists()  # add only updates a database that exists


def test_missing_input_file_is_named(tmp_path):
    result = run_cli("add", tmp_path / "nope.json", root=tmp_path)
    assert result.exit_code == 1
    assert "nope.json: $: cannot read file" in result.stderr


def test_copy_of_seed_under_another_slug_needs_its_own_id(seeded_root, tmp_path):
    data = json.loads(SEED_RECORD.read_text())
    data["record"]["slug"] = "seed-copy"
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(data))
    before = tree_digest(seeded_root)
    result = run_cli("add", path, root=seeded_root)
    assert result.exit_code == 1
    assert "copy.json: $.record.id: id '228db24696aaf48f' is already used by record 'dataparallel-not-supported-when-crf-is-used'" in result.stderr
    assert tree_digest(seeded_root) == before
    (seeded_root / "catalog.db").unlink()  # without a database, add reads the ids from records/
    assert run_cli("add", path, root=seeded_root).exit_code == 1
    data["record"]["id"] = "00000000000000ff"
    path.write_text(json.dumps(data))
    result = run_cli("add", path, root=seeded_root)
    assert result.exit_code == 0
    assert "warning: no" in result.stderr and "reproductions/seed-copy.py yet" in result.stderr
    # a file copied by hand with a duplicate id: validate and build both refuse it
    shutil.copy(SEED_RECORD, tmp_path / "seed-again.json")
    clash = json.loads(SEED_RECORD.read_text())
    clash["record"]["slug"] = "seed-clash"
    (seeded_root / "records" / "seed-clash.json").write_text(json.dumps(clash))
    result = run_cli("validate", seeded_root / "records", root=seeded_root)
    assert "seed-clash.json: $.record.id: id '228db24696aaf48f' is also used by" in result.stderr
    result = run_cli("build", root=seeded_root)
    assert result.exit_code == 1
    assert "$.record.id: id '228db24696aaf48f' is also used by record" in result.stderr


def test_a_folder_adds_each_of_its_record_files(tmp_path, catalog):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    for slug in [SEED_SLUG, "batchnorm-one-value-per-channel"]:
        shutil.copy(catalog / "records" / f"{slug}.json", incoming)
    (incoming / "notes.txt").write_text("not a record")
    root = tmp_path / "new"
    result = run_cli("add", incoming, root=root)
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (root / "records").glob("*.json")) == [
        "batchnorm-one-value-per-channel.json", f"{SEED_SLUG}.json",
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("add", empty, root=root)
    assert result.exit_code == 1 and f"no *.json file in {empty}" in result.stderr
