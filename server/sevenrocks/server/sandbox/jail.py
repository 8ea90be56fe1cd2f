"""The first program of every launched bot: confine this process, then exec the bot.

Run as ``python -I -S jail.py SPEC_JSON -- ARGV...`` by :mod:`.launch` (never
imported by the harness; standard library only, so it starts in a few
milliseconds and needs nothing of the harness's environment). Doing this work in
a program of its own, rather than in a ``preexec_fn``, keeps the harness free of
fork-in-a-threaded-process hazards (gRPC's threads) and lets every step happen
*before* the bot's first instruction, so a bot cannot fork its way out of a limit
set a moment too late.

With ``supervise`` (every mode, ``off`` included), this process stays as the bot's
parent (see :func:`supervise`) and a forked child does the rest; without it, it
execs the bot itself. The child, in order:

0. asks for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), exiting at once
   if the parent is already gone;
1. joins the bot's cgroups (memory, pids, cpu) while still privileged;
2. sets the resource limits (``RLIMIT_*``);
3. in a private mount namespace, binds the sandbox's sources that the bot's
   unprivileged uid could not reach (e.g. a Python under ``/root``) onto
   traversable staging folders, so bubblewrap can bind them from there;
4. drops to the bot's own uid/gid (when the harness is root);
5. arms the parent-death signal again (a uid change clears it);
6. with ``secret_env`` (a stdio bot's adapter: :mod:`sevenrocks.sdk.stdio`), moves those
   variables out of the environment into a pipe whose descriptor it names in
   ``SEVENROCKS_SECRETS_FD``: the environment every later program starts with (bubblewrap's
   init's, ``/proc/1/environ`` in the sandbox, which the wrapped program may read) holds
   no token; the adapter reads the pipe and the program never sees it;
7. execs the bot (or bubblewrap with its arguments on a pipe, so that the bind
   list never shows in ``/proc/1/cmdline`` inside the sandbox, and the seccomp
   deny list on a file descriptor that bubblewrap loads just before the bot).
"""

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
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


