"""Knockout brackets: seeding, placement and byes for every field from 2 to 65,
mini-matches and their tie-breaks (extra pairs, the solver's verdict, the coin),
determinism, and the bracket as text and as JSON."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.ratings.knockout import (
    BYE,
    COIN,
    EXTRA_PAIRS,
    HEADS,
    SCORE,
    SOLVER,
    TAILS,
    Bracket,
    KnockoutError,
    KnockoutGame,
    KnockoutRules,
    advance,
    bracket_data,
    coin,
    new_bracket,
    placement,
    rounds_for,
    seeding,
)
from arena.terminal.bracket import NAME_WIDTH, render_bracket

FIELDS = range(2, 66)

# A game's result from who played it: the first player's points.
Result = Callable[[KnockoutGame], float]


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(1, n + 1)]


def seed_of(name: str) -> int:
    return int(name[3:])  # the names above are seeded in order


def favourite_wins(game: KnockoutGame) -> float:
    return 1.0 if seed_of(game.first) < seed_of(game.second) else 0.0


def draw(game: KnockoutGame) -> float:
    return 0.5


def play_out(bracket: Bracket, result: Result, **options) -> tuple[Bracket, dict[str, float], int]:
    """The bracket played to its end, its results, and how many times games were asked for."""
    results: dict[str, float] = {}
    asked = 0
    while True:
        bracket, games = advance(bracket, results, **options)
        if not games:
            return bracket, results, asked
        asked += 1
        assert len({game.key for game in games}) == len(games)
        assert not any(game.key in results for game in games)
        results.update((game.key, result(game)) for game in games)


def knockout(n: int, **rules) -> Bracket:
    return new_bracket(seeding(names(n)), KnockoutRules(**rules))


@pytest.mark.parametrize("n", FIELDS)
def test_every_entrant_is_in_the_first_round_once_and_byes_go_to_the_top_seeds(n):
    bracket = knockout(n)
    first = bracket.rounds[0]
    placed = [entrant.name for match in first for entrant in match.entrants]
    assert sorted(placed) == names(n)
    byes = [match for match in first if match.bye]
    assert len(byes) == bracket.size - n
    assert sorted(match.top.seed for match in byes) == list(range(1, bracket.size - n + 1))
    assert all(match.bottom is None and match.winner == match.top and match.decided_by == BYE for match in byes)
    assert all(match.top is not None and match.bottom is not None for match in first if not match.bye)
    assert len(bracket.rounds) == math.ceil(math.log2(n)) == rounds_for(n)
    assert bracket.size // 2 < n <= bracket.size
    half = len(first) // 2
    seed_one, = (match.slot for match in first if match.top.seed == 1)
    seed_two, = (match.slot for match in first if 2 in (e.seed for e in match.entrants))
    assert (seed_one < half) != (seed_two < half) or n == 2  # two entrants: one match, both in it


@pytest.mark.parametrize("n", FIELDS)
def test_the_favourites_meet_only_in_the_final_and_one_champion_remains_after_n_minus_1_matches(n):
    bracket, results, _ = play_out(knockout(n, pairs=2), favourite_wins)
    final = bracket.final
    assert {final.top.seed, final.bottom.seed} == {1, 2}
    assert bracket.champion.seed == 1
    for match in bracket.matches():
        assert match.winner is not None
        if match is not final:
            assert {e.seed for e in match.entrants} != {1, 2}
        assert match.bye == (match.decided_by == BYE)
        assert not match.bye or match.round == 1  # byes only in the first round
    played = [match for match in bracket.matches() if not match.bye]
    assert len(played) == n - 1
    assert all(match.decided_by == SCORE and match.pairs_played == 2 for match in played)
    assert len(results) == 4 * (n - 1)
    losers = Counter(match.loser.name for match in played)
    assert set(losers.values()) == {1} and set(losers) == set(names(n)) - {bracket.champion.name}


@given(n=st.integers(2, 65), seed=st.integers(0, 2**32), pairs=st.integers(1, 2), extra=st.integers(0, 2))
def test_any_results_leave_exactly_one_champion_after_n_minus_1_decided_matches(n, seed, pairs, extra):
    rng = random.Random(seed)
    bracket, _, asked = play_out(knockout(n, pairs=pairs, extra_pairs=extra, seed=seed),
                                 lambda game: rng.choice((0.0, 0.5, 1.0)))
    decided = [match for match in bracket.matches() if match.decided_by not in (None, BYE)]
    assert len(decided) == n - 1
    assert bracket.champion is not None
    assert [match.winner for match in bracket.matches() if match.winner not in match.entrants] == []
    assert asked <= len(bracket.rounds) * (1 + extra)  # each round: its pairs at once, then one extra pair at a time


@pytest.mark.parametrize("size", [2**k for k in range(1, 8)])
def test_placement_keeps_the_top_seeds_apart_until_their_part_of_the_bracket_is_decided(size):
    order = placement(size)
    assert sorted(order) == list(range(1, size + 1))
    assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))  # 1 v N, 2 v N-1...
    parts = 1
    while parts <= size:  # the top `parts` seeds each in a part of their own
        block = size // parts
        assert sorted(order.index(seed) // block for seed in range(1, parts + 1)) == list(range(parts))
        parts *= 2
    if size == 8:
        assert order == [1, 8, 4, 5, 2, 7, 3, 6]


def test_placement_refuses_a_size_that_is_not_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        placement(6)


def test_seeding_by_rating_puts_the_highest_first_and_breaks_ties_by_name():
    ratings = {"carol": 1500.0, "alice": 1600.0, "bob": 1500.0, "dave": 1400.0}
    entrants = seeding(["dave", "carol", "bob", "alice"], ratings=ratings)
    assert [(e.name, e.seed) for e in entrants] == [("alice", 1), ("bob", 2), ("carol", 3), ("dave", 4)]
    assert seeding(["carol", "bob", "dave", "alice"], ratings=ratings) == entrants


def test_seeding_by_given_seeds_or_by_the_order_given():
    assert [e.name for e in seeding(["a", "b", "c"], seeds={"a": 3, "b": 1, "c": 2})] == ["b", "c", "a"]
    assert [(e.name, e.seed) for e in seeding(["z", "y"])] == [("z", 1), ("y", 2)]


@pytest.mark.parametrize(("entrants", "options", "message"), [
    (["a"], {}, "at least 2 entrants, not 1"),
    (["a", "b", "a"], {}, "'a' is entered twice"),
    (["a", "b"], {"ratings": {"a": 1.0}}, "'b' has no rating"),
    (["a", "b"], {"ratings": {"a": 1.0, "b": math.nan}}, "'b' has no finite rating"),
    (["a", "b"], {"seeds": {"a": 1, "b": 1}}, "seeds must be 1 to 2"),
    (["a", "b"], {"seeds": {"a": 1}}, "'b' has no seed"),
    (["a", "b"], {"seeds": {"a": 1, "b": 2}, "ratings": {"a": 1.0, "b": 2.0}}, "not both"),
])
def test_a_field_that_cannot_be_seeded_is_one_clear_error(entrants, options, message):
    with pytest.raises(KnockoutError, match=message) as caught:
        seeding(entrants, **options)
    assert isinstance(caught.value, ArenaError)


@pytest.mark.parametrize(("rules", "message"), [({"pairs": 0}, "at least one pair"), ({"extra_pairs": -1}, "negative")])
def test_rules_out_of_range_are_refused(rules, message):
    with pytest.raises(KnockoutError, match=message):
        KnockoutRules(**rules)


def two(**rules) -> Bracket:
    return new_bracket(seeding(["upper", "lower"]), KnockoutRules(**rules))


def step(bracket: Bracket, results: dict[str, float], points: Mapping[str, float], **options):
    """Advance, check the games asked for are exactly ``points``' keys, store them, advance again."""
    bracket, games = advance(bracket, results, **options)
    assert sorted(game.key for game in games) == sorted(points)
    results.update(points)
    return advance(bracket, results, **options)


