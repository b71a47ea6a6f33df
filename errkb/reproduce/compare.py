"""From what a stage did to a verdict: compare the raised error (or emitted warning) with the record.

Pure functions over the runner's JSON, so every rule here is tested without a subprocess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Record
from ..patterns import PatternError, pattern_matches
from .libraries import Library
from .native import site_problem

VERIFIED = "verified"
NOT_REPRODUCED = "not-reproduced"
WRONG_ERROR = "wrong-error"
FIX_FAILED = "fix-failed"
CLAIM_FAILED = "claim-failed"
SKIPPED = "skipped"
TIMEOUT = "timeout"
CRASHED = "crashed"
VERDICTS = (VERIFIED, NOT_REPRODUCED, WRONG_ERROR, FIX_FAILED, CLAIM_FAILED, SKIPPED, TIMEOUT, CRASHED)

NATIVE_SUFFIXES = (".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp", ".c")
# PyTorch appends these to C++ errors (with TORCH_SHOW_CPP_STACKTRACES=1) and to TORCH_WARN warnings.
CPP_RAISE = re.compile(r"\n?Exception raised from (?P<func>.*) at (?P<file>\S+):(?P<line>\d+)")
CPP_WARN = re.compile(r"\s*\(Triggered internally at (?P<file>\S+):(?P<line>\d+)\.\)")
SHOWN = 300  # characters of a message quoted in a reason


def is_native(file_path: str) -> bool:
    return file_path.endswith(NATIVE_SUFFIXES)


def class_matches(expected: str, mro: list[str]) -> bool:
    """`expected` is the raised class or one of its bases, by name.

    A bare name (`ValueError`, `OutOfMemoryError`) matches a class of that name in any module; a dotted one
    (`torch.OutOfMemoryError`) matches that module and name, or the same name in the same top-level package
    (classes are re-exported: `torch.cuda.OutOfMemoryError` is `torch.OutOfMemoryError`).
    """
    expected = expected.removeprefix("builtins.")
    exp_module, _, exp_name = expected.rpartition(".")
    for name in mro:
        module, _, bare = name.rpartition(".")
        if expected == name or (not exp_module and exp_name == bare):
            return True
        if exp_module and exp_name == bare and module.split(".")[0] == exp_module.split(".")[0]:
            return True
    return False


def path_matches(found: str, file_path: str) -> bool:
    """`found` (installed, package-relative, or a C++ build path) is the record's `filePath`, up to a prefix."""
    return found == file_path or found.endswith("/" + file_path) or file_path.endswith("/" + found)


@dataclass
class Observed:
    """One raised exception or emitted warning, seen against a record."""

    kind: str  # "exception" or "warning"
    cls: str
    classes: list[str]  # the class and its bases, by qualified name
    message: str  # without PyTorch's C++ location suffix
    site_file: str | None = None  # in the library (package-relative) or the C++ file; None when none was found
    site_line: int | None = None
    site_func: str | None = None
    outside: str | None = None  # for a Python error raised outside the library: its innermost frame
    phase: str = "call"
    problems: list[str] = field(default_factory=list)
    # Lines of every frame in the record's file: a record may name the line that decides to raise and
    # hands the message to a raising helper in the same file (DDP's _log_and_throw).
    lines_in_file: set[int] = field(default_factory=set)
    native_problem: str | None = None  # why a C++ location in the message did not come from the library's code
    cpp_file: str | None = None  # the C++ location's file as the message gives it (the build's path)

    @property
    def site(self) -> str | None:
        if self.site_file is None:
            return self.outside
        if self.site_line is None:  # a module that lacks a name: no line raised it
            return f"{self.site_file} ({self.site_func})" if self.site_func else self.site_file
        return f"{self.site_file}:{self.site_line}"

    def summary(self) -> str:
        where = f" at {self.site}" if self.site else ""
        message = f": {quote(self.message)}" if self.message else ""
        return f"{self.cls}{message}{where}"


