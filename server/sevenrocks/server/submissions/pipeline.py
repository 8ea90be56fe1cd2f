"""The submission pipeline: received → unpacked → built → validated → active (or rejected).

It runs in the league's process but never on its event loop: each submission is
worked in a thread (:meth:`Pipeline.work`), the build in a sandbox of its own
(:mod:`.build`) and the conformance check in a process of its own
(:mod:`.validate`). Every step ends by writing its
state (:mod:`.ledger`); a step that was under way when the league was killed is
done again from the stored upload when it starts again (:meth:`Pipeline.resume`),
so a submission is never lost and never half-active: only a snapshot that passed
the check is ever ``active``.

**Fair across authors** (:class:`FairQueue`): ``workers`` submissions (default 2) are
worked at once, and at most one of each author. So one author's slow upload (a
build of ``sleep`` for its whole ``build_time_s``, then a check that runs out
``check_time_s``) holds one worker at most, never another author's: while fewer
than ``workers`` other authors have work under way, another author's upload starts
at once. The waiting ones are taken oldest first, skipping authors who have one under
way. ``workers`` is small on purpose: each build is held to ``build_cpu_cores`` and
each check's bots to the league's ``[sandbox]`` limits, so the pipeline takes at most
about ``workers`` cores from the matches.

What runs is the **snapshot** (:mod:`..versions.snapshots`): after the build, the
bundle is copied into the content-addressed store, the check is run on that
copy, and the league launches that copy, so what was validated is what plays.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sevenrocks.sdk.stdio import stdio_command

from ..events.config import Entrant, Pin
from ..versions.snapshots import SnapshotError, SnapshotStore, remove_tree
from ..sandbox.cgroups import CgroupRoot, find_root
from ..sandbox.sandbox import Limits, Sandbox, SandboxSettings, jailed, python_environment
from . import ledger
from .authors import ensure_tables
from .build import BuildLimits, build_uid, hand_to, run_build
from .manifest import Manifest, ManifestError, find_bundle
from .unpack import UnpackError, UnpackLimits, unpack

log = logging.getLogger(__name__)

#: The check's output kept as the validation log.
CHECK_LOG_BYTES = 64 * 1024
PYTHONS = ("python", "python3")


@dataclass(frozen=True, slots=True)
class SubmitSettings:
    """``[submissions]`` in the league's TOML (docs/league.md lists every key)."""

    submissions_per_day: int = 5
    #: How many accepted versions of one entrant play at once: a newer one retires the oldest beyond it.
    active_versions: int = 1
    #: How many entrants (names) of one author play at once, each with its active versions: one by
    #: default (an author's many names were many ranked entrants that could feed each other points).
    entrants_per_author: int = 1
    #: May two entrants (or versions) of one author sit at one table? Not unless the organiser says so.
    siblings_at_one_table: bool = False
    #: Unranked challenges (:mod:`.challenges`): per author in any 24 hours, the most matches of one, and
    #: the most challenge matches played between two ranked rounds (the bound on what they delay).
    challenges_per_day: int = 3
    challenge_matches: int = 4
    challenge_matches_per_round: int = 2
    max_upload_mb: int = 16
    unpack: UnpackLimits = field(default_factory=UnpackLimits)
    build: BuildLimits = field(default_factory=BuildLimits)
    #: The check's clock per move (the league's own is used when it is larger) and its tight phase.
    check_per_move_ms: int = 1000
    check_tight_ms: int = 500
    #: Points to win in the check's whole matches (shorter than an event's: the check is a gate).
    check_target: int = 100
    check_time_s: float = 600.0
    #: Submissions worked at once (at most one per author): :class:`FairQueue`.
    workers: int = 2
    #: The organiser's word that the door may open without bubblewrap (docs/league.md: then builds and bots
    #: run under resource limits and a uid of their own, the league must run as root).
    allow_uncontained: bool = False
    #: The config has a ``[submissions]`` table or ``[[authors]]``: the league means to take submissions.
    declared: bool = False


def data_dirs(db_path: Path) -> tuple[Path, Path]:
    """Where uploads and work folders live, and the snapshot store (the one config entrants' versions
    use), beside the league's database: ``league.db`` -> ``league.submissions/``, ``league.snapshots/``."""
    base = Path(os.path.abspath(db_path))
    return base.with_name(base.stem + ".submissions"), base.with_name(base.stem + ".snapshots")


