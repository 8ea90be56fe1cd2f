"""Per-bot control groups: memory, process and CPU limits that bind root too, and a sure kill.

Resource limits of the ``setrlimit`` kind do not hold a bot run as root
(``RLIMIT_NPROC`` ignores root, and root may raise any limit again), count per
process rather than per bot, and cannot find a double-forked child again. A
cgroup does all three: every process a bot starts stays in the bot's group, the
kernel enforces the group's memory and task limits whatever the uid, and killing
"every pid in the group" leaves nothing behind.

This module speaks the cgroup v1 layout (one hierarchy per controller, e.g.
``/sys/fs/cgroup/memory``) and the v2 unified layout. A run's groups live under
the harness's own group, in a folder named ``sevenrocks-<pid>-<id>``, one
sub-folder per bot; :func:`sweep_stale` removes the folders of harnesses that died.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BotGroup", "CgroupRoot", "find_root", "sweep_stale"]

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu")
#: The CPU quota's period. Short, because a bot over its quota is stopped until the period
#: ends and then comes back at once on every core: with the kernel's default 100 ms, a
#: two-process spinner held to one core takes both cores in 50 ms bursts, longer than a
#: tight per-move limit; with 10 ms the bursts are 5 ms.
CFS_PERIOD_US = 10_000


def _own_paths() -> dict[str, str]:
    """Controller -> this process's cgroup path (``""`` key: the v2 unified group)."""
    paths: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return paths
    for line in text.splitlines():
        _id, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            paths[c] = path
    return paths


def _writable_dir(path: Path) -> bool:
    probe = path / f"sevenrocks-probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


@dataclass
class CgroupRoot:
    """Where this run's bot groups go: per controller, a folder we could create and write."""

    version: int
    #: Controller -> this run's folder (v2: one folder under key "").
    bases: dict[str, Path]
    controllers: tuple[str, ...]
    #: Controller -> a prefix for bot groups placed directly in ``bases[c]`` (v1 cpu: see find_root).
    prefixes: dict[str, str] = field(default_factory=dict)

    def new_group(self, name: str) -> BotGroup:
        dirs = {c: base / (self.prefixes.get(c, "") + name) for c, base in self.bases.items()}
        for d in dirs.values():
            d.mkdir(exist_ok=True)
        return BotGroup(self, dirs)

    def remove(self) -> None:
        for c, base in self.bases.items():
            prefix = self.prefixes.get(c, "")
            for child in base.iterdir() if base.is_dir() else ():
                if child.is_dir() and child.name.startswith(prefix):
                    _rmdir(child)
            if not prefix:
                _rmdir(base)


def find_root() -> CgroupRoot | None:
    """A cgroup folder this process may create bot groups in, or None (not root, read-only, no cgroups)."""
    own = _own_paths()
    tag = f"sevenrocks-{os.getpid()}-{secrets.token_hex(3)}"
    unified = ROOT / "cgroup.controllers"
    if unified.exists():  # cgroup v2 only
        return _v2_root(tag)
    bases: dict[str, Path] = {}
    prefixes: dict[str, str] = {}
    for c in V1_CONTROLLERS:
        mount = ROOT / c
        if not (mount / "cgroup.procs").exists():
            continue
        parent = mount / own.get(c, "/").lstrip("/")
        if not _writable_dir(parent):
            parent = mount
            if not _writable_dir(parent):
                continue
        sweep_stale(parent)
        if c == "cpu":
            # Bot groups sit directly beside the harness, each weighted like one process: a
            # common parent group would make a spinning bot use up its innocent siblings' share.
            bases[c] = parent
            prefixes[c] = tag + "."
            continue
        base = parent / tag
        try:
            base.mkdir()
        except OSError:
            continue
        bases[c] = base
    if "pids" not in bases and "memory" not in bases:
        for c, b in bases.items():
            if c not in prefixes:
                _rmdir(b)
        return None
    return CgroupRoot(1, bases, tuple(bases), prefixes)