def test_a_match_won_on_points_needs_no_tie_break():
    results: dict[str, float] = {}
    bracket, games = step(two(pairs=2), results, {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 0.5,
                                                  "r1-m01-o01-a": 0.5, "r1-m01-o01-b": 0.5})
    assert games == []
    final = bracket.final
    assert (final.winner.name, final.decided_by, final.points, final.pairs_played) == ("upper", SCORE, (2.5, 1.5), 2)


def test_a_level_match_plays_extra_pairs_one_at_a_time_until_one_leads():
    results: dict[str, float] = {}
    bracket, games = step(two(pairs=1, extra_pairs=3), results, {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 1.0})
    assert [(g.key, g.first, g.second, g.pair) for g in games] == [
        ("r1-m01-o01-a", "upper", "lower", 1), ("r1-m01-o01-b", "lower", "upper", 1)]
    assert bracket.final.winner is None and bracket.final.pairs_played == 1
    bracket, games = step(bracket, results, {"r1-m01-o01-a": 0.5, "r1-m01-o01-b": 0.5})
    assert [g.key for g in games] == ["r1-m01-o02-a", "r1-m01-o02-b"]
    bracket, games = step(bracket, results, {"r1-m01-o02-a": 0.5, "r1-m01-o02-b": 1.0})  # lower moves first in b
    assert games == []
    final = bracket.final
    assert (final.winner.name, final.decided_by, final.pairs_played, final.points) == ("lower", EXTRA_PAIRS, 3,
                                                                                        (2.5, 3.5))
    assert len(final.games) == 6


