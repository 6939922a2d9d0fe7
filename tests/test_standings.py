"""League tables: standings, crosstable, colours, and the two-bot tests."""

from __future__ import annotations

import json
import random

import pytest

from arena.ratings.crosstable import by_colour, crosstable, render_colours, render_crosstable
from arena.ratings.results import LeagueResults
from arena.ratings.standings import render_standings, standings
from arena.store import StoredGame


def game(first, second, winner, key, tournament="t", termination=None):
    return StoredGame(
        id=0, tournament=tournament, key=key, first=first, second=second,
        result="1/2-1/2" if winner is None else ("1-0" if winner == 0 else "0-1"), winner=winner,
        termination=termination or ("draw" if winner is None else "win"), reason=None, plies=None,
        opening=None, opening_plies=None, moves=None, duration=None, seed=None, finished_at=None, rules="{}",
    )


def league(seed=1, n=300):
    rng = random.Random(seed)
    bots = ["a", "b", "c", "d"]
    strength = {"a": 0.0, "b": 0.5, "c": 1.0, "d": 2.0}
    games = []
    for i in range(n):
        x, y = rng.sample(bots, 2)
        p = 1 / (1 + pow(10, (strength[x] - strength[y])))
        r = rng.random()
        winner = 0 if r < p * 0.9 else (None if r < p * 0.9 + 0.1 else 1)
        games.append(game(x, y, winner, f"k{i:05d}", tournament=f"t{i % 3}"))
    return games


def test_the_same_games_in_any_order_print_the_same_table():
    games = league()
    expected = render_standings(standings(games))
    for seed in range(5):
        shuffled = games[:]
        random.Random(seed).shuffle(shuffled)
        assert render_standings(standings(shuffled)) == expected
        assert render_standings(standings(shuffled), "json") == render_standings(standings(games), "json")


def test_standings_rows_add_up():
    games = league()
    rows = standings(games)
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    assert [r.bot for r in rows] == ["a", "b", "c", "d"]  # by construction, a is strongest
    assert sum(r.games for r in rows) == 2 * len(games)
    assert sum(r.wins for r in rows) == sum(r.losses for r in rows)
    for r in rows:
        assert r.games == r.wins + r.draws + r.losses
        assert r.score_pct == round(100 * (r.wins + r.draws / 2) / r.games, 1)
        assert r.elo_minus == r.elo_plus > 0
    assert rows[-1].los_next is None
    assert all(0.5 <= r.los_next <= 1 for r in rows[:-1])
    assert sum(r.elo for r in rows) / len(rows) == pytest.approx(1500, abs=0.1)


def test_forfeits_are_counted_against_the_loser():
    games = [game("a", "b", 0, "k1", termination="forfeit"), game("b", "a", 1, "k2"), game("a", "b", 1, "k3")]
    rows = {r.bot: r for r in standings(games)}
    assert (rows["b"].forfeits, rows["a"].forfeits) == (1, 0)


def test_standings_json_fields_are_the_documented_ones():
    data = json.loads(render_standings(standings(league()), "json"))
    assert set(data) == {"model", "standings"}
    assert set(data["standings"][0]) == {
        "rank", "bot", "games", "wins", "draws", "losses", "score_pct", "elo", "elo_minus",
        "elo_plus", "incremental_elo", "forfeits", "los_next", "group", "bound",
    }


def test_anchor_pins_one_bot():
    rows = {r.bot: r for r in standings(league(), anchor=("d", 0.0))}
    assert rows["d"].elo == 0
    assert rows["a"].elo > rows["b"].elo > rows["c"].elo > 0


def test_anchor_shifts_the_incremental_elo_too():
    free = {r.bot: r for r in standings(league())}
    rows = {r.bot: r for r in standings(league(), anchor=("d", 0.0))}
    assert rows["d"].incremental_elo == 0
    shift = free["d"].incremental_elo
    for bot, row in rows.items():
        assert row.incremental_elo == pytest.approx(free[bot].incremental_elo - shift, abs=0.11)


def test_crosstable_and_colours():
    games = [game("a", "b", 0, "1"), game("b", "a", None, "2"), game("a", "c", 1, "3")]
    pairs = LeagueResults.of_games(games).pairs
    table = crosstable(pairs, ["a", "b", "c"])
    assert table["a"]["b"] == [1.5, 2] and table["b"]["a"] == [0.5, 2]
    assert table["a"]["c"] == [0.0, 1] and table["c"]["a"] == [1.0, 1]
    text = render_crosstable(table)
    assert "1.5/2" in text and "1.5/3" in text  # a's total
    assert json.loads(render_crosstable(table, "json"))["crosstable"]["a"]["b"] == {"points": 1.5, "games": 2}
    colours = by_colour(pairs, ["a", "b", "c"])
    assert colours["a"] == {"first": [1, 0, 1], "second": [0, 1, 0]}
    assert colours["c"] == {"first": [0, 0, 0], "second": [1, 0, 0]}
    csv = render_colours(colours, "csv").splitlines()
    assert csv[0].startswith("bot,") and len(csv) == 4


def test_games_of_a_bot_against_itself_count_in_no_crosstable_or_colours():
    # As in the fit: a bot met no opponent in them (a match of random against random).
    games = [game("a", "a", 0, "1"), game("a", "b", 0, "2")]
    pairs = LeagueResults.of_games(games).pairs
    assert crosstable(pairs, ["a", "b"])["a"] == {"b": [1.0, 1]}
    assert by_colour(pairs, ["a", "b"])["a"] == {"first": [1, 0, 0], "second": [0, 0, 0]}
    alone = LeagueResults.of_games([game("a", "a", 0, "1")]).pairs  # no standings: no bot in order
    assert crosstable(alone, []) == {} and by_colour(alone, []) == {}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_games_in_any_order_give_byte_identical_standings(seed):
    games = league()
    shuffled = games[:]
    random.Random(seed).shuffle(shuffled)
    for fmt in ("json", "table", "csv"):
        assert render_standings(standings(shuffled), fmt) == render_standings(standings(games), fmt)


def test_bots_with_identical_results_are_ordered_by_name_whatever_came_first():
    # "y" and "x" each beat "z" once and lost to it once: identical records.
    games = [game("y", "z", 0, "k1"), game("z", "y", 0, "k2"), game("x", "z", 0, "k3"), game("z", "x", 0, "k4")]
    assert [r.bot for r in standings(games)][:2] == ["x", "y"]
    assert [r.bot for r in standings(games[::-1])][:2] == ["x", "y"]


def test_the_table_shows_the_model_and_a_perfect_score_as_a_bound():
    games = [game("a", "b", 0, f"k{i}") for i in range(6)] + [game("b", "c", i % 2, f"j{i}") for i in range(6)]
    rows = standings(games)
    assert rows[0].bot == "a" and rows[0].bound == ">"
    text = render_standings(rows)
    assert text.splitlines()[0].startswith("first move: ")
    assert f"> {rows[0].elo - rows[0].elo_minus:.0f}" in text


def test_groups_that_never_met_are_listed_apart_and_said_so():
    games = [game("a", "b", int(i % 3 == 0), f"k{i}") for i in range(6)]
    games += [game("x", "y", 0, f"j{i}") for i in range(4)]
    games += [game("y", "x", 1, "j9")]
    rows = standings(games)
    assert [r.group for r in rows] == [1, 1, 2, 2]
    assert {r.bot for r in rows[:2]} == {"a", "b"} and rows[1].los_next is None
    text = render_standings(rows)
    assert "2 groups that never met" in text.splitlines()[0] and "group" in text.splitlines()[1]
