"""Files that are not text get one clear line each, never a traceback (issue: random bytes, Latin-1)."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from sevenrocks.server.cli import cli


def test_verify_names_a_file_of_random_bytes_and_goes_on(tmp_path: Path) -> None:
    noise = tmp_path / "noise.jsonl"
    noise.write_bytes(bytes(range(256)) * 4 + os.urandom(1024))
    r = CliRunner().invoke(cli, ["verify", str(noise)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 1, r.output
    assert f"{noise}: not a record: byte 128 (b'\\x80') is not UTF-8 text" in r.output
    assert "verified 1 record(s): 0 clean, 1 with 1 discrepancy" in r.output
    assert "Traceback" not in r.output


def test_serve_refuses_an_entrants_file_that_is_not_utf8(tmp_path: Path) -> None:
    entrants = tmp_path / "entrants.txt"
    entrants.write_bytes("café=0123456789abcdef0123\n".encode("latin-1"))
    entrants.chmod(0o600)
    r = CliRunner().invoke(cli, ["serve", "--entrants", str(entrants), "--listen", "127.0.0.1:0"])
    assert r.exit_code == 2, r.output
    assert f"{entrants} is not UTF-8 text (byte 3 is b'\\xe9')" in r.output
    assert r.output.startswith("Usage:") or "Error:" in r.output
    assert "Traceback" not in r.output and not isinstance(r.exception, UnicodeDecodeError)


def test_serve_refuses_a_target_beyond_the_wire(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["serve", "--target", "99999999999999999999", "--listen", "127.0.0.1:0"])
    assert r.exit_code == 2 and "--target" in r.output, r.output
