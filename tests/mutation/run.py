"""Mutation testing of the modules whose mistakes would be silent (``tox -e mutation``).

A wrong environment filter leaks a credential, a wrong mount plan shows a bot the
database, a wrong verdict claims an order the data do not carry, a wrong deal guard
shows a hand still in play, a wrong strike count forfeits an innocent bot: none of
these crashes anything. So each target below is mutated (cosmic-ray: one small
change at a time: ``<`` for ``<=``, ``and`` for ``or``, a number off by one, a loop
that never runs ...) and the tests that guard it are run against every mutant; a
mutant the tests do not fail is a *survivor*, a change in behaviour nobody would
notice. The run prints the survivors of each target with their diffs.

Why a copy: cosmic-ray rewrites the module on disk, so each target runs in a copy
of the project (``git ls-files``, with uncommitted edits) whose package folders are
put first on ``PYTHONPATH``; the working tree and other tests never see a mutant.

Why a curated operator set: cosmic-ray replaces every binary operator by ten others
and every comparison by six; one mutant per plausible slip (boundary, negation,
sign, swapped connective, off-by-one constant, skipped loop) finds the same holes in
a tenth of the time.

Usage: ``python tests/mutation/run.py [TARGET ...] [--jobs N]`` (default: all targets).
"""

from __future__ import annotations

import argparse
import ast
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("sdk", "server", "bots", "proto")

#: The operators kept (regular expressions over cosmic-ray's names); see the module docstring.
OPERATORS = (
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Mod_FloorDiv|Pow_Mul)$",
    r"core/ReplaceComparisonOperator_(Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Eq_NotEq|NotEq_Eq|Is_IsNot|IsNot_Is)$",
    r"core/ReplaceUnaryOperator_(Delete_Not|USub_UAdd)$",
    r"core/(AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue|ReplaceAndWithOr|ReplaceOrWithAnd)$",
    r"core/(ReplaceBreakWithContinue|ReplaceContinueWithBreak|NumberReplacer|ZeroIterationForLoop)$",
)


@dataclass(frozen=True)
class Target:
    """One module (or the named functions and classes of it) and the tests that guard it."""

    name: str
    module: str
    tests: tuple[str, ...]
    #: Qualified names (``Class.method``, ``function``, ``Class``) to mutate; empty: the whole module.
    scopes: tuple[str, ...] = ()


SERVER = "server/sevenrocks/server"
TARGETS = (
    Target("sandbox", f"{SERVER}/sandbox/sandbox.py",
           ("tests/sandbox/test_plan.py", "tests/sandbox/test_sandbox_units.py"),
           ("Sandbox.environment", "Sandbox._bwrap_args", "Sandbox._rlimits", "Sandbox._private_view",
            "Sandbox._sources", "_under", "other_entrants_paths")),
    Target("view", f"{SERVER}/sandbox/view.py", ("tests/sandbox/test_bind_plan.py", "tests/sandbox/test_plan.py")),
    Target("verdict", f"{SERVER}/stats/verdict.py",
           ("tests/events/test_verdict_units.py", "tests/events/test_fit_verdict.py")),
    Target("record", f"{SERVER}/stats/record.py", ("tests/events/test_verdict_record.py",)),
    Target("fit", f"{SERVER}/stats/fit.py", ("tests/publish/test_fit_scale.py", "tests/events/test_verdict_units.py")),
    Target("planner", f"{SERVER}/events/planner.py", ("tests/events/test_planner.py",)),
    Target("dealguard", f"{SERVER}/referee/dealguard.py", ("tests/publish/test_deal_guard.py",)),
    Target("feed", f"{SERVER}/referee/feed.py", ("tests/publish/test_deal_guard.py",), ("FeedHub.visible",)),
    Target("faults", f"{SERVER}/referee/faults.py", ("tests/referee/test_fault_policy.py",)),
    Target("unpack", f"{SERVER}/submissions/unpack.py", ("tests/submissions/test_unpack.py",)),
    Target("shipping", f"{SERVER}/cluster/shipping.py", ("tests/cluster/test_shipping.py",)),
    Target("lifecycle", f"{SERVER}/events/lifecycle.py", ("tests/events/test_adjudication.py",),
           ("describe_returncode", "LaunchedBot.outside_signal", "Supervisor._crashed", "Supervisor.judge",
            "Supervisor._decide", "Supervisor._resolve", "Supervisor.end")),
)