def observe_exception(exc: dict, record: Record, library: Library) -> Observed:
    seen = Observed("exception", exc["class"], exc["mro"], exc["message"], phase=exc.get("phase", "call"))
    _locate(seen, CPP_RAISE, exc.get("frames", []), record, library)
    if is_native(record.filePath) and seen.site_file is not None:
        frames = exc.get("frames") or [["?", "?", "?"]]
        how = exc.get("raised_how")
        if how == "raise":  # a `raise` statement, not a call into the library, raised it
            seen.native_problem = f"a Python raise at {frames[-1][0]}:{frames[-1][1]} raised it, not the library's code"
        elif how == "throw":
            seen.native_problem = f"it was thrown into a generator at {frames[-1][0]}:{frames[-1][1]}, not raised by the library's code"
        elif how == "c-api":
            seen.native_problem = (f"the stage looked up {', '.join(exc.get('c_api_setters') or [])} through ctypes, which "
                                   "sets exceptions from any call, so the library's code cannot be shown to have raised it")
        else:
            seen.native_problem = site_problem(library.location, seen.cpp_file or seen.site_file, seen.site_func)
    if seen.site_file is None and not is_native(record.filePath):
        _locate_missing_name(seen, exc, library)
    seen.problems = _problems(seen, record, library)
    if seen.native_problem:
        seen.problems.append(f"raise site: {seen.native_problem}")
    return seen


def observe_warning(warning: dict, record: Record, library: Library) -> Observed:
    seen = Observed("warning", warning["class"], warning["mro"], warning["message"])
    _locate(seen, CPP_WARN, warning.get("frames", []), record, library)
    if seen.site_file is None and seen.outside is None:
        seen.outside = f"{warning.get('filename')}:{warning.get('lineno')}"
    seen.problems = _problems(seen, record, library)
    return seen


def _locate(seen: Observed, cpp_location: re.Pattern, frames: list, record: Record, library: Library) -> None:
    """The raise site: the C++ location PyTorch appends, for a native record; else the innermost library frame.

    The C++ location (and the C++ trace after it) is cut from the message for every record, so that a
    TORCH_SHOW_CPP_STACKTRACES=1 in the caller's environment changes nothing.
    """
    found = cpp_location.search(seen.message)
    if found:
        seen.message = seen.message[: found.start()]
    if is_native(record.filePath):
        if found:
            file = seen.cpp_file = found["file"]
            seen.site_file = record.filePath if path_matches(file, record.filePath) else file
            seen.site_line, seen.site_func = int(found["line"]), found.groupdict().get("func")
        return
    inside = [(library.relative(f), line, func) for f, line, func in frames if library.contains(f)]
    seen.lines_in_file = {line for file, line, _ in inside if path_matches(file, record.filePath)}
    if inside:
        seen.site_file, seen.site_line, seen.site_func = inside[-1]
        return
    if frames:
        filename, line, _ = frames[-1]
        seen.outside = f"{filename}:{line}"


def lookup_owner(exc: dict) -> tuple[str, str | None] | None:
    """(file of the module that lacks the name, the dotted name) for a name Python could not find in the caller's own
    code (`from mmcv.runner import ...` after mmcv 2 dropped mmcv.runner; `iter(loader).next()`). Only when Python's
    lookup raised it (an import or attribute access), never a `raise` statement: a stage cannot make its own
    ImportError count. None otherwise."""
    missing = exc.get("missing") or {}
    owner = missing.get("owner_file")
    return (owner, missing.get("name")) if owner and exc.get("raised_how") == "call" else None


def _locate_missing_name(seen: Observed, exc: dict, library: Library) -> None:
    """No frame of the library raised a name lookup's error: the raise site is the library's module that lacks it."""
    found = lookup_owner(exc)
    if found and library.contains(found[0]):
        seen.site_file = library.relative(found[0])
        seen.site_func = f"lacks {found[1]}"


def _problems(seen: Observed, record: Record, library: Library) -> list[str]:
    problems = []
    if not class_matches(record.errorClass, seen.classes):
        problems.append(f"class: expected {record.errorClass}, got {seen.cls}")
    try:
        if not pattern_matches(record.messagePattern, seen.message):
            problems.append(f"message: expected a match for {quote(record.messagePattern)}, got {quote(seen.message)}")
    except PatternError as exc:
        problems.append(f"message: messagePattern {exc}")
    if is_native(record.filePath):
        what = "C++ raise site" if seen.kind == "exception" else "C++ warning site"
        if seen.site_file is None:
            marker = "Exception raised from" if seen.kind == "exception" else "(Triggered internally at"
            problems.append(f"raise site: expected a {what} in {record.filePath}, found no {marker!r} location")
        elif seen.site_file != record.filePath and not another_release(record, library):
            problems.append(f"raise site: expected {record.filePath}, got {seen.site}")
    elif seen.site_file is None:
        where = f" ({seen.outside})" if seen.outside else ""
        problems.append(f"raise site: expected {record.filePath} inside {library.package}, got none inside {library.package}{where}")
    elif not path_matches(seen.site_file, record.filePath) and not another_release(record, library):
        problems.append(f"raise site: expected {record.filePath}, got {seen.site}")
    return problems


