"""The games a league table is built from (arena.ratings.selection), and the typed rows
the store gives back."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli.main import main
from arena.engine.game import Board, Rules
from arena.ratings.results import LeagueResults
from arena.ratings.selection import Selection, SelectionError, latest_tournament, select
from arena.ratings.standings import league_standings, render_standings, standings
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store, StoredGame, StoredMove, StoredTournament, StoreError
from arena.store.games import Games
from arena.terminal.casual import HUMAN, save_game

SMALL = Rules(width=5, height=4, connect=3)


def play(store: Store, name: str, games: int, status: str = "finished", code: dict[str, str] | None = None) -> None:
    """``games`` games of random against greedy; ``code`` gives a bot's content hash."""
    identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": name}
    tid = store.tournaments.start(name, "round-robin", identity, identity, 1)
    code = code or {}
    ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test", code.get(spec, "")))
           for spec in ("random", "greedy")}
    records = [play_game(GameSpec(key=f"k{i}", pairing=f"k{i}", rules=SMALL, first="random", second="greedy", seed=i))
               for i in range(games)]
    store.games.record(tid, records, ids)
    if status != "running":
        store.tournaments.set_status(tid, status)


def play_casual(store: Store) -> None:
    board = Board(Rules())
    for move in (0, 1, 0, 1, 0, 1, 0):
        board.play(move)
    save_game(store, Rules(), (HUMAN, "greedy"), board, [])


def shown(chosen: Selection) -> tuple[list[str], int]:
    """The tournaments a selection's games come from, and how many games it counts."""
    return [t.name for t in chosen.tournaments], chosen.game_count


def table(chosen: Selection):
    return league_standings(chosen.results(), chosen.in_order())


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "league.db")
    yield s
    s.close()


def test_the_latest_tournament_by_default(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert latest_tournament(store).name == "new"
    assert shown(select(store)) == (["new"], 3)
    assert shown(select(store, "old")) == (["old"], 2)


def test_the_whole_league(store):
    play(store, "old", 2)
    play(store, "new", 3)
    assert shown(select(store, league=True)) == (["old", "new"], 5)


def test_unfinished_games_count_in_no_table(store):
    play(store, "t", 2)
    board = Board(Rules())
    board.play(3)
    save_game(store, Rules(), (HUMAN, HUMAN), board, [(None, None)])  # saved mid-game
    assert len(store.games.all()) == 3
    assert shown(select(store, league=True)) == (["t"], 2)
    assert shown(select(store)) == (["t"], 2)  # a casual tournament is never the default
    with pytest.raises(SelectionError, match=r"tournament 'casual 7x6c4' \(finished\) has no finished games "
                                             r"\(1 unfinished\); .* holds 2 finished games in all"):
        select(store, "casual 7x6c4")


def test_casual_games_are_never_the_default(store):
    play(store, "t", 2)
    play_casual(store)  # one 'arena play' game, stored after the tournament
    chosen = select(store)
    assert chosen.tournament is not None and chosen.tournament.name == "t"
    assert shown(chosen) == (["t"], 2)
    assert shown(select(store, league=True)) == (["t", "casual 7x6c4"], 3)
    assert shown(select(store, "casual 7x6c4")) == (["casual 7x6c4"], 1)


def test_only_casual_games_say_so(store):
    play_casual(store)
    with pytest.raises(SelectionError, match=r"holds only casual games .*'casual 7x6c4'.*--all") as info:
        select(store)
    assert "no games" not in str(info.value)
    assert shown(select(store, league=True)) == (["casual 7x6c4"], 1)


def test_a_new_tournament_without_games_says_where_the_games_are(store):
    play(store, "old", 3)
    play(store, "new", 0, status="interrupted")
    with pytest.raises(SelectionError, match=r"tournament 'new' \(interrupted\) has no finished games; "
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
    rows = {row.bot: row.games for row in table(league)}
    assert rows == {"random#3fa2c1": 2, "random#b07e55": 2, "greedy": 4}
    # within one tournament the name is unique: no hash
    assert {row.bot for row in table(select(store, "one"))} == {"random", "greedy"}


def test_colliding_short_hashes_grow_until_they_differ(store):
    play(store, "one", 1, code={"random": "abcdef12" + "0" * 56})
    play(store, "two", 1, code={"random": "abcdef34" + "0" * 56})
    play(store, "three", 1)  # code not known
    names = {result.first for result in select(store, league=True).in_order()}
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
    (game,) = store.games.all()
    assert isinstance(game, StoredGame) and store.games.get(game.id) == game
    assert game.finished and game.plies == len(store.games.moves(game.id))
    assert all(isinstance(m, StoredMove) for m in store.games.moves(game.id))
    tournament = store.tournaments.get("t")
    assert isinstance(tournament, StoredTournament) and tournament.status == "finished"
    assert store.tournaments.all() == [tournament] and store.tournaments.check("t") == tournament
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.winner = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        store.games.moves(game.id)[0].ms = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tournament.status = "running"  # type: ignore[misc]


# --- tables counted in the store -----------------------------------------------------

TERMINATIONS = {0: ("1-0", "win"), 1: ("0-1", "win"), None: ("1/2-1/2", "draw")}


def stored_league(store: Store, games: list[tuple[int, int, int | None, bool, int]]) -> None:
    """Games (first, second, winner, forfeit, tournament) between bots 0-4 in three tournaments;
    bot 4 is a player an imported file did not name, bot 3 has two versions of its code."""
    specs = [("a", ""), ("b", "1" * 64), ("c", ""), ("d", "d1" * 32), ("unnamed", ""), ("d", "d2" * 32)]
    ids = [store.bots.id_of(BotIdentity(spec, spec, {}, "test", code)) for spec, code in specs]
    conn = store.db.conn
    for number in range(3):
        identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": f"t{number}"}
        tid = store.tournaments.start(f"t{number}", "round-robin", identity, identity, 1)
        for key, (first, second, winner, forfeit, where) in enumerate(games):
            if where != number:
                continue
            result, termination = TERMINATIONS[winner]
            if forfeit and winner is not None:
                termination = "forfeit"
            if forfeit and winner is None:
                result, termination = "*", "unfinished"  # a game saved before its end
            # bot 3 played its second version in the last tournament
            first_id, second_id = (ids[5] if bot == 3 and number == 2 else ids[bot] for bot in (first, second))
            conn.execute("insert into games (tournament_id, key, pairing, first_bot_id, second_bot_id, result, "
                         "winner, termination) values (?, ?, ?, ?, ?, ?, ?, ?)",
                         [tid, f"k{(7 * key) % 41:03d}", "p", first_id, second_id, result, winner, termination])
        store.tournaments.set_status(tid, "finished")


league_games = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 4), st.sampled_from([0, 1, None]), st.booleans(), st.integers(0, 2))
    .filter(lambda g: g[0] != g[1]),
    min_size=1, max_size=40,
)


