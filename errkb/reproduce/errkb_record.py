"""The record's own code fields, for a reproduction stage to run: `import errkb_record as record`.

The runner loads this file under the name `errkb_record` before it imports a reproduction, with the record's
`exampleFix`, `validationCode`, `typeGuard` and `tryCatchPattern` texts. A stage runs those texts, never a copy:

    record.run("exampleFix", {"model": model, "x": x}, section="after")   # exec the "# after" part
    record.config("exampleFix", "before")             # a config diff: the JSON of its "# before" part
    record.check("validationCode", names)             # a guard: False when it flags the situation, True when it passes
    record.check("typeGuard", names, expr="is_valid_lengths(lengths)")  # a predicate: its value decides
    record.run("tryCatchPattern", names)              # exceptions that reach the snippet's try are recorded

Every call is logged in EXECUTED, which the runner hands to the harness: that, not the reproduction's source,
is how the harness knows a field ran and what it did. Standard library only (a stage pays for no errkb import).

Where the reproduction declares CODE_NAMES, a call may pass a field only the names declared for it (the user's
objects the text may read), and where it declares KEEP, `run` checks that those objects are the same objects
after the text ran (a fix that rebinds `model = nn.Linear(4, 3)` throws the user's model away). A call that
breaks either raises ContractViolation.
"""

from __future__ import annotations

import json
import re
import sys
import traceback

# A guard flags a situation by raising one of these from its own lines (an error from inside a library is not a
# flag: it means the guard itself broke, or let the documented error happen).
GUARD_FLAGS = (AssertionError, ValueError, TypeError, RuntimeError)
SECTION = re.compile(r"^\s*#\s*(before|after)\b", re.IGNORECASE)

FIELDS: dict[str, str] = {}
NAMES: dict[str, list[str]] = {}  # CODE_NAMES: field -> the names a stage may pass it
KEEP: list[str] = []
EXECUTED: list[dict] = []


class ContractViolation(Exception):
    """A stage passed a field names its reproduction does not declare, or the field replaced a name in KEEP."""


def describe(exc: BaseException) -> dict:
    """Replaced by the runner with its own description (class, MRO, message, frames)."""
    return {"class": type(exc).__name__, "message": str(exc)}


def load(fields: dict[str, str], names: dict[str, list[str]] | None = None, keep: list[str] | None = None) -> None:
    FIELDS.clear()
    FIELDS.update({name: text for name, text in fields.items() if isinstance(text, str) and text})
    NAMES.clear()
    NAMES.update(names or {})
    KEEP[:] = keep or []


def _admit(field: str, names: dict, entry: dict) -> None:
    """Refuse a namespace holding a name CODE_NAMES does not declare for the field."""
    if field not in NAMES:
        return
    extra = sorted(name for name in names if name not in NAMES[field] and name != "__builtins__")
    if extra:
        _refuse(entry, "refused", f"the stage passes {field} {', '.join(extra)}, which CODE_NAMES[{field!r}] does not "
                                  f"declare (declared: {', '.join(NAMES[field]) or 'none'})")


def _kept(field: str, before: dict, names: dict, entry: dict) -> None:
    """Refuse a run that replaced (or removed) one of the user's objects listed in KEEP."""
    replaced = [name for name in KEEP if name in before and names.get(name) is not before[name]]
    if replaced:
        _refuse(entry, "replaced", f"{field} replaced the user's {', '.join(replaced)} (KEEP): a fix must keep the "
                                   f"user's objects, not bind the name to a new one")


def _refuse(entry: dict, outcome: str, message: str) -> None:
    """Log the contract violation in the stage's EXECUTED entry, then raise it."""
    error = ContractViolation(message)
    entry["outcome"], entry["exception"] = outcome, describe(error)
    raise error


def text(field: str) -> str:
    if field not in FIELDS:
        raise LookupError(f"the record has no {field} (fields with code: {', '.join(sorted(FIELDS)) or 'none'})")
    return FIELDS[field]


