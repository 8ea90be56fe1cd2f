

def test_a_schema_2_database_is_upgraded_in_place_and_keeps_its_event(tmp_path: Path) -> None:
    from tests.events.conftest import bots, config_of, play_in_process

    db = tmp_path / "old.db"
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="old"), db).close()
    con = sqlite3.connect(db)  # make it what sevenrocks wrote before leagues: schema 2
    for column in ("base", "joined_at", "retired_at"):
        con.execute(f"ALTER TABLE entrants DROP COLUMN {column}")
    con.execute("DROP TABLE league")
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    stored = len(rows(db, "SELECT 1 FROM matches"))
    with Store(db, writer=True) as store:
        assert rows(db, "SELECT value FROM meta WHERE key = 'schema_version'") == [("3",)]
        assert len(store.matches(["old"])) == stored
        assert not store.is_league("old")
        # The same file now takes a league beside the old event.
        config, settings = load_league(write_league(tmp_path, stop_after=4))
        game = League(None, config, settings, store, InProcessExecutor(config))
        asyncio.run(run_league(game))
        assert len(store.matches(["x"])) >= 4 and len(store.matches(["old"])) == stored


def write_league(tmp_path: Path, **league: Any) -> Path:
    path = tmp_path / "l.toml"
    path.write_text('[event]\nname = "x"\n[league]\n' + "".join(f"{k} = {v}\n" for k, v in league.items()) + FIELD)
    return path