def entrant_of(sub: ledger.Submission) -> Entrant:
    """The league entrant an active submission is: pinned to its snapshot, where it starts (``/bot`` in
    bubblewrap), its command's paths in it."""
    assert sub.manifest is not None and sub.folder is not None
    manifest, folder = Manifest.from_json(sub.manifest), Path(sub.folder)
    return Entrant(name=sub.entrant, command=tuple(bot_argv(manifest, folder)),
                   pin=Pin(folder.name, str(folder), manifest.command, fixed=True))


def bot_argv(manifest: Manifest, folder: Path) -> list[str]:
    """The manifest's command as the league launches it: ``python``/``python3`` is the league's Python
    (which has the SDK), paths are made absolute in ``folder``, a stdio bot runs through the adapter."""
    words = list(manifest.command)
    if words[0] in PYTHONS:
        words[0] = sys.executable
    elif "/" in words[0] and not os.path.isabs(words[0]):  # ./mybot: a program of the bundle
        words[0] = str(folder / words[0])
    # Every other word that names an entry of the bundle (bot.js, weights.bin) becomes its path there;
    # a module after -m stays a module name (the bot starts in its bundle, which python -m imports from).
    argv = [words[0], *(str(folder / w) if words[i] != "-m" and not w.startswith("-") and not os.path.isabs(w)
                        and ".." not in Path(w).parts and os.path.lexists(folder / w) else w
                        for i, w in enumerate(words[1:]))]
    return stdio_command(argv) if manifest.protocol == "stdio" else argv


class FairQueue:
    """Submission ids waiting to be worked, handed out oldest first but never two of one author at once.

    ``put_nowait`` and ``qsize`` as an :class:`asyncio.Queue` (the upload endpoint uses them); workers
    call :meth:`take` and, when the submission is done, :meth:`done`."""

    def __init__(self, author_of: Callable[[int], str]) -> None:
        self._author_of = author_of
        self._waiting: list[tuple[int, str]] = []
        #: Authors with a submission under way.
        self.busy: set[str] = set()
        self._changed = asyncio.Event()

    def put_nowait(self, sid: int, author: str | None = None) -> None:
        self._waiting.append((sid, author if author is not None else self._author_of(sid)))
        self._changed.set()

    def qsize(self) -> int:
        return len(self._waiting)

    async def take(self) -> tuple[int, str]:
        """The oldest waiting submission whose author has none under way (waits for one)."""
        while True:
            for i, (sid, author) in enumerate(self._waiting):
                if author not in self.busy:
                    del self._waiting[i]
                    self.busy.add(author)
                    return sid, author
            self._changed.clear()
            await self._changed.wait()

    def done(self, author: str) -> None:
        self.busy.discard(author)
        self._changed.set()


