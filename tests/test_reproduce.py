"""errkb reproduce end to end: the real harness, real subprocesses, real libraries.

Two small catalogs are built in temporary folders and each is reproduced once (module-scoped fixtures):
- the seed record with its real reproduction, plus a record that needs two CUDA devices;
- planted defects (tests/planted/*.py), one record each, every one of which must fail in its own way.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CATALOG_SEED, REPO, SEED_RECORD, SEED_SLUG, run_cli
from reproduce_support import (
    CPP_EXAMPLE, LOG_SOFTMAX_MESSAGE, SOFTMAX_MESSAGE, Case, softmax_warning, write_catalog,
)

# With `pytest -n 2 --dist loadgroup` these tests share one worker, so each catalog is reproduced once.
pytestmark = pytest.mark.xdist_group("reproduce")

CLAIM_FIELDS = {
    "solutions": ["Pass the wrapped module: build_criterion(model=model.module)"],
    "exampleFix": "# before\ncriterion = tagger.build_criterion(model=model)\n# after\ncriterion = tagger.build_criterion(model=net)",
    "validationCode": "assert not isinstance(model, nn.DataParallel), 'unwrap the model before building the CRF criterion'",
    "tryCatchPattern": (
        "try:\n    criterion = tagger.build_criterion(model=model)\nexcept ValueError as exc:\n"
        "    if 'DataParallel not supported' not in str(exc):\n        raise\n"
        "    criterion = tagger.build_criterion(model=model.module)"
    ),
}

CASES = [
    Case("wrong-file", "raises_in_hanlp.py", {"filePath": "hanlp/components/taggers/rnn_tagger.py"}, "wrong-error",
         "raise site: expected hanlp/components/taggers/rnn_tagger.py, got hanlp/components/taggers/tagger.py:37"),
    Case("wrong-class", "raises_in_hanlp.py", {"errorClass": "TypeError"}, "wrong-error",
         "class: expected TypeError, got ValueError"),
    Case("wrong-message", "raises_in_hanlp.py",
         {"messagePattern": "DataParallel is fine", "errorMessage": "DataParallel is fine"}, "wrong-error",
         "message: expected a match for 'DataParallel is fine', got 'DataParallel not supported when CRF is used'"),
    Case("fix-reraises", "fix_reraises.py", {}, "fix-failed",
         "fix() raised ValueError: 'DataParallel not supported when CRF is used' at hanlp/components/taggers/tagger.py:37"),
    Case("does-nothing", "does_nothing.py", {}, "not-reproduced", "trigger() returned without raising ValueError"),
    Case("outside-library", "raises_outside_library.py", {}, "wrong-error",
         "raise site: expected hanlp/components/taggers/tagger.py inside hanlp, got none inside hanlp"),
    Case("hangs", "hangs.py", {}, "timeout", "trigger() ran past its 2 s budget"),
    Case("aborts", "aborts.py", {}, "crashed", "trigger() died with signal SIGABRT (-6) without a result"),
    Case("other-hanlp", "needs_other_hanlp.py", {}, "skipped",
         "needs hanlp==0.0.1, found 2.1.5; needs errkb-no-such-distribution>=1, not installed"),
    Case("needs-cuda-build", "needs_cuda_build_without_driver.py", {}, "skipped",
         "needs a CUDA build of torch, found a CPU build"),
    Case("import-fails", "import_fails.py", {}, "wrong-error",
         "importing the reproduction raised ModuleNotFoundError: \"No module named 'errkb_no_such_module'\""),
    Case("needs-not-literal", "needs_not_literal.py", {}, "not-reproduced",
         "invalid reproduction reproductions/needs-not-literal.py: NEEDS must be a literal dict"),
    Case("no-reproduction", None, {}, "not-reproduced", "no reproduction: expected reproductions/no-reproduction.py"),
    Case("exempt", None, {}, "skipped", "no reproduction yet: reproductions/exempt.py is missing and the record is exempt"),
    Case("unknown-library", "does_nothing.py", {"repo": "someone/elsewhere"}, "not-reproduced",
         "unknown library: no distribution in reproductions/unknown-library.py's NEEDS packages names repo 'someone/elsewhere'"),
    Case("warning", "softmax_warning.py", softmax_warning(r"Implicit dimension choice for \w+ has been deprecated", SOFTMAX_MESSAGE),
         "verified", "UserWarning emitted at torch/nn/functional.py:"),
    Case("warning-wrong-pattern", "softmax_warning.py", softmax_warning("Implicit dimension choice for log_softmax", LOG_SOFTMAX_MESSAGE),
         "wrong-error", "trigger() emitted the wrong warning: message: expected a match for 'Implicit dimension choice for log_softmax'"),
    Case("warning-fix-still-warns", "fix_still_warns.py", softmax_warning(r"Implicit dimension choice for \w+", SOFTMAX_MESSAGE),
         "fix-failed", "fix() still emits the documented warning: UserWarning"),
    Case("native", "native_lengths_2d.py", {}, "verified",
         "RuntimeError raised at aten/src/ATen/native/PackedSequence.cpp:", base=json.loads(CPP_EXAMPLE.read_text())["record"]),
    # Claims: every code field runs from the record's own text, and each must hold.
    Case("claims-hold", "claims_hanlp.py", CLAIM_FIELDS, "verified", "; 4 claim(s) held"),
    Case("guard-never-fires", "claims_hanlp.py", dict(CLAIM_FIELDS, validationCode="assert True"), "claim-failed",
         "validationCode: validationCode does not flag the trigger's situation"),
    Case("catches-wrong-class", "claims_hanlp.py",
         dict(CLAIM_FIELDS, tryCatchPattern=CLAIM_FIELDS["tryCatchPattern"].replace("except ValueError", "except TypeError")),
         "claim-failed", "tryCatchPattern: tryCatchPattern did not catch the documented error: ValueError"),
    Case("field-not-run", "claims_hanlp.py", CLAIM_FIELDS, "claim-failed",
         "validationCode: validationCode was not executed: guard() never ran the record's text"),
    Case("one-more-solution", "claims_hanlp.py", dict(CLAIM_FIELDS, solutions=["Unwrap the model", "Turn the CRF off"]),
         "not-reproduced", "the record has 2 solution(s), the reproduction demonstrates 1 (SOLUTIONS)"),
    Case("example-fix-raises", "claims_hanlp.py",
         dict(CLAIM_FIELDS, exampleFix="# before\ncriterion = tagger.build_criterion(model=model)\n# after\ncriterion = tagger.build_criterion(model=model)"),
         "fix-failed", "exampleFix: example_fix() raised ValueError"),
]


def reproduce_json(root: Path, *args) -> tuple[int, dict, str]:
    """--json prints JSON Lines, one result per record as it finishes."""
    result = run_cli("reproduce", "--json", *args, root=root)
    items = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result.exit_code, {item["slug"]: item for item in items}, result.stderr


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    write_catalog(root, CASES)
    # Like claims_hanlp.py, except that its validationCode stage never runs the record's text.
    never_runs = root / "reproductions" / "field-not-run.py"
    text = never_runs.read_text(encoding="utf-8")
    never_runs.write_text(text.replace("def guard():\n", "def guard():\n    return 'skipped'\n\n\ndef _not_called():\n"), encoding="utf-8")
    assert "def _not_called():" in never_runs.read_text(encoding="utf-8")
    (root / "reproductions" / "EXEMPT").write_text("exempt  # its reproduction is being written\n")
    (root / "records" / "broken.json").write_text('{"record": {"slug": "broken"}}')
    code, results, stderr = reproduce_json(root, "--all", "-j", "2")
    return root, code, results, stderr


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """The seed with its real reproduction, and a record that needs two CUDA devices."""
    root = tmp_path_factory.mktemp("seeded")
    write_catalog(root, [Case("needs-two-gpus", "needs_two_gpus.py", {}, "skipped", "")])
    shutil.copy(CATALOG_SEED, root / "records")
    shutil.copy(REPO / "reproductions" / f"{SEED_SLUG}.py", root / "reproductions")
    torch_before = "torch" in sys.modules
    code, results, stderr = reproduce_json(root, SEED_SLUG, "needs-two-gpus")
    return root, code, results, stderr, torch_before


@pytest.mark.parametrize("case", CASES, ids=[case.slug for case in CASES])
def test_planted_case(planted, case):
    _, _, results, _ = planted
    result = results[case.slug]
    assert result["verdict"] == case.verdict, result["reason"]
    assert case.reason in result["reason"]


def test_invalid_record_is_not_reproduced(planted):
    result = planted[2]["broken"]
    assert result["verdict"] == "not-reproduced"
    assert result["reason"].startswith("invalid record: ") and "$.record.id: missing required field" in result["reason"]


def test_planted_run_fails(planted):
    _, code, results, stderr = planted
    assert code == 1
    assert set(results) == {case.slug for case in CASES} | {"broken"}
    assert f"[{len(results)}/{len(results)}]" in stderr  # progress, on stderr
    assert "run(s):" in stderr and "claim-failed" in stderr


def test_timeout_stops_within_budget(planted):
    trigger = planted[2]["hangs"]["stages"][0]
    assert trigger["outcome"] == "timeout"
    assert trigger["seconds"] >= 2  # it had its whole budget
    # A hang guard, not a speed check: the planted trigger never returns, so any bound shows it was stopped.
    assert trigger["seconds"] < 120


def test_crash_quotes_the_fatal_error(planted):
    result = planted[2]["aborts"]
    assert result["stages"][0]["outcome"] == "crashed"
    assert "Fatal Python error: Aborted" in result["reason"]


def test_failures_show_expected_and_actual(planted):
    trigger = planted[2]["wrong-file"]["stages"][0]
    assert (trigger["exception_class"], trigger["raise_site"]) == ("ValueError", "hanlp/components/taggers/tagger.py:37")
    assert trigger["variant"] == "planted: build_criterion(DataParallel)"  # the raising trigger's local `variant`
    outside = planted[2]["outside-library"]["reason"]
    assert "/reproductions/outside-library.py:" in outside  # where it was raised instead


def test_claims_after_a_failed_trigger_do_not_run(planted):
    for slug in ["wrong-file", "does-nothing", "hangs", "aborts", "other-hanlp"]:
        result = planted[2][slug]
        assert [stage["stage"] for stage in result["stages"]] == ["trigger"], slug
        assert [claim["verdict"] for claim in result["claims"]] == ["not-run"], slug


def test_every_claim_is_reported(planted):
    result = planted[2]["claims-hold"]
    assert [(c["kind"], c["index"], c["verdict"]) for c in result["claims"]] == [
        ("solution", 1, "verified"), ("exampleFix", None, "verified"), ("validationCode", None, "verified"),
        ("tryCatchPattern", None, "verified"),
    ]
    stages = {stage["stage"]: stage for stage in result["stages"]}
    assert list(stages) == ["trigger", "solution 1", "exampleFix", "validationCode", "tryCatchPattern", "valid inputs"]
    # What ran comes from the runner's log of errkb_record calls, not from the reproduction's source.
    assert [e["outcome"] for e in stages["validationCode"]["executed"]] == ["flagged", "passed"]
    (caught,) = stages["tryCatchPattern"]["executed"][0]["caught"]
    assert caught["class"] == "ValueError" and "DataParallel not supported" in caught["message"]
    assert stages["exampleFix"]["executed"][0]["section"] == "after"


def test_failing_claim_names_itself_and_others_still_run(planted):
    result = planted[2]["guard-never-fires"]
    assert result["failed_claim"] == "validationCode"
    verdicts = {c["kind"]: c["verdict"] for c in result["claims"]}
    assert verdicts == {"solution": "verified", "exampleFix": "verified", "validationCode": "claim-failed", "tryCatchPattern": "verified"}
    assert planted[2]["fix-reraises"]["failed_claim"] == "solution 1"


def test_validate_fails_a_record_with_more_solutions_than_demonstrations(planted):
    root = planted[0]
    result = run_cli("validate", str(root / "records" / "one-more-solution.json"), root=root)
    assert result.exit_code == 1
    assert "the record has 2 solution(s), the reproduction demonstrates 1 (SOLUTIONS)" in result.stderr


def test_warning_record_reports_the_library_frame_not_the_caller(planted):
    trigger = planted[2]["warning"]["stages"][0]
    assert trigger["kind"] == "warning" and trigger["exception_class"] == "UserWarning"
    assert trigger["raise_site"].startswith("torch/nn/functional.py:")
    (seen,) = trigger["warnings"]  # the warning's own location is the caller's (stacklevel)
    assert seen["class"] == "UserWarning" and "/reproductions/warning.py:" in seen["location"]
    assert planted[2]["warning"]["stages"][1]["variant"] == "cpu: dim=1"


def test_native_message_loses_its_cpp_trace(planted):
    trigger = planted[2]["native"]["stages"][0]
    assert trigger["message"] == "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor"


def test_history_stores_every_run(planted):
    root, _, results, _ = planted
    with sqlite3.connect(root / "catalog.db") as db:
        db.row_factory = sqlite3.Row
        rows = {row["slug"]: dict(row) for row in db.execute("select * from reproduction_runs")}
    assert set(rows) == set(results)
    row = rows["wrong-file"]
    assert row["verdict"] == "wrong-error" and "raise site" in row["reason"]
    assert (row["library"], row["library_version"]) == ("hanlp", "2.1.5")
    assert row["python"] and row["ran_at"] == "local" and row["started_at"].endswith("Z")
    assert row["path"] == "verifications/wrong-file/" + row["environment"] + ".json" and (root / row["path"]).is_file()
    assert row["cuda_device_count"] == results["wrong-file"]["environment"]["cuda_device_count"]
    assert json.loads(row["stages"])[0]["exceptionClass"] == "ValueError"


def test_seed_is_verified(seeded):
    _, _, results, _, _ = seeded
    seed = results[SEED_SLUG]
    assert seed["verdict"] == "verified", seed["reason"]
    assert seed["reason"].startswith("ValueError raised at hanlp/components/taggers/tagger.py:37;")
    assert seed["drift"] is None
    trigger, *claims = seed["stages"]
    assert (trigger["outcome"], trigger["message"]) == ("raised", "DataParallel not supported when CRF is used")
    assert claims and all(stage["outcome"] == "returned" for stage in claims)
    assert seed["claims"] and all(claim["verdict"] == "verified" for claim in seed["claims"])


def test_needs_two_gpus_is_skipped(seeded):
    _, _, results, _, _ = seeded
    result = results["needs-two-gpus"]
    found = result["environment"]["cuda_device_count"]
    if found >= 2:
        pytest.skip("this machine has two CUDA devices")
    assert result["verdict"] == "skipped"
    assert result["reason"] == f"needs 2 CUDA devices, found {found}"
    assert [stage["outcome"] for stage in result["stages"]] == ["not-run"]
    assert [claim["verdict"] for claim in result["claims"]] == ["not-run"]


def test_verified_and_skipped_exit_0(seeded):
    assert seeded[1] == 0


def test_json_shape(seeded):
    seed = seeded[2][SEED_SLUG]
    assert {"slug", "verdict", "reason", "claims", "failed_claim", "drift", "stages", "environment", "expected", "started_at", "seconds"} <= set(seed)
    for stage in seed["stages"]:
        assert {"stage", "outcome", "exception_class", "message", "raise_site", "seconds", "variant"} <= set(stage)
    env = seed["environment"]
    assert {"python", "torch", "library", "cuda_device_count", "cuda_devices", "packages"} <= set(env)
    assert "host" not in env
    assert env["library"]["distribution"] == "hanlp" and env["library"]["version"] == "2.1.5"
    assert env["torch"].startswith("2.") and isinstance(env["cuda_devices"], list)


def test_parent_never_imports_torch(seeded):
    if seeded[4]:
        pytest.skip("torch was imported by another test module before")
    assert "torch" not in sys.modules


def test_strict_fails_on_skipped(seeded):
    root = seeded[0]
    assert run_cli("reproduce", "needs-two-gpus", root=root).exit_code == 0
    result = run_cli("reproduce", "--strict", "needs-two-gpus", root=root)
    assert result.exit_code == 1
    assert "skipped" in result.stdout and "--strict" in result.stdout


def test_build_keeps_runs_and_sets_last_verdict(seeded, tmp_path):
    shutil.copytree(seeded[0], tmp_path / "root")
    root = tmp_path / "root"
    with sqlite3.connect(root / "catalog.db") as db:
        runs = db.execute("select count(*) from reproduction_runs").fetchone()[0]
    assert runs >= 2
    assert run_cli("build", "--trust-unsigned", root=root).exit_code == 0  # local, unsigned runs
    assert run_cli("build", "--full", "--trust-unsigned", root=root).exit_code == 0
    with sqlite3.connect(root / "catalog.db") as db:
        assert db.execute("select count(*) from reproduction_runs").fetchone()[0] == runs
        verdict = db.execute("select lastVerdict, lastVerifiedAt from records where slug = ?", [SEED_SLUG]).fetchone()
    assert verdict[0] == "verified" and verdict[1]


def test_runs_after_a_build_update_last_verdict(tmp_path):
    write_catalog(tmp_path, [Case("needs-two-gpus", "needs_two_gpus.py", {}, "skipped", "")])
    assert run_cli("build", root=tmp_path).exit_code == 0
    run_cli("reproduce", "--trust-unsigned", "needs-two-gpus", root=tmp_path)
    with sqlite3.connect(tmp_path / "catalog.db") as db:
        assert db.execute("select lastVerdict from records").fetchone()[0] == "skipped"


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give record SLUGs or --all"),
        (["--all", SEED_SLUG], "give record SLUGs or --all"),
        (["no-such-record"], "no record 'no-such-record'"),
        (["../escape"], "no record '../escape'"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, message):
    (tmp_path / "records").mkdir()
    result = run_cli("reproduce", *args, root=tmp_path)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (tmp_path / "catalog.db").exists()


def test_command_imports_without_torch():
    code = "import sys, errkb.cli, errkb.reproduce.harness; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_probe_counts_cuda_devices_with_torch():
    from errkb.reproduce import isolate

    found = json.loads(subprocess.run([sys.executable, str(isolate.PROBE)], capture_output=True, check=True).stdout)
    assert found["torch"].startswith("2.") and found["cuda_device_count"] == len(found["cuda_devices"])


def test_the_table_for_people_shows_what_was_proven(tmp_path):
    # A torch-only planted record of its own: the seed's hanlp reproduction costs minutes on a busy machine.
    write_catalog(tmp_path, [next(case for case in CASES if case.slug == "native")])
    result = run_cli("reproduce", "native", root=tmp_path)
    assert result.exit_code == 0
    row = next(line for line in result.stdout.splitlines() if line.startswith("native "))
    assert row.split()[1] == "verified"
    assert "RuntimeError at aten/src/ATen/native/PackedSequence.cpp:" in row and ", torch 2.13.0" in row and "claims 1/1" in row
    assert "1 run(s): 1 verified; ok" in result.stdout


def test_only_runs_that_reached_an_environment_leave_a_result_file(planted):
    root = planted[0]
    written = {path.name for path in (root / "verifications").iterdir()}
    assert {"does-nothing", "wrong-class", "needs-cuda-build"} <= written  # judged in (or skipped by) this environment
    # Problems of the files themselves, the same anywhere: reported, never kept as an environment's result.
    assert not written & {"broken", "needs-not-literal", "no-reproduction", "unknown-library"}
