"""No project file sends a reader outside the repository: the docs carry what users need."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
#: Written in pieces so that this file does not match itself.
FORBIDDEN = re.compile("|".join([
    re.escape("../" + "shared"), r"(?-i:\b(DESIGN|RULES|RECORDS|STYLE)\.md\b)", "closing " + "note",
    r"\bthe " + r"issue\b", r"\bissue " + r"\d+\b",
]), re.IGNORECASE)
SKIP_DIRS = {".git", ".venv", "venv", ".tox", "node_modules", "target", "build", "dist", "__pycache__",
             ".mypy_cache", ".pytest_cache", ".hypothesis", "site"}
TEXT = {".py", ".pyi", ".md", ".toml", ".proto", ".ini", ".cfg", ".txt", ".yml", ".yaml", ".html", ".j2",
        ".js", ".ts", ".rs", ".json", ""}


def project_files() -> list[Path]:
    out = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in rel.parts) or rel.parts[:2] == ("tests", "data"):
            continue
        if path.is_file() and (path.suffix in TEXT or rel.parts[0] == ".ci"):
            out.append(path)
    return out


def test_no_file_refers_to_material_outside_the_repository() -> None:
    found = []
    for path in project_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            if FORBIDDEN.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "point these at the project's own docs instead:\n" + "\n".join(found)
