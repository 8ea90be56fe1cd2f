"""Which Dask workers may play an event's matches, and with how many threads.

Why: a cluster is a set of machines the coordinator does not control. A worker
with another sevenrocks, another engine build or another protocol would play
other rules (or the same rules other code) under the event's name; a worker that
cannot give the sandbox the event asks for would run untrusted bots less
contained than the operator chose. So every worker is asked, when it first
appears, what it is (:func:`worker_facts`, run on the worker), and is admitted or
left out with one warning that says why (:func:`refusal`). What it is means its
code by content (:mod:`.installed`: a digest of the sevenrocks files it imports),
not only its version string, which an edited install keeps. The :class:`Roster`
keeps asking while the event runs: workers that join are admitted and add their
threads to the matches in flight, workers that leave take theirs away, and a
worker the scheduler has not heard from for :data:`SILENT_S` (a machine cut off
from the network) is dropped for the rest of the event at once, without waiting
for the scheduler to give up on it (its TCP timeout, 30 s by default, or its
``worker-ttl``): the executor plays its matches again on the others
(:attr:`Roster.lost`), so one lost machine does not hold every other match of a
duplicate phase.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.metadata
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..events.config import EventConfig

#: How often the roster asks the scheduler which workers are there.
ROSTER_POLL_S = 2.0
#: At the start, how long to wait for every worker present to be admitted once one is.
SETTLE_S = 10.0
#: An admitted worker whose heartbeat the scheduler has not seen change for this long is lost to the event
#: (workers beat every 0.5 s on a cluster of up to ten, at most every ``n/200 + 1`` s on a bigger one).
SILENT_S = 10.0


@dataclass(frozen=True, slots=True)
class WorkerFacts:
    """What a machine runs: compared with the coordinator's before it plays a match."""

    host: str
    #: The installed sevenrocks distribution's version.
    version: str
    #: ``compiled`` or ``pure`` (:func:`sevenrocks.sdk.rules.engine_build`).
    engine: str
    #: The bot protocol the referee speaks.
    protocol: int
    #: The sandbox mode this machine gives the event's settings (``bwrap``, ``rlimits``, ``off``),
    #: or "" when it cannot give the mode asked for (then ``problem`` says why).
    sandbox: str = ""
    problem: str = ""
    warnings: tuple[str, ...] = ()
    #: The digest of the sevenrocks code it runs (:func:`.installed.digest`), and the files behind it
    #: (path, sha256), so that a refusal can name the files that differ. Last, so that the facts of an
    #: older sevenrocks (which has neither) still unpickle here, and are refused.
    code: str = ""
    files: tuple[tuple[str, str], ...] = ()


def installed_version() -> str:
    try:
        return importlib.metadata.version("sevenrocks")
    except importlib.metadata.PackageNotFoundError:  # a source tree on PYTHONPATH
        return "unknown"


def worker_facts(config: EventConfig | None = None) -> WorkerFacts:
    """This machine's facts; with ``config``, the sandbox mode it gives that event's bots.

    The sandbox is opened and closed at once, exactly as an arena opens it, so the
    mode named is the one the bots will get (``auto`` becomes ``bwrap`` or ``rlimits``
    here, as it would locally)."""
    from sevenrocks.sdk.rules import engine_build

    from ..referee import PROTOCOL_VERSION
    from .installed import digest, manifest

    facts = WorkerFacts(socket.gethostname(), installed_version(), engine_build(), PROTOCOL_VERSION,
                        code=digest(), files=manifest())
    if config is None:
        return facts
    from ..sandbox.sandbox import Sandbox, SandboxError

    try:
        box = Sandbox(config.sandbox, ())
    except SandboxError as e:
        return dataclasses.replace(facts, problem=str(e))
    try:
        return dataclasses.replace(facts, sandbox=box.mode, warnings=tuple(box.warnings))
    finally:
        box.close()


async def _facts_on_worker(config: EventConfig) -> WorkerFacts:
    """Run by ``client.run`` on a worker: its facts, off the worker's event loop."""
    return await asyncio.to_thread(worker_facts, config)


def refusal(mine: WorkerFacts, theirs: WorkerFacts) -> str | None:
    """Why a worker with ``theirs`` may not play the coordinator's (``mine``) event, or None."""
    for what, a, b in (("sevenrocks version", mine.version, theirs.version),
                       ("engine build", mine.engine, theirs.engine),
                       ("bot protocol", str(mine.protocol), str(theirs.protocol))):
        if a != b:
            return (f"its {what} is {b}, the coordinator's is {a}; install the same sevenrocks there "
                    "(docs/scale.md: what each machine needs)")
    theirs_code = getattr(theirs, "code", "")  # absent in the facts of an older sevenrocks
    if theirs_code != mine.code:
        from .installed import differences

        what = (differences(mine.files, getattr(theirs, "files", ())) if theirs_code
                else "it does not report its code's digest")
        return (f"its sevenrocks code differs from the coordinator's although both say version {mine.version} "
                f"({what}); install the coordinator's sevenrocks there (docs/scale.md: what each machine needs)")
    if not theirs.sandbox:
        return f"it cannot give the sandbox the event asks for: {theirs.problem}"
    return None


