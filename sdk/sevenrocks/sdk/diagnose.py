"""Why a bot cannot connect: a permanent mistake to report, or a passing failure to retry.

When gRPC cannot open a channel it says only ``UNAVAILABLE`` with a details string
("Socket closed", "Tls handshake failed ..."), the same code a referee that is
restarting gives. Retrying a plaintext bot against a TLS port, or a certificate that
does not name the address dialled, can never succeed, so the client asks this module
after such a failure. It looks for itself with the standard library, the way gRPC
would have met the referee:

* dialled in plaintext: does the port complete a TLS handshake? Then the referee
  speaks TLS and the bot needs ``--tls-ca``;
* dialled with TLS: a handshake against the bot's CA and the host it dialled, so
  ``ssl`` names the trouble (an unknown CA, a certificate for other names, an
  expired one); a port that answers no TLS but HTTP/2 in clear is a plaintext referee.

Anything else (nothing listening, a timeout, a handshake that now succeeds) is
transient: ``None``, and the client keeps its backoff.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable

__all__ = ["diagnose", "split_address"]

#: The probe's whole budget per step (connect, handshake, read): a bot gives up within seconds.
PROBE_TIMEOUT_S = 3.0
#: What an HTTP/2 client sends first (RFC 9113 §3.4), then an empty SETTINGS frame.
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
#: OpenSSL's verify codes for a certificate that names other hosts or addresses.
NAME_MISMATCH = {62, 64}  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
EXPIRED = {9, 10}  # X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``host:port`` / ``[v6]:port`` / ``dns:///host:port`` target; None for others."""
    target = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    if target.startswith("unix:") or "/" in target:
        return None
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _connect(host: str, port: int) -> socket.socket:
    return socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S)


def _unverified() -> ssl.SSLContext:
    """A TLS client that accepts any certificate: to see whether a port speaks TLS, and what it shows."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    return ctx


def _speaks_tls(host: str, port: int) -> bool:
    """Does the port complete a TLS handshake (any certificate)?"""
    ctx = _unverified()
    with _connect(host, port) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname=host or None):
                return True
        except (ssl.SSLError, OSError):
            return False


def _speaks_h2_in_clear(host: str, port: int) -> bool:
    """Does the port answer an HTTP/2 preface in clear with a SETTINGS frame (a plaintext gRPC server)?"""
    try:
        with _connect(host, port) as s:
            s.sendall(H2_PREFACE)
            head = b""
            while len(head) < 9:
                chunk = s.recv(9 - len(head))
                if not chunk:
                    return False
                head += chunk
            return head[3] == 0x04
    except OSError:
        return False


def _peer_names(host: str, port: int) -> list[str]:
    """The DNS names and addresses the server's certificate names (empty if it cannot be read)."""
    ctx = _unverified()
    try:
        with _connect(host, port) as raw, ctx.wrap_socket(raw, server_hostname=host or None) as s:
            der = s.getpeercert(binary_form=True)
        from cryptography import x509

        cert = x509.load_der_x509_certificate(der or b"")
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        return [*sans.get_values_for_type(x509.DNSName),
                *(str(ip) for ip in sans.get_values_for_type(x509.IPAddress))]
    except Exception:  # no cryptography, no SAN, a failed handshake: the message goes without names
        return []


def _tls_verdict(host: str, port: int, ca: bytes, ca_name: str) -> str | None:
    """A TLS handshake as gRPC makes it: the bot's CA, the dialled host's name checked."""
    dialled = f"{host}:{port}"
    try:
        ctx = ssl.create_default_context(cadata=ca.decode("ascii", errors="replace"))
    except (ssl.SSLError, ValueError) as e:
        return f"{ca_name} holds no usable PEM CA certificate ({e}); pass the ca.pem the referee's operator sent"
    ctx.set_alpn_protocols(["h2"])
    with _connect(host, port) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname=host or None):
                return None
        except ssl.SSLCertVerificationError as e:
            if e.verify_code in NAME_MISMATCH:
                names = _peer_names(host, port)
                named = f" (it names {', '.join(names)})" if names else ""
                return (f"the referee's certificate does not name {host}, the host this bot dialled{named}: "
                        f"dial a name it holds, or ask the operator for a certificate naming {host} "
                        f"(sevenrocks tls {host} ...)")
            if e.verify_code in EXPIRED:
                return f"the referee's certificate at {dialled} is not valid now ({e.verify_message}); ask the operator for a new one"
            return (f"the referee's certificate at {dialled} is not signed by the CA in {ca_name} "
                    f"({e.verify_message}); pass the ca.pem the operator's `sevenrocks tls` wrote")
        except (ssl.SSLError, OSError):
            pass
    if _speaks_h2_in_clear(host, port):
        return (f"the referee at {dialled} speaks plaintext, and this bot dialled it with TLS (--tls-ca {ca_name}): "
                "drop --tls-ca / SEVENROCKS_TLS_CA, or ask the operator for its TLS port")
    return None


def diagnose(address: str, tls_ca: bytes | None, ca_name: str = "--tls-ca",
             log: Callable[[str], None] | None = None) -> str | None:
    """Why connecting to ``address`` can never work, in one line; None if retrying may help.

    Blocking (sockets with a timeout): run it in a thread from async code."""
    where = split_address(address)
    if where is None:
        return None
    host, port = where
    try:
        if tls_ca is not None:
            return _tls_verdict(host, port, tls_ca, ca_name)
        if _speaks_tls(host, port):
            return (f"the referee at {host}:{port} speaks TLS, and this bot dialled it in plaintext: pass "
                    "--tls-ca ca.pem (or SEVENROCKS_TLS_CA=ca.pem), the CA file the referee's operator sent")
    except OSError as e:  # nothing listening, unreachable, a timeout: the referee may be restarting
        if log is not None:
            log(f"probe of {address}: {e}")
    return None
