"""The starter kits (examples/bots/node, examples/bots/rust) build and play real matches.

Each kit is built the way its README says (``npm ci``; ``./build.sh``), then run
through ``sevenrocks check`` (every phase must pass) and one ``sevenrocks match``
whose record must verify. The builds are reused: ``node_modules/`` and ``target/``
stay in the kit folders (git-ignored), so a second run only checks and plays.
Node.js and cargo are on the CI image, and ``.ci/run`` installs Debian's crates and
protoc: with ``CI=true`` a missing tool fails these tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.server.cli import cli

from ..fresh_env import fresh_env
from ..user_paths import expect_success, require_default_sandbox, sh_commands

ROOT = Path(__file__).resolve().parents[2]
NODE_KIT = ROOT / "examples" / "bots" / "node"
RUST_KIT = ROOT / "examples" / "bots" / "rust"
RUST_BIN = RUST_KIT / "target" / "release" / "sevenrocks-rust-bot"


def need(tool: str, why: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {tool} is not installed ({why}); .ci/run should have installed it")
        pytest.skip(f"{tool} is not installed ({why})")
    return path


def build(argv: list[str], cwd: Path, timeout: float) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(argv)} failed in {cwd}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def node_bot() -> list[str]:
    node = need("node", "the Node.js kit")
    need("npm", "the Node.js kit")
    stamp = NODE_KIT / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < (NODE_KIT / "package-lock.json").stat().st_mtime:
        build(["npm", "ci", "--no-audit", "--no-fund"], NODE_KIT, 600)
    return [node, str(NODE_KIT / "bot.js")]


@pytest.fixture(scope="module")
def rust_bot() -> list[str]:
    need("cargo", "the Rust kit")
    need("protoc", "prost-build runs it: apt-get install protobuf-compiler")
    build([str(RUST_KIT / "build.sh")], RUST_KIT, 1200)  # a no-op when target/ is up to date
    assert RUST_BIN.exists()
    return [str(RUST_BIN)]


def cli_run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def passes_check(command: list[str]) -> None:
    code, out = cli_run("check", "--tight", "500", "--", *command)  # 500: a shared 2-core CI machine
    assert code == 0, out
    assert "faults: none" in out and "protocol notices: none" in out
    assert out.rstrip().splitlines()[-1].startswith("PASS: 11 phases"), out


def plays_a_match(command: list[str], tmp_path: Path, ruleset: list[str]) -> None:
    import shlex

    me = shlex.join(command)
    seats = [me, "greedy", me, "greedy"] if ruleset == ["--ruleset", "seven-rocks"] else [me, "greedy", me]
    args = ["match", *ruleset, "--seed", "4", "--records", str(tmp_path), "--match-id", "kit"]
    for s in seats:
        args += ["--seat", s]
    code, out = cli_run(*args)
    assert code == 0, out
    assert "forfeit" not in out, out
    assert "target after" in out or "round_cap after" in out, out
    code, out = cli_run("verify", str(tmp_path / "kit.jsonl"))
    assert code == 0, out


def test_node_kit_passes_the_check(node_bot: list[str]) -> None:
    passes_check(node_bot)


def test_node_kit_plays_a_match(node_bot: list[str], tmp_path: Path) -> None:
    plays_a_match(node_bot, tmp_path, ["--ruleset", "seven-rocks"])


def test_rust_kit_passes_the_check(rust_bot: list[str]) -> None:
    passes_check(rust_bot)


def test_rust_kit_plays_a_match(rust_bot: list[str], tmp_path: Path) -> None:
    plays_a_match(rust_bot, tmp_path, ["--ruleset", "fives"])


@pytest.mark.parametrize("kit", ["node", "rust"])
def test_kits_explain_their_settings(kit: str, request: pytest.FixtureRequest) -> None:
    command: list[str] = request.getfixturevalue(f"{kit}_bot")
    env = fresh_env()
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0 and "SEVENROCKS_REFEREE" in done.stdout and "unix:/path" in done.stdout
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 2 and "set SEVENROCKS_REFEREE and SEVENROCKS_TOKEN" in done.stderr


@pytest.mark.parametrize("kit", ["node", "rust"])
def test_kits_stop_on_a_refused_token(kit: str, request: pytest.FixtureRequest) -> None:
    """UNAUTHENTICATED is final: the kit exits 2 with the referee's reason instead of retrying."""
    import asyncio

    from sevenrocks.server.referee import Referee

    command: list[str] = request.getfixturevalue(f"{kit}_bot")

    async def attempt() -> tuple[int, str]:
        referee = Referee({"someone": "the-right-token"})
        port = await referee.start("127.0.0.1:0")
        try:
            env = {**os.environ, "SEVENROCKS_REFEREE": f"127.0.0.1:{port}", "SEVENROCKS_TOKEN": "a-wrong-token"}
            proc = await asyncio.create_subprocess_exec(*command, env=env, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
            assert proc.returncode is not None
            return proc.returncode, out.decode()
        finally:
            await referee.stop()

    code, out = asyncio.run(attempt())
    assert code == 2, out
    assert "missing or unknown token" in out


@pytest.mark.parametrize("kit", ["node", "rust"])
def test_kits_dial_a_unix_socket(kit: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """SEVENROCKS_REFEREE may be unix:/path: each kit plays a clean match over one."""
    import asyncio

    from sevenrocks.sdk.rules import make_ruleset
    from sevenrocks.server.referee import Referee
    from sevenrocks.server.sandbox.launch import BotProcess

    command: list[str] = request.getfixturevalue(f"{kit}_bot")
    address = f"unix:{tmp_path}/referee.sock"

    async def play() -> None:
        tokens = {"a": "token-a", "b": "token-b"}
        referee = Referee(tokens)
        await referee.start(address)
        procs = [BotProcess().start(command, address, tokens[n], tmp_path / f"{n}.log", entrant=n) for n in tokens]
        try:
            m = await referee.play_match("unix", make_ruleset("fives", 2, 50), 3, list(tokens))
        finally:
            await referee.stop()
            for p in procs:
                p.terminate()
        assert m.offender is None and m.reason == "target", m.record_lines[-1]
        assert all(m.decision_ms[s] for s in (0, 1))

    asyncio.run(play())


# ---------------------------------------------------------------------- the READMEs, verbatim, in the sandbox

def kit_commands(kit: Path) -> list[str]:
    """The ``sevenrocks`` commands of the kit's README, as a reader types them from the repository's root."""
    text = (kit / "README.md").read_text(encoding="utf-8")
    assert "repository's root" in " ".join(text.split())
    # A submission needs a league: tests/submissions/test_rust_kit_submit.py runs that block.
    return [c for c in sh_commands(text) if c.split()[1] != "submit"]


@pytest.mark.parametrize("kit", ["node", "rust"])
def test_the_kit_readme_commands_run_verbatim_in_the_default_sandbox(kit: str, request: pytest.FixtureRequest) -> None:
    """Built as the README says (the fixture), then every documented command, verbatim, from the
    repository's root, with no SEVENROCKS_SANDBOX: bubblewrap holds the bot, as it will for a reader."""
    request.getfixturevalue(f"{kit}_bot")
    require_default_sandbox()
    commands = kit_commands(NODE_KIT if kit == "node" else RUST_KIT)
    assert [c.split()[1] for c in commands] == ["check", "match"], commands
    report = expect_success(commands[0], ROOT)
    assert "PASS: 11 phases" in report and "faults: none" in report, report
    played = expect_success(commands[1], ROOT)
    assert "forfeit" not in played and ("target after" in played or "round_cap after" in played), played


def test_the_node_kit_carries_the_projects_proto() -> None:
    """bot.js reads the kit's own referee.proto (a sandboxed bot sees its folder, not the project's
    proto/): it must be the project's contract, byte for byte."""
    assert (NODE_KIT / "referee.proto").read_bytes() == (ROOT / "proto" / "sevenrocks" / "v1" / "referee.proto").read_bytes()
