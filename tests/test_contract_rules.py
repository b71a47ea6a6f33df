"""Issue 18's contract literals, read without importing the reproduction: VALID, GUARD_CALL (and what they say
about a record's guards). The end-to-end checks on planted records are in test_reproduce_contract.py."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest

from errkb.reproduce.contract import ContractError, contract_problems, guard_gaps, only_defines, read_contract

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
