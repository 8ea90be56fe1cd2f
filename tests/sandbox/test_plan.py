"""The sandbox's plan for a bot, read as data (fast: no bot is started).

What a bot inherits and what bubblewrap is told to give it decide what it can see;
a slip there shows nothing until an attacker looks. These check the plan against
docs/security.md: the environment is cut to the documented variables, every
namespace is unshared, system folders and the bot's own files are read-only, the
harness's files inside a bound folder are covered, the referee's socket is the only
way out, and the resource limits are set. test_containment_modes.py runs real bots.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.sandbox.sandbox import (
    BOT_SOCKET, ENV_KEEP, SYSTEM_DIRS, Limits, Sandbox, SandboxSettings, _bwrap_has, _under, command_paths, other_entrants_paths)

from .helpers import require_bwrap

HARNESS_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "PYTHONPATH": "/x",
               "PYTHONHASHSEED": "0", "SEVENROCKS_LOG": "info", "SECRET_CREDENTIAL": "hunter2",
               "SEVENROCKS_TOKEN": "the-harness-token", "AWS_SECRET_ACCESS_KEY": "k", "HOME": "/root"}


def spec_of(argv: list[str]) -> dict[str, Any]:
    i = argv.index("--")
    return json.loads(argv[i - 1])


def test_the_environment_is_cut_to_the_documented_variables() -> None:
    for mode in ("rlimits", "bwrap"):
        sb = Sandbox.__new__(Sandbox)
        sb.mode = mode  # type: ignore[assignment]
        env = sb.environment(HARNESS_ENV)
        assert env == {k: v for k, v in HARNESS_ENV.items()
                       if k in ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "PYTHONHASHSEED", "SEVENROCKS_LOG")}
    assert set(ENV_KEEP) >= {"PATH", "LANG", "TZ", "PYTHONPATH", "SEVENROCKS_LOG"}
    assert not any(k.startswith("SEVENROCKS_TOKEN") or "SECRET" in k for k in ENV_KEEP)
    off = Sandbox.__new__(Sandbox)
    off.mode = "off"  # type: ignore[assignment]
    assert off.environment(HARNESS_ENV) == HARNESS_ENV  # documented: off hands over everything


def pairs(args: list[str], flag: str) -> list[tuple[str, str]]:
    return [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a == flag]


@pytest.fixture
def bwrap_plan(tmp_path: Path) -> Iterator[tuple[dict[str, Any], dict[str, str], Path]]:
    require_bwrap()
    os.chmod(tmp_path, 0o755)
    folder = tmp_path / "bots"
    folder.mkdir(mode=0o755)
    script = folder / "mine.py"
    script.write_text("print('hi')\n")
    (folder / "event.db").write_text("secret")
    rival = folder / "rival.py"
    rival.write_text("print('rival')\n")
    logs = folder / "logs"
    logs.mkdir()
    with Sandbox(SandboxSettings("bwrap", Limits(memory_mb=256, max_open_files=64, cpu_seconds=7)),
                 hidden=[folder / "event.db", logs]) as sb:
        prep = sb.prepare([sys.executable, str(script)], sb.environment(HARNESS_ENV), "mine", others=[rival])
        spec = spec_of(prep.argv)
        assert prep.argv[-2:] == [sys.executable, str(script)]
        yield spec, prep.env, folder  # inside the run: its stand-in files still exist
        sb.release(prep)


def test_bubblewrap_unshares_everything_and_binds_read_only(bwrap_plan: tuple[dict[str, Any], dict[str, str], Path]
                                                            ) -> None:
    spec, env, folder = bwrap_plan
    args: list[str] = spec["bwrap_args"]
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
                 "--die-with-parent", "--new-session"):
        assert flag in args, flag
    assert args[args.index("--cap-drop") + 1] == "ALL"
    if _bwrap_has("--disable-userns"):  # no new user namespaces inside, where bubblewrap can forbid them
        assert "--disable-userns" in args
    assert "--bind" not in args and "--dev-bind" not in args, "everything bound is read-only"
    ro = pairs(args, "--ro-bind")
    targets = [dest for _, dest in ro]
    for d in SYSTEM_DIRS:
        if os.path.isdir(d) and not os.path.islink(d):
            assert d in targets, d
    # The bot's folder (a script's siblings import), read-only: bound whole, or rebuilt entry by entry.
    assert str(folder) in targets or str(folder / "mine.py") in targets
    # The harness's files and the other entrant's are not in its view: never bound from where they
    # are (a rebuilt folder leaves them out; a folder bound whole has empty stand-ins over them).
    for hidden in (folder / "event.db", folder / "logs", folder / "rival.py"):
        assert all(src != str(hidden) for src, _ in ro), hidden
        covering = [src for src, dest in ro if dest == str(hidden)]
        assert all("empty" in Path(src).name for src in covering), (hidden, covering)
    # The bot's own socket folder is the only way out; the bot starts in the folder the harness
    # was started from (read-only), or its private /tmp when that cannot be its working folder.
    assert targets[-1] == os.path.dirname(BOT_SOCKET)
    assert args[args.index("--chdir") + 1] in ("/tmp", os.getcwd())
    size = args.index("--size")
    assert args[size + 1] == str(256 * 2**20) and args[size + 2:size + 4] == ["--tmpfs", "/tmp"]
    assert ("--proc", "/proc") == tuple(args[args.index("--proc"):args.index("--proc") + 2])
    assert env["HOME"] == env["TMPDIR"] == "/tmp" and "SECRET_CREDENTIAL" not in env
    # The limits every mode but off sets before the bot's first instruction.
    lim = spec["rlimits"]
    assert lim["RLIMIT_NOFILE"] == [64, 64] and lim["RLIMIT_CPU"] == [7, 8]
    assert lim["RLIMIT_FSIZE"] == [10 * 10 * 2**20] * 2 and lim["RLIMIT_CORE"] == [0, 0]
    assert spec["supervise"] is True and spec["parent"] == os.getpid()


def test_rlimits_without_cgroups_bound_memory_and_processes_per_process(tmp_path: Path) -> None:
    with Sandbox(SandboxSettings("rlimits", Limits(memory_mb=128, max_processes=32, max_open_files=0, log_mb=0,
                                                   cpu_seconds=0))) as sb:
        lim = sb._rlimits(None)  # no cgroup: the per-process limits stand in
        assert lim == {"RLIMIT_CORE": [0, 0], "RLIMIT_DATA": [128 * 2**20] * 2, "RLIMIT_NPROC": [32, 32]}
        sb.limits = Limits(memory_mb=0, max_processes=0, max_open_files=0, log_mb=0)  # 0: no limit at all
        assert sb._rlimits(None) == {"RLIMIT_CORE": [0, 0]}
        prep = sb.prepare([sys.executable, "-c", "pass"], sb.environment(HARNESS_ENV), "solo")
        try:
            spec = spec_of(prep.argv)
            tmp = Path(prep.env["HOME"])
            # It starts where the harness was started (as under bwrap) when its uid may enter, else in its /tmp.
            assert prep.env["TMPDIR"] == str(tmp) and spec["cwd"] in (str(tmp), os.getcwd()) and tmp.is_dir()
            assert tmp.stat().st_mode & 0o777 == 0o700 and "bwrap" not in spec
            assert "SECRET_CREDENTIAL" not in prep.env
        finally:
            sb.release(prep)
        assert not tmp.exists()


def test_command_paths_and_other_entrants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "w").mkdir()
    argv, named = command_paths(["python", "bot.py", "--model", "w/", "-x", "missing.py", "./w"])
    assert argv == ["python", str(tmp_path / "bot.py"), "--model", str(tmp_path / "w"), "-x", "missing.py",
                    str(tmp_path / "w")]
    assert named == [tmp_path / "bot.py", tmp_path / "w", tmp_path / "w"]
    commands = {"me": ["python", str(tmp_path / "bot.py")], "you": ["python", str(tmp_path / "w")]}
    assert other_entrants_paths(commands, "me") == [tmp_path / "w"]
    assert other_entrants_paths(commands, "you") == [tmp_path / "bot.py"]
    assert _under(Path("/a/b/c"), ["/a/b/"]) and _under(Path("/a/b"), ["/a/b"]) and not _under(Path("/a/bc"), ["/a/b"])