def bind_ro(c: ctypes.CDLL, source: str, target: str) -> None:
    check(c.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {source}")
    check(c.mount(b"none", target.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY, None), f"remount {source}")


def stage(spec: dict[str, object]) -> None:
    """In a private mount namespace: bind each ``[source, staging]`` pair (read-only), then
    (``rlimits`` as root, where no bubblewrap builds the bot's view) cover each folder of
    ``cover`` with an empty tmpfs, bind each ``[staging, path]`` of ``reveal`` back at its own
    path, bind each ``[stand-in, path]`` of ``hide`` over what the bot must not see, and,
    with ``no_network``, leave the bot a network namespace of its own (loopback only)."""
    c = libc()
    c.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    flags = CLONE_NEWNS | (CLONE_NEWNET if spec.get("no_network") else 0)
    check(c.unshare(flags), "unshare(CLONE_NEWNS)")
    check(c.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    for source, target in spec.get("stage", []):  # type: ignore[attr-defined]
        bind_ro(c, source, target)
    for folder in spec.get("cover", []):  # type: ignore[attr-defined]
        check(c.mount(b"tmpfs", folder.encode(), b"tmpfs", 0, b"mode=0755,size=1m"), f"cover {folder}")
    for target, path in spec.get("reveal", []):  # type: ignore[attr-defined]
        try:
            if os.path.isdir(target):
                os.makedirs(path, mode=0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                open(path, "a").close()
        except OSError as e:
            fail(f"cannot make {path} in the bot's view: {e.strerror}")
        bind_ro(c, target, path)
    for stand_in, path in spec.get("hide", []):  # type: ignore[attr-defined]
        if os.path.lexists(path):  # (one inside a covered folder is gone already)
            bind_ro(c, stand_in, path)


def die_with_parent(parent: int, sig: int = signal.SIGKILL) -> None:
    if not sys.platform.startswith("linux"):  # no parent-death signal elsewhere
        return
    c = libc()
    check(c.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(137)


def kill_groups(procs_files: list[str]) -> None:
    """SIGKILL every process in the bot's cgroups until none is left (a fork bomb included)."""
    for _ in range(300):
        pids = []
        for path in procs_files:
            try:
                with open(path) as f:
                    pids += [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                pass
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def confine_and_exec(spec: dict[str, object], argv: list[str], parent: int) -> None:
    """In the bot's process: limits, groups, mounts, uid, then exec (never returns)."""
    die_with_parent(parent)
    join_cgroups(spec.get("cgroups", []))  # type: ignore[arg-type]
    set_limits(spec.get("rlimits", {}))  # type: ignore[arg-type]
    if spec.get("stage") or spec.get("no_network"):
        stage(spec)
    seccomp = spec.get("seccomp")
    filter_fd = -1
    if isinstance(seccomp, str):  # opened while still privileged; bubblewrap reads it at the end
        try:
            filter_fd = os.open(seccomp, os.O_RDONLY)
        except OSError as e:
            fail(f"cannot open the seccomp filter {seccomp}: {e.strerror}")
        os.set_inheritable(filter_fd, True)
    uid = spec.get("uid")
    if isinstance(uid, int):
        gid = spec.get("gid", uid)
        assert isinstance(gid, int)
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        except OSError as e:
            fail(f"cannot switch to uid {uid}: {e.strerror}")
        die_with_parent(parent)  # a uid change clears the parent-death signal
    cwd = spec.get("cwd")
    if isinstance(cwd, str):
        try:
            os.chdir(cwd)
        except OSError as e:
            fail(f"cannot enter {cwd}: {e.strerror}")
    secret = spec.get("secret_env")
    if isinstance(secret, list):
        hand_over([str(k) for k in secret])
    bwrap_args = spec.get("bwrap_args")
    if isinstance(bwrap_args, list):
        r, w = os.pipe()
        data = b"".join(str(a).encode() + b"\0" for a in bwrap_args)
        if len(data) > 60_000:
            fail("too many sandbox arguments for one pipe")
        os.write(w, data)
        os.close(w)
        os.set_inheritable(r, True)
        extra = ["--seccomp", str(filter_fd)] if filter_fd >= 0 else []
        argv = [str(spec["bwrap"]), "--args", str(r), *extra, "--", *argv]
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        fail(f"cannot run {argv[0]!r}: {e.strerror}")


#: Names the pipe :func:`hand_over` wrote the secret variables to (read by the stdio adapter).
SECRETS_FD = "SEVENROCKS_SECRETS_FD"


def hand_over(names: list[str]) -> None:
    """Move ``names`` from the environment into a pipe (JSON, closed for writing) and name its read end
    in :data:`SECRETS_FD`: whoever reads it first (the adapter, before it starts its program) has them,
    and nothing of them stays in any process's ``/proc/N/environ``."""
    secrets = {k: os.environ.pop(k) for k in names if k in os.environ}
    data = json.dumps(secrets).encode()
    if len(data) > 60_000:
        fail("the secret environment does not fit one pipe")
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    os.set_inheritable(r, True)
    os.environ[SECRETS_FD] = str(r)


def supervise(spec: dict[str, object], argv: list[str]) -> None:
    """Stay as the bot's parent, outside its groups and uid, so that the bot dies with the harness.

    The harness may die by SIGKILL at any moment, even while bubblewrap is still
    setting a sandbox up (before its own parent-death signal is armed). This
    process gets SIGUSR2 when the harness dies, and then kills every process in
    the bot's cgroups; when the bot exits on its own, whatever it left behind
    (double-forked children) is killed the same way. Its exit status is the bot's.
    """
    groups = [str(g) for g in spec.get("cgroups", [])]  # type: ignore[attr-defined]

    def orphaned(_sig: int, _frame: object) -> None:
        kill_groups(groups)
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        if not groups:  # no cgroup (``off``): the bot's process group (this one's too) is all there is
            try:
                os.killpg(os.getpgid(0), signal.SIGKILL)
            except OSError:
                pass
        os._exit(137)

    child = 0
    signal.signal(signal.SIGUSR2, orphaned)
    die_with_parent(int(spec["parent"]), signal.SIGUSR2)  # type: ignore[call-overload]
    me = os.getpid()
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
        confine_and_exec(spec, argv, me)
        os._exit(126)

    def forward(sig: int, _frame: object) -> None:
        try:
            os.kill(child, sig)
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    _, status = os.waitpid(child, 0)
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    kill_groups(groups)
    if os.WIFSIGNALED(status):
        pass_on(os.WTERMSIG(status))
    code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 255
    if spec.get("bwrap") and code in BWRAP_SIGNALLED:
        # bubblewrap reports a bot killed by signal N as exit code 128 + N: pass on
        # the signal itself, so the harness sees one end however the bot was run
        # (Ctrl-C reaching the bot is "from outside", not a crash). A bot that
        # exits 130 on purpose gains nothing it could not get by killing itself.
        pass_on(code - 128)
    os._exit(code)


#: The exit codes bubblewrap gives for a child killed by one of these signals.
BWRAP_SIGNALLED = {128 + s for s in (signal.SIGHUP, signal.SIGINT, signal.SIGKILL, signal.SIGSEGV,
                                     signal.SIGTERM, signal.SIGXCPU, signal.SIGXFSZ, signal.SIGABRT,
                                     signal.SIGBUS, signal.SIGFPE, signal.SIGILL)}


def pass_on(killed_by: int) -> None:
    """Die of the signal that killed the bot, so that the harness sees the bot's own end.

    SIGKILL and SIGSTOP cannot be caught, so their disposition cannot be set either
    (``signal.signal`` raises ``OSError: [Errno 22]``): they need no reset. Any
    other signal is reset to its default first (this process handles a few).
    """
    if killed_by not in (signal.SIGKILL, signal.SIGSTOP):
        try:
            signal.signal(killed_by, signal.SIG_DFL)
        except (OSError, ValueError):
            killed_by = signal.SIGKILL
    if killed_by == signal.SIGSTOP:
        killed_by = signal.SIGKILL
    os.kill(os.getpid(), killed_by)
    os._exit(128 + killed_by)  # a signal whose default is not to die (e.g. SIGCHLD)


def main() -> None:
    spec = json.loads(sys.argv[1])
    argv = sys.argv[3:]
    if sys.argv[2] != "--" or not argv:
        fail("usage: jail.py SPEC -- ARGV...")
    if spec.get("supervise"):
        supervise(spec, argv)
    else:
        confine_and_exec(spec, argv, spec["parent"])


if __name__ == "__main__":
    main()
