"""From what a claim's stage did to that claim's verdict. Pure functions over the runner's JSON.

A claim is one thing a record tells its reader: a solution, or a code field (exampleFix, validationCode,
typeGuard, tryCatchPattern). What a code field did comes from the runner's log of `errkb_record` calls
(`executed`), never from the reproduction's source text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Record
from .compare import CLAIM_FAILED, FIX_FAILED, VERIFIED, Observed, judge_fix, observe_exception, quote
from .contract import GUARDS, Claim
from .errkb_record import is_config
from .libraries import Library

VIOLATIONS = ("refused", "replaced")  # errkb_record refused the names a stage passed, or the field replaced a KEEP one


@dataclass
class ClaimVerdict:
    verdict: str
    reason: str
    failure: str | None = None  # how a failed claim is named in the run's headline, when not by its label


def judge(claim: Claim, result: dict, record: Record, library: Library, documented: Observed,
          trigger_result: dict | None = None) -> ClaimVerdict:
    if claim.kind == "solution":
        judged = judge_fix(result, record, library, documented)
        reason = judged.reason.replace("fix()", f"{claim.function}()")
        return ClaimVerdict(judged.verdict if not judged.ok else VERIFIED, reason if not judged.ok else f"{claim.function}() completed")
    entries = [entry for entry in result.get("executed") or [] if entry.get("field") == claim.kind]
    violation = next((entry for entry in entries if entry.get("outcome") in VIOLATIONS), None)
    if violation:
        return ClaimVerdict(CLAIM_FAILED, f"{claim.kind}: {(violation.get('exception') or {}).get('message')}")
    if claim.kind == "tryCatchPattern":
        return _try_catch(claim, result, entries, record, library)
    exc = result.get("exception")
    if claim.kind in GUARDS and entries:
        # A stage that asserts what the guard said fails with an AssertionError; the guard's own log says why.
        judged = _guard(claim, entries)
        if judged.verdict != VERIFIED or exc is None:
            return judged
    if exc is not None:
        seen = observe_exception(exc, record, library)
        verdict = FIX_FAILED if claim.kind == "exampleFix" else CLAIM_FAILED
        return ClaimVerdict(verdict, f"{claim.kind}: {claim.function}() raised {seen.summary()}")
    if not entries:
        return ClaimVerdict(CLAIM_FAILED, f"{claim.kind} was not executed: {claim.function}() never ran the record's text")
    if claim.kind in GUARDS:
        return _guard(claim, entries)
    return _example_fix(claim, entries, record, trigger_result)


def _guard(claim: Claim, entries: list[dict]) -> ClaimVerdict:
    outcomes = [entry.get("outcome") for entry in entries if entry.get("action") == "check"]
    if "flagged" not in outcomes:
        return ClaimVerdict(CLAIM_FAILED, f"{claim.kind} does not flag the trigger's situation")
    if "passed" not in outcomes:
        return ClaimVerdict(CLAIM_FAILED, f"{claim.kind} does not pass the fixed situation")
    return ClaimVerdict(VERIFIED, f"{claim.kind} flagged the trigger's situation and passed the fixed one")


def _example_fix(claim: Claim, entries: list[dict], record: Record, trigger_result: dict | None) -> ClaimVerdict:
    ran = [e for e in entries if e.get("section") in (None, "after") and e.get("outcome") in ("ran", "parsed")]
    if not ran:
        return ClaimVerdict(CLAIM_FAILED, f"{claim.kind}: its fix (the whole text or its '# after' part) was not executed")
    if is_config(record.exampleFix or ""):
        before = [
            e for e in (trigger_result or {}).get("executed") or []
            if e.get("field") == "exampleFix" and e.get("section") == "before" and e.get("outcome") == "parsed"
        ]
        if not before:
            return ClaimVerdict(CLAIM_FAILED, "exampleFix: trigger() does not run its '# before' configuration")
        return ClaimVerdict(VERIFIED, "exampleFix: trigger() ran its '# before' configuration, the demonstration its '# after' one")
    return ClaimVerdict(VERIFIED, f"exampleFix: its {'after part' if ran[0].get('section') else 'text'} ran as the fix")


def _try_catch(claim: Claim, result: dict, entries: list[dict], record: Record, library: Library) -> ClaimVerdict:
    exc = result.get("exception")
    if exc is not None:
        seen = observe_exception(exc, record, library)
        what = "did not catch the documented error" if not seen.problems else "raised"
        return ClaimVerdict(CLAIM_FAILED, f"tryCatchPattern {what}: {seen.summary()}")
    if not entries:
        return ClaimVerdict(CLAIM_FAILED, f"tryCatchPattern was not executed: {claim.function}() never ran the record's text")
    caught = [exception for entry in entries for exception in entry.get("caught") or []]
    if not caught:
        return ClaimVerdict(CLAIM_FAILED, "tryCatchPattern: no exception reached its try block (the situation is not the trigger's)")
    seen = observe_exception(caught[0], record, library)
    if seen.problems:
        return ClaimVerdict(CLAIM_FAILED, f"tryCatchPattern caught the wrong error: {'; '.join(seen.problems)}")
    return ClaimVerdict(VERIFIED, f"tryCatchPattern caught the real {seen.cls} raised at {seen.site} and recovered")


def judge_valid_inputs(field: str, valid: dict[str, str], result: dict, record: Record, library: Library) -> ClaimVerdict:
    """The negative controls of one guard: it must pass every valid situation VALID declares."""
    entries = {e.get("valid"): e for e in result.get("executed") or [] if e.get("field") == field and e.get("valid")}
    for name in valid:
        entry = entries.get(name)
        if entry is None or entry.get("outcome") == "passed":
            continue
        failure = f"{field} rejects a valid input ({name})"
        if not entry.get("examples"):
            return ClaimVerdict(CLAIM_FAILED, f"VALID[{name!r}] gave no situation to check", failure)
        exc = entry.get("exception")
        how = "flagged" if entry.get("outcome") == "flagged" else "crashed on"
        said = f" with {exc.get('class')}: {quote(exc.get('message') or '')}" if exc else (
            f" ({entry['expr']} was false)" if entry.get("expr") else "")
        count = f" ({entry.get('failures')} of {entry['examples']} situations rejected)" if entry["examples"] > 1 else ""
        return ClaimVerdict(CLAIM_FAILED, f"it {how} {entry.get('input') or 'the situation'}{said}{count}", failure)
    exc = result.get("exception")
    if exc is not None:
        seen = observe_exception(exc, record, library)
        return ClaimVerdict(CLAIM_FAILED, f"{field}: its valid inputs could not be checked: {seen.summary()}")
    missing = [name for name in valid if name not in entries]
    if missing:
        return ClaimVerdict(CLAIM_FAILED, f"{field} was not run on the valid input(s) {', '.join(missing)}")
    checked = sum(entries[name].get("examples") or 0 for name in valid)
    return ClaimVerdict(VERIFIED, f"passed all {checked} valid situation(s) ({', '.join(valid)})")
