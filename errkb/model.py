"""The schema-v2 error record and its envelope, field by field and across fields."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from .patterns import PatternError, pattern_matches

SCHEMA_VERSION = 2
SCHEMA_ID = "https://errkb.dev/schema/error-record.v2.schema.json"

# ISO 8601 date-time with a time zone, as the seed writes it ("2026-08-27T03:36:54.287Z").
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$"
SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
REPO_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$"
# Relative, forward slashes, no empty, "." or ".." segments.
FILE_PATH_PATTERN = r"^(?:[A-Za-z0-9_@+=,~-][A-Za-z0-9_.@+=,~-]*/)*[A-Za-z0-9_@+=,~-][A-Za-z0-9_.@+=,~-]*$"
ERROR_CLASS_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"

Text = Annotated[str, StringConstraints(min_length=1)]
Code = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
Tag = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=60)]
Timestamp = Annotated[str, StringConstraints(pattern=TIMESTAMP_PATTERN)]


ErrorType = Literal[
    "validation", "configuration", "device", "shape", "type", "state",
    "runtime", "resource", "io", "compatibility", "distributed", "deprecation",
]
Severity = Literal["critical", "error", "warning", "info"]
HandlingStrategy = Literal["validation", "guard", "configuration", "refactor", "retry", "fallback", "propagate"]


_STRICT = ConfigDict(strict=True, extra="forbid", validate_default=True)


class Record(BaseModel):
    """One error: what is raised, where, why, and how to fix it. Field order is the canonical key order."""

    model_config = _STRICT

    id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]
    repo: Annotated[str, StringConstraints(pattern=REPO_PATTERN)]
    slug: Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=100)]
    errorCode: Optional[Annotated[str, StringConstraints(min_length=1, max_length=100)]]
    errorMessage: Annotated[str, StringConstraints(min_length=1, max_length=5_000)]
    messagePattern: Annotated[str, StringConstraints(min_length=1, max_length=2_000)]
    errorType: ErrorType
    errorClass: Annotated[str, StringConstraints(pattern=ERROR_CLASS_PATTERN, max_length=200)]
    httpStatus: Optional[Annotated[int, Field(ge=100, le=599)]]
    severity: Severity
    filePath: Annotated[str, StringConstraints(pattern=FILE_PATH_PATTERN, max_length=500)]
    lineNumber: Annotated[int, Field(ge=1)]
    sourceCode: Code
    sourceCodeStart: Annotated[int, Field(ge=1)]
    sourceCodeEnd: Annotated[int, Field(ge=1)]
    githubUrl: Annotated[str, StringConstraints(pattern=r"^https://github\.com/")]
    documentation: Text
    triggerScenarios: Text
    commonSituations: Text
    solutions: Annotated[list[Text], Field(min_length=1)]
    exampleFix: Optional[Code]
    handlingStrategy: HandlingStrategy
    validationCode: Optional[Code]
    typeGuard: Optional[Code]
    tryCatchPattern: Optional[Code]
    preventionTips: list[Text]
    tags: Annotated[list[Tag], Field(min_length=1)]
    backgroundTag: Tag
    analyzedSha: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
    analyzedAt: Timestamp
    schemaVersion: Literal[2]

    @model_validator(mode="after")
    def _check_consistency(self) -> "Record":
        problems = list(_cross_field_problems(self))
        if problems:
            raise CrossFieldError(problems)
        return self

    def expected_github_url(self) -> str:
        return (
            f"https://github.com/{self.repo}/blob/{self.analyzedSha}/{self.filePath}"
            f"#L{self.sourceCodeStart}-L{self.sourceCodeEnd}"
        )


class CrossFieldError(ValueError):
    """Several field-level findings at once; `problems` is a list of (field, message)."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


# The largest integer SQLite stores (64-bit signed); checked here rather than as a Field bound so that the
# checked-in JSON Schema stays as generated.
MAX_INTEGER = 2**63 - 1


def _integers_fit(r: Record):
    for name in ("lineNumber", "sourceCodeStart", "sourceCodeEnd"):
        if getattr(r, name) > MAX_INTEGER:
            yield name, f"{name} is {getattr(r, name)}, expected at most {MAX_INTEGER} (SQLite's largest integer)"


def _real_time(r: Record):
    try:
        datetime.fromisoformat(r.analyzedAt.replace("Z", "+00:00"))
    except ValueError:
        yield "analyzedAt", f"analyzedAt {r.analyzedAt!r} is not a real date and time"


def _real_commit(r: Record):
    if len(set(r.analyzedSha)) == 1:
        yield "analyzedSha", (f"analyzedSha {r.analyzedSha[:12]}... is a placeholder (one digit repeated), not a commit: "
                              "give the commit the excerpt was read at, or leave the record a draft until it is found")


def _line_in_excerpt(r: Record):
    if not r.sourceCodeStart <= r.lineNumber <= r.sourceCodeEnd:
        yield "lineNumber", (
            f"lineNumber {r.lineNumber} is outside the excerpt: expected "
            f"sourceCodeStart ({r.sourceCodeStart}) <= lineNumber <= sourceCodeEnd ({r.sourceCodeEnd})"
        )