@given(league_games)
@settings(max_examples=40, deadline=None)
def test_tables_counted_in_the_store_are_the_tables_of_the_game_rows(games):
    """The store's GROUP BY counts and streamed order give byte for byte the tables that
    every game row loaded into memory gives, unfinished and unnamed games left out."""
    with Store(":memory:") as store:
        stored_league(store, games)
        try:
            chosen = select(store, league=True)
        except SelectionError:
            assert all(4 in g[:2] or (g[3] and g[2] is None) for g in games)
            return
        loaded = [g for g in store.games.all() if g.finished and not g.has_unnamed_player]
        labels = {"d": {"d1" * 32: "d#d1d1d1", "d2" * 32: "d#d2d2d2"}}
        two_versions = len({g.first_hash for g in loaded if g.first == "d"}
                           | {g.second_hash for g in loaded if g.second == "d"}) > 1
        if two_versions:
            loaded = [dataclasses.replace(
                g, first=labels["d"][g.first_hash] if g.first == "d" else g.first,
                second=labels["d"][g.second_hash] if g.second == "d" else g.second) for g in loaded]
        assert chosen.game_count == len(loaded)
        in_memory = LeagueResults.of_games(loaded)
        counted = chosen.results()
        assert dict(counted.pairs.counts) == dict(in_memory.pairs.counts)
        assert counted.tally() == in_memory.tally()
        for fmt in ("table", "json"):
            assert (render_standings(league_standings(counted, chosen.in_order()), fmt)
                    == render_standings(standings(loaded), fmt))


def test_tables_read_no_game_row(store, tmp_path, monkeypatch):
    """Standings, crosstable and colours count games in SQL: loading rows is not needed,
    so a league of any size takes memory for its bots and pairs only."""
    play(store, "t", 6)
    path = store.path
    store.close()

    def refuse(*args, **kwargs):
        raise AssertionError("a table loaded every game row")

    monkeypatch.setattr(Games, "all", refuse)
    runner = CliRunner()
    for command in ("standings", "crosstable", "colours"):
        result = runner.invoke(main, [command, "--db", path, "--all"])
        assert result.exit_code == 0, result.output
        assert "random" in result.output


def test_unconnected_groups_warn_in_one_line(store):
    """--all over tournaments that share no bot: one warning line on stderr, the
    table marks the groups."""
    play(store, "one", 2)
    identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": "two"}
    tid = store.tournaments.start("two", "round-robin", identity, identity, 1)
    ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test", "")) for spec in ("blocker", "neighbour")}
    records = [play_game(GameSpec(key=f"k{i}", pairing=f"k{i}", rules=SMALL, first="blocker", second="neighbour",
                                  seed=i)) for i in range(2)]
    store.games.record(tid, records, ids)
    store.tournaments.set_status(tid, "finished")
    path = store.path
    store.close()
    result = CliRunner().invoke(main, ["standings", "--db", path, "--all"])
    assert result.exit_code == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warning == ["warning: the whole league (--all) has 2 groups of bots that never met: "
                       "ratings compare only within a group (see the group column)"]
    assert "2 groups that never met" in result.stdout and "group" in result.stdout.splitlines()[3]
    alone = CliRunner().invoke(main, ["standings", "--db", path, "--tournament", "one"])
    assert alone.exit_code == 0 and "warning" not in alone.stderr