def level_to_the_end(extra_pairs: int, seed: int = 7, **options) -> Bracket:
    results = {f"r1-m01-o{pair:02d}-{game}": 0.5 for pair in range(1 + extra_pairs) for game in "ab"}
    bracket, games = advance(two(pairs=1, extra_pairs=extra_pairs, seed=seed), results, **options)
    assert games == []
    return bracket


def test_level_after_the_extra_pairs_the_solver_decides_with_the_match_games():
    seen = []

    def decide(upper, lower, games):
        seen.append((upper, lower, [p.game.key for p in games], {p.points for p in games}))
        return lower

    final = level_to_the_end(2, decide=decide).final
    assert (final.winner.name, final.decided_by, final.coin, final.pairs_played) == ("lower", SOLVER, None, 3)
    assert seen == [("upper", "lower", [f"r1-m01-o{p:02d}-{g}" for p in range(3) for g in "ab"], {0.5})]


def test_a_solver_without_a_verdict_leaves_it_to_the_coin_which_is_named():
    final = level_to_the_end(1, decide=lambda upper, lower, games: None).final
    assert final.decided_by == COIN
    assert final.coin == coin(7, "r1-m01") in (HEADS, TAILS)
    assert final.winner.name == ("upper" if final.coin == HEADS else "lower")


def test_without_extra_pairs_or_a_solver_a_level_match_goes_straight_to_the_coin():
    results = {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 1.0}
    bracket, games = advance(two(pairs=1, extra_pairs=0), results)
    assert games == [] and bracket.final.decided_by == COIN and bracket.final.pairs_played == 1


def test_a_verdict_naming_someone_else_is_a_bug_not_a_result():
    with pytest.raises(ValueError, match="'nobody', who is not in it"):
        level_to_the_end(0, decide=lambda upper, lower, games: "nobody")


def test_the_coin_is_the_seed_s_same_seed_same_coin_and_both_faces_occur():
    draws = [level_to_the_end(0).final.coin for _ in range(2)]
    assert draws[0] == draws[1]
    finals = [level_to_the_end(0, seed).final for seed in range(40)]
    assert [final.coin for final in finals] == [coin(seed, "r1-m01") for seed in range(40)]
    assert {(final.coin, final.winner.name) for final in finals} == {(HEADS, "upper"), (TAILS, "lower")}
    secret = [level_to_the_end(0, seed, secret=b"secret").final.coin for seed in range(40)]
    assert secret == [coin(seed, "r1-m01", b"secret") for seed in range(40)]
    assert secret != [final.coin for final in finals]  # a secret keys the coin


