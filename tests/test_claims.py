"""errkb/reproduce/claims.py: each claim kind against each outcome of its stage, as the runner reports it; and
the trigger's own verdict (compare.judge_trigger), which every claim stands on.

Pure functions over the runner's JSON: the stage results here are what a reproduction's stage would log
(an exception with its class, bases and frames; `errkb_record` calls in `executed`), for the seed record.
"""

from __future__ import annotations

import json

import pytest

from conftest import CATALOG_SEED
from errkb.model import Envelope
from errkb.reproduce.claims import judge
from errkb.reproduce.compare import (
    CLAIM_FAILED, FIX_FAILED, NOT_REPRODUCED, VERIFIED, WRONG_ERROR, judge_trigger, observe_exception, observe_warning,
)
from errkb.reproduce.contract import Claim
from errkb.reproduce.libraries import Library

SITE = "/venv/site-packages/hanlp"
LIBRARY = Library(repo="hankcs/HanLP", package="hanlp", distribution="hanlp", location=SITE, version="2.1.5")
MESSAGE = "DataParallel not supported when CRF is used"


def seed(**changes):
    envelope = json.loads(CATALOG_SEED.read_text(encoding="utf-8"))
    envelope["record"].update(changes)
    return Envelope.model_validate(envelope).record


RECORD = seed()


def exception(cls="ValueError", message=MESSAGE, in_library=True) -> dict:
    """An exception as the runner describes it; raised at the record's line inside hanlp, or in user code."""
    frames = [["/work/train.py", 12, "main"]]
    if in_library:
        frames.append([f"{SITE}/components/taggers/tagger.py", 37, "build_criterion"])
    mro = {"ValueError": ["ValueError", "Exception", "BaseException"],
           "AssertionError": ["AssertionError", "Exception", "BaseException"],
           "KeyError": ["KeyError", "LookupError", "Exception", "BaseException"]}[cls]
    return {"class": cls, "mro": mro, "message": message, "frames": frames, "phase": "call"}


DOCUMENTED = observe_exception(exception(), RECORD, LIBRARY)


def stage(exc: dict | None = None, executed: list[dict] | None = None, warnings: list[dict] | None = None) -> dict:
    return {"exception": exc, "executed": executed or [], "warnings": warnings or []}


def check(field: str, outcome: str) -> dict:
    return {"field": field, "action": "check", "outcome": outcome}


def ran(field: str, section: str | None = None, outcome: str = "ran", caught: list[dict] | None = None) -> dict:
    return {"field": field, "action": "run", "section": section, "outcome": outcome, "caught": caught or []}


def verdict_of(kind: str, result: dict, record=RECORD, trigger_result: dict | None = None, documented=DOCUMENTED):
    claim = Claim(kind=kind, index=1 if kind == "solution" else None, function="demo")
    return judge(claim, result, record, LIBRARY, documented, trigger_result)


# -- solutions ------------------------------------------------------------------------------------------


def test_a_solution_that_completes_is_verified():
    judged = verdict_of("solution", stage())
    assert (judged.verdict, judged.reason) == (VERIFIED, "demo() completed")


@pytest.mark.parametrize("exc", [exception(), exception("KeyError", "'crf'", in_library=False)], ids=["documented", "other"])
def test_a_solution_that_raises_failed(exc):
    judged = verdict_of("solution", stage(exc))
    assert judged.verdict == FIX_FAILED
    assert judged.reason.startswith("demo() raised " + exc["class"])


def test_a_solution_that_still_emits_the_documented_warning_failed():
    record = seed(errorClass="UserWarning", errorType="deprecation", severity="warning")
    warning = {"class": "UserWarning", "mro": ["UserWarning", "Warning", "Exception", "BaseException"], "message": MESSAGE,
               "frames": [[f"{SITE}/components/taggers/tagger.py", 37, "build_criterion"]], "filename": "x.py", "lineno": 1}
    documented = observe_warning(warning, record, LIBRARY)
    judged = verdict_of("solution", stage(warnings=[warning]), record=record, documented=documented)
    assert judged.verdict == FIX_FAILED and "still emits the documented warning" in judged.reason
    other = dict(warning, message="something else entirely")
    assert verdict_of("solution", stage(warnings=[other]), record=record, documented=documented).verdict == VERIFIED


