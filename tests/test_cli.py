"""errkb validate, show, exit codes, and the promise that bad input never shows a traceback."""

import json
import os
import shutil
import subprocess
import sys

from conftest import REPO, SEED_RECORD, SEED_SLUG, run_cli

EXAMPLES = REPO / "tests" / "examples"


def test_validate_reports_every_problem_in_every_file(tmp_path):
    data = json.loads(SEED_RECORD.read_text())
    data["record"].update(id="XYZ", severity="fatal", extra=1)
    (tmp_path / "many.json").write_text(json.dumps(data))
    shutil.copy(EXAMPLES / "invalid" / "empty.json", tmp_path)
    shutil.copy(EXAMPLES / "valid" / "seed-bare.json", tmp_path)
    result = run_cli("validate", tmp_path)
    assert result.exit_code == 1
    for expected in ["many.json: $.record.id", "many.json: $.record.severity", "many.json: $.record.extra", "empty.json: $: file is empty"]:
        assert expected in result.stderr
    assert "3 file(s) checked, 4 problem(s)" in result.stdout


def test_validate_requires_a_reproduction_for_catalog_records(seeded_root):
    result = run_cli("validate", root=seeded_root)
    assert result.exit_code == 1
    assert f"no reproduction: expected reproductions/{SEED_SLUG}.py" in result.stderr
    (seeded_root / "reproductions").mkdir()
    stub = seeded_root / "reproductions" / f"{SEED_SLUG}.py"
    stub.write_text("NEEDS = {}\nSOLUTIONS = {1: 'fix'}\ndef trigger(): pass\ndef fix(): pass\n")
    result = run_cli("validate", root=seeded_root)  # the seed has more solutions and code fields than that
    assert result.exit_code == 1 and "the reproduction demonstrates 1 (SOLUTIONS)" in result.stderr
    record = json.loads((seeded_root / "records" / f"{SEED_SLUG}.json").read_text())["record"]
    fields = [name for name in ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern") if record[name]]
    solutions = {i: "fix" for i in range(1, len(record["solutions"]) + 1)}
    stub.write_text(f"NEEDS = {{}}\nSOLUTIONS = {solutions!r}\nCODE = {dict.fromkeys(fields, 'fix')!r}\ndef trigger(): pass\ndef fix(): pass\n")
    assert run_cli("validate", root=seeded_root).exit_code == 0
    (seeded_root / "reproductions" / f"{SEED_SLUG}.py").unlink()
    (seeded_root / "reproductions" / "EXEMPT").write_text(f"{SEED_SLUG}  # being written\n")
    assert run_cli("validate", root=seeded_root).exit_code == 0


def test_the_catalog_itself_is_valid_and_the_exemption_list_only_shrinks():
    from errkb.coverage import exemptions

    # Exemptions when the catalog was opened: none. Add none; remove entries as reproductions land.
    assert exemptions(REPO) <= set()
    result = run_cli("validate", root=REPO)
    assert result.exit_code == 0, result.stderr


def test_show_for_people_and_as_json(seeded_root):
    result = run_cli("show", SEED_SLUG, root=seeded_root)
    assert result.exit_code == 0
    assert "DataParallel not supported when CRF is used" in result.stdout
    assert "hanlp/components/taggers/tagger.py:37" in result.stdout
    assert "1. Train on a single GPU" in result.stdout
    assert "never verified" in result.stdout
    result = run_cli("show", "--json", SEED_SLUG, root=seeded_root)
    shown = json.loads(result.stdout)
    assert shown.pop("verifications") == []  # seeded_root has no committed results
    assert shown == json.loads(SEED_RECORD.read_text())["record"]


def test_show_unknown_or_unsafe_slug(seeded_root):
    for slug in ["no-such-record", "../records/x"]:
        result = run_cli("show", slug, root=seeded_root)
        assert result.exit_code == 1
        assert "no record" in result.stderr


def test_bad_input_through_the_real_command_has_no_traceback(tmp_path):
    env = dict(os.environ)
    for name in ["deeply-nested.json", "non-utf8.json", "record-null.json"]:
        proc = subprocess.run(
            [sys.executable, "-m", "errkb.cli", "--root", str(tmp_path), "add", str(EXAMPLES / "invalid" / name)],
            capture_output=True, text=True, env=env,
        )
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        assert name in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "errkb.cli", "add"], capture_output=True, text=True)
    assert proc.returncode == 2
    proc = subprocess.run([sys.executable, "-m", "errkb.cli", "frobnicate"], capture_output=True, text=True)
    assert proc.returncode == 2


def test_build_outside_a_catalog_writes_nothing(tmp_path):
    result = run_cli("build", root=tmp_path)
    assert result.exit_code == 1
    assert "no records/ folder: not an errkb catalog" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_lookups_find_the_catalog_from_a_subfolder_or_errkb_root(seeded_root, monkeypatch):
    from errkb.store import find_root

    sub = seeded_root / "notes" / "deep"
    sub.mkdir(parents=True)
    (seeded_root / "notes" / "records").mkdir()  # an unrelated, empty records/ folder is not a catalog
    monkeypatch.delenv("ERRKB_ROOT", raising=False)
    assert find_root(sub) == seeded_root
    monkeypatch.chdir(sub)
    assert run_cli("show", SEED_SLUG).exit_code == 0
    monkeypatch.chdir(seeded_root.parent)
    monkeypatch.setenv("ERRKB_ROOT", str(seeded_root))
    assert find_root() == seeded_root
    assert run_cli("show", SEED_SLUG).exit_code == 0


def test_show_says_when_a_run_judged_an_older_record(seeded_root):
    from sqlite_utils import Database

    Database(seeded_root / "catalog.db")["reproduction_runs"].insert(
        {"slug": SEED_SLUG, "verdict": "verified", "started_at": "2026-11-01T00:00:00Z", "ran_at": "local",
         "record_hash": "0" * 64},
        alter=True,
    )
    result = run_cli("show", SEED_SLUG, root=seeded_root)
    assert "Verification: verified on 2026-11-01T00:00:00Z" in result.stdout
    assert "the record has changed since" in result.stdout
