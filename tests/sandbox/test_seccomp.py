"""The seccomp deny list in the bubblewrap sandbox: each denied call fails with EPERM, bots still play.

A probe calls each system call with harmless arguments (a bad pointer where the
kernel would otherwise copy one in, the calling process itself where it names one)
in the same sandbox twice: with the filter, every call must fail with EPERM; without
it (the control), the calls named in ``REACHED`` get past the sandbox's other walls
(they succeed or fail on their arguments), so the EPERM really is the filter's.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.sandbox.sandbox import Sandbox, SandboxSettings
from sevenrocks.server.sandbox.seccomp import DENIED, syscall_number

from .helpers import BOTS, require_bwrap

BAD = 1  # a user-space address that is never mapped: EFAULT when the kernel reads it
#: name -> arguments. The calling process is pid 2 in its sandbox's pid namespace.
PROBES: dict[str, list[int]] = {
    "ptrace": [0, 0, 0, 0],                  # PTRACE_TRACEME: works for any process
    "process_vm_readv": [2, 0, 0, 0, 0, 0],  # nothing, from itself
    "keyctl": [0, -2, 0],                    # KEYCTL_GET_KEYRING_ID of its own process keyring
    "add_key": [BAD, BAD, 0, 0, 0],
    "bpf": [0, BAD, 64],
    "perf_event_open": [BAD, 0, -1, -1, 0],
    "userfaultfd": [0],
    "io_uring_setup": [1, BAD],
    "mount": [BAD, BAD, BAD, 0, 0],
    "umount2": [BAD, 0],
    "setns": [-1, 0],
    "unshare": [0],                          # nothing to unshare: works
    "open_by_handle_at": [-1, BAD, 0],
    "kcmp": [2, 2, 0, 0, 0],
}
#: Calls the sandbox without the filter lets through to their own checks (measured on Linux 5.x/6.x).
REACHED = {"ptrace", "process_vm_readv", "keyctl", "perf_event_open", "mount", "umount2", "setns", "unshare", "add_key"}


#: Arguments for a denied call with no probe of its own: an invalid descriptor, then bad pointers
#: (with the filter the kernel never looks at them; ``pidfd_getfd`` would say EBADF, not EPERM).
ANY = [-1, BAD, BAD, 0, 0, 0]


def probe(sandbox: Sandbox, names: tuple[str, ...] = tuple(PROBES)) -> dict[str, int]:
    calls = {name: [syscall_number(name), PROBES.get(name, ANY)] for name in names if syscall_number(name) is not None}
    prep = sandbox.prepare([sys.executable, str(BOTS / "syscall_probe.py"), json.dumps(calls)],
                           {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "probe")
    try:
        out = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
    finally:
        sandbox.release(prep)
    assert out.returncode == 0, out.stderr
    result: dict[str, int] = json.loads(out.stdout)
    return result


def test_each_denied_call_fails_with_eperm_in_the_sandbox_and_only_because_of_the_filter() -> None:
    require_bwrap()
    assert set(PROBES) <= set(DENIED)
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        assert sb.seccomp is not None and "seccomp deny list" in sb.describe()
        filtered = probe(sb)
        sb.seccomp = None  # the control: the same sandbox without the filter
        control = probe(sb)
    names = {e: errno.errorcode.get(e, str(e)) for e in {*filtered.values(), *control.values()}}
    print({n: (names[filtered[n]], names.get(control[n], "ok") if control[n] else "ok") for n in filtered})
    assert filtered == {n: errno.EPERM for n in filtered}, filtered
    reached = {n for n, e in control.items() if e != errno.EPERM}
    assert REACHED <= reached, {n: control[n] for n in REACHED}


def test_every_one_of_the_denied_calls_fails_with_eperm_in_the_sandbox() -> None:
    """All of DENIED, not only the probes above: a name dropped from the list (``pidfd_getfd``,
    which takes another process's file descriptors) fails on its arguments instead."""
    require_bwrap()
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        filtered = probe(sb, DENIED)
    assert {"pidfd_getfd", "process_vm_writev", "io_uring_enter", "kexec_load", "fsopen"} <= set(filtered)
    assert len(filtered) >= 40, sorted(set(DENIED) - set(filtered))
    assert {n: e for n, e in filtered.items() if e != errno.EPERM} == {}


VSOCK = """
import errno, socket, sys
try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
"""


def test_an_af_vsock_socket_is_refused_in_the_sandbox() -> None:
    """AF_VSOCK reaches the hypervisor and other guests whatever the network namespace: the
    filter refuses ``socket(AF_VSOCK, ...)`` with EPERM (the control: without it, the call gets
    past the sandbox to the kernel's own answer)."""
    require_bwrap()
    results = []
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        for control in (False, True):
            if control:
                sb.seccomp = None
            prep = sb.prepare([sys.executable, "-c", VSOCK], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "vsock")
            try:
                out = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
            finally:
                sb.release(prep)
            assert out.returncode == 0, out.stderr
            results.append(out.stdout.strip())
    assert results[0] == "EPERM" and results[1] != "EPERM", results


INT80 = r"""
int main(void) {
    long ret;
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(20) : "memory");  /* getpid, the 32-bit way */
    return ret > 0 ? 0 : 3;
}
"""


def test_a_32_bit_system_call_kills_the_process_in_the_sandbox(tmp_path: Path) -> None:
    """docs/security.md: a 32-bit system call (``int $0x80`` on x86-64, numbered from another table the
    deny list does not name) kills the process with SIGSYS; without the filter the same program runs."""
    import platform
    import shutil

    require_bwrap()
    if platform.machine() != "x86_64" or shutil.which("cc") is None:
        pytest.skip("needs x86-64 and a C compiler")
    source = tmp_path / "int80.c"
    source.write_text(INT80)
    binary = tmp_path / "int80"
    subprocess.run(["cc", "-O0", "-o", str(binary), str(source)], check=True, capture_output=True, timeout=120)
    os.chmod(tmp_path, 0o755)
    codes = []
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        for control in (False, True):
            if control:
                sb.seccomp = None
            prep = sb.prepare([str(binary)], {"PATH": "/usr/bin:/bin"}, "int80")
            try:
                codes.append(subprocess.run(prep.argv, env=prep.env, capture_output=True, timeout=60).returncode)
            finally:
                sb.release(prep)
    assert codes[0] in (-signal.SIGSYS, 128 + signal.SIGSYS), codes  # killed by the filter
    if codes[1] != 0:
        pytest.skip(f"this kernel runs no 32-bit calls at all (status {codes[1]}): the control says nothing")
