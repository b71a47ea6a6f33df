"""A user's snippet as the body of a reproduction's trigger(): every statement inside the function (an import
that fails is then the trigger's error, not the module's), the `if __name__ == "__main__":` guard opened."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path


class SnippetError(ValueError):
    pass


def read_snippet(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnippetError(f"cannot read the snippet {path}: {exc}") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise SnippetError(f"{path}: line {exc.lineno}: not valid Python: {exc.msg}") from None
    if not tree.body:
        raise SnippetError(f"{path} is empty: nothing to run")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            raise SnippetError(f"{path}: line {node.lineno}: `from {node.module} import *` cannot run inside trigger(); "
                               "import the names it uses")
        if isinstance(node, ast.Global) and node in tree.body:
            raise SnippetError(f"{path}: line {node.lineno}: a module-level `global` cannot run inside trigger()")
    return text


def trigger_body(text: str) -> str:
    """The snippet's statements, indented for `def trigger():`, with a top-level main guard made unconditional and
    `from __future__` imports dropped (they must be a module's first statement)."""
    tree = ast.parse(text)
    lines = text.splitlines()
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_guard(node.test):
            first = node.test.lineno - 1
            lines[first] = lines[first].replace(ast.get_source_segment(text, node.test), "True  # was: __name__ == \"__main__\"", 1)
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for number in range(node.lineno - 1, node.end_lineno):
                lines[number] = ""
    body = textwrap.indent("\n".join(lines).strip("\n"), "    ")
    return body or "    pass"


def _is_main_guard(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def imported_modules(text: str) -> set[str]:
    """Top-level names of the modules the snippet imports (torch, transformers, ...)."""
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names - {"__future__"}
