"""The first program of every launched bot: confine this process, then exec the bot.

Run as ``python -I -S jail.py SPEC_JSON -- ARGV...`` by :mod:`.launch` (never
imported by the harness; standard library only, so it starts in a few
milliseconds and needs nothing of the harness's environment). Doing this work in
a program of its own, rather than in a ``preexec_fn``, keeps the harness free of
fork-in-a-threaded-process hazards (gRPC's threads) and lets every step happen
*before* the bot's first instruction, so a bot cannot fork its way out of a limit
set a moment too late.

In order:

1. join the bot's cgroups (memory, pids, cpu, freezer) while still privileged;
2. set the resource limits (``RLIMIT_*``);
3. in a private mount namespace, bind the sandbox's sources that the bot's
   unprivileged uid could not reach (e.g. a Python under ``/root``) onto
   traversable staging folders, so bubblewrap can bind them from there;
4. drop to the bot's own uid/gid (when the harness is root);
5. ask for SIGKILL when the harness thread that launched us dies
   (``PR_SET_PDEATHSIG``; set after the uid change, which clears it), and exit
   at once if the harness is already gone;
6. exec the bot (or bubblewrap with its arguments on a pipe, so that the bind
   list never shows in ``/proc/1/cmdline`` inside the sandbox).
"""

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


def fail(message: str) -> None:
    sys.stderr.write(f"sevenrocks sandbox: {message}\n")
    sys.stderr.flush()
    os._exit(126)


def libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        fail(f"{what}: {os.strerror(err)}")


def join_cgroups(paths: list[str]) -> None:
    pid = str(os.getpid())
    for path in paths:
        try:
            with open(path, "w") as f:
                f.write(pid)
        except OSError as e:
            fail(f"cannot join cgroup {path}: {e.strerror}")


def set_limits(limits: dict[str, list[int]]) -> None:
    for name, (soft, hard) in limits.items():
        try:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        except (OSError, ValueError) as e:
            fail(f"cannot set {name}={soft}: {e}")


def stage(binds: list[list[str]]) -> None:
    """Bind each ``[source, staging]`` pair in a private mount namespace (read-only)."""
    c = libc()
    c.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    check(c.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(c.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    for source, target in binds:
        check(c.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {source}")
        check(c.mount(b"none", target.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY, None), f"remount {source}")


def die_with_parent(parent: int) -> None:
    c = libc()
    check(c.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:  # the harness died before the signal was armed
        os._exit(137)


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = sys.argv[3:]
    if sys.argv[2] != "--" or not argv:
        fail("usage: jail.py SPEC -- ARGV...")
    die_with_parent(spec["parent"])
    join_cgroups(spec.get("cgroups", []))
    set_limits(spec.get("rlimits", {}))
    if spec.get("stage"):
        stage(spec["stage"])
    uid = spec.get("uid")
    if uid is not None:
        gid = spec.get("gid", uid)
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        except OSError as e:
            fail(f"cannot switch to uid {uid}: {e.strerror}")
        die_with_parent(spec["parent"])  # a uid change clears the parent-death signal
    if spec.get("nice"):
        os.nice(int(spec["nice"]))
    if spec.get("cwd"):
        try:
            os.chdir(spec["cwd"])
        except OSError as e:
            fail(f"cannot enter {spec['cwd']}: {e.strerror}")
    bwrap_args = spec.get("bwrap_args")
    if bwrap_args is not None:
        r, w = os.pipe()
        data = b"".join(a.encode() + b"\0" for a in bwrap_args)
        if len(data) > 60_000:
            fail("too many sandbox arguments for one pipe")
        os.write(w, data)
        os.close(w)
        os.set_inheritable(r, True)
        argv = [spec["bwrap"], "--args", str(r), "--", *argv]
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        fail(f"cannot run {argv[0]!r}: {e.strerror}")


if __name__ == "__main__":
    main()
