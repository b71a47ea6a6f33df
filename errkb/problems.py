"""A problem found in an input file, and the exception that carries a list of them."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    file: str
    path: str  # JSON path of the field, "$" for the whole document
    message: str  # what was found and what was expected

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message}"


class InvalidInput(Exception):
    """Raised with every problem found; nothing has been written when it is raised."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def json_path(loc: tuple) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def describe(value: object, limit: int = 60) -> str:
    """A short JSON rendering of a found value, for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
