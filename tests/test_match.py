"""Matches: alternating colours, reproducible, and the expected strength order on 7x6."""

from __future__ import annotations

import pytest

from arena.engine.game import Rules
from arena.tournament.match import match_specs, play_match


def score(a: str, b: str, games: int, seed: int = 1, rules: Rules | None = None) -> float:
    """bot_a's score fraction against bot_b."""
    result = play_match(match_specs(a, b, games, seed, rules), (a, b))
    tally = result.tally()[a]
    return tally.score / tally.games


def test_colours_alternate_and_seeds_differ():
    specs = match_specs("random", "greedy", 4, seed=2)
    assert [(s.first, s.second) for s in specs] == [("random", "greedy"), ("greedy", "random")] * 2
    assert len({s.seed for s in specs}) == 4


def test_a_match_is_one_pairing():
    specs = match_specs("random", "greedy", 4, seed=2)
    assert {s.pairing for s in specs} == {"match"}
    assert all(s.key.split("-", 1)[0] == s.pairing for s in specs)  # as stored before pairings had a field


def test_the_same_seed_gives_the_same_games():
    def games(seed):
        result = play_match(match_specs("random", "neighbour", 6, seed), ("random", "neighbour"))
        return [r.move_list() for r in result.records]

    assert games(5) == games(5)
    assert games(5) != games(6)


def test_json_shape():
    result = play_match(match_specs("random", "minimax", 4, 1), ("random", "minimax"))
    data = result.as_json()
    assert data["games"] == 4
    assert set(data["results"]) == {"random", "minimax"}
    for tally in data["results"].values():
        assert set(tally) == {"wins", "draws", "losses", "forfeits", "forfeit_reasons"}
        assert tally["wins"] + tally["draws"] + tally["losses"] == 4
    assert data["results"]["random"]["wins"] == data["results"]["minimax"]["losses"]


# Strength order on 7x6 (from the design documents): random < neighbour < greedy,
# blocker < minimax. 200 games per match: a 60% score over 200 games is more than
# 2.8 standard errors from even, so these are not coin flips.
@pytest.mark.parametrize(
    ("stronger", "weaker", "at_least"),
    [
        ("greedy", "random", 0.6),
        ("blocker", "random", 0.6),
        ("greedy", "neighbour", 0.6),
        ("blocker", "neighbour", 0.6),
        ("minimax", "greedy", 0.6),
        ("minimax", "blocker", 0.6),
    ],
)
def test_strength_order(stronger, weaker, at_least):
    assert score(stronger, weaker, 200) >= at_least


def test_neighbour_is_no_weaker_than_random():
    # Playing beside the opponent's last move, chosen at random, blocks little:
    # over 1000 games it scores about 50% against random (measured 48-52%).
    # The design expected it to be stronger; this pins that it is at least not weaker.
    assert score("neighbour", "random", 1000, seed=4) >= 0.45


def test_minimax_beats_random_in_at_least_95_percent_of_games():
    result = play_match(match_specs("minimax", "random", 200, 9), ("minimax", "random"))
    assert result.tally()["minimax"].wins >= 190


@pytest.mark.parametrize(
    "rules", [Rules(9, 7, 5), Rules(3, 3, 3, gravity=False), Rules(8, 8, 4, gravity=False)]
)
def test_minimax_is_strongest_on_other_rules_too(rules):
    assert score("minimax", "random", 20, 3, rules) >= 0.5



@pytest.mark.parametrize("gravity", [True, False])
def test_count_scoring_keeps_the_order_greedy_and_minimax_aim_for_windows(gravity):
    rules = Rules(7, 6, 4, gravity=gravity, scoring="count")
    assert score("greedy", "random", 20, 2, rules) >= 0.8
    assert score("minimax:depth=2", "greedy", 20, 2, rules) >= 0.7
    result = play_match(match_specs("greedy", "random", 4, 3, rules), ("greedy", "random"))
    for record in result.records:
        assert record.plies == rules.cells  # count scoring always fills the board
