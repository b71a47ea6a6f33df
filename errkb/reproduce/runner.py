"""The subprocess side of `errkb reproduce`: run one stage of one reproduction, print one JSON result.

    python errkb/reproduce/runner.py REPRODUCTION.py FUNCTION [RECORD_CODE.json]

FUNCTION is `trigger` or a demonstration named in the reproduction's SOLUTIONS / CODE, or VALID_STAGE: every
guard of the record on every valid situation the reproduction's VALID declares. RECORD_CODE.json holds the
record's code fields, which the stage runs through the `errkb_record` module (errkb_record.py), and the
reproduction's contract literals the runner needs ("valid", "guard_call").

Standard library only, and run by file path rather than `-m errkb...`, so that a stage pays for no errkb import
(pydantic alone costs ~0.2 s). Whatever the stage prints goes to stderr; stdout carries only the JSON result.
It records facts (class, MRO, message, traceback frames, warnings with the stack that emitted them);
deciding what they mean against the record is compare.py's job, in the parent.
"""

from __future__ import annotations

import dis
import faulthandler
import importlib.util
import json
import os
import re
import sys
import time
import traceback
import warnings

MAX_FRAMES = 60
MAX_WARNINGS = 100
MAX_TEXT = 4000
VALID_STAGE = "errkb_valid_inputs"  # the negative-control stage: not a function of the reproduction
GUARDS = ("validationCode", "typeGuard")
GENERATED_EXAMPLES = 60  # valid situations drawn from a Hypothesis strategy, per guard
SHOWN_INPUT = 300


def qualified_name(cls: type) -> str:
    module = getattr(cls, "__module__", None) or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("builtins", "exceptions", "") else f"{module}.{name}"


def class_names(cls: type) -> list[str]:
    return [qualified_name(c) for c in cls.__mro__ if c is not object]


def text_of(value) -> str:
    try:
        return str(value)
    except Exception:  # a broken __str__ must not lose the rest of the result
        return f"<unprintable {type(value).__name__}>"


def describe_exception(exc: BaseException, phase: str) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)[-MAX_FRAMES:]
    how = raised_how(exc)
    return {
        "phase": phase,
        "class": qualified_name(type(exc)),
        "mro": class_names(type(exc)),
        "message": text_of(exc),
        "frames": [[f.filename, f.lineno, f.name] for f in frames],
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-MAX_TEXT:],
        "raised_how": how,
        "c_api_setters": list(c_api_setters),
        "missing": missing_name(exc),
    }


CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


def missing_name(exc: BaseException) -> dict | None:
    """For a name Python itself could not find (an import or an attribute lookup): the dotted name, and the file of
    the module that should have held it (the installed package's module for a missing submodule or exported name;
    the module defining the class for a missing attribute). None for other errors, and for a top-level module that
    is not installed at all: that is a missing library, not a name a library lacks."""
    try:
        if isinstance(exc, ModuleNotFoundError):
            parent = sys.modules.get((exc.name or "").rpartition(".")[0]) if exc.name and "." in exc.name else None
            return {"name": exc.name, "owner_file": getattr(parent, "__file__", None)} if parent else None
        if isinstance(exc, ImportError):
            found = CANNOT_IMPORT.match(text_of(exc))
            module = sys.modules.get(exc.name or "")
            if found and module is not None:
                return {"name": f"{exc.name}.{found.group(1)}", "owner_file": getattr(module, "__file__", None)}
            return None
        if isinstance(exc, AttributeError) and getattr(exc, "name", None) and getattr(exc, "obj", None) is not None:
            owner = exc.obj
            if isinstance(owner, type(sys)):
                return {"name": f"{owner.__name__}.{exc.name}", "owner_file": getattr(owner, "__file__", None)}
            cls = owner if isinstance(owner, type) else type(owner)
            module = sys.modules.get(cls.__module__)
            return {"name": f"{cls.__module__}.{cls.__qualname__}.{exc.name}", "owner_file": getattr(module, "__file__", None)}
    except Exception:  # a broken __getattr__ or module must not lose the rest of the result
        return None
    return None


