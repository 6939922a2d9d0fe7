"""The games a league table is built from (arena.league.selection), and the typed rows
the store gives back."""

from __future__ import annotations

import dataclasses

import pytest

from arena.engine.game import Board, Rules
from arena.league.selection import SelectionError, latest_tournament, select
from arena.league.standings import standings
from arena.league.store import BotIdentity, Store, StoredGame, StoredMove, StoredTournament, StoreError
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.terminal.casual import HUMAN, save_game

SMALL = Rules(width=5, height=4, connect=3)


def play(store: Store, name: str, games: int, status: str = "finished", code: dict[str, str] | None = None) -> None:
    """``games`` games of random against greedy; ``code`` gives a bot's content hash."""
    identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": name}
    tid = store.start_tournament(name, "round-robin", identity, identity, 1)
    code = code or {}
    ids = {spec: store.bot_id(BotIdentity(spec, spec, {}, "test", code.get(spec, ""))) for spec in ("random", "greedy")}
    records = [play_game(GameSpec(key=f"k{i}", pairing=f"k{i}", rules=SMALL, first="random", second="greedy", seed=i))
               for i in range(games)]
    store.record_games(tid, records, ids)
    if status != "running":
        store.finish_tournament(tid, status)


def play_casual(store: Store) -> None:
    board = Board(Rules())
    for move in (0, 1, 0, 1, 0, 1, 0):
        board.play(move)
    save_game(store, Rules(), (HUMAN, "greedy"), board, [])


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "league.db")
    yield s
    s.close()


def test_the_latest_tournament_by_default(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert latest_tournament(store).name == "new"
    assert [g.tournament for g in select(store).games] == ["new"] * 3
    assert [g.tournament for g in select(store, "old").games] == ["old"] * 2


def test_the_whole_league(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert [g.tournament for g in select(store, league=True).games] == ["old"] * 2 + ["new"] * 3


def test_unfinished_games_count_in_no_table(store):
    play(store, "t", 2)
    board = Board(Rules())
    board.play(3)
    save_game(store, Rules(), (HUMAN, HUMAN), board, [(None, None)])  # saved mid-game
    assert len(store.games()) == 3
    assert len(select(store, league=True).games) == 2
    assert [g.tournament for g in select(store).games] == ["t"] * 2  # a casual tournament is never the default
    with pytest.raises(SelectionError, match=r"tournament 'casual 7x6c4' \(finished\) has no finished games "
                                             r"\(1 unfinished\); .* holds 2 finished games in all"):
        select(store, "casual 7x6c4")


def test_casual_games_are_never_the_default(store):
    play(store, "t", 2)
    play_casual(store)  # one 'arena play' game, stored after the tournament
    chosen = select(store)
    assert chosen.tournament is not None and chosen.tournament.name == "t"
    assert {g.tournament for g in chosen.games} == {"t"}
    assert len(select(store, league=True).games) == 3
    assert [g.tournament for g in select(store, "casual 7x6c4").games] == ["casual 7x6c4"]


def test_only_casual_games_say_so(store):
    play_casual(store)
    with pytest.raises(SelectionError, match=r"holds only casual games .*'casual 7x6c4'.*--all") as info:
        select(store)
    assert "no games" not in str(info.value)
    assert len(select(store, league=True).games) == 1


def test_a_new_tournament_without_games_says_where_the_games_are(store):
    play(store, "old", 3)
    play(store, "new", 0, status="running")
    with pytest.raises(SelectionError, match=r"tournament 'new' \(running\) has no finished games; "
                                             r".* holds 3 finished games in all: --all or --tournament NAME"):
        select(store)


def test_a_selection_says_what_it_shows(store):
    play(store, "old", 2)
    play(store, "new", 3, status="interrupted")
    chosen = select(store)
    assert chosen.heading() == "Tournament 'new' (interrupted): 3 games, 5x4 connect 3"
    assert chosen.as_dict() == {"tournament": "new", "whole_league": False, "games": 3,
                                "rules": ["5x4 connect 3"], "status": "interrupted", "tournaments": ["new"]}
    assert select(store, "old").heading() == "Tournament 'old' (finished): 2 games, 5x4 connect 3"
    play_casual(store)
    league = select(store, league=True)
    assert league.heading() == ("Whole league: 6 games from 3 tournaments ('new' interrupted); "
                                "rules: 5x4 connect 3; 7x6 connect 4")
    assert league.as_dict() == {"tournament": None, "whole_league": True, "games": 6,
                                "rules": ["5x4 connect 3", "7x6 connect 4"], "status": "interrupted",
                                "tournaments": ["old", "new", "casual 7x6c4"]}


def test_one_name_with_different_code_is_two_entrants(store):
    play(store, "one", 2, code={"random": "3fa2c1" + "0" * 58, "greedy": "9" * 64})
    play(store, "two", 2, code={"random": "b07e55" + "0" * 58, "greedy": "9" * 64})
    league = select(store, league=True)
    rows = {row.bot: row.games for row in standings(league.games)}
    assert rows == {"random#3fa2c1": 2, "random#b07e55": 2, "greedy": 4}
    # within one tournament the name is unique: no hash
    assert {row.bot for row in standings(select(store, "one").games)} == {"random", "greedy"}


def test_colliding_short_hashes_grow_until_they_differ(store):
    play(store, "one", 1, code={"random": "abcdef12" + "0" * 56})
    play(store, "two", 1, code={"random": "abcdef34" + "0" * 56})
    play(store, "three", 1)  # code not known
    names = {g.first for g in select(store, league=True).games}
    assert names == {"random#abcdef12", "random#abcdef34", "random#unknown"}


def test_selection_errors_are_value_errors_for_any_front_end(store):
    with pytest.raises(SelectionError, match="no tournaments in .* yet") as info:
        select(store)
    assert isinstance(info.value, ValueError)
    play(store, "t", 1)
    with pytest.raises(SelectionError, match="not both"):
        select(store, "t", league=True)
    with pytest.raises(StoreError, match="no tournament named 'nope'"):
        select(store, "nope")


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
