"""A small seccomp deny list for bots in bubblewrap: kernel interfaces no bot needs.

Bubblewrap already gives a bot no capabilities, no network and its own user and
pid namespaces, so most of these calls fail anyway. The filter is a second wall in
case one of those interfaces has a bug (they are where container escapes come
from): the calls below return ``EPERM`` before the kernel looks at their
arguments. A program that plays a game needs none of them; everything else is
allowed (the filter is a deny list, so an ordinary Python, C++ or Java bot runs
unchanged).

The classic BPF program is built by libseccomp (``libseccomp.so.2``, part of every
Debian and Ubuntu system: systemd needs it), called through ``ctypes``: it knows
every architecture's syscall numbers and guards the architecture check (a 32-bit
``int 0x80`` call on x86-64 would otherwise reach other numbers). Bubblewrap loads
the program (``--seccomp FD``) after it has set up the sandbox, just before it
execs the bot.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from pathlib import Path

#: Denied calls, by name (a name this kernel's architecture does not have is skipped).
DENIED = (
    # Reading or writing another process's memory or registers.
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # The kernel keyring (shared with the harness's user outside a user namespace).
    "keyctl", "add_key", "request_key",
    # Programs and counters that run in or read from the kernel.
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # Mounts and namespaces (bubblewrap has built the bot's view; nothing may change it).
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
    "mount_setattr", "setns", "unshare", "chroot", "open_by_handle_at", "name_to_handle_at",
    # The machine itself.
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
    "swapoff", "acct", "quotactl", "syslog", "vhangup", "lookup_dcookie",
)
#: Socket address families a bot may not open (``socket(FAMILY, ...)`` fails with EPERM): the
#: network namespace empties the others, but AF_VSOCK talks to the hypervisor and its other
#: guests across any namespace.
DENIED_FAMILIES = {"AF_VSOCK": 40}
#: libseccomp's SCMP_CMP_EQ (enum scmp_compare).
_SCMP_CMP_EQ = 4


class _ArgCmp(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: argument ``arg`` compared by ``op`` with ``datum_a``."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]

SCMP_ACT_ALLOW = 0x7FFF0000


def SCMP_ACT_ERRNO(code: int) -> int:  # noqa: N802 (libseccomp's name)
    return 0x00050000 | (code & 0xFFFF)


class SeccompUnavailable(RuntimeError):
    """libseccomp is not installed here (the sandbox runs without the filter and says so)."""


def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as e:
        raise SeccompUnavailable(f"libseccomp is not installed ({e}); Debian/Ubuntu: apt-get install libseccomp2") \
            from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.restype = ctypes.c_int
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.restype = None
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def syscall_number(name: str) -> int | None:
    """This architecture's number for ``name`` (None if it has no such call)."""
    nr = _lib().seccomp_syscall_resolve_name(name.encode())
    return None if nr < 0 else int(nr)


def write_filter(path: Path, denied: tuple[str, ...] = DENIED) -> list[str]:
    """Write the BPF program that makes every call of ``denied``, and ``socket`` for each of
    :data:`DENIED_FAMILIES`, fail with EPERM; returns the names used."""
    lib = _lib()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    used: list[str] = []
    try:
        for name in denied:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue  # not a call of this architecture
            rc = lib.seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errno.EPERM), nr, 0)
            if rc < 0:
                raise SeccompUnavailable(f"seccomp_rule_add({name}) failed: {os.strerror(-rc)}")
            used.append(name)
        nr = lib.seccomp_syscall_resolve_name(b"socket")
        for family, number in DENIED_FAMILIES.items():
            if nr < 0:
                break
            rc = lib.seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errno.EPERM), nr, 1,
                                            (_ArgCmp * 1)(_ArgCmp(0, _SCMP_CMP_EQ, number, 0)))
            if rc < 0:
                raise SeccompUnavailable(f"seccomp_rule_add(socket, {family}) failed: {os.strerror(-rc)}")
            used.append(f"socket({family})")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
        finally:
            os.close(fd)
        if rc < 0:
            raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-rc)}")
    finally:
        lib.seccomp_release(ctx)
    return used