def test_the_same_seed_and_results_give_the_same_bracket_whatever_state_it_is_given():
    rng = random.Random(5)
    done, results, _ = play_out(knockout(23, seed=11), lambda game: rng.choice((0.0, 0.5, 1.0)))
    again, games = advance(knockout(23, seed=11), results)
    assert again == done and games == []
    assert advance(done, results) == (done, [])
    part = dict(list(results.items())[: len(results) // 2])
    assert advance(done, part) == advance(knockout(23, seed=11), part)


def test_a_match_half_played_counts_its_games_and_asks_for_the_rest():
    results = {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 0.5, "r1-m01-o01-b": 0.0}
    bracket, games = advance(two(pairs=3), results)
    assert [game.key for game in games] == ["r1-m01-o01-a", "r1-m01-o02-a", "r1-m01-o02-b"]
    final = bracket.final
    assert (final.winner, final.pairs_played, final.points, len(final.games)) == (None, 1, (2.5, 0.5), 3)


def test_results_of_games_the_rules_do_not_call_for_are_ignored():
    results = {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 0.0, "r1-m01-o01-a": 0.0, "r1-m01-o01-b": 1.0, "r9-m01-o00-a": 1}
    bracket, _ = advance(two(pairs=1, extra_pairs=1), results)
    assert len(bracket.final.games) == 2 and bracket.final.decided_by == SCORE


def test_a_result_that_is_not_points_is_refused():
    with pytest.raises(ValueError, match="1, 0.5 or 0, not 2"):
        advance(two(), {"r1-m01-o00-a": 2, "r1-m01-o00-b": 0.0})


def test_every_pair_is_both_colours_from_one_opening_shared_by_the_round():
    bracket, games = advance(knockout(8, pairs=2, extra_pairs=1), {})
    assert len(games) == 4 * 2 * 2
    by_pair: dict[tuple[str, int], list[KnockoutGame]] = {}
    for game in games:
        by_pair.setdefault((game.match, game.pair), []).append(game)
    for (_, pair), (a, b) in by_pair.items():
        assert (a.first, a.second) == (b.second, b.first) and a.opening == b.opening == pair
    bracket, _, _ = play_out(bracket, favourite_wins)
    openings = {match.round: {p.game.opening for p in match.games} for match in bracket.matches()}
    assert openings == {1: {0, 1}, 2: {3, 4}, 3: {6, 7}}  # each round's openings after the last one's extra pair


def test_a_bracket_waits_for_the_matches_that_feed_it():
    bracket, games = advance(knockout(4), {"r1-m01-o00-a": 1.0, "r1-m01-o00-b": 0.0})
    assert {game.match for game in games} == {"r1-m02"}
    assert bracket.final.top.name == "bot01" and bracket.final.bottom is None and bracket.final.winner is None


def test_the_json_form_names_every_match_and_how_it_was_decided():
    bracket, _, _ = play_out(knockout(5, seed=2), draw)
    data = json.loads(json.dumps(bracket_data(bracket)))
    assert data["format"] == "knockout" and data["rules"] == {"pairs": 1, "extra_pairs": 1, "seed": 2}
    assert [len(matches) for matches in data["rounds"]] == [4, 2, 1]
    assert data["champion"] == {"name": bracket.champion.name, "seed": bracket.champion.seed}
    deciders = Counter(match["decided_by"] for matches in data["rounds"] for match in matches)
    assert deciders == {BYE: 3, COIN: 4}
    coins = [match["coin"] for matches in data["rounds"] for match in matches if match["decided_by"] == COIN]
    assert set(coins) <= {HEADS, TAILS} and len(coins) == 4
    played = data["rounds"][0][1]
    assert played["games"][0] == {"key": "r1-m02-o00-a", "pair": 0, "first": "bot04", "second": "bot05",
                                  "opening": 0, "first_points": 0.5}


def test_the_bracket_drawn_in_the_terminal():
    bracket, _, _ = play_out(knockout(3), favourite_wins)
    assert render_bracket(bracket) == "\n".join([
        "semi-finals     final           champion",
        "1 bot01     ─┐",
        "             ├─ 1 bot01 2   ─┐",
        "  (bye)     ─┘               │",
        "                             ├─ 1 bot01",
        "2 bot02 2   ─┐               │",
        "             ├─ 2 bot02 0   ─┘",
        "3 bot03 0   ─┘",
    ])


def test_the_terminal_marks_tie_breaks_and_explains_them():
    text = render_bracket(level_to_the_end(1, decide=lambda upper, lower, games: upper))
    assert "1 upper 2 s ─┐" in text and "s won by the solver's verdict" in text
    text = render_bracket(level_to_the_end(0))
    assert "1 upper 1 c ─┐" in text and "c won by a coin" in text


def test_names_with_escape_sequences_are_escaped_and_cut_in_the_terminal():
    hostile = "\x1b]0;owned\x07\x1b[2J" + "x" * 100
    bracket = new_bracket(seeding([hostile, "plain", "\u202eevil"]), KnockoutRules())
    text = render_bracket(bracket)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b]0;owned" in text and "\\u202eevil" in text
    assert "x" * 20 not in text
    widest = max(map(len, text.splitlines()))
    assert widest <= (len(bracket.rounds) + 1) * (2 + NAME_WIDTH + 4 + 5)


def test_a_65_entrant_bracket_renders():
    bracket, _, _ = play_out(knockout(65), favourite_wins)
    text = render_bracket(bracket)
    lines = text.splitlines()
    assert len(lines) == 1 + 2 * 128 - 1
    assert lines[0].split() == ["round", "1", "round", "2", "round", "3", "round", "4", "quarter-finals",
                                "semi-finals", "final", "champion"]
    assert all(name in text for name in names(65))
    assert text.count("(bye)") == 63
    assert lines[128].endswith("├─  1 bot01")  # the champion, halfway down
    assert max(map(len, lines)) <= 8 * (2 + 5 + 2 + 3 + 5)


def test_the_docs_example_is_what_the_code_draws():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "tournaments.md").read_text()
    shown = page.split("## Knockout", 1)[1].split("```text\n", 1)[1].split("```", 1)[0].rstrip("\n")
    ratings = {"solver": 2400, "mcts": 1900, "minimax": 1850, "blocker": 1500, "greedy": 1500, "random": 1000}
    strength = {"solver": 9, "mcts": 5, "minimax": 5, "blocker": 3, "greedy": 3, "random": 1}

    def result(game: KnockoutGame) -> float:
        first, second = strength[game.first], strength[game.second]
        if first != second:
            return 1.0 if first > second else 0.0
        return 1.0 if game.pair == 2 and game.first == "blocker" else 0.5  # blocker wins its extra pair

    start = new_bracket(seeding(list(ratings), ratings=ratings), KnockoutRules(pairs=2, extra_pairs=1, seed=1))
    bracket, _, _ = play_out(start, result)
    assert render_bracket(bracket) == shown