class Pipeline:
    """Works submissions of one league off the event loop: ``settings.workers`` at once, one per author."""

    def __init__(self, db_path: Path, settings: SubmitSettings, sandbox_mode: str, per_move_ms: int,
                 on_active: Callable[[], None] = lambda: None, say: Callable[[str], None] = lambda text: None,
                 read_only: tuple[str, ...] = (), limits: Limits = Limits()) -> None:
        self.db_path = Path(db_path)
        self.settings = settings
        self.sandbox_mode = sandbox_mode
        self.per_move_ms = per_move_ms
        self.on_active = on_active
        #: The league's ``[sandbox] read_only`` paths: toolchains the organiser added, for builds too.
        self.read_only = read_only
        #: The league's ``[sandbox]`` limits: the check runs the bot under them, as the league will.
        self.limits = limits
        self.say = say
        self.work_root, self.snapshot_root = data_dirs(self.db_path)
        self.uploads = self.work_root / "uploads"
        self.uploads.mkdir(parents=True, exist_ok=True)
        (self.work_root / "work").mkdir(exist_ok=True)
        #: An empty folder the check runs from (a league bot starts in the league's folder, not its own).
        self.neutral = self.work_root / "cwd"
        self.neutral.mkdir(exist_ok=True)
        self.queue = FairQueue(self._author_of)
        self._tasks: list[asyncio.Task[None]] = []
        #: Builds run without bubblewrap (the organiser's ``allow_uncontained``): as a uid of their own,
        #: in a folder of the system's temporary one, with ``hidden`` (the league's files) out of view.
        self.uncontained = False
        self.hidden: tuple[Path, ...] = ()
        self._cgroups: CgroupRoot | None = None
        self._cgroups_tried = False
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()
        #: Are entries still open (given the pipeline thread's own connection)? Set by the desk: once the
        #: final closed them, a submission still in the pipeline is rejected rather than told ``active``.
        self.entries_open: Callable[[sqlite3.Connection], bool] = lambda db: True

    # ------------------------------------------------------------------ on the loop

    def resume(self, db: sqlite3.Connection) -> list[int]:
        """Queue every submission a killed league left in a middle state; returns their ids."""
        ensure_tables(db)
        ids = [s.id for s in ledger.unfinished(db)]
        for sid in ids:
            self.queue.put_nowait(sid)
        return ids

    def _author_of(self, sid: int) -> str:
        db = self._connect()
        try:
            sub = ledger.get(db, sid)
            return sub.author if sub is not None else ""
        finally:
            db.close()

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run()) for _ in range(max(1, self.settings.workers))]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks = []
        self.close()

    def close(self) -> None:
        """Remove the builds' cgroups folder and run folder (no build runs any more)."""
        if self._cgroups is not None:
            self._cgroups.remove()
            self._cgroups = None
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    def _uncontained_sandbox(self) -> Sandbox:
        """The ``rlimits`` sandbox whose run folder holds an uncontained build's stand-ins and staging."""
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(SandboxSettings(mode="rlimits"))
            return self._sandbox

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            sid, author = await self.queue.take()
            try:
                done = await asyncio.to_thread(self.work, sid)
            except Exception as e:  # noqa: BLE001 (one submission must never stop the queue for the others)
                log.exception("submission %s: the pipeline failed on it", sid)
                self.say(f"submission {sid}: the pipeline failed on it ({type(e).__name__}: {e}); it stays "
                         "where it was and is tried again when the league starts again")
                continue
            finally:
                self.queue.done(author)
            if done:
                loop.call_soon(self.on_active)

    def cgroups(self) -> CgroupRoot | None:
        """The cgroup folder the builds' groups go in (found once; None where this process may make none)."""
        with self._lock:
            if not self._cgroups_tried:
                self._cgroups_tried = True
                self._cgroups = find_root()
            return self._cgroups

    # ------------------------------------------------------------------ in a thread

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.db_path, isolation_level=None, timeout=30.0)

    def work(self, sid: int) -> bool:
        """Take submission ``sid`` from its upload to active or rejected; True when it became active."""
        db = self._connect()
        try:
            sub = ledger.get(db, sid)
            if sub is None or sub.state not in ledger.UNFINISHED:
                return False
            return self._steps(db, sub)
        finally:
            db.close()

    def _closed(self, db: sqlite3.Connection, sid: int) -> bool:
        if self.entries_open(db):
            return False
        ledger.advance(db, sid, "rejected", reason="entries are closed: the league is playing its final with "
                                                   "the field it has")
        return True

    def _steps(self, db: sqlite3.Connection, sub: ledger.Submission) -> bool:
        sid = sub.id
        uid = build_uid() if self.uncontained else None
        if uid is not None:  # a folder its uid can reach (the league's may not be): swept with the run's
            scratch = Path(tempfile.mkdtemp(prefix=f"sevenrocks-run-{os.getpid()}-build{sid}-"))
            os.chmod(scratch, 0o711)
            work = scratch / "bundle"
        else:
            work = self.work_root / "work" / str(sid)
            remove_tree(work)
        if self._closed(db, sid):
            self._drop(work)
            return False
        try:
            unpack(Path(sub.upload), work, self.settings.unpack)
            top, manifest = find_bundle(work)
        except (UnpackError, ManifestError) as e:
            ledger.advance(db, sid, "rejected", reason=f"unpack: {e}")
            self._drop(work)
            return False
        ledger.advance(db, sid, "unpacked", folder=str(top), manifest=manifest.to_json())
        build_log = ""
        if manifest.build is not None:
            hand_to(work, uid)
            view = None
            if uid is not None:  # without bubblewrap: the league's files covered, no network
                sandbox = self._uncontained_sandbox()
                sources = [*python_environment(), *(Path(os.path.abspath(r)) for r in self.read_only)]
                view = sandbox.private_view([p for p in sources if p.exists()],
                                            [*self.league_files(), self.snapshot_root], f"build{sid}")
            result = run_build(top, manifest.build, self.settings.build, self.sandbox_mode != "off" and uid is None,
                               self.read_only, self.cgroups(), uid, view)
            build_log = self.scrub(result.log, top)
            if not result.ok:
                ledger.advance(db, sid, "rejected", reason=f"build: {result.reason}", build_log=build_log)
                self._drop(work)
                return False
        try:
            snap = SnapshotStore(self.snapshot_root).add(top)
        except SnapshotError as e:
            ledger.advance(db, sid, "rejected", reason=f"snapshot: {e}", build_log=build_log)
            self._drop(work)
            return False
        self._drop(work)
        ledger.advance(db, sid, "built", folder=str(snap.path), build_log=build_log or "(no build step)")
        ok, log = self.validate(manifest, snap.path)
        if not ok:
            ledger.advance(db, sid, "rejected", reason="validation: the conformance check failed (its log shows "
                                                       "which phase and why)", check_log=log)
            return False
        ledger.advance(db, sid, "validated", check_log=log)
        if self._closed(db, sid):  # the final began while it was worked
            return False
        if not ledger.activate(db, sid, sub.entrant, keep=self.settings.active_versions):
            return False
        self.say(f"submission {sid} of {sub.author}: {sub.entrant} passed its check and joins the league")
        return True

    def _drop(self, work: Path) -> None:
        """Remove a submission's work folder (and the scratch folder around an uncontained build's)."""
        remove_tree(work)
        if work.parent.name.startswith(f"sevenrocks-run-{os.getpid()}-build"):
            remove_tree(work.parent)

    def league_files(self) -> list[Path]:
        """What no build or checked bot may see: the league's database (with SQLite's side files), its
        uploads and work folders, and the files the league named (config, output folder)."""
        db = Path(os.path.abspath(self.db_path))
        sides = [db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal")]
        return [*self.hidden, db, *sides, self.work_root]

    def validate(self, manifest: Manifest, folder: Path) -> tuple[bool, str]:
        """The conformance check of the snapshot in ``folder``, in the league's sandbox, in a process of its own."""
        s = self.settings
        spec = {"argv": bot_argv(manifest, folder), "cwd": str(folder), "hidden": [str(self.snapshot_root), *map(str, self.league_files())],
                "sandbox": self.sandbox_mode, "limits": dataclasses.asdict(self.limits), "read_only": list(self.read_only),
                "per_move_ms": max(s.check_per_move_ms, self.per_move_ms), "tight_ms": s.check_tight_ms,
                "target": s.check_target}
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        try:
            # Through the jail, which makes the check die with the league (as its bots do); never
            # a preexec_fn, whose Python in a forked child of the gRPC-threaded league can crash it.
            check = jailed([sys.executable, "-I", "-m", "sevenrocks.server.submissions.validate", json.dumps(spec)])
            done = subprocess.run(check, cwd=self.neutral, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=s.check_time_s)
        except subprocess.TimeoutExpired:
            return False, f"the check took longer than {s.check_time_s:g} s and was stopped"
        return done.returncode == 0, self.scrub(check_log(done.returncode, done.stdout, done.stderr), folder)

    def scrub(self, text: str, bundle: Path) -> str:
        """A log as its author may read it: the organiser's absolute paths (the league's folder, its Python
        and virtual environment) replaced by short words; the bundle's own folder is ``.``."""
        words = {str(bundle): ".", sys.executable: "python", str(self.work_root.parent): "LEAGUE",
                 sys.prefix: "PYTHON", sys.base_prefix: "PYTHON"}
        for path in sorted(words, key=len, reverse=True):  # the longest first: a folder inside another
            if len(path) > 1:
                text = text.replace(path, words[path])
        return text

    # ------------------------------------------------------------------ uploads

    def store_upload(self, data_path: Path) -> Path:
        """Move a received upload (already written and synced) to its permanent name."""
        final = self.uploads / f"{int(time.time() * 1000)}-{os.urandom(4).hex()}.upload"
        os.replace(data_path, final)
        return final


def check_log(returncode: int, stdout: bytes, stderr: bytes) -> str:
    """The validation log: the check's report (its stdout) whole and first, then what else the check's
    process wrote on stderr, cut to what is left of ``CHECK_LOG_BYTES`` (a longer report keeps its head and
    its verdict); when the process ended without a report, a first line that says so (never an empty or
    stderr-only log that reads like the report)."""
    report = stdout.decode("utf-8", "replace").rstrip("\n")
    noise = stderr.decode("utf-8", "replace").rstrip("\n")
    head = ""
    if not report:
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
        head = f"the check's process {how} before it wrote its report (a fault of the league's machine, not " \
               f"necessarily of the bot: submit again, or ask the organiser)"
    if len(report) > CHECK_LOG_BYTES:  # its head (the phases) and its tail (the verdict) are kept
        half = CHECK_LOG_BYTES // 2
        report = f"{report[:half]}\n[{len(report) - 2 * half} characters of the report not kept]\n{report[-half:]}"
    out = "\n".join(part for part in (head, report) if part)
    if noise:
        room = max(0, CHECK_LOG_BYTES - len(out))
        out += "\n--- the check process's stderr ---\n" + noise[:room]
        if len(noise) > room:
            out += f"\n[{len(noise) - room} more characters of stderr not kept]"
    return out + "\n"