# -- exampleFix -----------------------------------------------------------------------------------------

CODE_FIX = "# before\nmodel = DataParallel(model)\n# after\nmodel = model.to('cuda:0')"
CONFIG_BEFORE = {"field": "exampleFix", "action": "config", "section": "before", "outcome": "parsed"}


def test_an_example_fix_whose_after_part_ran_is_verified():
    judged = verdict_of("exampleFix", stage(executed=[ran("exampleFix", "after")]), record=seed(exampleFix=CODE_FIX))
    assert (judged.verdict, judged.reason) == (VERIFIED, "exampleFix: its after part ran as the fix")
    whole = verdict_of("exampleFix", stage(executed=[ran("exampleFix")]), record=seed(exampleFix="model.to('cuda:0')"))
    assert (whole.verdict, whole.reason) == (VERIFIED, "exampleFix: its text ran as the fix")


def test_an_example_fix_whose_stage_raised_failed_the_fix():
    judged = verdict_of("exampleFix", stage(exception(), [ran("exampleFix", "after")]), record=seed(exampleFix=CODE_FIX))
    assert judged.verdict == FIX_FAILED and judged.reason.startswith("exampleFix: demo() raised ValueError")


def test_an_example_fix_that_never_ran_failed_its_claim():
    judged = verdict_of("exampleFix", stage(executed=[ran("validationCode")]), record=seed(exampleFix=CODE_FIX))
    assert judged.verdict == CLAIM_FAILED and "exampleFix was not executed" in judged.reason


def test_an_example_fix_that_ran_only_its_before_part_failed_its_claim():
    judged = verdict_of("exampleFix", stage(executed=[ran("exampleFix", "before")]), record=seed(exampleFix=CODE_FIX))
    assert judged.verdict == CLAIM_FAILED and "its '# after' part) was not executed" in judged.reason
    unparsed = verdict_of("exampleFix", stage(executed=[ran("exampleFix", "after", outcome="failed")]), record=seed(exampleFix=CODE_FIX))
    assert unparsed.verdict == CLAIM_FAILED


def test_a_config_example_fix_needs_the_trigger_to_run_its_before_part():
    after = {"field": "exampleFix", "action": "config", "section": "after", "outcome": "parsed"}
    with_before = verdict_of("exampleFix", stage(executed=[after]), trigger_result=stage(executed=[CONFIG_BEFORE]))
    assert with_before.verdict == VERIFIED and "trigger() ran its '# before' configuration" in with_before.reason
    without = verdict_of("exampleFix", stage(executed=[after]), trigger_result=stage())
    assert without.verdict == CLAIM_FAILED and "trigger() does not run its '# before' configuration" in without.reason


# -- validationCode and typeGuard -----------------------------------------------------------------------

GUARD_CODE = {"validationCode": "assert len(devices) == 1", "typeGuard": "def ok(x):\n    return isinstance(x, int)"}


@pytest.mark.parametrize("kind", ["validationCode", "typeGuard"])
def test_a_guard_that_flags_the_trigger_and_passes_the_fix_is_verified(kind):
    judged = verdict_of(kind, stage(executed=[check(kind, "flagged"), check(kind, "passed")]), record=seed(**{kind: GUARD_CODE[kind]}))
    assert (judged.verdict, judged.reason) == (VERIFIED, f"{kind} flagged the trigger's situation and passed the fixed one")


