"""arena/store directly: schema and migrations, tournaments, bots, atomic game writes,
queries, and databases the arena refuses to use."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine.game import Rules, format_move
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store, StoreError, rules_of
from arena.store.migrations import MIGRATION_NAMES
from arena.store.rows import stored_time

TABLES = {"tournaments", "bots", "games", "moves"}
SMALL = Rules(width=5, height=4, connect=3)
TIC_TAC_TOE = Rules(width=3, height=3, connect=3, gravity=False)


def identity(**changes) -> dict:
    base = {
        "format": "round-robin", "bots": ["random", "greedy"], "challengers": [], "games": 2,
        "rules": SMALL.as_dict(), "openings": {"plies": 0, "lines": []},
        "time_control": {"move_seconds": None, "bank_seconds": 0.0}, "seed": 1,
    }
    base.update(changes)
    return base


def bot(spec: str, content_hash: str = "", source: str = "connectk-arena 0.1.0") -> BotIdentity:
    return BotIdentity(spec=spec, name=spec.split(":")[0], options={}, source=source, content_hash=content_hash)


def record(key: str, first: str = "random", second: str = "greedy", rules: Rules = SMALL,
           opening: tuple[int, ...] = (), seed: int = 1):
    spec = GameSpec(key=key, rules=rules, first=first, second=second, pairing=key.split("-", 1)[0],
                    opening=opening, seed=seed)
    return play_game(spec)


def count(store: Store, table: str) -> int:
    return store.db.execute(f"select count(*) from {table}").fetchone()[0]


@pytest.fixture
def store(db_path):
    s = Store(db_path)
    yield s
    s.close()


@pytest.fixture
def league(store):
    """A store with a tournament 't' and its bots; returns (store, tournament id, bot ids)."""
    tid = store.tournaments.start("t", "round-robin", identity(), {"source": "test"}, 1)
    ids = {spec: store.bots.id_of(bot(spec)) for spec in ("random", "greedy", "minimax:depth=2")}
    return store, tid, ids


# --- schema and migrations ------------------------------------------------------------


def test_fresh_store_creates_the_tables_and_records_the_migration(db_path):
    store = Store(db_path)
    assert set(store.db.table_names()) >= TABLES
    rows = list(store.db.query("select migration_set, name from _sqlite_migrations"))
    names = ("0001_initial", "0002_submissions", "0003_analyses", "0004_submission_class", "0005_league",
             "0006_tournament_seed_secret", "0007_void_games", "0008_account_security", "0009_bot_logs",
             "0010_program_bots", "0011_pair_counts", "0012_league_gate")
    assert rows == [{"migration_set": "arena", "name": name} for name in names]
    store.close()
    assert Path(db_path).is_file()


def test_opening_again_applies_nothing_new(db_path):
    Store(db_path).close()
    before = sqlite3.connect(db_path).execute("select * from _sqlite_migrations").fetchall()
    schema = sqlite3.connect(db_path).execute("select sql from sqlite_master order by name").fetchall()
    again = Store(db_path, create=False)
    again.close()
    conn = sqlite3.connect(db_path)
    assert conn.execute("select * from _sqlite_migrations").fetchall() == before
    assert conn.execute("select sql from sqlite_master order by name").fetchall() == schema
    assert len(before) == len(MIGRATION_NAMES)
    conn.close()


def test_a_database_from_an_older_version_is_upgraded_in_place(db_path):
    from sqlite_utils import Database

    from arena.store.migrations import migrations

    old = Database(db_path)
    migrations.apply(old, stop_before="0002_submissions")  # as the first release left it
    assert "submissions" not in old.table_names()
    old["tournaments"].insert({"name": "kept", "status": "finished", "created_at": "2026-01-01"})
    old.close()
    store = Store(db_path, create=False)
    assert "submissions" in store.db.table_names()
    assert store.tournaments.get("kept").status == "finished"  # nothing lost


def test_journal_mode_is_wal(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_tables_have_the_documented_columns(store):
    columns = {t: set(store.db[t].columns_dict) for t in TABLES}
    expected = {"name", "format", "config", "rules", "seed", "status", "created_at", "finished_at"}
    assert expected <= columns["tournaments"]
    assert {"spec", "name", "options", "source", "content_hash"} <= columns["bots"]
    assert {"tournament_id", "key", "pairing", "first_bot_id", "second_bot_id", "opening", "result",
            "winner", "termination", "reason", "plies", "moves", "duration", "seed", "finished_at"} <= columns["games"]
    assert {"game_id", "ply", "move", "ms", "info"} <= columns["moves"]


# --- tournaments ----------------------------------------------------------------------


def test_start_tournament_same_identity_same_id(store):
    first = store.tournaments.start("t", "round-robin", identity(), {"workers": 1}, 1)
    store.tournaments.set_status(first, "finished")
    assert store.tournaments.get("t").status == "finished"
    # the config as given (workers, db) is not part of the identity
    with store.tournaments.running("t"):  # "running" is shown while a process holds it, this one too
        again = store.tournaments.start("t", "round-robin", identity(), {"workers": 4}, 1)
        assert again == first
        assert store.tournaments.get("t").status == "running"
        with Store(store.path, read_only=True) as other:  # another connection of this process sees it too
            assert other.tournaments.get("t").status == "running"
    assert store.tournaments.get("t").status == "interrupted"  # nobody holds it: stopped without saying so
    assert [t.name for t in store.tournaments.all()] == ["t"]
    other = store.tournaments.start("u", "round-robin", identity(), {}, 1)
    assert other != first
    assert [t.name for t in store.tournaments.all()] == ["t", "u"]
    assert rules_of(store.tournaments.get("t")) == SMALL


@pytest.mark.parametrize(
    "changes,named",
    [
        ({"seed": 2}, "seed was 1, now 2"),
        ({"games": 4}, "games was 2, now 4"),
        ({"bots": ["random", "blocker"]}, "bots"),
        ({"rules": Rules().as_dict()}, "rules"),
        ({"games": 4, "seed": 9}, "games was 2, now 4"),  # the first differing key, sorted
    ],
)
def test_start_tournament_refuses_other_settings(store, changes, named):
    store.tournaments.start("t", "round-robin", identity(), {}, 1)
    before = store.tournaments.get("t")
    with pytest.raises(StoreError) as err:
        store.tournaments.start("t", "round-robin", identity(**changes), {}, 1)
    assert named in str(err.value)
    assert "'t'" in str(err.value)
    assert store.tournaments.get("t") == before


def test_check_tournament(league):
    store, tid, _ = league
    assert store.tournaments.check("t").id == tid
    with pytest.raises(StoreError, match="nope.*tournaments: t"):
        store.tournaments.check("nope")


# --- bots -----------------------------------------------------------------------------


def test_bot_id_is_stable_and_tells_code_apart(store):
    a = store.bots.id_of(bot("random"))
    assert store.bots.id_of(bot("random")) == a
    b = store.bots.id_of(bot("greedy"))
    assert b != a
    file_v1 = store.bots.id_of(bot("my_bot.py", content_hash="abc", source="/tmp/my_bot.py"))
    file_v2 = store.bots.id_of(bot("my_bot.py", content_hash="def", source="/tmp/my_bot.py"))
    assert file_v1 != file_v2
    assert store.bots.id_of(bot("my_bot.py", content_hash="abc", source="/tmp/my_bot.py")) == file_v1
    other_source = store.bots.id_of(bot("random", source="connectk-arena 0.2.0"))
    assert other_source != a
    assert count(store, "bots") == 5
    row = store.db["bots"].get(file_v2)
    assert (row["spec"], row["content_hash"], row["source"]) == ("my_bot.py", "def", "/tmp/my_bot.py")


def test_bot_id_stores_options(store):
    bid = store.bots.id_of(BotIdentity("minimax:depth=2", "minimax", {"depth": "2"}, "connectk-arena 0.1.0"))
    row = store.db["bots"].get(bid)
    assert json.loads(row["options"]) == {"depth": "2"}
    assert row["name"] == "minimax"


# --- games ----------------------------------------------------------------------------


def test_record_games_stores_each_game_with_all_its_moves(league):
    store, tid, ids = league
    records = [
        record("p0000-o0000-a", opening=(2, 1)),
        record("p0000-o0000-b", "greedy", "random", opening=(2, 1)),
        record("p0001-o0000-a", "minimax:depth=2", "random", seed=5),
    ]
    assert store.games.record(tid, records, ids) == 3
    games = {g.key: g for g in store.games.all(tournament="t")}
    assert set(games) == {r.spec.key for r in records}
    for rec in records:
        game = games[rec.spec.key]
        assert (game.first, game.second) == rec.spec.bots
        assert (game.result, game.winner, game.termination, game.reason) == (
            rec.result, rec.winner, rec.termination, rec.reason)
        assert game.plies == rec.plies
        assert game.seed == rec.spec.seed
        assert game.moves == "".join(format_move(m, SMALL) for m in rec.move_list())
        assert game.opening == "".join(format_move(m, SMALL) for m in rec.spec.opening)
        assert game.opening_plies == len(rec.spec.opening)
        moves = store.games.moves(game.id)
        assert [m.ply for m in moves] == list(range(rec.plies))
        assert [m.move for m in moves] == [format_move(m.move, SMALL) for m in rec.moves]
        for stored, played in zip(moves, rec.moves):
            if played.ms is None:
                assert stored.ms is None
            else:
                assert stored.ms == pytest.approx(played.ms, abs=0.001)
            assert (None if stored.info is None else json.loads(stored.info)) == played.info
        # opening plies were chosen by nobody
        assert [m.ms for m in moves[: len(rec.spec.opening)]] == [None] * len(rec.spec.opening)
    minimax_game = games["p0001-o0000-a"]
    assert any(m.info and "depth" in json.loads(m.info) for m in store.games.moves(minimax_game.id))
    assert store.games.keys(tid) == set(games)
    row = store.db["games"].get(minimax_game.id)
    assert row["pairing"] == "p0001"


def test_record_games_without_gravity_and_wide_boards(league):
    store, tid, ids = league
    wide = Rules(width=12, height=4, connect=3)
    records = [record("p0000-o0000-a", rules=TIC_TAC_TOE), record("p0000-o0001-a", rules=wide)]
    store.games.record(tid, records, ids)
    ttt, wide_game = store.games.all(tournament="t")
    assert ttt.moves == "".join(format_move(m, TIC_TAC_TOE) for m in records[0].move_list())
    assert ttt.moves[0].isalpha()
    assert wide_game.moves == ",".join(format_move(m, wide) for m in records[1].move_list())


def test_a_failing_record_stores_nothing_of_its_batch(league):
    store, tid, ids = league
    store.games.record(tid, [record("p0000-o0000-a")], ids)
    before = (count(store, "games"), count(store, "moves"))
    batch = [
        record("p0000-o0001-a"),
        record("p0000-o0001-b", "greedy", "random"),
        record("p0009-o0000-a", "blocker", "random"),  # blocker has no bot id
    ]
    with pytest.raises(KeyError):
        store.games.record(tid, batch, ids)
    assert (count(store, "games"), count(store, "moves")) == before
    assert store.games.keys(tid) == {"p0000-o0000-a"}
    # the store is still usable afterwards
    assert store.games.record(tid, batch[:2], ids) == 2
    assert count(store, "games") == 3


def test_record_game_returns_the_id_of_the_game_it_stored(league):
    store, tid, ids = league
    first = store.games.record_one(tid, record("c1"), ids)
    second = store.games.record_one(tid, record("c2", "greedy", "random"), ids)
    assert store.games.get(first).key == "c1" and store.games.get(second).key == "c2"
    plies = store.games.get(first).plies + store.games.get(second).plies
    assert store.games.move_count() == count(store, "moves") == plies


def test_record_game_replaces_an_earlier_save_in_the_same_transaction(league):
    store, tid, ids = league
    saved = store.games.record_one(tid, record("c1"), ids)
    store.analyses.save(saved, {0: 1}, 1.0)
    again = store.games.record_one(tid, record("c2"), ids, replace=saved)
    assert [g.id for g in store.games.all()] == [again]
    assert store.analyses.values(saved) == {}
    # A save that fails keeps the one it was to replace.
    with pytest.raises(KeyError):
        store.games.record_one(tid, record("c3", "blocker", "random"), ids, replace=again)
    assert [g.id for g in store.games.all()] == [again]
    assert store.games.move_count() == store.games.get(again).plies


def test_move_count_of_timed_moves(league):
    store, tid, ids = league
    store.games.record(tid, [record("p0000-o0000-a")], ids)
    timed = store.db.execute("select count(*) from moves where ms is not null").fetchone()[0]
    assert timed > 0 and store.games.move_count(timed_only=True) == timed


def test_a_duplicate_key_stores_nothing_of_its_batch(league):
    store, tid, ids = league
    store.games.record(tid, [record("p0000-o0000-a")], ids)
    before = (count(store, "games"), count(store, "moves"))
    with pytest.raises(sqlite3.IntegrityError):
        store.games.record(tid, [record("p0000-o0001-a"), record("p0000-o0000-a")], ids)
    assert (count(store, "games"), count(store, "moves")) == before


def test_committed_games_are_visible_to_another_connection(league, db_path):
    store, tid, ids = league
    store.games.record(tid, [record("p0000-o0000-a"), record("p0000-o0000-b", "greedy", "random")], ids)
    conn = sqlite3.connect(db_path)
    assert conn.execute("select count(*) from games").fetchone()[0] == 2
    assert conn.execute("select count(*) from moves").fetchone()[0] == count(store, "moves") > 0
    conn.close()


def test_games_filters_by_tournament_and_bot(league):
    store, tid, ids = league
    other = store.tournaments.start("u", "round-robin", identity(seed=2), {}, 2)
    store.games.record(tid, [record("p0000-o0000-a"), record("p0001-o0000-a", "minimax:depth=2", "random")], ids)
    store.games.record(other, [record("p0000-o0000-a", "greedy", "minimax:depth=2")], ids)
    everything = store.games.all()
    assert [(g.tournament, g.key) for g in everything] == [
        ("t", "p0000-o0000-a"), ("t", "p0001-o0000-a"), ("u", "p0000-o0000-a")]
    assert [g.key for g in store.games.all(tournament="u")] == ["p0000-o0000-a"]
    assert len(store.games.all(tournament="t")) == 2
    assert {g.tournament for g in store.games.all(bot="minimax:depth=2")} == {"t", "u"}
    assert len(store.games.all(bot="minimax:depth=2")) == 2
    assert [g.tournament for g in store.games.all(tournament="t", bot="greedy")] == ["t"]
    assert [g.tournament for g in store.games.all(bot="greedy")] == ["t", "u"]
    # a bot's name matches all its specs; a spec matches only itself
    assert [g.key for g in store.games.all(bot="minimax")] == [g.key for g in store.games.all(bot="minimax:depth=2")]
    with pytest.raises(StoreError, match="'minimax:depth=3'.*minimax:depth=2"):
        store.games.all(bot="minimax:depth=3")
    assert [(g.tournament, g.key) for g in store.games.all(limit=2)] == [("t", "p0001-o0000-a"), ("u", "p0000-o0000-a")]
    assert store.games.count() == 3 and store.games.count(tournament="t", bot="random") == 2
    with pytest.raises(StoreError, match="nope.*t, u"):
        store.games.all(tournament="nope")


def test_game_by_id(league):
    store, tid, ids = league
    store.games.record(tid, [record("p0000-o0000-a")], ids)
    (listed,) = store.games.all()
    assert store.games.get(listed.id) == listed
    assert rules_of(listed) == SMALL
    with pytest.raises(StoreError, match="12345"):
        store.games.get(12345)
    assert store.games.moves(12345) == []


# --- databases the arena cannot use ---------------------------------------------------


def test_missing_file_without_create(tmp_path):
    path = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="missing.db"):
        Store(path, create=False)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_existing_file_without_create(db_path):
    Store(db_path).close()
    store = Store(db_path, create=False)
    assert set(store.db.table_names()) >= TABLES
    store.close()


def test_newer_version_is_refused(db_path):
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("insert into _sqlite_migrations (migration_set, name, applied_at) "
                 "values ('arena', '0099_future', '2099-01-01')")
    conn.commit()
    conn.close()
    for create in (True, False):
        with pytest.raises(StoreError, match="newer version.*0099_future"):
            Store(db_path, create=create)


def test_other_migration_sets_are_not_a_newer_version(db_path):
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("insert into _sqlite_migrations (migration_set, name, applied_at) "
                 "values ('someone-else', '0099_theirs', '2099-01-01')")
    conn.commit()
    conn.close()
    Store(db_path, create=False).close()


@pytest.mark.parametrize("content", [b"not a database\n" * 100, bytes(range(256)) * 8],
                         ids=["text", "binary"])
def test_not_a_database_is_refused(tmp_path, content):
    path = tmp_path / "junk.db"
    path.write_bytes(content)
    for create in (True, False):
        with pytest.raises(StoreError, match="not an arena database"):
            Store(path, create=create)
    assert path.read_bytes() == content


def test_submissions_from_before_class_choices_keep_working(db_path):
    from sqlite_utils import Database

    from arena.store.migrations import migrations

    old = Database(db_path)
    migrations.apply(old, stop_before="0004_submission_class")
    old["submissions"].insert({"name": "old", "version": 1, "kind": "bot", "source": "x = 1",
                               "content_hash": "abc", "file": "old.py", "submitted_at": "2026-01-01"})
    old.close()
    store = Store(db_path, create=False)
    (kept,) = store.submissions.all("old")
    assert (kept.spec, kept.class_name, kept.source) == ("old@v1", None, "x = 1")
    chosen, new = store.submissions.submit("old", "x = 1", "bot", "old.py", class_name="Chosen")
    assert new and chosen.spec == "old@v2" and chosen.class_name == "Chosen"


def test_bot_files_are_parsed_one_at_a_time_whatever_the_threads(monkeypatch):
    """CPython 3.11's parser is not safe in two threads at once (gh-106905): the site's
    request threads describe submitted bots through one parse at a time."""
    import ast
    import threading
    import time

    from arena.store.rows import code_description

    inside, most = [0], [0]
    real = ast.parse

    def slow_parse(*args, **kwargs):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)  # long enough for another thread to come in, were it let in
        try:
            return real(*args, **kwargs)
        finally:
            inside[0] -= 1

    monkeypatch.setattr(ast, "parse", slow_parse)
    source = 'from arena.bot import Bot\n\n\nclass A(Bot):\n    """Plays."""\n'
    found: list[str] = []
    threads = [threading.Thread(target=lambda: found.extend(code_description(source, "bot") for _ in range(5)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert found == ["Plays."] * 20 and most[0] == 1


@given(st.floats(min_value=0, max_value=4e9, allow_nan=False)
       | st.builds(lambda whole, fraction: whole + fraction, st.integers(0, 4_000_000_000),
                   st.sampled_from([0.0, 0.0005, 0.0004995, 0.9995, 0.9999995, 0.9999994, 0.0000005, 0.5])))
def test_a_finish_time_is_stored_as_datetime_writes_it(seconds):
    # stored_time writes each second's text once: what it stores must still be,
    # to the character, what datetime writes (rounding to the microsecond, half to
    # even, and a second carried when the fraction rounds up to one).
    expected = dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="milliseconds")
    assert stored_time(seconds) == expected
    assert stored_time(seconds + 1) == dt.datetime.fromtimestamp(seconds + 1, dt.UTC).isoformat(timespec="milliseconds")