def another_release(record: Record, library: Library) -> bool:
    """Whether the installed library is known to be built from another commit than the one the record cites.

    There the raise site may have moved to another file, as lines move, and the move is reported as drift; at the
    cited commit, or where the installed commit is unknown (a package that does not say), the file must match.
    """
    return library.commit is not None and library.commit != record.analyzedSha


def drift(seen: Observed, record: Record, library: Library) -> str | None:
    """Where the installed library raises, when it is not the record's line, or (in another release) not its file:
    reported, not failed."""
    version = f"{library.distribution or library.package} {library.version or ''}".strip()
    where = f" ({seen.site_func})" if seen.site_func else ""
    said = f"record says {record.filePath}:{record.lineNumber}"
    if seen.site_file is not None and not path_matches(seen.site_file, record.filePath):
        return f"raise site moved to {_short(seen.site_file)}:{seen.site_line}{where} in installed {version}, {said}"
    if seen.site_line is None or record.lineNumber in {seen.site_line, *seen.lines_in_file}:
        return None
    return f"raise line {seen.site_line}{where} in installed {version}, {said}"


def _short(path: str) -> str:
    """A C++ build path without the build machine's checkout folder: aten/src/ATen/native/LinearAlgebraUtils.h."""
    for root in ("aten/", "c10/", "torch/", "caffe2/", "third_party/"):
        if f"/{root}" in path:
            return root + path.split(f"/{root}", 1)[1]
    return path


@dataclass
class Judgement:
    ok: bool
    verdict: str | None  # None while ok: the caller decides after the next stage
    reason: str
    observed: Observed | None = None


def judge_trigger(result: dict, record: Record, library: Library) -> Judgement:
    exc = result.get("exception")
    warnings = result.get("warnings", [])
    if exc is not None:
        seen = observe_exception(exc, record, library)
        if not seen.problems:
            return Judgement(True, None, f"{seen.cls} raised at {seen.site}", seen)
        if seen.phase == "import":
            return Judgement(False, WRONG_ERROR, f"importing the reproduction raised {seen.summary()}", seen)
        return Judgement(False, WRONG_ERROR, f"trigger() raised the wrong error: {'; '.join(seen.problems)}", seen)
    candidates = [observe_warning(w, record, library) for w in warnings if class_matches(record.errorClass, w["mro"])]
    if not candidates:
        # A warning of another class with the documented message is the wrong warning, not no reproduction.
        candidates = [
            seen for seen in (observe_warning(w, record, library) for w in warnings)
            if not any(p.startswith("message") for p in seen.problems)
        ]
    if candidates:
        best = min(candidates, key=lambda seen: len(seen.problems))
        if not best.problems:
            return Judgement(True, None, f"{best.cls} emitted at {best.site}", best)
        return Judgement(False, WRONG_ERROR, f"trigger() emitted the wrong warning: {'; '.join(best.problems)}", best)
    reason = f"trigger() returned without raising {record.errorClass} (pattern {quote(record.messagePattern)})"
    if warnings:
        first = observe_warning(warnings[0], record, library)
        reason += f"; it emitted {len(warnings)} warning(s), first {first.summary()}"
    return Judgement(False, NOT_REPRODUCED, reason)


def judge_fix(result: dict, record: Record, library: Library, documented: Observed) -> Judgement:
    exc = result.get("exception")
    if exc is not None:
        seen = observe_exception(exc, record, library)
        seen.problems = []
        if seen.phase == "import":
            return Judgement(False, FIX_FAILED, f"importing the reproduction for fix() raised {seen.summary()}", seen)
        return Judgement(False, FIX_FAILED, f"fix() raised {seen.summary()}", seen)
    if documented.kind == "warning":
        for warning in result.get("warnings", []):
            seen = observe_warning(warning, record, library)
            if class_matches(record.errorClass, seen.classes) and not any(p.startswith("message") for p in seen.problems):
                return Judgement(False, FIX_FAILED, f"fix() still emits the documented warning: {seen.summary()}", seen)
    return Judgement(True, VERIFIED, "fix() completed")


def quote(text: str) -> str:
    text = text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
    return repr(text)
