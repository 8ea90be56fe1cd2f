"""``sevenrocks serve`` with TLS: a client with one valid token cannot balloon the referee.

gRPC buffers a whole message before the referee's own 64 KiB check sees it; its
receive limit was 64 MiB, and one remote bot sending 60 MB messages took the
referee from 75 to 481 MB. Now gRPC refuses anything over 256 KiB from its
length prefix. The test sends eight 60 MB first messages, four at a time, over
TLS with a valid token, and reads the referee's peak resident memory
(``VmHWM``) before and after.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import grpc

from .test_client import self_signed

TOKEN = "bigsender-token-0123456789"


def peak_mb(pid: int) -> float:
    found = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    assert found is not None
    return int(found.group(1)) / 1024


def test_one_valid_token_cannot_balloon_a_tls_referees_memory(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    entrants = tmp_path / "entrants.txt"
    entrants.write_text(f"big={TOKEN}\nother=other-token-0123456789\n")
    entrants.chmod(0o600)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "serve", "--listen", "127.0.0.1:0", "--tls-cert", "cert.pem",
         "--tls-key", "key.pem", "--entrants", str(entrants), "--connect-timeout", "600"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        port = None
        for _ in range(40):
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stdout.readline())
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "serve did not say where it listens"
        creds = grpc.ssl_channel_credentials((tmp_path / "ca.pem").read_bytes())
        before = peak_mb(proc.pid)
        payload = b"\x0a" + b"\xff" * (60 * 2**20 - 1)
        ends: list[str] = []

        def send() -> None:
            for _ in range(2):
                with grpc.secure_channel(f"localhost:{port}", creds,
                                         options=[("grpc.max_send_message_length", -1)]) as channel:
                    play = channel.stream_stream("/sevenrocks.v1.Referee/Play", request_serializer=lambda b: b,
                                                 response_deserializer=lambda b: b)
                    try:
                        for _ in play(iter([payload]), metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=60):
                            pass
                        ends.append("OK")
                    except grpc.RpcError as e:
                        ends.append(e.code().name)  # type: ignore[attr-defined]

        senders = [threading.Thread(target=send) for _ in range(4)]
        for t in senders:
            t.start()
        for t in senders:
            t.join(300)
        after = peak_mb(proc.pid)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert len(ends) == 8 and "OK" not in ends, ends
    assert "RESOURCE_EXHAUSTED" in ends, ends
    # Before: every message was held whole (60 MB each, four at a time). Now: the prefix is enough.
    assert after - before < 60, (before, after)