@pytest.mark.parametrize("kind", ["validationCode", "typeGuard"])
@pytest.mark.parametrize("outcomes, reason", [
    (["passed", "passed"], "does not flag the trigger's situation"),
    (["flagged", "flagged"], "does not pass the fixed situation"),
])
def test_a_guard_that_misjudges_a_situation_failed_its_claim(kind, outcomes, reason):
    result = stage(executed=[check(kind, outcome) for outcome in outcomes])
    judged = verdict_of(kind, result, record=seed(**{kind: GUARD_CODE[kind]}))
    assert (judged.verdict, judged.reason) == (CLAIM_FAILED, f"{kind} {reason}")
    # The stage's own assertion about it fails too: the guard's log says why, not the AssertionError.
    asserted = verdict_of(kind, dict(result, exception=exception("AssertionError", "guard", in_library=False)),
                          record=seed(**{kind: GUARD_CODE[kind]}))
    assert (asserted.verdict, asserted.reason) == (CLAIM_FAILED, f"{kind} {reason}")


@pytest.mark.parametrize("kind", ["validationCode", "typeGuard"])
def test_a_guard_that_judged_right_but_whose_stage_raised_failed_its_claim(kind):
    result = stage(exception(), [check(kind, "flagged"), check(kind, "passed")])
    judged = verdict_of(kind, result, record=seed(**{kind: GUARD_CODE[kind]}))
    assert judged.verdict == CLAIM_FAILED and judged.reason.startswith(f"{kind}: demo() raised ValueError")


@pytest.mark.parametrize("kind", ["validationCode", "typeGuard"])
def test_a_guard_that_never_ran_failed_its_claim(kind):
    judged = verdict_of(kind, stage(executed=[check("exampleFix", "flagged")]), record=seed(**{kind: GUARD_CODE[kind]}))
    assert (judged.verdict, judged.reason) == (CLAIM_FAILED, f"{kind} was not executed: demo() never ran the record's text")
    raised = verdict_of(kind, stage(exception("KeyError", "'devices'", in_library=False)), record=seed(**{kind: GUARD_CODE[kind]}))
    assert raised.verdict == CLAIM_FAILED and raised.reason.startswith(f"{kind}: demo() raised KeyError")


# -- tryCatchPattern ------------------------------------------------------------------------------------

TRY_CATCH = "try:\n    fit()\nexcept ValueError:\n    fit(devices=[0])"


def try_catch(result: dict):
    return verdict_of("tryCatchPattern", result, record=seed(tryCatchPattern=TRY_CATCH))


def test_a_try_catch_that_caught_the_documented_error_is_verified():
    judged = try_catch(stage(executed=[ran("tryCatchPattern", caught=[exception()])]))
    assert judged.verdict == VERIFIED
    assert judged.reason == "tryCatchPattern caught the real ValueError raised at hanlp/components/taggers/tagger.py:37 and recovered"


def test_a_try_catch_that_let_the_documented_error_through_failed_its_claim():
    judged = try_catch(stage(exception(), [ran("tryCatchPattern")]))
    assert judged.verdict == CLAIM_FAILED and judged.reason.startswith("tryCatchPattern did not catch the documented error")


def test_a_try_catch_whose_stage_raised_another_error_failed_its_claim():
    judged = try_catch(stage(exception("KeyError", "'x'", in_library=False), [ran("tryCatchPattern")]))
    assert judged.verdict == CLAIM_FAILED and judged.reason.startswith("tryCatchPattern raised: KeyError")


def test_a_try_catch_that_never_ran_failed_its_claim():
    judged = try_catch(stage(executed=[ran("exampleFix")]))
    assert (judged.verdict, judged.reason) == (CLAIM_FAILED, "tryCatchPattern was not executed: demo() never ran the record's text")


def test_a_try_catch_that_caught_nothing_failed_its_claim():
    judged = try_catch(stage(executed=[ran("tryCatchPattern")]))
    assert judged.verdict == CLAIM_FAILED and "no exception reached its try block" in judged.reason


@pytest.mark.parametrize("caught, problem", [
    (exception("KeyError", "'crf'"), "class: expected ValueError, got KeyError"),
    (exception(message="CRF is fine"), "message: expected a match"),
    (exception(in_library=False), "raise site: expected hanlp/components/taggers/tagger.py inside hanlp"),
], ids=["class", "message", "raise site"])
def test_a_try_catch_that_caught_the_wrong_error_failed_its_claim(caught, problem):
    judged = try_catch(stage(executed=[ran("tryCatchPattern", caught=[caught])]))
    assert judged.verdict == CLAIM_FAILED
    assert judged.reason.startswith("tryCatchPattern caught the wrong error: ") and problem in judged.reason


