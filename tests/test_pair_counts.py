"""The pair counts (migration 0011_pair_counts): kept by the games table's triggers
in the transaction that writes a game, they always equal a count of every game again,
whatever was stored, removed, rolled back or kept apart as void."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.records import RESULTS, Termination
from arena.store import BotIdentity, Store
from arena.store.rows import FinishedGame

SPECS = ("random", "greedy", "minimax:depth=2", "unnamed")

#: (first, second, winner, termination) of a game a test stores
game_rows = st.tuples(st.sampled_from(SPECS), st.sampled_from(SPECS), st.sampled_from((0, 1, None)),
                      st.sampled_from((Termination.WIN, Termination.FORFEIT, Termination.UNFINISHED)))
steps = st.one_of(
    st.tuples(st.just("batch"), st.integers(0, 1), st.lists(game_rows, min_size=1, max_size=6)),
    st.tuples(st.just("rolled back"), st.integers(0, 1), st.lists(game_rows, min_size=1, max_size=4)),
    st.tuples(st.just("void"), st.integers(0, 1), st.lists(game_rows, min_size=1, max_size=3)),
    st.tuples(st.just("saved again"), st.integers(0, 1), st.lists(game_rows, min_size=1, max_size=1)),
    st.tuples(st.just("changed"), st.integers(0, 1), st.lists(game_rows, min_size=1, max_size=1)),
)


def game(key: str, first: str, second: str, winner: int | None, termination: str) -> FinishedGame:
    finished = termination != Termination.UNFINISHED
    winner = winner if finished else None
    if termination == Termination.WIN and winner is None:
        termination = Termination.DRAW
    return FinishedGame(key, "p", first, second, "", 0, RESULTS[winner] if finished else "*", winner,
                        str(termination), None, 3, "a1 b1 c1", 0.1, 1, "2026-01-01T00:00:00+00:00",
                        (), (), (), None)


class Abandoned(Exception):
    """A batch whose transaction fails (a full disk, a killed writer): nothing of it stays."""


def play(store: Store, tournaments: list[int], bot_ids: dict[str, int], script: list) -> None:
    counter = 0
    for kind, which, rows in script:
        tid = tournaments[which]
        games = []
        for first, second, winner, termination in rows:
            counter += 1
            games.append(game(f"g{counter}", first, second, winner, termination))
        if kind == "batch":
            store.games.record_finished(tid, games, bot_ids)
        elif kind == "rolled back":
            with pytest.raises(Abandoned), store.transaction():
                store.games.record_finished(tid, games, bot_ids)
                raise Abandoned
        elif kind == "void":
            store.games.record_void(tid, [g._replace(termination=str(Termination.VOID)) for g in games], bot_ids)
        elif kind == "saved again":  # a casual game saved again: the earlier save leaves in the same transaction
            last = store.db.execute("select max(id) from games where tournament_id = ?", [tid]).fetchone()[0]
            with store.transaction():
                if last is not None:
                    store.games.delete(last)
                store.games.record_finished(tid, games, bot_ids)
        else:  # a stored game's row changed in place (no writer does today: the counts follow anyway)
            first, second, winner, termination = rows[0]
            finished = termination != Termination.UNFINISHED
            store.db.execute(
                "update games set first_bot_id = ?, winner = ?, termination = ? where id = "
                "(select min(id) from games where tournament_id = ?)",
                [bot_ids[first], winner if finished else None, str(termination), tid])


@pytest.fixture
def prepared(tmp_path: Path):
    store = Store(tmp_path / "pairs.db")
    tournaments = [store.tournaments.start(name, "round-robin", {"name": name, "rules": {}}, {"source": "test"}, 1)
                   for name in ("a", "b")]
    bot_ids = {spec: store.bots.id_of(BotIdentity(spec, spec.split(":")[0], {}, "test", "")) for spec in SPECS}
    yield store, tournaments, bot_ids
    store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(steps, max_size=8))
def test_the_kept_counts_equal_a_count_of_every_game_again(prepared, script) -> None:
    store, tournaments, bot_ids = prepared
    with store.transaction():  # each example starts from no games
        for table in ("moves", "bot_logs", "games", "void_games"):
            store.db.execute(f"delete from {table}")
    play(store, tournaments, bot_ids, script)
    assert store.results.pair_counts() == store.results.recount()
    for tid in tournaments:
        counted = store.db.execute(
            "select count(*) from games where tournament_id = ? and termination != 'unfinished' and "
            "first_bot_id != ? and second_bot_id != ?", [tid, bot_ids["unnamed"], bot_ids["unnamed"]]).fetchone()[0]
        assert store.results.summary(tid).games == counted


def test_every_game_written_counts_as_a_change_of_its_tournament_only(prepared) -> None:
    store, (a, b), bot_ids = prepared
    before = (store.results.changes(a), store.results.changes(b), store.results.changes(None))
    store.games.record_finished(a, [game("x1", "random", "greedy", 0, Termination.WIN)], bot_ids)
    assert store.results.changes(a) == before[0] + 1
    assert store.results.changes(b) == before[1]
    assert store.results.changes(None) == before[2] + 1
    pair = store.results.pair_changes([bot_ids["random"]], [bot_ids["greedy"]])
    other = store.results.pair_changes([bot_ids["random"]], [bot_ids["minimax:depth=2"]])
    store.games.record_finished(b, [game("x2", "greedy", "random", None, Termination.DRAW)], bot_ids)
    assert store.results.pair_changes([bot_ids["random"]], [bot_ids["greedy"]]) == pair + 1
    assert store.results.pair_changes([bot_ids["random"]], [bot_ids["minimax:depth=2"]]) == other


def test_a_database_without_pair_counts_gets_them_from_its_games(tmp_path: Path) -> None:
    from sqlite_utils import Database

    from arena.store.migrations import MIGRATION_NAMES, migrations

    path = tmp_path / "old.db"
    with Store(path) as store:
        tid = store.tournaments.start("old", "round-robin", {"name": "old", "rules": {}}, {"source": "test"}, 1)
        ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test", "")) for spec in ("random", "greedy")}
        store.games.record_finished(tid, [game("k1", "random", "greedy", 0, Termination.WIN),
                                          game("k2", "greedy", "random", None, Termination.DRAW),
                                          game("k3", "random", "greedy", 1, Termination.FORFEIT)], ids)
        expected = store.results.pair_counts()
    db = Database(path)  # back to the schema before 0011, its games kept
    for trigger in ("insert", "delete", "update"):
        db.execute(f"drop trigger pair_counts_{trigger}")
    db.execute("drop table pair_counts")
    db.execute("alter table tournaments drop column game_changes")
    db.execute("delete from _sqlite_migrations where name = ?", ["0011_pair_counts"])
    db.conn.commit()
    assert "0011_pair_counts" in MIGRATION_NAMES and "0011_pair_counts" not in {
        m.name for m in migrations.applied(db)}
    db.close()
    with Store(path) as store:
        assert store.results.pair_counts() == expected == store.results.recount()
        assert store.results.changes(tid) == 3


def test_a_game_field_the_counts_ignore_is_no_change(prepared) -> None:
    store, (a, _), bot_ids = prepared
    store.games.record_finished(a, [game("y1", "random", "greedy", 0, Termination.WIN)], bot_ids)
    before = store.results.changes(a)
    store.db.execute("update games set reason = 'renamed', key = 'y1-renamed' where key = 'y1'")
    assert store.results.changes(a) == before
    assert dataclasses.is_dataclass(store.results.summary(a))
