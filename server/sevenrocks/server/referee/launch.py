"""Start bot programs as subprocesses that dial back to the referee.

A bot is any command: it learns where the referee is and who it is from its
environment (``SEVENROCKS_REFEREE``, ``SEVENROCKS_TOKEN``, ``SEVENROCKS_ENTRANT``),
exactly as a remote bot would be configured, so a launched bot and a bot on
another machine run the same code path.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO


class LaunchError(RuntimeError):
    """A bot command could not be started (not found, not executable)."""


def bot_command(spec: str) -> list[str]:
    """argv for a ``--seat`` value: a registered bot name or ``module:Class`` runs through
    the SDK client (``python -m sevenrocks.sdk.client --bot SPEC``); anything else is a
    shell-style command line.
    """
    words = shlex.split(spec)
    if len(words) == 1 and "/" not in spec and not spec.endswith(".py") and (
        ":" in spec or spec.replace("-", "_").isidentifier()
    ):
        from sevenrocks.sdk.registry import bot_names

        if ":" in spec or spec in bot_names():
            return [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", spec]
    return words


class BotProcess:
    """One bot subprocess; its output goes to ``log_path`` (or is discarded)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.command: list[str] = []
        self._log: IO[bytes] | None = None

    def start(
        self, command: str | Sequence[str], referee: str, token: str, log_path: Path | None = None,
        *, entrant: str | None = None, env: Mapping[str, str] | None = None,
    ) -> BotProcess:
        """Launch ``command`` with the referee's address and the entrant's token in its environment."""
        self.command = bot_command(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise LaunchError("empty bot command")
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env["SEVENROCKS_REFEREE"] = referee
        full_env["SEVENROCKS_TOKEN"] = token
        if entrant is not None:
            full_env["SEVENROCKS_ENTRANT"] = entrant
        else:
            full_env.pop("SEVENROCKS_ENTRANT", None)
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                self.command, env=full_env, stdin=subprocess.DEVNULL,
                stdout=self._log or subprocess.DEVNULL, stderr=subprocess.STDOUT if self._log else subprocess.DEVNULL,
            )
        except OSError as e:
            hint = ""
            if len(self.command) == 1:
                from sevenrocks.sdk.registry import bot_names

                hint = f"; registered bots: {', '.join(bot_names())} (or give module:Class, or a command line)"
            raise LaunchError(f"cannot start bot {shlex.join(self.command)!r}: {e.strerror}{hint}") from None
        return self

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited, else None."""
        return self.process.poll() if self.process else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def terminate(self, timeout: float = 3.0) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout`` s; returns the exit code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close_log()
        return self.process.returncode

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._close_log()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the process to exit by itself; None if it is still running after ``timeout``."""
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    async def exited(self, timeout: float) -> int | None:
        """Like :meth:`wait`, without blocking the event loop (the referee may be on it)."""
        deadline = time.monotonic() + timeout
        while self.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.returncode

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def __repr__(self) -> str:
        state = "running" if self.alive else f"exit {self.returncode}"
        return f"<BotProcess pid={self.pid} {state} {shlex.join(self.command)!r}>"
