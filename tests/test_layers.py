"""The server's folders import downwards only (docs/design.md, "The server's layout").

Read with ``ast`` rather than by importing, so a lazily imported module inside a
function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[1] / "server" / "sevenrocks" / "server"
#: Folder -> the server folders it may import (besides itself). The SDK and engine are always allowed.
ALLOWED = {
    "sandbox": set(),
    "referee": {"sandbox"},
    "stats": set(),
    "check": {"referee", "sandbox"},
    "events": {"referee", "sandbox", "stats", "check"},
    "versions": {"sandbox", "events"},
    "cluster": {"referee", "sandbox", "events", "versions"},
    "league": {"referee", "sandbox", "stats", "events", "versions", "cluster"},
    "publish": {"events", "stats"},
    "submissions": {"sandbox", "check", "events", "versions", "league"},
    "web": {"referee", "sandbox", "events", "publish", "stats", "league", "submissions"},
    "cli": {"referee", "sandbox", "stats", "check", "events", "versions", "cluster", "league", "publish", "web",
            "submissions"},
}


def server_imports(path: Path) -> set[str]:
    """The server folders a module imports (absolute or relative)."""
    here = path.parent.name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                found.add(here)
            elif node.level == 2 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 0 and node.module and node.module.startswith("sevenrocks.server."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sevenrocks.server."):
                    found.add(alias.name.split(".")[2])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.startswith("sevenrocks.server."):
            found.add(node.value.split(".")[2])  # importlib.import_module("sevenrocks.server.x...")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("sevenrocks.bots"):
            found.add("bots")
    return found - {here}


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_a_server_folder_imports_only_the_folders_below_it(folder: str) -> None:
    modules = sorted((SERVER / folder).glob("*.py"))
    assert modules, f"server/{folder}/ has no modules"
    wrong = {m.name: server_imports(m) - ALLOWED[folder] for m in modules}
    assert not {k: v for k, v in wrong.items() if v}, f"server/{folder}/ imports upwards: {wrong}"


def test_every_server_module_lives_in_a_folder() -> None:
    assert sorted(p.name for p in SERVER.glob("*.py")) == ["__init__.py"]
    assert {p.name for p in SERVER.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(ALLOWED)


def module_imports(path: Path) -> set[str]:
    """The sibling modules a module imports with ``from .x import`` (type-checking imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_no_import_circle_inside_a_folder(folder: str) -> None:
    """Modules of one folder import each other without a circle (e.g. referee/match <-> server)."""
    graph = {m.stem: module_imports(m) for m in (SERVER / folder).glob("*.py")}
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == path[0]:
                circles.append(path + [nxt])
            elif nxt not in path and nxt in graph and nxt > path[0]:
                visit(nxt, path + [nxt])

    for start in sorted(graph):
        visit(start, [start])
    assert not circles, f"server/{folder}/ has import circles: {circles}"
