"""docs/protocol.md's TLS recipe, run as an operator and an author would: verbatim, real sockets.

The referee's lines (``sevenrocks tls``, then ``sevenrocks serve`` with the files it
wrote) run in one folder; the author's line runs in another holding only ``ca.pem``,
through a shell with ``TOKEN`` set as the page says. Two authors (alice and bob, the
entrants file the page makes above) play the 20 matches over TLS. The only change a
busy machine may force is the port, when 50051 is taken here.
"""

from __future__ import annotations

import re
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

from ..user_paths import SH_BLOCK, run_documented, user_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
PORT = "50051"


def recipe() -> tuple[list[str], list[str], list[str]]:
    """(lines making entrants.txt, the referee's lines, the author's bot line) from the page."""
    text = DOC.read_text(encoding="utf-8")
    entrants = next(b for b in SH_BLOCK.findall(text) if "> entrants.txt" in b)
    making = [ln for ln in entrants.replace("\\\n", " ").splitlines() if ln.strip() and not ln.startswith("sevenrocks")]
    section = text.split("## TLS for remote bots", 1)[1].split("\n## ", 1)[0]
    referee_block, author_block = SH_BLOCK.findall(section)[:2]
    referee = [ln for ln in referee_block.splitlines() if ln.strip()]
    author = [ln for ln in author_block.splitlines() if ln.strip() and not ln.startswith("TOKEN=")]
    return making, referee, author


def port_in_use(port: str) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", int(port))) == 0


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def test_the_tls_recipe_runs_as_written(tmp_path: Path) -> None:
    making, referee_lines, author_lines = recipe()
    assert [shlex.split(ln)[:2] for ln in referee_lines] == [["sevenrocks", "tls"], ["sevenrocks", "serve"]]
    assert len(author_lines) == 1 and "--tls-ca ca.pem" in author_lines[0]
    port = PORT if not port_in_use(PORT) else free_port()  # the machine is shared: 50051 may be taken
    referee_lines = [ln.replace(PORT, port) for ln in referee_lines]
    author_line = author_lines[0].replace(PORT, port)
    here, there = tmp_path / "referee", tmp_path / "author"
    here.mkdir()
    there.mkdir()
    env = user_env()
    for line in making:
        subprocess.run(["bash", "-c", line], cwd=here, env=env, check=True, timeout=60)
    tokens = dict(ln.split("=", 1) for ln in (here / "entrants.txt").read_text().split())

    made = run_documented(referee_lines[0], here, timeout=60)
    assert made.returncode == 0, made.stderr
    assert f"--referee localhost:{port}" in made.stdout and "--tls-ca ca.pem" in made.stdout, made.stdout
    assert (here / "tls" / "key.pem").stat().st_mode & 0o077 == 0
    shutil.copy(here / "tls" / "ca.pem", there / "ca.pem")  # the author is sent ca.pem, and nothing else

    serve = subprocess.Popen(shlex.split(referee_lines[1]), cwd=here, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    bots = [subprocess.Popen(["bash", "-c", author_line], cwd=there, env=dict(env, TOKEN=tokens[name]),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for name in ("alice", "bob")]
    try:
        out, err = serve.communicate(timeout=240)
        assert serve.returncode == 0, out[-3000:] + err[-3000:]
        assert "(TLS)" in out
        assert len(re.findall(r"^serve-1-\d{4}: ", out, re.M)) == 20, out[-3000:]
        for bot in bots:
            bot_out, _ = bot.communicate(timeout=30)
            assert bot.returncode == 0, bot_out[-3000:]
        assert "Handshake failed" not in err and "refused" not in err, err
    finally:
        for p in (serve, *bots):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_tls_names_every_host_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    import ipaddress

    from click.testing import CliRunner
    from cryptography import x509

    from sevenrocks.server.cli.tls import tls

    (tmp_path / "tls").mkdir()
    (tmp_path / "tls" / "key.pem").write_text("old")
    (tmp_path / "tls" / "key.pem").chmod(0o644)  # an older key left readable: the new one is not
    out = CliRunner().invoke(tls, ["::1", "Referee.Example.org", "--out", str(tmp_path / "tls"), "--port", "7000"])
    assert out.exit_code == 0, out.output
    assert "--referee [::1]:7000 --tls-ca ca.pem" in out.output
    assert (tmp_path / "tls" / "key.pem").stat().st_mode & 0o777 == 0o600
    cert = x509.load_pem_x509_certificate((tmp_path / "tls" / "cert.pem").read_bytes())
    ca = x509.load_pem_x509_certificate((tmp_path / "tls" / "ca.pem").read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("::1")]
    assert sans.get_values_for_type(x509.DNSName) == ["referee.example.org"]
    cert.verify_directly_issued_by(ca)
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    bad = CliRunner().invoke(tls, ["referee.example.org:50051", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "is neither a host name nor an IP address" in bad.output
    assert not (tmp_path / "bad").exists()