def project_copy(dest: Path) -> None:
    """The tracked and new (not ignored) files of the project, as they are now."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def scope_lines(path: Path, scopes: tuple[str, ...]) -> list[tuple[int, int]]:
    """The line ranges (first, last) of the named functions and classes of ``path``."""
    tree = ast.parse(path.read_text())
    found: dict[str, tuple[int, int]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                found[name] = (child.lineno, child.end_lineno or child.lineno)
                walk(child, name + ".")

    walk(tree, "")
    missing = [s for s in scopes if s not in found]
    if missing:
        raise SystemExit(f"{path}: no {', '.join(missing)} to mutate (renamed? update tests/mutation/run.py)")
    return [found[s] for s in scopes]


def keep_only(session: Path, ranges: list[tuple[int, int]] | None, sample: int | None = None) -> tuple[int, int]:
    """Mark the work items outside ``ranges`` or the curated operators as skipped (and, with
    ``sample``, all but a seeded random sample of that many); returns (kept, all)."""
    import random
    import re

    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    wanted = re.compile("|".join(f"(?:{o})" for o in OPERATORS))
    kept = total = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        skips: list[str] = []
        chosen: list[str] = []
        for item in db.pending_work_items:
            total += 1
            ok = all(wanted.match(m.operator_name) and
                     (ranges is None or any(a <= m.start_pos[0] <= b for a, b in ranges)) for m in item.mutations)
            if ok:
                kept += 1
                chosen.append(item.job_id)
            else:
                skips.append(item.job_id)
        if sample is not None and len(chosen) > sample:
            keep = set(random.Random(1).sample(chosen, sample))
            skips += [j for j in chosen if j not in keep]
            kept = sample
        if skips:
            db.set_multiple_results(skips, WorkResult(output="not in scope", worker_outcome=WorkerOutcome.SKIPPED))
    return kept, total


def survivors(session: Path) -> list[tuple[str, str]]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    out = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.test_outcome == TestOutcome.SURVIVED:
                m = item.mutations[0]
                out.append((f"line {m.start_pos[0]} {m.operator_name.removeprefix('core/')} #{m.occurrence}",
                            result.diff or ""))
    return sorted(out, key=lambda s: int(s[0].split()[1]))


def counts(session: Path) -> dict[str, int]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    c = {"killed": 0, "survived": 0, "incompetent": 0, "skipped": 0, "error": 0}
    with use_db(str(session), WorkDB.Mode.open) as db:
        for _, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                c["skipped"] += 1
            elif result.test_outcome == TestOutcome.KILLED:
                c["killed"] += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                c["survived"] += 1
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                c["incompetent"] += 1
            else:
                c["error"] += 1
    return c


def run_target(t: Target, work: Path, report: Path, sample: int | None = None) -> str:
    copy = work / t.name
    copy.mkdir(parents=True)
    project_copy(copy)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy / d) for d in PACKAGE_DIRS] + [env.get("PYTHONPATH", "")])
    # A sandbox test that cannot run bubblewrap under a mutant must fail, not skip.
    env["SEVENROCKS_REQUIRE_SANDBOX"] = "1"
    test_cmd = shlex.join([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                           *t.tests])
    start = time.monotonic()
    baseline = subprocess.run(test_cmd, shell=True, cwd=copy, env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    if baseline.returncode != 0:
        return f"## {t.name}: the tests fail without any mutant\n{baseline.stdout[-3000:]}\n"
    config = copy / "cosmic-ray.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {t.module!r}\n"
        f"timeout = {max(60.0, 10 * took):.0f}\n"
        "excluded-modules = []\n"
        f"test-command = {test_cmd!r}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n")
    session = copy / "session.sqlite"
    cr = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cr, "init", str(config), str(session)], cwd=copy, env=env, check=True, capture_output=True)
    ranges = scope_lines(copy / t.module, t.scopes) if t.scopes else None
    kept, total = keep_only(session, ranges, sample)
    subprocess.run([*cr, "exec", str(config), str(session)], cwd=copy, env=env, check=True, capture_output=True)
    c = counts(session)
    lines = [f"## {t.name}: {t.module}" + (f" ({', '.join(t.scopes)})" if t.scopes else ""),
             f"tests: {' '.join(t.tests)} (baseline {took:.1f} s)",
             f"mutants: {kept} of {total} in scope" + (f" (a seeded sample of {sample})" if sample else "")
             + f"; killed {c['killed']}, survived {c['survived']}, "
             f"incompetent {c['incompetent']}, errors {c['error']}"]
    for where, diff in survivors(session):
        lines += [f"- survived: {where}", "```diff", diff.strip(), "```"]
    text = "\n".join(lines) + "\n"
    report.write_text(text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="*", help=f"any of: {', '.join(t.name for t in TARGETS)}")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "mutation", help="reports (one .md per target)")
    parser.add_argument("--tests", help="run these tests instead of each target's own (one string: pytest's arguments)")
    parser.add_argument("--sample", type=int, help="test a seeded random sample of this many mutants per target")
    parser.add_argument("--jobs", type=int, default=1, help="targets mutated at once")
    parser.add_argument("--keep", action="store_true", help="keep the project copies (in the report folder)")
    args = parser.parse_args()
    unknown = set(args.targets) - {t.name for t in TARGETS}
    if unknown:
        parser.error(f"unknown target(s) {', '.join(sorted(unknown))}")
    chosen = [t for t in TARGETS if not args.targets or t.name in args.targets]
    if args.tests:
        chosen = [Target(t.name, t.module, tuple(shlex.split(args.tests)), t.scopes) for t in chosen]
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sevenrocks-mutation-", dir=args.out if args.keep else None))
    survived = 0
    try:
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for text in pool.map(lambda t: run_target(t, work, args.out / f"{t.name}.md", args.sample), chosen):
                print(text, flush=True)
                survived += text.count("- survived:")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{survived} surviving mutant(s) in {len(chosen)} target(s); reports in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
