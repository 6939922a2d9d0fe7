"""The store's batch write path (Store.games.record_finished, which a tournament's writer
uses): every move of every game stored as the game says, the ids SQLite would have
given one game at a time, and a batch that fails stores nothing of any game."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.game import Rules
from arena.records import GameRecord, GameSpec, MoveRecord, Outcome, Termination
from arena.store import BotIdentity, FinishedGame, Store

RULES = Rules(width=7, height=6, connect=4)
BOTS = ("random", "greedy")


def game(key: str, plies: int, info_every: int = 0, opening: int = 0) -> GameRecord:
    """A game of ``plies`` plies (the first ``opening`` of them chosen by nobody),
    with a bot's info on every ``info_every``-th ply; the moves need not be legal:
    the store keeps what it is given."""
    moves = [
        MoveRecord(ply, ply % RULES.width, None if ply < opening else ply * 1.25,
                   {"ply": ply, "score": math.nan} if info_every and ply % info_every == 0 else None)
        for ply in range(plies)
    ]
    spec = GameSpec(key, RULES, *BOTS, pairing="p0000", opening=tuple(m.move for m in moves[:opening]), seed=plies)
    return GameRecord(spec, Outcome(None, Termination.DRAW), moves, 0.5, 1_700_000_000.0)


def new_store(path: Path) -> tuple[Store, int, dict[str, int]]:
    store = Store(path)
    tournament = store.tournaments.start("t", "round-robin", {"rules": RULES.as_dict()}, {}, 1)
    return store, tournament, {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test")) for spec in BOTS}


def dump(store: Store) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    games = store.db.execute("select * from games order by id").fetchall()
    moves = store.db.execute("select * from moves order by game_id, ply").fetchall()
    return games, moves


games_of_any_length = st.lists(
    st.tuples(st.integers(0, 42), st.integers(0, 4), st.integers(0, 3)), min_size=1, max_size=12
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shapes=games_of_any_length)
def test_a_batch_stores_every_move_as_games_stored_one_at_a_time_would(tmp_path_factory, shapes):
    # Moves go in 50 rows per statement and the rest one by one: any count of moves
    # in a batch, a multiple of 50 or not, must come out whole and in place.
    records = [game(f"p0000-o{n:04d}-a", plies, info, min(opening, plies))
               for n, (plies, info, opening) in enumerate(shapes)]
    folder = tmp_path_factory.mktemp("batch")
    batch, tournament, ids = new_store(folder / "batch.db")
    one_by_one, tournament_2, ids_2 = new_store(folder / "single.db")
    with batch, one_by_one:
        assert batch.games.record_finished(tournament, [FinishedGame.of(r) for r in records], ids) == len(records)
        for r in records:
            one_by_one.games.record_one(tournament_2, r, ids_2)
        assert dump(batch) == dump(one_by_one)
        games, moves = dump(batch)
        assert len(moves) == sum(r.plies for r in records)
        for (game_id, *_), r in zip(games, records):
            stored = batch.games.moves(game_id)
            assert [(m.ply, m.ms) for m in stored] == [(m.ply, m.ms) for m in r.moves]
            assert [m.move for m in stored] == [str(m.move + 1) for m in r.moves]
            # strict JSON: the NaN a bot reported is null
            assert [m.info for m in stored] == [
                None if m.info is None else f'{{"ply": {m.ply}, "score": null}}' for m in r.moves]


def test_a_batch_gets_the_ids_after_the_largest_there_is(tmp_path):
    store, tournament, ids = new_store(tmp_path / "a.db")
    with store:
        first = store.games.record_one(tournament, game("c1", 5), ids)
        store.games.record_finished(tournament, [FinishedGame.of(game(f"g{n}", 3)) for n in range(3)], ids)
        assert [row[0] for row in dump(store)[0]] == [first, first + 1, first + 2, first + 3]


def test_a_batch_that_fails_among_its_moves_stores_no_game_of_it(tmp_path):
    """A game is never half-stored: the games rows of the batch and the moves
    already inserted go when a later move row is refused."""
    store, tournament, ids = new_store(tmp_path / "a.db")
    with store:
        store.games.record_finished(tournament, [FinishedGame.of(game("kept", 7))], ids)
        before = dump(store)
        good = [FinishedGame.of(game(f"g{n}", 30)) for n in range(4)]
        # the last game's last move has no name: the moves table refuses it (NOT NULL)
        broken = good[-1]._replace(move_names=(*good[-1].move_names[:-1], None))
        with pytest.raises(sqlite3.IntegrityError):
            store.games.record_finished(tournament, [*good[:-1], broken], ids)
        assert dump(store) == before
        assert store.games.record_finished(tournament, good, ids) == 4  # the store goes on
        assert store.games.move_count() == 7 + 4 * 30


def test_a_batch_inside_a_transaction_is_part_of_it(tmp_path):
    store, tournament, ids = new_store(tmp_path / "a.db")
    with store:
        before = dump(store)
        with pytest.raises(RuntimeError), store.db.atomic():
            store.games.record_finished(tournament, [FinishedGame.of(game("g", 9))], ids)
            raise RuntimeError("the enclosing transaction fails")
        assert dump(store) == before


def test_finished_game_pickles_small_and_unchanged():
    import pickle

    finished = FinishedGame.of(game("g", 21, info_every=5, opening=2))
    assert pickle.loads(pickle.dumps(finished)) == finished
    assert finished.opening == "12" and finished.opening_plies == 2 and finished.moves == "123456712345671234567"
    assert finished.move_ms[:3] == (None, None, 2.5)
    plain = FinishedGame.of(game("g", 21))
    assert plain.move_info is None  # no info column when no move has any


def test_a_missing_value_is_stored_as_null(tmp_path):
    # The writer binds a NaN for None (faster to bind): SQLite must store NULL for it,
    # as for None, in every column that can miss a value.
    store, tournament, ids = new_store(tmp_path / "a.db")
    with store:
        store.games.record_finished(tournament, [FinishedGame.of(game("g", 9, info_every=4, opening=2))], ids)
        assert store.db.execute("select typeof(winner), typeof(reason) from games").fetchall() == [("null", "null")]
        moves = store.db.execute("select typeof(ms), typeof(info) from moves order by ply").fetchall()
        assert moves == [("null", "text"), ("null", "null"), ("real", "null"), ("real", "null"),
                         ("real", "text"), ("real", "null"), ("real", "null"), ("real", "null"), ("real", "text")]
