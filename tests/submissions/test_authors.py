"""Authors: a token is shown once, stored only as its hash, and opens nothing but its own author."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store
from sevenrocks.server.submissions.authors import AuthorError, add_author, author_for, hash_token, sync_config_authors


def test_a_token_is_stored_only_as_its_hash_and_finds_its_author(tmp_path: Path) -> None:
    with Store(tmp_path / "l.db", writer=False) as store:
        alice = add_author(store.db, "alice")
        bob = add_author(store.db, "bob")
        assert alice and bob and alice != bob and len(alice) > 40
        assert author_for(store.db, alice) == "alice" and author_for(store.db, bob) == "bob"
        assert author_for(store.db, alice[:-1]) is None and author_for(store.db, "") is None
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("l.db*"))
    assert alice.encode() not in raw and hash_token(alice).encode() in raw


def test_names_are_checked_and_unique(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    add_author(db, "alice")
    with pytest.raises(AuthorError, match="already registered"):
        add_author(db, "alice")
    for bad in ("<b>x</b>", "a@2", "", "../x", "a" * 41):
        with pytest.raises(AuthorError, match="letters, digits"):
            add_author(db, bad)


def test_config_authors_give_a_hash_never_a_token(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    token = "sr_a-token-the-organiser-made-with-the-cli-elsewhere"
    sync_config_authors(db, {"carol": hash_token(token)})
    assert author_for(db, token) == "carol"
    with pytest.raises(AuthorError, match="64 lowercase hex"):
        sync_config_authors(db, {"dave": "not-a-hash"})


def test_the_submissions_table_and_config_authors_are_checked() -> None:
    from sevenrocks.server.events.config import ConfigError
    from sevenrocks.server.submissions.desk import parse_submissions

    settings, authors = parse_submissions({"submissions": {"submissions_per_day": 2, "build_disk_mb": 32},
                                           "authors": [{"name": "ann", "token_sha256": "a" * 64}]}, "l.toml")
    assert settings.submissions_per_day == 2 and settings.build.disk_mb == 32 and authors == {"ann": "a" * 64}
    for bad, words in [({"submissions": {"per_day": 1}}, "unknown key 'per_day'"),
                       ({"submissions": {"max_upload_mb": 0}}, "expected a number >= 1"),
                       ({"authors": [{"name": "ann", "token": "plain"}]}, "give exactly name and token_sha256"),
                       ({"authors": [{"name": "<i>", "token_sha256": "a" * 64}]}, "letters, digits")]:
        with pytest.raises(ConfigError, match=words):
            parse_submissions(bad, "l.toml")


def test_a_replaced_token_sha256_stops_the_old_token(tmp_path: Path) -> None:
    """docs/league.md's way to replace a leaked token: a new hash in [[authors]], read at the next start."""
    db = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    leaked, fresh = "sr_the-leaked-one", "sr_the-new-one"
    sync_config_authors(db, {"carol": hash_token(leaked)})
    assert author_for(db, leaked) == "carol"
    sync_config_authors(db, {"carol": hash_token(fresh)})  # the league started again with the new hash
    assert author_for(db, leaked) is None and author_for(db, fresh) == "carol"