def _excerpt_lines(r: Record):
    lines = r.sourceCode.split("\n")
    expected_lines = r.sourceCodeEnd - r.sourceCodeStart + 1
    if len(lines) != expected_lines:
        yield "sourceCode", (
            f"sourceCode has {len(lines)} lines, expected {expected_lines} "
            f"(sourceCodeEnd - sourceCodeStart + 1)"
        )
    elif r.sourceCodeStart <= r.lineNumber <= r.sourceCodeEnd and not lines[r.lineNumber - r.sourceCodeStart].strip():
        yield "lineNumber", f"the line at lineNumber {r.lineNumber} is blank; it must be the raise site"


def _github_url(r: Record):
    if r.githubUrl != r.expected_github_url():
        yield "githubUrl", f"githubUrl is {r.githubUrl!r}, expected {r.expected_github_url()!r} (from repo, analyzedSha, filePath, lines)"


def _pattern_matches_message(r: Record):
    try:
        # Uncached: a build validates thousands of distinct patterns, and a cache would only hold them in memory.
        if not pattern_matches(r.messagePattern, r.errorMessage, cache=False):
            yield "messagePattern", "messagePattern does not match errorMessage"
    except PatternError as exc:
        yield "messagePattern", f"messagePattern {exc}"


def _unique_tags(r: Record):
    if len(set(r.tags)) != len(r.tags):
        yield "tags", "tags has duplicates"


# Each check with the fields it reads: a record with invalid fields still gets every check those spare.
CROSS_FIELD_CHECKS = [
    ({"lineNumber", "sourceCodeStart", "sourceCodeEnd"}, _integers_fit),
    ({"analyzedAt"}, _real_time),
    ({"analyzedSha"}, _real_commit),
    ({"lineNumber", "sourceCodeStart", "sourceCodeEnd"}, _line_in_excerpt),
    ({"sourceCode", "lineNumber", "sourceCodeStart", "sourceCodeEnd"}, _excerpt_lines),
    ({"githubUrl", "repo", "analyzedSha", "filePath", "sourceCodeStart", "sourceCodeEnd"}, _github_url),
    ({"messagePattern", "errorMessage"}, _pattern_matches_message),
    ({"tags"}, _unique_tags),
]


def _cross_field_problems(r: Record, usable: set[str] | None = None):
    """(field, message) for each cross-field rule r breaks; with `usable`, only rules reading just those fields."""
    for fields, check in CROSS_FIELD_CHECKS:
        if usable is None or fields <= usable:
            yield from check(r)


def cross_field_problems_of_valid_fields(data: dict, invalid: set[str]) -> list[tuple[str, str]]:
    """The cross-field rules that still apply to a record whose `invalid` fields failed validation."""
    usable = {name for name in Record.model_fields if name in data and name not in invalid}
    # Fields without errors passed strict validation, so their raw JSON values are already the right types.
    partial = Record.model_construct(**{name: data[name] for name in usable})
    return list(_cross_field_problems(partial, usable))


class Envelope(BaseModel):
    """The file form of a record, as the dataset ships it."""

    model_config = _STRICT

    record: Record
    datasetVersion: Timestamp

    @model_validator(mode="after")
    def _check_dataset_version(self) -> "Envelope":
        try:
            datetime.fromisoformat(self.datasetVersion.replace("Z", "+00:00"))
        except ValueError:
            raise CrossFieldError(
                [("datasetVersion", f"datasetVersion {self.datasetVersion!r} is not a real date and time")]
            ) from None
        return self


FIELD_DESCRIPTIONS = {
    "id": "16 lowercase hex digits identifying the record.",
    "repo": "GitHub repository (owner/name) whose code raises the error.",
    "slug": "Kebab-case name of the record, unique in the catalog; also its file name.",
    "errorCode": "A code the library attaches to the error, if any.",
    "errorMessage": "The exact message, as the analysed version produces it.",
    "messagePattern": "RE2 regular expression matching the message, tolerant of its variable parts.",
    "errorType": "Kind of error (validation, device, shape, distributed, ...).",
    "errorClass": "Exception or warning class raised, e.g. ValueError or UserWarning.",
    "httpStatus": "HTTP status, for errors surfaced over HTTP; otherwise null.",
    "severity": "critical, error, warning or info.",
    "filePath": "File in the repository that raises the error (relative path).",
    "lineNumber": "Line of the raise site in filePath.",
    "sourceCode": "Source excerpt from sourceCodeStart to sourceCodeEnd.",
    "sourceCodeStart": "First line of the excerpt.",
    "sourceCodeEnd": "Last line of the excerpt.",
    "githubUrl": "Link to the excerpt on GitHub at analyzedSha.",
    "documentation": "What happened and why.",
    "triggerScenarios": "What code paths and settings trigger the error.",
    "commonSituations": "Where people usually meet it.",
    "solutions": "Fixes, each checked by the record's reproduction.",
    "exampleFix": "Code before and after the fix.",
    "handlingStrategy": "How code should handle it (validation, guard, configuration, ...).",
    "validationCode": "Code that checks for the condition before it fails.",
    "typeGuard": "A type guard that prevents the error, if any.",
    "tryCatchPattern": "How to catch and handle the error, if that is sensible.",
    "preventionTips": "Habits that keep the error away.",
    "tags": "Kebab-case tags for facets.",
    "backgroundTag": "One tag naming the background of the error.",
    "analyzedSha": "40-hex commit of repo the excerpt and line were taken from.",
    "analyzedAt": "When the record was analysed (ISO 8601).",
    "schemaVersion": "Always 2.",
}
