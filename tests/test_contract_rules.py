"""Issue 18's contract literals, read without importing the reproduction: VALID, GUARD_CALL (and what they say
about a record's guards). The end-to-end checks on planted records are in test_reproduce_contract.py."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest
from hypothesis import strategies as st

from errkb.reproduce import errkb_record, runner
from errkb.reproduce.codenames import checked_text, free_names
from errkb.reproduce.contract import (
    ContractError, contract_problems, guard_gaps, name_gaps, only_defines, read_contract,
)

HEAD = 'NEEDS = {}\nSOLUTIONS = {1: "fix"}\nCODE = {"validationCode": "guard"}\ndef trigger(): pass\ndef fix(): pass\ndef guard(): pass\n'


def write(tmp_path, source: str):
    path = tmp_path / "repro.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def record(**fields):
    base = {"solutions": ["one"], "exampleFix": None, "validationCode": None, "typeGuard": None, "tryCatchPattern": None}
    return SimpleNamespace(**{**base, **fields})


def test_valid_and_guard_call_are_read(tmp_path):
    contract = read_contract(write(tmp_path, HEAD + textwrap.dedent("""
        VALID = {"ignore-index-default": "valid_ignore", "unbatched": "valid_unbatched"}
        GUARD_CALL = {"typeGuard": "is_valid(lengths)"}
        def valid_ignore(): pass
        def valid_unbatched(): pass
    """)))
    assert contract.valid == {"ignore-index-default": "valid_ignore", "unbatched": "valid_unbatched"}
    assert contract.guard_call == {"typeGuard": "is_valid(lengths)"}


@pytest.mark.parametrize(
    "source, message",
    [
        ('VALID = {"a": "nowhere"}\n', "no top-level def nowhere() (named in VALID)"),
        ("VALID = {}\n", "VALID must be a non-empty dict"),
        ('VALID = {"a": valid}\n', "VALID must be a literal dict"),
        ('VALID = {"a\\nb": "fix"}\n', "VALID key 'a\\nb' must be a short name"),
        ('VALID = {"a": "not a name"}\n', "VALID['a'] must be a function name"),
        ('GUARD_CALL = {"exampleFix": "f(x)"}\n', "GUARD_CALL has unknown field 'exampleFix'"),
        ('GUARD_CALL = {"typeGuard": "f(x"}\n', "GUARD_CALL['typeGuard'] is not a Python expression"),
        ('GUARD_CALL = {"typeGuard": 3}\n', "GUARD_CALL['typeGuard'] must be an expression (a string)"),
    ],
)
def test_contract_literal_errors_say_what_is_wrong(tmp_path, source, message):
    with pytest.raises(ContractError) as caught:
        read_contract(write(tmp_path, HEAD + source))
    assert message in str(caught.value)


def test_valid_without_a_guard_and_a_call_for_a_missing_guard_are_contract_problems(tmp_path):
    contract = read_contract(write(tmp_path, HEAD + 'VALID = {"a": "fix"}\nGUARD_CALL = {"typeGuard": "f(x)"}\n'))
    problems = contract_problems(contract, record(validationCode="assert x"))
    assert problems == ["GUARD_CALL gives a call for typeGuard, but the record has none"]
    no_guard = contract_problems(
        read_contract(write(tmp_path, HEAD.replace('CODE = {"validationCode": "guard"}\n', "") + 'VALID = {"a": "fix"}\n')),
        record(),
    )
    assert no_guard == ["VALID declares valid inputs, but the record has no validationCode or typeGuard to run on them"]


def test_a_guard_without_valid_inputs_is_a_gap(tmp_path):
    contract = read_contract(write(tmp_path, HEAD))
    gaps = guard_gaps(contract, record(validationCode="assert x.dim() == 1"))
    assert list(gaps) == ["validationCode"] and "declares no valid inputs" in gaps["validationCode"]


def test_a_predicate_without_a_call_is_a_gap(tmp_path):
    contract = read_contract(write(tmp_path, HEAD.replace('"validationCode"', '"typeGuard"') + 'VALID = {"a": "fix"}\n'))
    predicate = "def is_valid(lengths):\n    return lengths.dim() == 1"
    assert "GUARD_CALL['typeGuard'] must give the call" in guard_gaps(contract, record(typeGuard=predicate))["typeGuard"]
    assert guard_gaps(contract, record(typeGuard="assert lengths.dim() == 1")) == {}


@pytest.mark.parametrize(
    "code, defines",
    [
        ("import torch\ndef f(x):\n    return x", True),
        ('"""doc"""\nclass Checked:\n    pass', True),
        ("import torch", False),
        ("def f(x):\n    return x\nassert f(y)", False),
        ("assert x", False),
    ],
)
def test_only_defines(code, defines):
    assert only_defines(code) is defines


@pytest.mark.parametrize(
    "code, names",
    [
        ("model = model.to(device)", ["model", "device"]),
        ("if h is not None:\n    h = h.detach()", ["h"]),
        ("import torch\nstate = torch.load(path)\nmodel.load_state_dict(checkpoint['model'])", ["path", "model", "checkpoint"]),
        ("def f(x):\n    return x + y\nz = [f(a) for a in xs if a > k]", ["xs", "k", "y"]),
        ("try:\n    import apex\nexcept ImportError as exc:\n    print(exc)\nprint(len(exc.args))", ["exc"]),
        ("import torch.nn as nn\nlayer = nn.Linear(4, 3)\nprint(layer, __name__)", []),
    ],
)
def test_free_names_follow_python_scoping(code, names):
    assert free_names(code) == names


def test_an_example_fix_is_checked_on_its_after_part():
    fix = "# before\nmodel.load_state_dict(checkpoint)\n# after\nstate = torch.load(path)\nmodel.load_state_dict(state)"
    assert checked_text("exampleFix", fix) == "state = torch.load(path)\nmodel.load_state_dict(state)"
    assert checked_text("validationCode", "assert x") == "assert x"
    assert checked_text("exampleFix", '# before\n{"crf": true}\n# after\n{"crf": false}') is None  # a config diff


def test_undeclared_and_undeclarable_names_are_gaps(tmp_path):
    head = HEAD.replace('"validationCode": "guard"', '"exampleFix": "guard"')
    fix = "# before\nx = 1\n# after\nmodel.load_state_dict(checkpoint['model'])"
    contract = read_contract(write(tmp_path, head + 'CODE_NAMES = {"exampleFix": ["model"]}\n'))
    gaps = name_gaps(contract, record(exampleFix=fix))
    assert gaps["exampleFix"].startswith("exampleFix reads checkpoint in its '# after' part, which it neither defines")
    assert name_gaps(contract, record(exampleFix=fix.replace("checkpoint['model']", "torch.load(path)").replace(
        "# after\n", "# after\nimport torch\npath = 'model.pt'\n"))) == {}
    undeclared = name_gaps(read_contract(write(tmp_path, head)), record(exampleFix=fix))
    assert "does not declare the user's names it may read (CODE_NAMES['exampleFix']; its '# after' part reads model, checkpoint)" in undeclared["exampleFix"]


def test_code_names_and_keep_must_fit_the_record(tmp_path):
    contract = read_contract(write(tmp_path, HEAD + 'CODE_NAMES = {"validationCode": ["x"], "typeGuard": ["y"]}\nKEEP = ["model"]\n'))
    assert contract_problems(contract, record(validationCode="assert x")) == [
        "CODE_NAMES declares names for typeGuard, but the record has none",
        "KEEP names 'model', which no CODE_NAMES entry declares (no code field receives it)",
    ]
    with pytest.raises(ContractError, match="CODE_NAMES\\['validationCode'\\] must be a list of names"):
        read_contract(write(tmp_path, HEAD + 'CODE_NAMES = {"validationCode": "x"}\n'))
    with pytest.raises(ContractError, match="KEEP must be a list of names"):
        read_contract(write(tmp_path, HEAD + 'KEEP = "model"\n'))


def test_the_runtime_refuses_undeclared_names_and_replaced_objects():
    errkb_record.load({"exampleFix": "# after\nmodel = object()", "validationCode": "assert x"},
                      {"exampleFix": ["model"], "validationCode": ["x"]}, ["model"])
    try:
        with pytest.raises(errkb_record.ContractViolation, match="the stage passes validationCode y, which CODE_NAMES"):
            errkb_record.check("validationCode", {"x": 1, "y": 2})
        assert errkb_record.check("validationCode", {"x": 1})
        with pytest.raises(errkb_record.ContractViolation, match="exampleFix replaced the user's model \\(KEEP\\)"):
            errkb_record.run("exampleFix", {"model": object()}, section="after")
        assert [entry["outcome"] for entry in errkb_record.EXECUTED] == ["refused", "passed", "replaced"]
    finally:
        errkb_record.load({})
        errkb_record.EXECUTED.clear()


def test_valid_inputs_are_checked_per_guard_and_a_generated_rejection_is_shrunk():
    """The runner's valid-inputs stage in process: lists, dicts and a Hypothesis strategy, one log entry each."""
    errkb_record.load({"validationCode": "assert len(lengths) > 1, 'a batch of one'"}, {"validationCode": ["lengths"]})
    module = SimpleNamespace(
        pairs=lambda: [{"lengths": [3, 2]}, {"lengths": [2, 2], "unused": 0}],
        generated=lambda: st.lists(st.integers(1, 3), min_size=1, max_size=5).map(lambda values: {"lengths": values}),
    )
    try:
        runner.check_valid_inputs(module, errkb_record, {"pairs": "pairs", "generated": "generated"}, {})
        pairs, generated = errkb_record.EXECUTED
        assert (pairs["valid"], pairs["outcome"], pairs["examples"]) == ("pairs", "passed", 2)
        assert (generated["valid"], generated["outcome"]) == ("generated", "flagged")
        assert generated["input"] == "{lengths: [1]}"  # shrunk to the smallest batch of one
    finally:
        errkb_record.load({})
        errkb_record.EXECUTED.clear()


def test_a_rejected_input_is_shown_without_the_names_the_guard_defined():
    errkb_record.load({"validationCode": "bad = lengths[0] < 2\nassert not bad, 'too short'"})
    module = SimpleNamespace(short=lambda: {"lengths": [1, 3]})
    try:
        runner.check_valid_inputs(module, errkb_record, {"short": "short"}, {})
        (entry,) = errkb_record.EXECUTED
        assert (entry["outcome"], entry["input"]) == ("flagged", "{lengths: [1, 3]}")
    finally:
        errkb_record.load({})
        errkb_record.EXECUTED.clear()
