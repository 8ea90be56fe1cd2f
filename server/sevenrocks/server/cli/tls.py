"""``sevenrocks tls HOST...``: a private CA and a referee certificate that names the hosts bots dial.

A bot checks two things about the referee's certificate: that it was signed by a CA the
bot trusts (``--tls-ca``), and that it names the host the bot dialled (a subject
alternative name: the DNS name or the IP address in ``SEVENROCKS_REFEREE``). Getting
either wrong ends in a refused handshake, so this command makes both right at once:
a CA of its own (its key is used once and never written, so nothing else can ever be
signed by it), and a certificate for every name given, signed by that CA. The author
gets ``ca.pem`` (public); ``key.pem`` stays with the referee (mode 600).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import click

#: How long a certificate made here stays valid: a season of leagues.
VALID_DAYS = 825
#: The port the printed commands use unless --port says otherwise.
DEFAULT_PORT = 50051


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """Where :func:`make_tls_files` wrote the CA, the certificate and its key."""

    ca: Path
    cert: Path
    key: Path


def san_entry(host: str) -> object:
    """A subject alternative name for ``host``: an IP address entry for an address, else a DNS name."""
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        if not host or any(c.isspace() or c in "/:@" for c in host):
            raise click.BadParameter(f"{host!r} is neither a host name nor an IP address", param_hint="HOST")
        if len(host.rstrip(".")) > 253 or any(not 0 < len(label) <= 63 for label in host.rstrip(".").split(".")):
            raise click.BadParameter(f"{host[:40]!r}... is not a host name: at most 253 characters, each part "
                                     "between dots 1 to 63", param_hint="HOST")
        return x509.DNSName(host.lower())


def common_name(text: str) -> str:
    """A certificate's common name is at most 64 characters (it only labels the certificate: the
    subject alternative names are what a bot checks)."""
    return text if len(text) <= 64 else text[:61] + "..."


def make_tls_files(hosts: list[str], out: Path, days: int = VALID_DAYS) -> TlsFiles:
    """Write ``ca.pem``, ``cert.pem`` and ``key.pem`` (mode 600) into ``out`` for ``hosts``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    names = [san_entry(h) for h in hosts]
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name(f"sevenrocks referee CA for {hosts[0]}"))])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name(hosts[0]))]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)  # type: ignore[arg-type]
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    out.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(out / "ca.pem", out / "cert.pem", out / "key.pem")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    fd = os.open(files.key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(fd, 0o600)  # an older key.pem keeps its mode otherwise
        f.write(key_pem)
    return files


def dial_address(host: str, port: int) -> str:
    """``host:port`` as a bot writes it in SEVENROCKS_REFEREE (IPv6 in brackets)."""
    return f"[{host.strip('[]')}]:{port}" if ":" in host.strip("[]") else f"{host}:{port}"


@click.command("tls", epilog="""\b
Examples:
  sevenrocks tls referee.example.org                 # bots dial referee.example.org
  sevenrocks tls 192.0.2.7 referee.lan --out tls/    # an address and a name, both accepted
  sevenrocks tls localhost 127.0.0.1 --port 50052    # a trial on this machine
Then: sevenrocks serve --listen 0.0.0.0:PORT --tls-cert tls/cert.pem --tls-key tls/key.pem ...
and each bot: --referee HOST:PORT --tls-ca ca.pem (the file, sent to its author).
""")
@click.argument("hosts", nargs=-1, required=True, metavar="HOST...")
@click.option("--out", "out_dir", default="tls", show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for ca.pem, cert.pem and key.pem.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True,
              help="The port used in the commands printed (the referee's --listen port).")
@click.option("--days", type=click.IntRange(1, 3650), default=VALID_DAYS, show_default=True,
              help="How long the certificate is valid.")
def tls(hosts: tuple[str, ...], out_dir: Path, port: int, days: int) -> None:
    """Make a private CA and a referee certificate naming every HOST (a DNS name or IP address)
    that bots will dial, and print the commands for the referee and for each bot.

    Every name or address a bot may put in SEVENROCKS_REFEREE must be a HOST here: a
    certificate that does not name the address dialled is refused by the bot. Running
    it again makes a new CA; send the new ca.pem to the authors.
    """
    try:
        files = make_tls_files(list(hosts), out_dir, days)
    except OSError as e:
        raise click.ClickException(f"cannot write the certificate files into {out_dir}: "
                                   f"{e.strerror or e}; give another --out folder") from None
    click.echo(f"wrote {files.ca} (send it to bot authors), {files.cert} and {files.key} (keep it here: mode 600), "
               f"valid {days} days for {', '.join(hosts)}")
    click.echo(f"referee: sevenrocks serve --listen 0.0.0.0:{port} --tls-cert {files.cert} --tls-key {files.key} "
               "--entrants entrants.txt")
    click.echo(f"each bot: SEVENROCKS_TOKEN=<its token> python my_bot.py --referee {dial_address(hosts[0], port)} "
               f"--tls-ca {files.ca.name}   (with {files.ca.name} beside the bot; or SEVENROCKS_REFEREE="
               f"{dial_address(hosts[0], port)} SEVENROCKS_TLS_CA={files.ca.name})")
