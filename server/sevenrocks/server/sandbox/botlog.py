"""A bot's output, copied to its log file up to a size limit, then cut with a marker.

A bot's stdout and stderr are a pipe read by a thread of the harness, never the
log file itself: a bot that writes 200 MB gets a log of ``limit`` bytes ending in
a line that says how much was dropped, and the disk never fills. The rest is read
and thrown away, so that the bot does not block on a full pipe (which would turn
chatter into timeouts that look like the referee's fault).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

__all__ = ["LogPump"]

CHUNK = 64 * 1024


class LogPump:
    """Copy everything readable from ``fd`` into ``path`` (or nowhere), at most ``limit`` bytes."""

    def __init__(self, fd: int, path: Path | None, limit: int | None) -> None:
        self.fd = fd
        self.path = path
        self.limit = limit
        self.written = 0
        self.dropped = 0
        self._file: IO[bytes] | None = path.open("ab") if path is not None else None
        self._thread = threading.Thread(target=self._run, name=f"botlog-{path.name if path else fd}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while chunk := os.read(self.fd, CHUNK):
                self._take(chunk)
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self._finish()

    def _take(self, chunk: bytes) -> None:
        if self._file is None:
            return
        room = len(chunk) if self.limit is None else max(0, self.limit - self.written)
        if room:
            self._file.write(chunk[:room])
            self._file.flush()
            self.written += min(room, len(chunk))
        lost = len(chunk) - min(room, len(chunk))
        if lost and not self.dropped:
            mib = (self.limit or 0) / (1024 * 1024)
            self._file.write(f"\n[sevenrocks: log truncated at {mib:g} MiB ([sandbox] log_mb); "
                             "further output is discarded]\n".encode())
            self._file.flush()
        self.dropped += lost

    def _finish(self) -> None:
        if self._file is None:
            return
        if self.dropped:
            self._file.write(f"[sevenrocks: {self.dropped} bytes of output were discarded]\n".encode())
        self._file.close()
        self._file = None

    @property
    def done(self) -> bool:
        """Everything the bot's processes wrote is in the log (their end of the pipe is closed)."""
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the bot's end of the pipe to close (every process holding it has exited)."""
        self._thread.join(timeout)
