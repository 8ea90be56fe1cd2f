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


PRODUCT = [SERVER, SERVER.parents[2] / "sdk" / "sevenrocks" / "sdk", SERVER.parents[2] / "bots" / "sevenrocks" / "bots"]
#: A folder past this many modules hides its parts (events/ had grown to 22 before the league, cluster and versions moved out).
MAX_MODULES = 16


def product_folders() -> list[Path]:
    return sorted({p.parent for root in PRODUCT for p in root.rglob("*.py") if "__pycache__" not in p.parts})


@pytest.mark.parametrize("folder", product_folders(), ids=lambda p: str(p.relative_to(SERVER.parents[2])))
def test_no_product_folder_holds_more_than_16_modules(folder: Path) -> None:
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MAX_MODULES, f"{folder} holds {len(modules)} modules (at most {MAX_MODULES}): split it"


def private_imports_across_folders(path: Path) -> list[str]:
    """Leading-underscore names ``path`` imports from a module of another folder (``from ..x.y import _z``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        crosses = isinstance(node, ast.ImportFrom) and (node.level >= 2 or (
            node.level == 0 and (node.module or "").startswith("sevenrocks.")
            and not (node.module or "").startswith(f"sevenrocks.server.{path.parent.name}")))
        if crosses:
            assert isinstance(node, ast.ImportFrom)
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_") and a.name != "__version__"]
    return found


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_no_module_imports_a_private_name_from_another_folder(folder: str) -> None:
    wrong = {m.name: names for m in sorted((SERVER / folder).glob("*.py")) if (names := private_imports_across_folders(m))}
    assert not wrong, f"server/{folder}/ imports private names of other folders (make them public): {wrong}"


def subcommand_modules() -> set[str]:
    """The cli modules that hold a subcommand (``sevenrocks.server.cli.COMMANDS``), read from the source."""
    tree = ast.parse((SERVER / "cli" / "__init__.py").read_text())
    return {c.value.rsplit(".", 1)[1] for c in ast.walk(tree)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.startswith("sevenrocks.server.cli.")}


def sideways_cli_imports(path: Path, subcommands: set[str]) -> set[str]:
    """The subcommand modules a cli module imports (``from .tournament import ...``), itself left out."""
    return (module_imports(path) & subcommands) - {path.stem}


def test_no_cli_module_imports_a_subcommand_module() -> None:
    """What subcommands share lives in cli/common.py (and league_run.py serves only `league`): one subcommand
    is never another's library."""
    subcommands = subcommand_modules()
    assert {"tournament", "league", "publish", "submit"} <= subcommands
    wrong = {m.name: s for m in sorted((SERVER / "cli").glob("*.py")) if (s := sideways_cli_imports(m, subcommands))}
    assert not wrong, f"cli modules import other subcommands' modules (move what they share to cli/common.py): {wrong}"


def test_the_guards_catch_an_upward_a_sideways_and_a_private_import(tmp_path: Path) -> None:
    """The checks above fail on the imports they forbid (each rule held against a module that breaks it)."""
    events = tmp_path / "events"
    events.mkdir()
    up = events / "up.py"
    up.write_text("from ..league.runner import League\nfrom sevenrocks.server.web import server\n")
    assert server_imports(up) - ALLOWED["events"] == {"league", "web"}
    cli = tmp_path / "cli"
    cli.mkdir()
    side = cli / "duel.py"
    side.write_text("from .common import BadInput\nfrom .tournament import make_executor\n")
    assert sideways_cli_imports(side, subcommand_modules()) == {"tournament"}
    private = events / "private.py"
    private.write_text("from ..versions.snapshots import _remove as remove_tree\nfrom .store import _ok\n")
    assert private_imports_across_folders(private) == ["versions.snapshots._remove"]
