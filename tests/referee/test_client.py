"""The SDK client as a bot author runs it: TLS, reconnecting, clean exits."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import signal
import socket
from pathlib import Path

import pytest

from sevenrocks.sdk.client import ClientError, settings_from
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.server.referee import Referee

from .harness import assert_normal, script, sdk_bot, table


def self_signed(tmp: Path) -> tuple[bytes, bytes]:
    """A certificate for 127.0.0.1 and localhost, made here (its own CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    (tmp / "ca.pem").write_bytes(cert_pem)
    return cert_pem, key_pem


def test_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)

    async def go() -> None:
        async with table({"tls": sdk_bot("greedy")}, tmp_path, tls=(cert, key),
                         env={"tls": {"SEVENROCKS_TLS_CA": str(tmp_path / "ca.pem")}}) as t:
            m = await t.referee.play_match("tls", make_ruleset("fives", 2), 3, ["tls", "tls"])
            assert_normal(m)

    asyncio.run(go())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bot_started_before_the_referee_connects_when_it_comes_up(tmp_path: Path) -> None:
    async def go() -> None:
        port = free_port()
        bot = BotProcess().start(sdk_bot("random"), f"127.0.0.1:{port}", "tok", tmp_path / "bot.log")
        try:
            await asyncio.sleep(0.8)  # the bot retries with backoff meanwhile
            assert bot.alive
            referee = Referee({"early": "tok"})
            await referee.start(f"127.0.0.1:{port}")
            assert await referee.wait_for_entrants(["early"], 20) == {"early"}
            m = await referee.play_match("late", make_ruleset("fives", 2), 9, ["early", "early"])
            assert_normal(m)
            await referee.stop()
            assert bot.wait(10) == 0, "a Goodbye from the referee ends the bot cleanly"
        finally:
            bot.kill()

    asyncio.run(go())


def test_sigterm_ends_the_bot_cleanly(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"b": sdk_bot("random")}, tmp_path) as t:
            assert await t.referee.wait_for_entrants(["b"], 20) == {"b"}
            proc = t.procs["b"].process
            assert proc is not None
            proc.send_signal(signal.SIGTERM)
            # Closes its stream, then exits by the signal (the Unix convention), so a harness
            # tells "stopped from outside" from a crash or a clean end.
            assert await t.procs["b"].exited(10) == -signal.SIGTERM
            for _ in range(200):
                if not t.referee.connected():
                    break
                await asyncio.sleep(0.01)
            assert t.referee.connected() == set()

    asyncio.run(go())


def test_refused_token_exits_with_a_message(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"x": None}, tmp_path) as t:
            bot = BotProcess().start(sdk_bot("random"), t.address, "not-the-token", tmp_path / "bot.log")
            assert await bot.exited(20) == 2
        text = (tmp_path / "bot.log").read_text()
        assert "the referee refused the token: missing or unknown token" in text, text

    asyncio.run(go())


def test_settings_say_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEVENROCKS_REFEREE", raising=False)
    monkeypatch.delenv("SEVENROCKS_TOKEN", raising=False)
    with pytest.raises(ClientError, match="SEVENROCKS_REFEREE"):
        settings_from([])
    with pytest.raises(ClientError, match="SEVENROCKS_TOKEN"):
        settings_from(["--referee", "h:1"])
    monkeypatch.setenv("SEVENROCKS_TOKEN", "t")
    s = settings_from(["--referee", "h:1", "--unrelated-bot-flag"])
    assert (s.referee, s.token) == ("h:1", "t")


def test_an_async_bot_plays_many_seats_over_one_stream(tmp_path: Path) -> None:
    async def go() -> None:
        async with table({"async": script("async_bot.py")}, tmp_path) as t:
            ms = await asyncio.gather(*(t.referee.play_match(f"a{i}", make_ruleset("fives", 3), i, ["async"] * 3)
                                        for i in range(3)))
            for m in ms:
                assert_normal(m)

    asyncio.run(go())