def _v2_root(tag: str) -> CgroupRoot | None:
    """v2: a folder at the top of the hierarchy (our own group holds processes, so it cannot
    delegate controllers to children: the "no internal processes" rule)."""
    top = ROOT
    if not _writable_dir(top):
        return None
    sweep_stale(top)
    available = set((top / "cgroup.subtree_control").read_text().split())
    wanted = [c for c in ("memory", "pids", "cpu") if c in available]
    if not wanted:
        return None
    base = top / tag
    try:
        base.mkdir()
        (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
    except OSError:
        _rmdir(base)
        return None
    return CgroupRoot(2, {"": base}, tuple(wanted))


def sweep_stale(parent: Path) -> None:
    """Remove the run folders of harnesses that are no longer alive (killed with -9)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        parts = entry.name.split("-")
        if not (entry.is_dir() and len(parts) >= 3 and parts[0] == "sevenrocks" and parts[1].isdigit()):
            continue
        if _alive(int(parts[1])):
            continue
        for child in list(entry.iterdir()):
            if child.is_dir():
                _kill_pids(child)
                _rmdir(child)
        _kill_pids(entry)
        _rmdir(entry)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _rmdir(path: Path) -> None:
    for _ in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # still busy with exiting tasks
            time.sleep(0.01)


def _pids(group: Path) -> list[int]:
    try:
        return [int(x) for x in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_pids(group: Path, timeout: float = 3.0) -> None:
    kill_file = group / "cgroup.kill"
    deadline = time.monotonic() + timeout
    while True:
        pids = _pids(group)
        if not pids or time.monotonic() > deadline:
            return
        if kill_file.exists():
            try:
                kill_file.write_text("1")
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _read_kv(path: Path) -> dict[str, int]:
    try:
        out = {}
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k] = int(v)
        return out
    except OSError:
        return {}


@dataclass
class BotGroup:
    """One bot's cgroups: set the limits, list the files to join, read what was hit, kill all."""

    root: CgroupRoot
    dirs: dict[str, Path]
    limits_set: list[str] = field(default_factory=list)

    def set_limits(self, memory_bytes: int | None, max_tasks: int | None, cpu_cores: float | None) -> None:
        if self.root.version == 1:
            self._set_v1(memory_bytes, max_tasks, cpu_cores)
        else:
            self._set_v2(memory_bytes, max_tasks, cpu_cores)

    def _write(self, path: Path, value: str, what: str) -> None:
        path.write_text(value)
        self.limits_set.append(what)

    def _set_v1(self, memory_bytes: int | None, max_tasks: int | None, cpu_cores: float | None) -> None:
        if memory_bytes and "memory" in self.dirs:
            d = self.dirs["memory"]
            self._write(d / "memory.limit_in_bytes", str(memory_bytes), "memory")
            sw = d / "memory.memsw.limit_in_bytes"  # swap too, where swap accounting is on
            if sw.exists():
                try:
                    sw.write_text(str(memory_bytes))
                except OSError:
                    pass
        if max_tasks and "pids" in self.dirs:
            self._write(self.dirs["pids"] / "pids.max", str(max_tasks), "tasks")
        if cpu_cores and "cpu" in self.dirs:
            d = self.dirs["cpu"]
            (d / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
            self._write(d / "cpu.cfs_quota_us", str(max(1000, int(cpu_cores * CFS_PERIOD_US))), "cpu")

    def _set_v2(self, memory_bytes: int | None, max_tasks: int | None, cpu_cores: float | None) -> None:
        d = self.dirs[""]
        if memory_bytes and "memory" in self.root.controllers:
            self._write(d / "memory.max", str(memory_bytes), "memory")
            swap = d / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        if max_tasks and "pids" in self.root.controllers:
            self._write(d / "pids.max", str(max_tasks), "tasks")
        if cpu_cores and "cpu" in self.root.controllers:
            self._write(d / "cpu.max", f"{max(1000, int(cpu_cores * CFS_PERIOD_US))} {CFS_PERIOD_US}", "cpu")

    def procs_files(self) -> list[str]:
        """The files a process writes its pid to in order to join every group of this bot."""
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def memory_killed(self) -> bool:
        """The kernel's OOM killer acted in this group (its memory limit was reached)."""
        if self.root.version == 1:
            d = self.dirs.get("memory")
            return d is not None and _read_kv(d / "memory.oom_control").get("oom_kill", 0) > 0
        return _read_kv(self.dirs[""] / "memory.events").get("oom_kill", 0) > 0

    def tasks_refused(self) -> bool:
        """A fork or thread was refused because the group held its task limit."""
        d = self.dirs.get("pids") if self.root.version == 1 else self.dirs[""]
        return d is not None and _read_kv(d / "pids.events").get("max", 0) > 0

    def pids(self) -> list[int]:
        d = self.dirs.get("pids") or self.dirs.get("memory") or next(iter(self.dirs.values()))
        return _pids(d)

    def kill_all(self) -> None:
        """SIGKILL every process in the group, repeating until none is left (or 3 s)."""
        d = self.dirs.get("pids") or self.dirs.get("memory") or next(iter(self.dirs.values()))
        _kill_pids(d)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs.values():
            _rmdir(d)