RAISING = {dis.opmap["RAISE_VARARGS"], dis.opmap["RERAISE"]}
THROWN_IN = {dis.opmap[name] for name in ("YIELD_VALUE", "SEND") if name in dis.opmap}  # generator.throw()
# C-API functions that set the current exception, looked up through ctypes: a stage could raise a library's own
# C++ message with them from a call that never entered the library.
C_API_SETTERS = re.compile(r"_?Py(Err_|ThreadState_SetAsyncExc)")
c_api_setters: list[str] = []


def audit(event: str, args: tuple) -> None:
    if event == "ctypes.dlsym" and len(args) > 1 and isinstance(args[1], str) and C_API_SETTERS.match(args[1]):
        if len(c_api_setters) < 20:
            c_api_setters.append(args[1])


def raised_how(exc: BaseException) -> str:
    """How the exception left the innermost frame: "raise" (a `raise` statement), "throw" (thrown into a
    suspended generator), or "call" (out of a call or operator into compiled code, as PyTorch's C++ errors
    come); "c-api" when the stage looked up a C-API function that sets exceptions (ctypes), which makes any
    "call" unprovable; "unknown" without a traceback."""
    tb = exc.__traceback__
    if tb is None:
        return "unknown"
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code.co_code
    op = code[tb.tb_lasti] if 0 <= tb.tb_lasti < len(code) else None
    if op in RAISING:
        return "raise"
    if op in THROWN_IN:
        return "throw"
    return "c-api" if c_api_setters else "call"



class WarningCollector:
    """A `warnings.showwarning` that also keeps the Python stack that emitted each warning.

    The warning's own filename:lineno follow `stacklevel` (often the caller, not the library), and C++ TORCH_WARN
    warnings carry the Python caller's location; the stack lets the parent find the innermost library frame.
    """

    def __init__(self) -> None:
        self.active = False
        self.items: list[dict] = []
        self.dropped = 0
        self._skip = {os.path.abspath(warnings.__file__), os.path.abspath(__file__)}

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        if not self.active:
            return
        if len(self.items) >= MAX_WARNINGS:
            self.dropped += 1
            return
        stack = []
        frame = sys._getframe(1)
        while frame is not None and len(stack) < MAX_FRAMES:
            if os.path.abspath(frame.f_code.co_filename) not in self._skip:
                stack.append([frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name])
            frame = frame.f_back
        self.items.append(
            {
                "class": qualified_name(category),
                "mro": class_names(category),
                "message": text_of(message),
                "filename": text_of(filename),
                "lineno": lineno,
                "frames": stack[::-1],  # outermost first, like a traceback
            }
        )


def variant_local(exc: BaseException, function) -> str | None:
    """A stage that raised returned nothing; it names its variant in a local variable `variant` instead."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is getattr(function, "__code__", None):
            value = tb.tb_frame.f_locals.get("variant")
            return value[:200] if isinstance(value, str) and value else None
        tb = tb.tb_next
    return None


def load_module(path: str, name: str = "errkb_reproduction"):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def read_record_code(code_path: str | None) -> dict:
    """{"fields": the record's code texts, "valid", "guard_call", "code_names", "keep": the contract's literals}
    (or, older, the bare fields)."""
    if not code_path:
        return {"fields": {}}
    with open(code_path, encoding="utf-8") as handle:
        data = json.load(handle)
    return data if "fields" in data else {"fields": data}


def load_record_code(code: dict):
    """Provide `errkb_record` to the reproduction, holding the record's code fields."""
    module = load_module(os.path.join(os.path.dirname(os.path.abspath(__file__)), "errkb_record.py"), "errkb_record")
    module.describe = lambda exc: describe_exception(exc, "call")
    module.load(code["fields"], code.get("code_names"), code.get("keep"))
    return module