# -- the trigger (compare.judge_trigger), which every claim stands on ----------------------------------


def test_a_trigger_that_raises_the_documented_error_reproduces_it():
    judged = judge_trigger(stage(exception()), RECORD, LIBRARY)
    assert judged.ok and judged.reason == "ValueError raised at hanlp/components/taggers/tagger.py:37"


def test_a_trigger_that_does_not_raise_is_not_reproduced():
    judged = judge_trigger(stage(), RECORD, LIBRARY)
    assert (judged.ok, judged.verdict) == (False, NOT_REPRODUCED)
    assert judged.reason.startswith("trigger() returned without raising ValueError")


def test_a_trigger_that_raises_another_error_is_the_wrong_error():
    judged = judge_trigger(stage(exception("KeyError", "'crf'")), RECORD, LIBRARY)
    assert (judged.ok, judged.verdict) == (False, WRONG_ERROR)
    assert "class: expected ValueError, got KeyError" in judged.reason


# -- the negative controls of a guard: judge_valid_inputs over the valid-inputs stage's log ---------------------

VALID = {"ignore-index": "valid_ignore_index", "unbatched": "valid_unbatched"}


def valid_entry(name: str, outcome: str | None = "passed", examples: int = 1, failures: int = 0, **more) -> dict:
    return {"field": "validationCode", "action": "check", "valid": name, "outcome": outcome, "examples": examples,
            "failures": failures, **more}


def judge_valid(*entries: dict, exc: dict | None = None):
    from errkb.reproduce.claims import judge_valid_inputs

    return judge_valid_inputs("validationCode", VALID, stage(exc, list(entries)), RECORD, LIBRARY)


def test_a_guard_that_passes_every_valid_situation_is_verified():
    verdict = judge_valid(valid_entry("ignore-index"), valid_entry("unbatched", examples=60))
    assert verdict.verdict == VERIFIED and verdict.reason == "passed all 61 valid situation(s) (ignore-index, unbatched)"


@pytest.mark.parametrize("entry, reason", [
    (valid_entry("unbatched", "flagged", input="x of shape (5,)", expr="x.dim() == 3"),
     "it flagged x of shape (5,) (x.dim() == 3 was false)"),
    (valid_entry("unbatched", "crashed", input="a PackedSequence",
                 exception={"class": "AttributeError", "message": "'PackedSequence' object has no attribute 'dim'"}),
     "it crashed on a PackedSequence with AttributeError: "),
    (valid_entry("unbatched", "flagged", examples=60, failures=2, input="x of shape (0,)"),
     "it flagged x of shape (0,) (2 of 60 situations rejected)"),
    (valid_entry("unbatched", None, examples=0), "VALID['unbatched'] gave no situation to check"),
])
def test_a_guard_that_rejects_a_valid_situation_failed_its_claim(entry, reason):
    verdict = judge_valid(valid_entry("ignore-index"), entry)
    assert verdict.verdict == CLAIM_FAILED
    assert verdict.failure == "validationCode rejects a valid input (unbatched)"
    assert verdict.reason.startswith(reason), verdict.reason


def test_valid_situations_the_stage_never_reached_fail_the_claim():
    missing = judge_valid(valid_entry("ignore-index"))
    assert missing.verdict == CLAIM_FAILED and missing.reason == "validationCode was not run on the valid input(s) unbatched"
    crashed = judge_valid(valid_entry("ignore-index"), exc=exception("KeyError", "'unbatched'", in_library=False))
    assert crashed.verdict == CLAIM_FAILED and "its valid inputs could not be checked" in crashed.reason


def test_another_guards_entries_do_not_count_for_this_one():
    other = dict(valid_entry("unbatched"), field="typeGuard")
    verdict = judge_valid(valid_entry("ignore-index"), other)
    assert verdict.verdict == CLAIM_FAILED and "not run on the valid input(s) unbatched" in verdict.reason
