"""Issue 18's contract, end to end on planted records: real `errkb reproduce` runs (real subprocesses, real torch,
real Hypothesis) in a temporary catalog, each planted defect caught by its own check.

- VALID: a guard must pass every valid situation the reproduction declares (negative controls); one that flags a
  valid input, or crashes on one, fails its claim as `validationCode rejects a valid input (<name>)`.
- CODE_NAMES / KEEP: a code field reads only the user's names its reproduction declares, a stage passes it only
  those, and the fix leaves the user's objects listed in KEEP in place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from reproduce_support import CPP_EXAMPLE, Case, write_catalog

pytestmark = pytest.mark.xdist_group("reproduce")

NATIVE = json.loads(CPP_EXAMPLE.read_text(encoding="utf-8"))["record"]
GOOD_GUARD = "import torch\nassert torch.as_tensor(lengths).dim() == 1, 'lengths must be one length per sequence (1-D)'"
GUARDED = {
    "solutions": ["Pass one length per sequence, a 1-D tensor"],
    "exampleFix": None, "typeGuard": None, "tryCatchPattern": None, "validationCode": GOOD_GUARD,
}


def guarded(validation_code: str) -> dict:
    return dict(GUARDED, validationCode=validation_code)


GOOD_FIX = ("# before\npacked = pack_padded_sequence(padded, lengths, batch_first=True)\n"
            "# after\nlengths = torch.as_tensor(lengths).reshape(-1)\npacked = pack_padded_sequence(padded, lengths, batch_first=True)")


def fixed(example_fix: str) -> dict:
    return dict(GUARDED, validationCode=None, exampleFix=example_fix)


CASES = [
    Case("guard-holds", "guard_valid_inputs.py", GUARDED, "verified", "2 claim(s) held"),
    Case("guard-rejects-int32", "guard_valid_inputs.py",
         guarded("import torch\nassert torch.as_tensor(lengths).dim() == 1\nassert torch.as_tensor(lengths).dtype == torch.int64, 'lengths must be int64'"),
         "claim-failed", "validationCode rejects a valid input (int32-lengths): it flagged {lengths: Tensor(shape=(2,), dtype=torch.int32"),
    Case("guard-crashes-on-list", "guard_valid_inputs.py",
         guarded("assert lengths.dim() == 1, 'lengths must be 1-D'"),
         "claim-failed", "validationCode rejects a valid input (python-list): it crashed on {lengths: [3, 2]} with AttributeError"),
    Case("guard-rejects-generated", "guard_valid_inputs.py",
         guarded(GOOD_GUARD + "\nassert len(lengths) > 1, 'a batch of one sequence'"),
         "claim-failed", "validationCode rejects a valid input (generated-batches): it flagged {lengths: Tensor(shape=(1,), dtype=torch.int64, values=[1])}"),
    Case("guard-without-valid", "guard_valid_inputs.py", GUARDED, "claim-failed",
         "validationCode: the record has validationCode, the reproduction declares no valid inputs for it"),
    Case("fix-stands-alone", "example_fix_names.py", fixed(GOOD_FIX), "verified", "2 claim(s) held"),
    Case("fix-reads-undeclared", "example_fix_names.py",
         fixed(GOOD_FIX.replace("pack_padded_sequence(padded,", "pack_padded_sequence(checkpoint['padded'],")),
         "claim-failed", "exampleFix: exampleFix reads checkpoint in its '# after' part, which it neither defines nor "
                         "imports and CODE_NAMES['exampleFix'] does not declare"),
    Case("fix-passed-undeclared", "example_fix_names.py", fixed(GOOD_FIX), "claim-failed",
         "exampleFix: the stage passes exampleFix model, which CODE_NAMES['exampleFix'] does not declare"),
    Case("fix-replaces-the-batch", "example_fix_names.py",
         fixed(GOOD_FIX.replace("# after\n", "# after\npadded = torch.zeros(2, 3, 1)\n")),
         "claim-failed", "exampleFix: exampleFix replaced the user's padded (KEEP)"),
]


def reproduce_json(root: Path, *args) -> tuple[int, dict]:
    result = run_cli("reproduce", "--json", *args, root=root)
    items = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result.exit_code, {item["slug"]: item for item in items}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("contract")
    write_catalog(root, [Case(c.slug, c.planted, c.changes, c.verdict, c.reason, base=NATIVE) for c in CASES])
    no_valid = root / "reproductions" / "guard-without-valid.py"
    text = no_valid.read_text(encoding="utf-8")
    no_valid.write_text(text.replace("\nVALID = {", "\nNOT_VALID = {", 1), encoding="utf-8")
    passes_more = root / "reproductions" / "fix-passed-undeclared.py"
    text = passes_more.read_text(encoding="utf-8")
    passes_more.write_text(text.replace('"lengths": torch.tensor([[3], [2]])}', '"lengths": torch.tensor([[3], [2]]), "model": None}'), encoding="utf-8")
    code, results = reproduce_json(root, "--all", "-j", "2")
    return root, code, results


@pytest.mark.parametrize("case", CASES, ids=[case.slug for case in CASES])
def test_planted_contract_case(planted, case):
    result = planted[2][case.slug]
    assert result["verdict"] == case.verdict, result["reason"]
    assert case.reason in result["reason"], result["reason"]


def test_a_rejected_valid_input_names_the_claim_and_the_input(planted):
    result = planted[2]["guard-rejects-int32"]
    assert result["failed_claim"] == "validationCode rejects a valid input (int32-lengths)"
    verdicts = {c["kind"]: c["verdict"] for c in result["claims"]}
    assert verdicts == {"solution": "verified", "validationCode": "claim-failed"}
    stage = result["stages"][-1]
    assert stage["stage"] == "valid inputs"
    logged = {e["valid"]: e for e in stage["executed"]}
    assert logged["python-list"]["outcome"] == "passed"
    assert (logged["int32-lengths"]["outcome"], logged["int32-lengths"]["examples"]) == ("flagged", 2)


def test_every_valid_input_is_checked_and_reported(planted):
    result = planted[2]["guard-holds"]
    stage = result["stages"][-1]
    assert [(e["valid"], e["outcome"]) for e in stage["executed"]] == [
        ("python-list", "passed"), ("int32-lengths", "passed"), ("generated-batches", "passed"),
    ]
    generated = stage["executed"][2]["examples"]
    assert generated > 10  # Hypothesis drew many batches, not one
    claim = next(c for c in result["claims"] if c["kind"] == "validationCode")
    assert f"passed all {1 + 2 + generated} valid situation(s)" in claim["reason"]


def test_a_guard_without_valid_inputs_is_written_in_the_result_file(planted):
    root = planted[0]
    (path,) = (root / "verifications" / "guard-without-valid").glob("*.json")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["verdict"] == "claim-failed"
    assert any("declares no valid inputs" in problem for problem in written["contractProblems"])
    assert planted[2]["guard-holds"]["contract_problems"] == []


def test_validate_names_the_file_and_field_of_an_undeclared_read(planted):
    root = planted[0]
    result = run_cli("validate", str(root / "records" / "fix-reads-undeclared.json"), root=root)
    assert result.exit_code == 1
    assert "fix-reads-undeclared.json: $.record.exampleFix: exampleFix reads checkpoint" in result.stderr
    assert run_cli("validate", str(root / "records" / "fix-stands-alone.json"), root=root).exit_code == 0
