"""Code fields stand alone: the names a record's code text reads without defining them itself.

A user copies `exampleFix` (its "# after" part), `validationCode`, `typeGuard` or `tryCatchPattern` into their own
program, where only their own objects exist. So each text may read only what it defines or imports, the builtins,
and the user's objects its reproduction declares in `CODE_NAMES = {field: [names]}`. pyflakes finds the names read
before (or without) any definition, with Python's scoping rules: a name read at the top level before it is
assigned (`h = h.detach()`), inside a function, a comprehension or a class body.
"""

from __future__ import annotations

import ast

from pyflakes.checker import Checker
from pyflakes.messages import UndefinedName

from .errkb_record import is_config, sections


class NotPython(ValueError):
    """The code text does not parse."""


def checked_text(field: str, code: str) -> str | None:
    """What must stand alone: an exampleFix's "# after" part (the whole text when it has none), any other field's
    whole text; None for a config diff (JSON, no names)."""
    if is_config(code):
        return None
    if field == "exampleFix":
        after = [part for name, part in sections(code) if name == "after"]
        if after:
            return "\n".join(after)
    return code


def free_names(code: str) -> list[str]:
    """Names the code reads that it never defines (nor imports), in order of first use, without builtins."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise NotPython(f"line {exc.lineno}: {exc.msg}") from None
    names: list[str] = []
    for message in Checker(tree, builtins=()).messages:
        if isinstance(message, UndefinedName) and message.message_args[0] not in names:
            names.append(message.message_args[0])
    return names

