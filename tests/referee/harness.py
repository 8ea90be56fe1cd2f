"""A real referee on loopback with real bot subprocesses, for the protocol tests."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.referee.faults import FaultPolicy, TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.server.referee import Referee, RefereeMatch

BOTS = Path(__file__).parent / "bots"
PY = sys.executable


def sdk_bot(name: str = "random", seed: int = 1) -> list[str]:
    return [PY, "-m", "sevenrocks.sdk.client", "--bot", name, "--seed", str(seed)]


def fault_bot(mode: str, at: int = 2) -> list[str]:
    return [PY, str(BOTS / "fault_bot.py"), mode, str(at)]


def script(name: str) -> list[str]:
    return [PY, str(BOTS / name)]


@dataclass
class Table:
    referee: Referee
    port: int
    procs: dict[str, BotProcess]
    logs: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.asynccontextmanager
async def table(
    bots: Mapping[str, Sequence[str] | None], logs: Path, *, time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None, tls: tuple[bytes, bytes] | None = None,
    tokens: Mapping[str, str] | None = None, env: Mapping[str, Mapping[str, str]] | None = None,
    **referee_kw: object,
) -> AsyncIterator[Table]:
    """A started referee with one entrant per ``bots`` key and its process (None: start none)."""
    toks = dict(tokens or {n: f"token-{n}" for n in bots})
    referee = Referee(toks, time_control or TimeControl(per_move_ms=3000, connect_timeout_s=15),
                      policy or FaultPolicy(), **referee_kw)  # type: ignore[arg-type]
    port = await referee.start("127.0.0.1:0", tls)
    procs: dict[str, BotProcess] = {}
    t = Table(referee, port, procs, logs)
    try:
        for name, cmd in bots.items():
            if cmd is not None:
                procs[name] = BotProcess().start(list(cmd), t.address, toks[name], logs / f"{name}.log",
                                                 entrant=name, env=(env or {}).get(name))
                referee.attach_process(name, procs[name])
        yield t
    finally:
        await referee.stop(grace=1.0)
        for p in procs.values():
            if await p.exited(1.5) is None:
                p.terminate()


def assert_clean(m: RefereeMatch) -> None:
    """The record replays through the engine without a single discrepancy."""
    problems = verify_lines(m.record_lines)
    assert not problems, "\n".join(d.format(m.match_id) for d in problems)


def assert_normal(m: RefereeMatch) -> None:
    assert m.offender is None, f"{m.match_id}: unexpected fault {m.offender}"
    assert m.reason in ("target", "round_cap")
    assert_clean(m)
