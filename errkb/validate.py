"""Turn a file into an Envelope, or into every problem it has, each naming the file and the field."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .draft.stubs import record_stub_problems
from .jsonfile import read_json
from .model import CrossFieldError, Envelope, cross_field_problems_of_valid_fields
from .problems import InvalidInput, Problem, describe, json_path


def envelope_from_data(data, name: str) -> Envelope:
    """Accept the envelope or a bare record (then datasetVersion is the record's analyzedAt)."""
    if not isinstance(data, dict):
        raise InvalidInput([Problem(name, "$", f"found {type(data).__name__}, expected a JSON object")])
    stubs = record_stub_problems(data, name)
    if stubs:  # a draft errkb draft wrote: its unfilled stubs are what to fix first
        raise InvalidInput(stubs)
    is_envelope = "record" in data
    if not is_envelope:
        data = {"record": data, "datasetVersion": data.get("analyzedAt")}
    try:
        return Envelope.model_validate(data)
    except ValidationError as exc:
        problems = [p for error in exc.errors() for p in _problems(error, name, is_envelope)]
        problems += _cross_field_problems_despite(exc, data, name)
        raise InvalidInput(problems) from None


def _cross_field_problems_despite(exc: ValidationError, data: dict, name: str) -> list[Problem]:
    """Pydantic skips the cross-field rules once a field is invalid; run those the valid fields allow."""
    errors = exc.errors()
    record = data.get("record")
    if not isinstance(record, dict) or any(isinstance(e.get("ctx", {}).get("error"), CrossFieldError) for e in errors):
        return []
    invalid = {e["loc"][1] for e in errors if len(e["loc"]) > 1 and e["loc"][0] == "record"}
    if not invalid:
        return []
    return [Problem(name, json_path(("record", field)), message)
            for field, message in cross_field_problems_of_valid_fields(record, invalid)]


# What a field's pattern asks for, in words (the regex itself is in the JSON Schema).
EXPECTED_FORMS = {
    "id": "16 lowercase hex digits",
    "repo": "a GitHub repository as owner/name",
    "slug": "kebab-case: lowercase letters and digits joined by single hyphens",
    "filePath": "a relative path inside the repository (no leading /, no . or .. segments)",
    "errorClass": "a class name, optionally dotted (ValueError, torch.OutOfMemoryError)",
    "githubUrl": "https://github.com/{repo}/blob/{analyzedSha}/{filePath}#L{sourceCodeStart}-L{sourceCodeEnd}",
    "tags": "a kebab-case tag",
    "backgroundTag": "a kebab-case tag",
    "analyzedSha": "a full 40-hex commit sha",
    "analyzedAt": "an ISO 8601 time with a zone, e.g. 2026-08-27T03:36:54.287Z",
    "datasetVersion": "an ISO 8601 time with a zone, e.g. 2026-08-27T08:17:20.692Z",
}


def _field(loc: tuple) -> str | None:
    names = [part for part in loc if isinstance(part, str)]
    return names[-1] if names else None


def _problems(error: dict, name: str, is_envelope: bool):
    loc = tuple(error["loc"]) if is_envelope else tuple(error["loc"])[1:]
    if not is_envelope and error["loc"] == ("datasetVersion",):
        loc = ("analyzedAt",)  # a bare record's datasetVersion is its analyzedAt
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, CrossFieldError):
        for field, message in cause.problems:
            yield Problem(name, json_path(loc + (field,) if field != "datasetVersion" else (field,)), message)
        return
    found = describe(error.get("input"))
    kind = error["type"]
    if kind == "extra_forbidden":
        message = f"unknown field {loc[-1]!r}, expected only the schema-v2 fields"
    elif kind == "missing":
        message = "missing required field"
    elif kind == "model_type" or kind == "model_attributes_type":
        message = f"found {found}, expected a JSON object"
    elif kind == "string_pattern_mismatch" and _field(loc) in EXPECTED_FORMS:
        message = f"found {found}, expected {EXPECTED_FORMS[_field(loc)]}"
    else:
        message = f"found {found}, expected: {error['msg']}"
    yield Problem(name, json_path(loc), message)


def load_envelope(path: Path, display: str | None = None) -> Envelope:
    name = display or str(path)
    return envelope_from_data(read_json(path, name), name)


def check_files(paths: list[Path]) -> tuple[list[tuple[Path, Envelope]], list[Problem]]:
    """Validate every file; return the good ones and all problems of the bad ones."""
    good, problems = [], []
    for path in paths:
        try:
            good.append((path, load_envelope(path)))
        except InvalidInput as exc:
            problems.extend(exc.problems)
    return good, problems