@dataclass
class Roster:
    """The workers admitted to an event, kept current while it runs.

    ``say`` is told each refusal and each worker's sandbox once. ``slots`` is the
    matches to keep submitted: ``prefetch`` per thread of the admitted workers now
    present, so matches in flight grow and shrink with the cluster.
    """

    config: EventConfig
    say: Callable[[str], None]
    prefetch: int = 2
    #: Address -> (facts, threads) of each admitted worker present.
    admitted: dict[str, tuple[WorkerFacts, int]] = dataclasses.field(default_factory=dict)
    #: Address -> why it was left out (asked once per address).
    refused: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Called with the client and the newly admitted workers before they get a match (the bots' files go
    #: there); answers, per worker, why it must be left out after all (None: it is ready).
    on_admit: Callable[[Any, list[str]], Awaitable[dict[str, str | None]]] | None = None
    #: The workers the scheduler knows now.
    present: set[str] = dataclasses.field(default_factory=set)
    #: Workers dropped for silence that the scheduler still lists: the matches it assigned them are
    #: played again elsewhere (the executor asks the scheduler which, every :data:`ROSTER_POLL_S`).
    lost: set[str] = dataclasses.field(default_factory=set)
    _mine: WorkerFacts | None = None
    #: Address -> (the scheduler's last_seen for it, when this coordinator saw that value change).
    _heard: dict[str, tuple[Any, float]] = dataclasses.field(default_factory=dict)

    @property
    def slots(self) -> int:
        return self.prefetch * sum(n for _f, n in self.admitted.values())

    @property
    def workers(self) -> list[str]:
        return sorted(self.admitted)

    async def refresh(self, client: Any) -> None:
        """Ask the scheduler which workers are there; admit the new ones that qualify."""
        if self._mine is None:
            self._mine = await asyncio.to_thread(worker_facts)
        info = await client.scheduler.identity(n_workers=-1)
        workers = info.get("workers", {})
        present = {addr: int(w.get("nthreads", 1)) for addr, w in workers.items()}
        self.present = set(present)
        for gone in set(self.admitted) - set(present):
            del self.admitted[gone]
        self.lost &= self.present
        self._drop_silent({addr: w.get("last_seen") for addr, w in workers.items()})
        new = [a for a in present if a not in self.admitted and a not in self.refused]
        if not new:
            return
        answers = await client.run(_facts_on_worker, self.config, workers=new, on_error="return")
        admit: list[str] = []
        for addr in new:
            facts = answers.get(addr)
            if facts is None or isinstance(facts, (OSError, asyncio.TimeoutError)):
                continue  # gone meanwhile, or not answering yet: asked again next time
            why: str | None
            if not isinstance(facts, WorkerFacts):  # it could not even run the check: another sevenrocks
                why = (f"it cannot run this sevenrocks's check ({type(facts).__name__}: {facts}); install the "
                       f"coordinator's sevenrocks {self._mine.version} there (docs/scale.md)")
            else:
                why = refusal(self._mine, facts)
            if why is not None:
                self.refused[addr] = why
                host = facts.host if isinstance(facts, WorkerFacts) else "?"
                self.say(f"warning: worker {addr} ({host}) is left out of event {self.config.name!r}: {why}")
                continue
            admit.append(addr)
            self.admitted[addr] = (facts, present[addr])
            extra = "".join(f"; warning: {w}" for w in facts.warnings)
            self.say(f"worker {addr} ({facts.host}, {facts.engine} engine) plays with sandbox {facts.sandbox}{extra}")
        if admit and self.on_admit is not None:
            ready: dict[str, str | None] = {}
            try:
                ready = await self.on_admit(client, admit)
            finally:
                for addr in admit:
                    if addr not in ready:  # not answered (or the call failed): asked again next time
                        self.admitted.pop(addr, None)
            for addr, why in ready.items():
                if why is not None:
                    self.admitted.pop(addr, None)
                    self.refused[addr] = why
                    self.say(f"warning: worker {addr} is left out of event {self.config.name!r}: {why}")

    def _drop_silent(self, last_seen: dict[str, Any]) -> None:
        """Drop each admitted worker whose ``last_seen`` (the scheduler's clock) has not changed for
        :data:`SILENT_S` of this coordinator's clock (two machines' clocks are never compared)."""
        now = time.monotonic()
        for addr in list(self.admitted):
            seen = last_seen.get(addr)
            before = self._heard.get(addr)
            if before is None or before[0] != seen:
                self._heard[addr] = (seen, now)
                continue
            if now - before[1] < SILENT_S:
                continue
            del self.admitted[addr]
            self.lost.add(addr)
            why = (f"the scheduler has not heard from it for {now - before[1]:.0f} s (its machine or network "
                   "is down); its matches are played again on the other workers, and it stays out of this event "
                   "(a `dask worker` restarted there joins as a new worker: docs/scale.md)")
            self.refused[addr] = why
            self.say(f"warning: worker {addr} is left out of event {self.config.name!r}: {why}")

    async def wait_for_one(self, client: Any, timeout_s: float) -> None:
        """Until at least one worker is admitted (raises TimeoutError after ``timeout_s``), and then
        until every worker present is admitted or left out (at most :data:`SETTLE_S` more), so that
        the first matches, which stay on the workers admitted when they are submitted, spread."""
        async with asyncio.timeout(timeout_s):
            while True:
                await self.refresh(client)
                if self.admitted:
                    break
                await asyncio.sleep(0.5)
        end = asyncio.get_running_loop().time() + SETTLE_S
        while self.present - set(self.admitted) - set(self.refused) and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.5)
            await self.refresh(client)

    async def watch(self, client: Any) -> None:
        """Refresh every :data:`ROSTER_POLL_S` until cancelled. A failed refresh is tried again at the next
        poll (a lost scheduler is reported by the run's own waits, which then cancel this): one scheduler
        call that timed out must not end the watch for silent workers for the rest of the event."""
        while True:
            await asyncio.sleep(ROSTER_POLL_S)
            try:
                await self.refresh(client)
            except (OSError, asyncio.TimeoutError):
                continue
