"""The games a league table is built from (arena.league.selection), and the typed rows
the store gives back."""

from __future__ import annotations

import dataclasses

import pytest

from arena.engine.game import Board, Rules
from arena.league.selection import SelectionError, latest_tournament, select_games
from arena.league.store import BotIdentity, Store, StoredGame, StoredMove, StoredTournament, StoreError
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.terminal.casual import HUMAN, save_game

SMALL = Rules(width=5, height=4, connect=3)


def play(store: Store, name: str, games: int) -> None:
    identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": name}
    tid = store.start_tournament(name, "round-robin", identity, identity, 1)
    ids = {spec: store.bot_id(BotIdentity(spec, spec, {}, "test")) for spec in ("random", "greedy")}
    records = [play_game(GameSpec(key=f"k{i}", pairing=f"k{i}", rules=SMALL, first="random", second="greedy", seed=i))
               for i in range(games)]
    store.record_games(tid, records, ids)
    store.finish_tournament(tid, "finished")


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "league.db")
    yield s
    s.close()


def test_the_latest_tournament_by_default(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert latest_tournament(store) == "new"
    assert [g.tournament for g in select_games(store)] == ["new"] * 3
    assert [g.tournament for g in select_games(store, "old")] == ["old"] * 2


def test_the_whole_league(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert [g.tournament for g in select_games(store, league=True)] == ["old"] * 2 + ["new"] * 3


def test_unfinished_games_count_in_no_table(store):
    play(store, "t", 2)
    board = Board(Rules())
    board.play(3)
    save_game(store, Rules(), (HUMAN, HUMAN), board, [(None, None)])  # saved mid-game
    assert len(store.games()) == 3
    assert len(select_games(store, league=True)) == 2
    with pytest.raises(SelectionError, match="no games stored in .* yet"):
        select_games(store)  # the latest tournament is the casual one, with no finished game


def test_selection_errors_are_value_errors_for_any_front_end(store):
    with pytest.raises(SelectionError, match="no tournaments in .* yet") as info:
        select_games(store)
    assert isinstance(info.value, ValueError)
    play(store, "t", 1)
    with pytest.raises(SelectionError, match="not both"):
        select_games(store, "t", league=True)
    with pytest.raises(StoreError, match="no tournament named 'nope'"):
        select_games(store, "nope")


def test_the_store_returns_frozen_typed_rows(store):
    play(store, "t", 1)
    (game,) = store.games()
    assert isinstance(game, StoredGame) and store.game(game.id) == game
    assert game.finished and game.plies == len(store.moves(game.id))
    assert all(isinstance(m, StoredMove) for m in store.moves(game.id))
    tournament = store.tournament("t")
    assert isinstance(tournament, StoredTournament) and tournament.status == "finished"
    assert store.tournaments() == [tournament] and store.check_tournament("t") == tournament
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.winner = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        store.moves(game.id)[0].ms = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tournament.status = "running"  # type: ignore[misc]
