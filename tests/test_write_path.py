"""One write path and no circles (issue 21, Must 6): store (files) and catalog (the database) never import each
other, the write-path modules form no import cycle, and none imports inside a function to dodge one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "errkb"
WRITE_PATH = ["store", "catalog", "lock", "runs", "verifications", "ingest", "matching.index", "writes", "signing",
              "layout", "reproduce.history"]


def imports(module: str) -> tuple[set[str], list[str]]:
    """(errkb modules imported at the top level, those imported inside a function) of errkb.<module>."""
    path = PACKAGE.joinpath(*module.split(".")).with_suffix(".py")
    package = module.rsplit(".", 1)[0] if "." in module else ""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def targets(node) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name.removeprefix("errkb.") for a in node.names if a.name.startswith("errkb")]
        if not node.level:
            return [node.module.removeprefix("errkb.")] if (node.module or "").startswith("errkb") else []
        base = package.split(".") if package else []
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
        found = []
        for alias in node.names:
            candidate = f"{stem}.{alias.name}" if stem else alias.name
            exists = PACKAGE.joinpath(*candidate.split(".")).with_suffix(".py").exists()
            found.append(candidate if exists else stem)
        return found

    top = {t for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) for t in targets(node)}
    inner = [t for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for node in ast.walk(f) if isinstance(node, (ast.Import, ast.ImportFrom)) for t in targets(node)]
    return top, inner


def test_store_and_catalog_never_import_each_other():
    assert "catalog" not in imports("store")[0] | set(imports("store")[1])
    assert "store" not in imports("catalog")[0] | set(imports("catalog")[1])
    assert "lock" not in imports("catalog")[0] and "lock" not in imports("store")[0]  # writes.py takes the lock


def test_the_write_path_has_no_cycle_and_no_function_level_imports():
    graph = {module: imports(module)[0] for module in WRITE_PATH}
    for module in WRITE_PATH:
        assert imports(module)[1] == [], f"errkb.{module} imports inside a function: {imports(module)[1]}"

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for follower in graph.get(start, ()):
            if follower == goal or (follower not in seen and follower in graph and reaches(follower, goal, seen | {follower})):
                return True
        return False

    cycles = [module for module in WRITE_PATH if reaches(module, module, set())]
    assert cycles == [], f"import cycle through {cycles}"


def test_the_check_sees_a_planted_cycle(tmp_path, monkeypatch):
    """The checker itself can fail: a module importing its importer is a cycle."""
    planted = tmp_path / "errkb"
    for module in ("store", "catalog"):
        (planted / f"{module}.py").parent.mkdir(parents=True, exist_ok=True)
    (planted / "store.py").write_text("from .catalog import x\n")
    (planted / "catalog.py").write_text("def f():\n    from .store import y\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", planted)
    assert imports("store")[0] == {"catalog"} and imports("catalog")[1] == ["store"]
