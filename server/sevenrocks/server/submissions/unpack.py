"""Unpacking an uploaded bot: a tar (plain, gzip, bzip2, xz) or zip archive, refused unless it is harmless.

Why by hand and not ``extractall``: an upload is written by a stranger. Every
member is checked before a byte of it lands, and sizes are counted while the
data is written, never taken from the archive's headers (a zip bomb lies in
them). Refused, each with one line that names the member:

* an absolute path, a ``..`` component, a name that is not UTF-8 or holds a NUL
  or control character;
* a symbolic link whose target is absolute or leads outside the bundle, a hard
  link to anything but a regular file already unpacked;
* a device, a FIFO, a socket (anything but files, folders and links);
* more than ``max_files`` members, or more than ``max_bytes`` unpacked in total;
* a path more than ``MAX_DEPTH`` folders deep (the copy into the snapshot store and every tool after it
  walk the tree; an archive of 2,100 nested folders once stopped the pipeline with ``RecursionError``);
* a damaged compressed stream (a corrupt deflate stream raises ``zlib.error``, not an ``OSError``), an
  encrypted member, a compression method Python cannot read.

Files are created with ``O_NOFOLLOW | O_EXCL`` below a folder whose real path is
checked to lie inside the bundle, so no member is written through a link, and
nothing is ever made executable for others or setuid.
"""

from __future__ import annotations

import lzma
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from ..versions.snapshots import remove_tree

CHUNK = 64 * 1024
#: The deepest a member may lie (folders), far more than any real bundle (node_modules included) needs.
MAX_DEPTH = 64


class UnpackError(ValueError):
    """The upload is refused; the message is one line naming the member and the rule."""


@dataclass(frozen=True, slots=True)
class UnpackLimits:
    #: Members (files, folders and links) in the archive.
    max_files: int = 2000
    #: Bytes of all files together once unpacked.
    max_bytes: int = 64 * 2**20


@dataclass(frozen=True, slots=True)
class _Member:
    name: str
    kind: str  # file | dir | symlink | hardlink | other
    mode: int
    link: str
    open: object  # () -> binary file object, for files