def sections(code: str) -> list[tuple[str | None, str]]:
    """[(None | "before" | "after", code)]: the parts of a text cut at `# before ...` / `# after ...` lines."""
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in code.split("\n"):
        found = SECTION.match(line)
        if found:
            parts.append((found.group(1).lower(), []))
        else:
            parts[-1][1].append(line)
    return [(name, "\n".join(lines)) for name, lines in parts if name is not None or any(l.strip() for l in lines)]


def section_text(field: str, section: str | None) -> str:
    """The whole text (section None), or its "before" / "after" parts joined in order."""
    code = text(field)
    if section is None:
        return code
    if section not in ("before", "after"):
        raise ValueError(f"section must be 'before', 'after' or None, not {section!r}")
    chosen = [part for name, part in sections(code) if name == section]
    if not chosen:
        raise LookupError(f"{field} has no '# {section}' part")
    return "\n".join(chosen)


def is_config(code: str) -> bool:
    """A config diff: every before/after part is JSON (like the seed's `{"crf": true, "devices": [0]}`)."""
    parts = [part for name, part in sections(code) if name is not None]
    if not parts:
        return False
    try:
        for part in parts:
            json.loads(part)
    except ValueError:
        return False
    return True


def _filename(field: str, section: str | None) -> str:
    return f"<errkb record {field}{' ' + section if section else ''}>"


def run(field: str, namespace: dict | None = None, section: str | None = None) -> dict:
    """Execute the record's text (or its section) in `namespace`; return the namespace."""
    names = {} if namespace is None else namespace
    filename = _filename(field, section)
    entry = {"field": field, "action": "run", "section": section, "outcome": None, "caught": [], "exception": None}
    EXECUTED.append(entry)
    _admit(field, names, entry)
    kept = {name: names[name] for name in KEEP if name in names}
    code = compile(section_text(field, section), filename, "exec")
    previous = sys.gettrace()

    def local(frame, event, arg):
        if event == "exception" and len(entry["caught"]) < 5:
            # During the event the traceback comes as arg[2]; the exception does not hold it yet.
            entry["caught"].append(describe(arg[1].with_traceback(arg[2])))
        return local

    def calls(frame, event, arg):
        # Only the snippet's own top level: an exception there has come up from what its try block called.
        if frame.f_code is code:
            return local
        return None

    sys.settrace(calls)
    try:
        exec(code, names)
    except BaseException as exc:
        entry["outcome"], entry["exception"] = "raised", describe(exc)
        raise
    finally:
        sys.settrace(previous)
    _kept(field, kept, names, entry)
    entry["outcome"] = "ran"
    return names


def config(field: str, section: str):
    """The JSON value of a config diff's before/after part."""
    entry = {"field": field, "action": "config", "section": section, "outcome": None, "exception": None}
    EXECUTED.append(entry)
    try:
        value = json.loads(section_text(field, section))
    except BaseException as exc:
        entry["outcome"], entry["exception"] = "raised", describe(exc)
        raise
    entry["outcome"] = "parsed"
    return value


def check(field: str, namespace: dict | None = None, expr: str | None = None) -> bool:
    """Run a guard on a situation: False when it flags it, True when it lets it pass.

    The guard flags by raising one of GUARD_FLAGS from its own lines, or, with `expr` (a call of the predicate
    it defines), by that expression being false. Any other exception means the guard is broken and propagates.
    """
    names = {} if namespace is None else namespace
    filename = _filename(field, None)
    entry = {"field": field, "action": "check", "expr": expr, "outcome": None, "exception": None}
    EXECUTED.append(entry)
    _admit(field, names, entry)
    try:
        exec(compile(text(field), filename, "exec"), names)
        passed = True if expr is None else bool(eval(compile(expr, "<errkb check>", "eval"), names))
    except GUARD_FLAGS as exc:
        entry["exception"] = describe(exc)
        if not _raised_in(exc, filename):
            entry["outcome"] = "error"
            raise
        entry["outcome"] = "flagged"
        return False
    except BaseException as exc:
        entry["outcome"], entry["exception"] = "error", describe(exc)
        raise
    entry["outcome"] = "passed" if passed else "flagged"
    return passed


def _raised_in(exc: BaseException, filename: str) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename == filename
