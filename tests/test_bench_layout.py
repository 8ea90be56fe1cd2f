"""bench/ keeps its rooms: every benchmark listed by bench/run.py, no import circle, helpers in bench/common only.

A benchmark is a script in a folder of bench/ (``bench/<group>/<script>.py``, run in a
process of its own); what several benchmarks share lives in ``bench/common`` (docs/scale.md,
"The benchmarks"). Imports are read with ``ast`` rather than by importing, so a lazy
import inside a function counts too, and nothing here starts a benchmark.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
HELPERS = BENCH / "common"
#: The only modules directly in bench/: the runner and the package's docstring.
TOP = {"run.py", "__init__.py"}


def modules() -> list[Path]:
    return sorted(p for p in BENCH.rglob("*.py") if "data" not in p.relative_to(BENCH).parts)


@functools.cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def is_baseline(path: Path) -> bool:
    """A benchmark's baseline: the old code it times in the same run, kept beside it."""
    return path.stem.startswith("baseline_")


def bench_benchmarks() -> list[Path]:
    """What bench/run.py must list: every script of bench/ but the runner, the helpers and the baselines."""
    return [p for p in modules() if p.parent != HELPERS and p.name != "__init__.py"
            and p != BENCH / "run.py" and not is_baseline(p)]


def imported(path: Path) -> dict[Path, int]:
    """The bench modules ``path`` imports (line of the first import of each), as a script run from its folder
    resolves them: ``bench.common.x`` from the checkout's root, a bare ``x`` from the script's own folder."""
    found: dict[Path, int] = {}

    def add(target: Path, line: int) -> None:
        if target.is_file() and target != path:
            found.setdefault(target, line)

    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "bench":
                add(ROOT.joinpath(*parts).with_suffix(".py"), node.lineno)
            else:
                add(path.parent / f"{parts[0]}.py", node.lineno)
    return found


def test_bench_holds_folders_not_scripts() -> None:
    """bench/ itself holds only the runner: every benchmark sits in the folder of what it measures."""
    loose = [p.name for p in BENCH.glob("*.py") if p.name not in TOP]
    assert loose == [], f"scripts directly in bench/ (move each into bench/<group>/ or bench/common/): {loose}"


def test_every_benchmark_is_listed_by_run_py_with_its_group() -> None:
    out = subprocess.run([sys.executable, str(BENCH / "run.py"), "--list"], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, f"bench/run.py --list failed: {out.stdout[-300:]} {out.stderr[-600:]}"
    listed = {line.split()[1] for line in out.stdout.splitlines() if line.startswith("  ")}
    missing = sorted(str(p.relative_to(ROOT)) for p in bench_benchmarks() if str(p.relative_to(ROOT)) not in listed)
    assert missing == [], f"benchmarks bench/run.py --list does not name: {missing}"
    groups = {line.split()[0].rstrip("/"): line.split(None, 1)[1:] for line in out.stdout.splitlines()
              if line and not line.startswith(" ")}
    for path in bench_benchmarks():
        assert path.parent.name in groups, f"{path.relative_to(ROOT)}: its group is not listed"
        assert groups[path.parent.name], f"bench/{path.parent.name}/ has no description in bench/run.py's GROUPS"


def test_bench_has_no_import_circle() -> None:
    graph = {p: set(imported(p)) for p in modules()}
    state: dict[Path, int] = {}
    stack: list[Path] = []

    def visit(node: Path) -> list[Path] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in graph:
        if start not in state and (cycle := visit(start)):
            raise AssertionError("import circle in bench/: " + " -> ".join(str(p.relative_to(BENCH)) for p in cycle))


def test_shared_code_lives_in_bench_common_only() -> None:
    """A module that another imports is a helper (in bench/common) or a baseline beside its benchmark;
    no benchmark is another's library, and a helper never imports a benchmark."""
    wrong = []
    for path in modules():
        for target, line in imported(path).items():
            beside_baseline = is_baseline(target) and target.parent == path.parent
            if target.parent != HELPERS and not beside_baseline:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target.relative_to(ROOT)}")
    assert wrong == [], "shared code outside bench/common: " + "; ".join(wrong)


def test_every_bench_import_resolves() -> None:
    """Each import of a bench script names a module that exists where the script will look for it, and a
    ``from bench.common.x import name`` a name x defines: a moved file cannot leave a dangling import."""
    elsewhere = {p.stem: p.relative_to(ROOT) for p in modules() if p.name != "__init__.py"}
    broken = []
    for path in modules():
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top, names = node.module.split(".")[0], [a.name for a in node.names]
                module = node.module
            elif isinstance(node, ast.Import):
                top, names, module = node.names[0].name.split(".")[0], [], node.names[0].name
            else:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if top == "bench":
                target = ROOT.joinpath(*module.split(".")).with_suffix(".py")
                if not target.is_file():
                    broken.append(f"{where}: no {target.relative_to(ROOT)}")
                    continue
                body = tree(target).body
                defined = {t.id for n in body if isinstance(n, (ast.Assign, ast.AnnAssign))
                           for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
                defined |= {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
                broken += [f"{where}: {module} defines no {n}" for n in names if n not in defined]
            elif top in elsewhere and not (path.parent / f"{top}.py").is_file():
                broken.append(f"{where}: {top} is {elsewhere[top]}, not beside this script (import bench.common.{top}?)")
    assert broken == [], "; ".join(broken)