def _check_name(raw: str) -> PurePosixPath:
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise UnpackError(f"{raw.encode('utf-8', 'backslashreplace').decode()!r}: a file name that is not UTF-8; "
                          "rename it") from None
    if any(ord(c) < 32 or c == "\x7f" for c in raw):
        raise UnpackError(f"{raw!r}: a file name with a control character; rename it")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise UnpackError(f"{raw!r}: an absolute path; archive the folder's contents with relative paths")
    path = PurePosixPath(raw)
    if ".." in path.parts:
        raise UnpackError(f"{raw!r}: a path with '..' that would leave the bundle")
    parts = [p for p in path.parts if p not in ("", ".")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _inside(target: str, link_dir: PurePosixPath) -> bool:
    """Does a relative link target, read from ``link_dir``, stay in the bundle (by name, lexically)?"""
    if target.startswith("/"):
        return False
    depth = len([p for p in link_dir.parts if p not in ("", ".")])
    for part in PurePosixPath(target).parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            depth += 1
    return True


def _tar_members(tar: tarfile.TarFile) -> Iterator[_Member]:
    for info in tar:
        if info.isreg():
            kind = "file"
        elif info.isdir():
            kind = "dir"
        elif info.issym():
            kind = "symlink"
        elif info.islnk():
            kind = "hardlink"
        else:
            kind = "other"
        yield _Member(info.name, kind, info.mode, info.linkname,
                      (lambda i=info: tar.extractfile(i)))


def _zip_name(info: zipfile.ZipInfo) -> str:
    if info.flag_bits & 0x800:
        return info.filename
    # Without the UTF-8 flag, zipfile decoded the raw bytes as cp437; they must be UTF-8 (or ASCII) anyway.
    raw = info.filename.encode("cp437")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")


def _zip_members(zf: zipfile.ZipFile) -> Iterator[_Member]:
    for info in zf.infolist():
        mode = (info.external_attr >> 16) & 0xFFFF
        name = _zip_name(info)
        if info.is_dir():
            kind = "dir"
        elif stat.S_ISLNK(mode):
            kind = "symlink"
        elif stat.S_IFMT(mode) == 0 or stat.S_ISREG(mode):
            kind = "file"
        else:
            kind = "other"
        link = ""
        if kind == "symlink":
            with zf.open(info) as f:
                data = f.read(4097)
            if len(data) > 4096:
                raise UnpackError(f"{name!r}: a link with a target longer than 4096 bytes")
            link = data.decode("utf-8", "surrogateescape")
        yield _Member(name.rstrip("/") if kind == "dir" else name, kind, mode & 0o7777 or 0o644, link,
                      (lambda i=info: zf.open(i)))


def unpack(archive: Path, dest: Path, limits: UnpackLimits = UnpackLimits()) -> int:
    """Unpack ``archive`` into the new folder ``dest``; returns the bytes written.

    On any refusal ``dest`` is removed and :class:`UnpackError` says why in one line.
    """
    dest.mkdir(mode=0o755)
    try:
        with archive.open("rb") as f:
            head = f.read(4)
        try:
            if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
                try:
                    with zipfile.ZipFile(archive) as zf:
                        return _extract(_zip_members(zf), dest, limits)
                except zipfile.BadZipFile as e:
                    raise UnpackError(f"not a readable zip archive: {e}") from None
            try:
                with tarfile.open(archive, "r:*") as tar:
                    return _extract(_tar_members(tar), dest, limits)
            except tarfile.TarError as e:
                raise UnpackError(f"not a readable tar or zip archive ({str(e).splitlines()[0].rstrip(':')}); "
                                  "send a .tar.gz or a .zip") from None
        except UnpackError:
            raise
        except (EOFError, OSError, zlib.error, lzma.LZMAError, NotImplementedError, RuntimeError, ValueError) as e:
            if isinstance(e, OSError) and e.errno is not None:
                raise  # the league's own disk (the upload gone, the disk full): not the author's fault
            # A damaged stream (zlib.error, gzip's BadGzipFile, bz2's OSError, lzma), an encrypted zip
            # member (RuntimeError), a method zipfile cannot read (NotImplementedError): one line, never an
            # exception that leaves the submission half-done.
            first = (str(e).splitlines() or [""])[0]
            raise UnpackError(f"the archive is damaged or truncated ({type(e).__name__}: {first}); "
                              "make it again and send a .tar.gz or a .zip") from None
    except BaseException:
        remove_tree(dest)
        raise


def _extract(members: Iterator[_Member], dest: Path, limits: UnpackLimits) -> int:
    state = _Extraction(os.path.realpath(dest))
    for m in members:
        try:
            state.add(m, dest, limits)
        except OSError as e:
            if e.errno is None:  # a damaged compressed stream (gzip's BadGzipFile): unpack() says so
                raise
            # What the file system refuses (a name or link target too long, ...) is the upload's
            # fault too: one line naming the member, never an exception that would stop the
            # league's submission queue.
            raise UnpackError(f"{m.name!r}: cannot be unpacked here ({e.strerror}); shorten or rename it") from None
    return state.total


@dataclass(slots=True)
class _Extraction:
    """What an extraction has written so far (members, bytes, the regular files)."""

    root: str
    count: int = 0
    total: int = 0
    files: set[PurePosixPath] = field(default_factory=set)

    def add(self, m: _Member, dest: Path, limits: UnpackLimits) -> None:
        """Check one member against every rule of the module's docstring, then write it."""
        root, files = self.root, self.files
        self.count += 1
        if self.count > limits.max_files:
            raise UnpackError(f"more than {limits.max_files} files in the archive; leave build outputs and "
                              "dependencies out (the build step makes them)")
        rel = _check_name(m.name)
        if rel == PurePosixPath("."):
            return
        if len(rel.parts) > MAX_DEPTH:
            raise UnpackError(f"{m.name[:80]!r}...: more than {MAX_DEPTH} folders deep; flatten the bundle")
        target = dest / rel
        if m.kind == "other":
            raise UnpackError(f"{m.name!r}: a device, FIFO or socket; only files, folders and links may be sent")
        if m.kind == "dir":
            _mkdirs(dest, rel, root)
            return
        _mkdirs(dest, rel.parent, root)
        parent = os.path.realpath(target.parent)
        if parent != root and not parent.startswith(root + os.sep):
            raise UnpackError(f"{m.name!r}: its folder is a link leading outside the bundle")
        if os.path.lexists(target):
            raise UnpackError(f"{m.name!r}: appears twice in the archive")
        if m.kind == "symlink":
            if not m.link or not _inside(m.link, rel.parent):
                raise UnpackError(f"{m.name!r}: a link to {m.link!r}, outside the bundle")
            os.symlink(m.link, target)
            return
        if m.kind == "hardlink":
            source = _check_name(m.link)
            if source not in files:
                raise UnpackError(f"{m.name!r}: a hard link to {m.link!r}, which is not a file of the bundle "
                                  "unpacked before it")
            src_path = dest / source
            self.total += src_path.stat().st_size
            if self.total > limits.max_bytes:
                raise _too_big(limits)
            shutil.copyfile(src_path, target, follow_symlinks=False)
            os.chmod(target, src_path.stat().st_mode & 0o755)
            files.add(rel)
            return
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        opener = m.open
        assert callable(opener)
        with os.fdopen(fd, "wb") as out:
            src: IO[bytes] | None = opener()
            if src is not None:
                with src:
                    while chunk := src.read(CHUNK):
                        self.total += len(chunk)
                        if self.total > limits.max_bytes:
                            raise _too_big(limits)
                        out.write(chunk)
        os.chmod(target, 0o755 if m.mode & 0o111 else 0o644)
        files.add(rel)


def _too_big(limits: UnpackLimits) -> UnpackError:
    return UnpackError(f"more than {limits.max_bytes // 2**20} MiB once unpacked; leave build outputs and "
                       "dependencies out (the build step makes them)")


def _mkdirs(dest: Path, rel: PurePosixPath, root: str) -> None:
    here = dest
    for part in rel.parts:
        if part in ("", "."):
            continue
        here = here / part
        if os.path.islink(here):
            real = os.path.realpath(here)
            if real != root and not real.startswith(root + os.sep):
                raise UnpackError(f"{str(rel)!r}: passes through a link leading outside the bundle")
            if not os.path.isdir(real):
                raise UnpackError(f"{str(rel)!r}: passes through a link that is not a folder")
            continue
        if here.exists() and not here.is_dir():
            raise UnpackError(f"{str(rel)!r}: a folder and a file of the same name")
        if not here.exists():
            here.mkdir(mode=0o755)