def short_repr(value) -> str:
    """A tensor or array by its shape and dtype (and its values when few), anything else by a cut repr."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        try:
            size = 1
            for dim in shape:
                size *= int(dim)
            values = f", values={value.tolist()!r}" if size <= 8 and hasattr(value, "tolist") else ""
            return f"{type(value).__name__}(shape={tuple(int(d) for d in shape)}, dtype={dtype}{values})"
        except Exception:
            pass
    if isinstance(value, (tuple, list)) and len(value) <= 4:
        inner = ", ".join(short_repr(item) for item in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    text = text_of(value) if isinstance(value, str) else repr_of(value)
    return text if len(text) <= 80 else text[:77] + "..."


def repr_of(value) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def describe_names(names: dict) -> str:
    """The user's objects of a situation, for a reason: `{targets: Tensor(shape=(4,), dtype=torch.int64, ...)}`."""
    shown = [f"{key}: {short_repr(value)}" for key, value in names.items()
             if not key.startswith("__") and type(value).__name__ != "module"]
    text = "{" + ", ".join(shown) + "}"
    return text if len(text) <= SHOWN_INPUT else text[: SHOWN_INPUT - 4] + "...}"


def is_strategy(value) -> bool:
    return type(value).__module__.startswith("hypothesis.")


def situations_of(value, name: str, function: str) -> list[dict]:
    situations = [value] if isinstance(value, dict) else list(value) if isinstance(value, (list, tuple)) else None
    if not situations or not all(isinstance(s, dict) and all(isinstance(k, str) for k in s) for s in situations):
        raise TypeError(f"VALID[{name!r}]: {function}() returned {type(value).__name__}, expected the names a guard sees: "
                        f"a dict of names, a non-empty list of such dicts, or a Hypothesis strategy of them")
    return situations


def check_valid_inputs(module, record, valid: dict, guard_call: dict) -> None:
    """Run every guard of the record on every valid situation; each guard must pass each one.

    A guard with a CODE_NAMES entry sees only the names it declares of each situation (two guards may read
    different names of the same situation). The log keeps one entry per (valid situation, guard): passed, or the
    rejection (flagged, or the guard's own crash) with the input it rejected; for a Hypothesis strategy, the
    smallest input it shrank to.
    """
    guards = [field for field in GUARDS if field in record.FIELDS]
    for name, function in valid.items():
        value = getattr(module, function)()
        for field in guards:
            start = len(record.EXECUTED)
            if is_strategy(value):
                _check_generated(record, field, value, guard_call.get(field))
            else:
                for names in situations_of(value, name, function):
                    _check_one(record, field, names, guard_call.get(field))
            record.EXECUTED[start:] = [_summary(record.EXECUTED[start:], name, field, shrunk=is_strategy(value))]


def _check_one(record, field: str, names: dict, expr: str | None) -> bool:
    declared = record.NAMES.get(field)
    seen = {key: value for key, value in names.items() if declared is None or key in declared}
    try:
        passed = record.check(field, dict(seen), expr=expr)  # a copy: the guard's own names stay out of `seen`
    except Exception:
        passed = False  # the guard crashed on a valid input: its log entry says how
    if not passed:
        record.EXECUTED[-1]["input"] = describe_names(seen)
    return passed


class Rejected(AssertionError):
    """A guard flagged a generated valid situation (so Hypothesis shrinks it)."""


