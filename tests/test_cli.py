"""errkb validate, show, exit codes, and the promise that bad input never shows a traceback."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, SEED_RECORD, SEED_SLUG, run_cli
from errkb.reproduce.codenames import checked_text, free_names

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
    result = run_cli("validate", root=seeded_root)  # issue 18's contract: valid inputs, names, provenance
    assert result.exit_code == 1 and "declares no valid inputs" in result.stderr and "PROVENANCE: missing" in result.stderr
    names = {name: free_names(checked_text(name, record[name])) for name in fields if checked_text(name, record[name])}
    with stub.open("a") as handle:
        handle.write(f"VALID = {{'ok': 'fix'}}\nCODE_NAMES = {names!r}\nPROVENANCE = {{'checked': 'unverified', 'why': 'a stub'}}\n")
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
    proof = {key: shown.pop(key) for key in ("lastVerdict", "lastVerifiedAt", "verifiedOn", "proofSummary", "claimMarks", "notProvenOn")}
    assert proof == {"lastVerdict": None, "lastVerifiedAt": None, "verifiedOn": None, "proofSummary": None, "claimMarks": {},
                     "notProvenOn": []}
    assert (shown.pop("provenance"), shown.pop("provenanceSummary")) == (None, "not stated")  # nor a reproduction
    assert shown == json.loads(SEED_RECORD.read_text())["record"]


def test_show_unknown_or_unsafe_slug(seeded_root):
    for slug in ["no-such-record", "../records/x"]:
        result = run_cli("show", slug, root=seeded_root)
        assert result.exit_code == 2  # as from reproduce
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


def test_validate_reports_field_and_cross_field_problems_of_one_record(tmp_path):
    # Pydantic stops before the cross-field rules once a field is invalid; validate still reports both.
    data = json.loads(SEED_RECORD.read_text())
    data["record"].update(lineNumber="37", messagePattern="no such message")
    (tmp_path / "two.json").write_text(json.dumps(data))
    result = run_cli("validate", tmp_path / "two.json")
    assert result.exit_code == 1
    assert "two.json: $.record.lineNumber: found \"37\"" in result.stderr
    assert "two.json: $.record.messagePattern: messagePattern does not match errorMessage" in result.stderr
    assert "1 file(s) checked, 2 problem(s)" in result.stdout


@pytest.mark.parametrize("text", ['{"record": {"slug": "x', '{"record": 1,}', '{"a" 1}', '{"a": 1 "b": 2}', "{}x", '{"a": "\\q"}', "["])
def test_json_errors_are_complete_sentences(tmp_path, text):
    (tmp_path / "broken.json").write_text(text)
    result = run_cli("validate", tmp_path / "broken.json")
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert line.startswith(f"error: {tmp_path / 'broken.json'}: $: invalid JSON at line 1 column ")
    assert ", expected " in line and not line.endswith((" at", ":"))
    assert "Unterminated string starting at" not in line


def test_list_filters_by_tag_verdict_and_library(catalog):
    from sqlite_utils import Database

    assert run_cli("build", root=catalog).exit_code == 0
    Database(catalog / "catalog.db").execute(
        "update records set lastVerdict = 'verified' where slug = ?", [SEED_SLUG]
    ).connection.commit()
    every = run_cli("list", "--json", root=catalog)
    assert every.exit_code == 0
    slugs = [entry["slug"] for entry in json.loads(every.stdout)]
    assert slugs == sorted(path.stem for path in (catalog / "records").glob("*.json"))

    def listed(*options):
        result = run_cli("list", "--json", *options, root=catalog)
        assert result.exit_code == 0, result.stderr
        return [entry["slug"] for entry in json.loads(result.stdout)]

    assert listed("--library", "HANLP") == [SEED_SLUG] == listed("--library", "hankcs/HanLP")
    assert listed("--verdict", "verified") == [SEED_SLUG]
    assert SEED_SLUG not in listed("--verdict", "never") and len(listed("--verdict", "never")) == len(slugs) - 1
    crf = listed("--tag", "crf")
    assert SEED_SLUG in crf and set(listed("--tag", "crf", "--tag", "multi-gpu")) < set(crf)
    assert listed("--tag", "no-such-tag") == []
    table = run_cli("list", "--verdict", "verified", root=catalog)
    header, row = table.stdout.splitlines()
    assert header.split() == ["SLUG", "CLASS", "LIBRARY", "VERDICT"] and row.split() == [SEED_SLUG, "ValueError", "hankcs/HanLP", "verified"]
    assert [header.index(word) for word in ("CLASS", "LIBRARY", "VERDICT")] == [row.index(word) for word in ("ValueError", "hankcs/HanLP", "verified")]
    assert run_cli("list", "--verdict", "banana", root=catalog).exit_code == 2
    assert run_cli("list", "--verdict", "claim-failed", root=catalog).exit_code == 0  # a documented verdict
    assert listed("--tag", "CRF") == crf  # tags in any case
    torch = listed("--library", "torch")
    assert torch and torch == listed("--library", "pytorch") == listed("--library", "PyTorch/PyTorch")


def test_show_and_reproduce_suggest_close_slugs(catalog):
    result = run_cli("show", "dataparallel-not-suported-when-crf-is-used", root=catalog)
    assert result.exit_code == 2
    assert f"did you mean {SEED_SLUG}?" in result.stderr
    result = run_cli("reproduce", "batchnorm-one-value-per-chanel", root=catalog)
    assert result.exit_code == 2
    assert "did you mean batchnorm-one-value-per-channel?" in result.stderr
    result = run_cli("show", "zzzz-qqqq", root=catalog)
    assert "did you mean" not in result.stderr


def test_help_lists_every_summary_whole_even_in_a_narrow_terminal():
    from click.testing import CliRunner

    from errkb.cli import cli

    result = CliRunner().invoke(cli, ["--help"], terminal_width=60)
    commands = result.output.split("Commands:")[1]
    assert result.exit_code == 0 and "..." not in commands
    listing = " ".join(commands.split())
    for name, command in cli.commands.items():
        summary = " ".join(command.get_short_help_str(limit=10_000).split())
        assert f"{name} {summary}" in listing


def test_list_before_any_build_gives_the_committed_verdicts_as_show_does(catalog):
    """A fresh clone has no catalog.db: `list` reads the committed result files, as `show` does, and names the
    key as `show --json` and `match --json` do (lastVerdict)."""
    for folder in ("verifications", "keys"):
        shutil.copytree(REPO / folder, catalog / folder)
    assert not (catalog / "catalog.db").exists()
    listed = run_cli("list", "--json", root=catalog)
    assert listed.exit_code == 0, listed.stderr
    entries = {entry["slug"]: entry for entry in json.loads(listed.stdout)}
    assert not (catalog / "catalog.db").exists()  # listing builds nothing
    assert all("verdict" not in entry for entry in entries.values())
    verified = [slug for slug, entry in entries.items() if entry["lastVerdict"] == "verified"]
    assert len(verified) >= len(entries) // 2, entries  # the catalog's committed proof, not "never verified"
    for slug in (verified[0], SEED_SLUG):
        shown = json.loads(run_cli("show", slug, "--json", root=catalog).stdout)
        assert entries[slug]["lastVerdict"] == shown["lastVerdict"], slug