def _check_generated(record, field: str, strategy, expr: str | None) -> None:
    hypothesis = sys.modules["hypothesis"]  # the reproduction imported it to build the strategy

    @hypothesis.settings(
        max_examples=GENERATED_EXAMPLES, derandomize=True, database=None, deadline=None, print_blob=False,
        report_multiple_bugs=False,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(strategy)
    def guard_passes(names):
        if not isinstance(names, dict):
            raise TypeError(f"the strategy drew a {type(names).__name__}, expected a dict of names")
        if not _check_one(record, field, names, expr):
            raise Rejected(field)

    try:
        guard_passes()
    except Rejected:
        pass  # the log holds the rejection; the last one is the shrunk input


def _summary(entries: list[dict], name: str, field: str, shrunk: bool) -> dict:
    """One log entry for a guard on one VALID name: the first rejection (the last, when Hypothesis shrank it)."""
    checks = [entry for entry in entries if entry.get("action") == "check"]
    failed = [entry for entry in checks if entry.get("outcome") != "passed"]
    if not checks:
        return {"field": field, "action": "check", "valid": name, "examples": 0, "outcome": None, "exception": None}
    entry = dict((failed[-1] if shrunk else failed[0]) if failed else checks[-1])
    entry.update(valid=name, examples=len(checks), failures=len(failed))
    return entry


def torch_facts() -> dict | None:
    """The build the stage ran against, when it imported torch (asking costs nothing then)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    facts = {"version": getattr(torch, "__version__", None)}
    version = getattr(torch, "version", None)
    facts["git_version"] = getattr(version, "git_version", None)
    facts["cuda"] = getattr(version, "cuda", None)
    try:
        facts["cudnn"] = torch.backends.cudnn.version() if facts["cuda"] else None
    except Exception:
        facts["cudnn"] = None
    return facts


def run_stage(path: str, stage: str, code_path: str | None = None) -> dict:
    result = {"stage": stage, "outcome": None, "variant": None, "call_seconds": None, "exception": None}
    code = read_record_code(code_path)
    record_code = load_record_code(code)
    collector = WarningCollector()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = collector.show
        phase = "import"
        try:
            module = load_module(path)
            if stage == VALID_STAGE:
                def function():
                    check_valid_inputs(module, record_code, code.get("valid") or {}, code.get("guard_call") or {})
            else:
                function = getattr(module, stage)
            phase = "call"
            warnings.simplefilter("always")  # a library may have installed its own filters on import
            collector.active = True
            started = time.perf_counter()
            try:
                value = function()
            finally:
                result["call_seconds"] = round(time.perf_counter() - started, 4)
                collector.active = False
            result["outcome"] = "returned"
            if isinstance(value, str) and value:
                result["variant"] = value[:200]
        except BaseException as exc:  # SystemExit and KeyboardInterrupt are results too
            result["outcome"] = "raised"
            result["exception"] = describe_exception(exc, phase)
            if phase == "call":
                result["variant"] = variant_local(exc, function)
    result["warnings"] = collector.items
    result["warnings_dropped"] = collector.dropped
    result["executed"] = record_code.EXECUTED
    result["torch"] = torch_facts()
    return result


def read_nonce() -> str:
    """The harness's secret for this run, from stdin, before the stage runs; the stage gets /dev/null.

    A result without it is not the runner's (a stage that writes a fake one to the channel and exits).
    """
    nonce = sys.stdin.readline().strip() if sys.stdin else ""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return nonce


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not argv[1].isidentifier():
        print("usage: runner.py REPRODUCTION.py FUNCTION [RECORD_CODE.json]", file=sys.stderr)
        return 2
    sys.addaudithook(audit)  # before the reproduction loads: a hook cannot be removed
    faulthandler.enable()  # a crash leaves a Python stack in stderr, which the parent quotes
    nonce = read_nonce()
    result_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)  # the stage's own prints (and its C/C++ code's) go to stderr
    result = run_stage(argv[0], argv[1], argv[2] if len(argv) == 3 else None)
    sys.stdout.flush()
    result_stream.write(json.dumps({**result, "nonce": nonce}))
    result_stream.flush()
    return 0


if __name__ == "__main__":
    # Run as a script, Python put this folder first on sys.path; a reproduction must not see errkb's modules.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    sys.exit(main(sys.argv[1:]))
