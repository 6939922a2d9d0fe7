"""Swiss tournaments: the pairing's rules as properties, tie-breaks worked by hand,
resume round by round, the command end to end, and bad input refused in one line."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli.main import main
from arena.ratings.swiss import MiniMatch, SwissRecord, swiss_record, swiss_table
from arena.store import Store
from arena.tournament.config import ConfigError, load_config
from arena.tournament.executors import SerialExecutor
from arena.tournament.runner import run_tournament
from arena.tournament.swiss import SWISS, pair_round, ranking
from tests.interruptions import interrupted_then_resumed

FIVE = ["random", "random:stream=2", "random:stream=3", "random:stream=4", "random:stream=5"]


# --- the pairing's rules, as properties ---------------------------------------------


def _pairable(players: frozenset[str], met: set[frozenset[str]], memo: dict[frozenset[str], bool]) -> bool:
    """Whether ``players`` can all be paired without a rematch: a plain search for a
    perfect matching, with no order of preference (the oracle the pairing is checked by)."""
    if not players:
        return True
    if players not in memo:
        first = min(players)
        rest = players - {first}
        memo[players] = any(frozenset((first, other)) not in met and _pairable(rest - {other}, met, memo)
                            for other in sorted(rest))
    return memo[players]


def _play_rounds(field: int, rounds: int, rng: random.Random) -> list[tuple[SwissRecord, list[tuple[str, str]],
                                                                           str | None]]:
    """Pair and play ``rounds`` rounds of a field with random mini-match results; each
    round as (the record before it, its boards, its bye)."""
    entrants = tuple(f"bot{number:02d}" for number in range(field))
    record = SwissRecord(entrants, 0)
    played = []
    for round_number in range(1, rounds + 1):
        pairing = pair_round(record)
        played.append((record, pairing.boards, pairing.bye))
        matches = [*record.matches, *(
            MiniMatch(round_number, board, lead, other, *rng.choice([(2.0, 0.0), (1.0, 1.0), (0.0, 2.0)]))
            for board, (lead, other) in enumerate(pairing.boards))]
        byes = {**record.byes, **({round_number: pairing.bye} if pairing.bye else {})}
        record = SwissRecord(entrants, round_number, matches, byes)
    return played


def _choices(top: str, rest: list[str], points: dict[str, float]) -> list[str]:
    """The rule, written out: in ``top``'s score group (``top`` and those of ``rest``,
    in rank order, with its points) split in halves, the bottom half's head first
    (the place of ``top`` in the top half), the rest of the bottom half, then the top
    half from the nearest up; then everyone below, highest-ranked first."""
    group = [top] + [bot for bot in rest if points[bot] == points[top]]
    top_half = group[:max(1, len(group) // 2)]
    bottom_half = group[len(top_half):]
    return bottom_half + list(reversed(top_half[1:])) + [bot for bot in rest if points[bot] < points[top]]


@st.composite
def swiss_fields(draw: st.DrawFn) -> tuple[int, int, int]:
    field = draw(st.integers(min_value=2, max_value=40))
    rounds = draw(st.integers(min_value=1, max_value=(field + 1) // 2))  # what the configuration allows
    return field, rounds, draw(st.integers(min_value=0, max_value=2**32))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(swiss_fields())
def test_every_round_pairs_everyone_once_without_rematches_and_byes_go_round(case: tuple[int, int, int]) -> None:
    field, rounds, seed = case
    met: set[frozenset[str]] = set()
    byes: Counter[str] = Counter()
    for record, boards, bye in _play_rounds(field, rounds, random.Random(seed)):
        seated = [bot for board in boards for bot in board] + ([bye] if bye else [])
        assert sorted(seated) == sorted(record.entrants)  # each once: a board or the bye
        assert (bye is not None) == (field % 2 == 1)
        for lead, other in boards:
            assert frozenset((lead, other)) not in met  # never twice
            met.add(frozenset((lead, other)))
        if bye is not None:
            assert byes[bye] == 0 or all(byes[bot] for bot in record.entrants)  # a second bye only when all had one
            byes[bye] += 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(swiss_fields())
def test_each_pairing_is_the_first_without_rematches_in_score_group_order(case: tuple[int, int, int]) -> None:
    """Board by board, the highest-ranked entrant left meets its first choice (its score
    group's bottom half, ..., the groups below) unless that leaves the rest unpairable;
    the bye goes to the lowest-ranked without one unless that leaves the rest unpairable."""
    field, rounds, seed = case
    for record, boards, bye in _play_rounds(field, rounds, random.Random(seed)):
        points, met, memo = record.points(), record.met(), {}
        left = [bot for bot in ranking(record) if bot != bye]
        if bye is not None:
            had = set(record.byes.values())
            for lower in reversed(ranking(record)):
                if lower == bye:
                    break
                if lower not in had:  # passed over only because the rest could not be paired
                    assert not _pairable(frozenset(record.entrants) - {lower}, met, memo)
        for lead, other in boards:
            top = left[0]
            assert top in (lead, other)  # boards in rank order of their higher-ranked entrant
            opponent = other if top == lead else lead
            rest = left[1:]
            for choice in _choices(top, rest, points):
                if choice == opponent:
                    break
                assert (frozenset((top, choice)) in met
                        or not _pairable(frozenset(rest) - {choice}, met, memo))
            else:
                pytest.fail(f"{opponent} is not among {top}'s choices")
            left = [bot for bot in rest if bot != opponent]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(swiss_fields())
def test_the_lead_goes_to_who_led_less(case: tuple[int, int, int]) -> None:
    field, rounds, seed = case
    balance: Counter[str] = Counter()
    for _, boards, _ in _play_rounds(field, rounds, random.Random(seed)):
        for lead, other in boards:
            assert balance[lead] <= balance[other]
            balance[lead] += 1
            balance[other] -= 1


def test_round_one_pairs_the_top_half_against_the_bottom_half() -> None:
    record = SwissRecord(tuple("ABCDEFGH"), 0)
    assert pair_round(record).boards == [("A", "E"), ("B", "F"), ("C", "G"), ("D", "H")]
    odd = pair_round(SwissRecord(tuple("ABCDE"), 0))
    assert (odd.boards, odd.bye) == ([("A", "C"), ("B", "D")], "E")


def test_a_floater_meets_the_top_of_the_group_below() -> None:
    # After round 1: A, B and C won, D, E, F lost. A meets B (the group's bottom half);
    # C floats down to D, the top of the losers; E meets F.
    record = SwissRecord(tuple("ABCDEF"), 1, [MiniMatch(1, 0, "A", "D", 2, 0), MiniMatch(1, 1, "E", "B", 0, 2),
                                              MiniMatch(1, 2, "C", "F", 2, 0)])
    boards = pair_round(record).boards
    assert [set(board) for board in boards] == [{"A", "B"}, {"C", "D"}, {"E", "F"}]
    assert boards[1] == ("D", "C")  # C led in round 1, D did not: D leads now


# --- the table's arithmetic -------------------------------------------------------


@dataclass(frozen=True)
class _Game:
    key: str
    first: str
    second: str
    winner: int | None


def _games() -> list[_Game]:
    """Round 1: A beats D 2-0, B and E draw 1-1, C has the bye. Round 2: A and C draw
    (both games drawn), D beats B 2-0, E has the bye."""
    return [
        _Game("r01-p0000-o0000-a", "A", "D", 0), _Game("r01-p0000-o0000-b", "D", "A", 1),
        _Game("r01-p0001-o0000-a", "B", "E", 0), _Game("r01-p0001-o0000-b", "E", "B", 0),
        _Game("r02-p0000-o0000-a", "A", "C", None), _Game("r02-p0000-o0000-b", "C", "A", None),
        _Game("r02-p0001-o0000-a", "B", "D", 1), _Game("r02-p0001-o0000-b", "D", "B", 0),
    ]


def test_points_and_tie_breaks_worked_by_hand() -> None:
    record = swiss_record("ABCDE", 2, _games())
    assert (record.rounds_complete, record.byes) == (2, {1: "C", 2: "E"})
    rows = {row.bot: row for row in swiss_table(record)}
    # Points: A 1 + 1/2, C bye 1 + 1/2, E 1/2 + bye 1, D 0 + 1, B 1/2 + 0.
    assert {bot: row.points for bot, row in rows.items()} == {"A": 1.5, "B": 0.5, "C": 1.5, "D": 1.0, "E": 1.5}
    # Buchholz: the opponents' points; a bye adds nothing.
    # A: D 1 + C 1.5; B: E 1.5 + D 1; C: A 1.5; D: A 1.5 + B 0.5; E: B 0.5.
    assert {bot: row.buchholz for bot, row in rows.items()} == {"A": 2.5, "B": 2.5, "C": 1.5, "D": 2.0, "E": 0.5}
    # Sonneborn-Berger: result times the opponent's points.
    # A: 1 x 1 (D) + 1/2 x 1.5 (C); B: 1/2 x 1.5 (E) + 0; C: 1/2 x 1.5; D: 0 + 1 x 0.5 (B); E: 1/2 x 0.5.
    assert {bot: row.sonneborn_berger for bot, row in rows.items()} == {
        "A": 1.75, "B": 0.75, "C": 0.75, "D": 0.5, "E": 0.25}
    # Direct encounter: points against those with the same points: A and C drew.
    assert {bot: row.direct for bot, row in rows.items()} == {"A": 0.5, "B": 0.0, "C": 0.5, "D": 0.0, "E": 0.0}
    assert [row.bot for row in swiss_table(record)] == ["A", "C", "E", "D", "B"]
    assert (rows["C"].played, rows["C"].drawn, rows["C"].byes) == (1, 1, 1)


def test_direct_encounter_then_seeding_break_what_the_rest_leaves_even() -> None:
    # A and B meet once: B wins. Equal points, Buchholz and Sonneborn-Berger are
    # impossible between them here, so compare C and D, who never met and tie on all.
    games = [_Game("r01-p0000-o0000-a", "A", "B", 1), _Game("r01-p0000-o0000-b", "B", "A", 0),
             _Game("r01-p0001-o0000-a", "C", "D", None), _Game("r01-p0001-o0000-b", "D", "C", None)]
    table = swiss_table(swiss_record("ABCD", 2, games))
    assert [row.bot for row in table] == ["B", "C", "D", "A"]  # C before D: listed first
    assert [row.direct for row in table] == [0.0, 0.5, 0.5, 0.0]


def test_a_round_counts_only_once_all_its_games_are_stored() -> None:
    record = swiss_record("ABCDE", 2, _games()[:-1])
    assert (record.rounds_complete, record.byes) == (1, {1: "C"})
    rows = {row.bot: row for row in swiss_table(record)}
    assert rows["A"].points == 1.0  # round 2 not whole: its finished mini-match waits too


# --- playing, resuming -------------------------------------------------------------


def _config(db: str, **overrides: object):
    values = {"name": "s", "format": "swiss", "rounds": 3, "games": 2, "bots": FIVE, "seed": 5, "db": db,
              **overrides}
    return load_config(None, values)


def _snapshot(db: str) -> dict[str, tuple]:
    store = Store(db)
    games = {g.key: (g.first, g.second, g.result, g.seed, g.moves) for g in store.games.all(tournament="s")}
    store.close()
    return games


@pytest.mark.parametrize("stop_after", [8, 10], ids=["after round 2", "inside round 3"])
def test_an_interrupted_swiss_resumes_to_the_uninterrupted_games(tmp_path: Path, stop_after: int) -> None:
    whole, broken = str(tmp_path / "whole.db"), str(tmp_path / "broken.db")
    outcome = run_tournament(_config(whole), Store(whole), SerialExecutor())
    assert (outcome.scheduled, outcome.played) == (12, 12)  # 3 rounds x 2 boards x 2 games; byes play none

    first, second = interrupted_then_resumed(_config(broken), Store(broken), stop_after)
    assert first.interrupted and first.played == stop_after
    assert not second.interrupted and second.already_stored + second.played == 12
    assert _snapshot(whole) == _snapshot(broken)
    games = _snapshot(whole)
    assert {key[:3] for key in games} == {"r01", "r02", "r03"}
    firsts = Counter(first for first, *_ in games.values())
    seconds = Counter(second for _, second, *_ in games.values())
    assert firsts == seconds  # each entrant moves first in exactly half its games
    record = swiss_record(FIVE, 2, Store(whole).games.all(tournament="s"))
    assert len(set(record.byes.values())) == 3  # three rounds, three different byes
    assert SWISS.next_round(_config(whole), Store(whole).games.all(tournament="s")) is None


def test_a_swiss_leaves_other_formats_keys_and_seeds_alone(tmp_path: Path) -> None:
    from arena.tournament.schedule import schedule

    config = load_config(None, {"name": "r", "bots": FIVE[:3], "games": 2})
    assert [spec.key for spec in schedule(config)] == [
        "p0000-o0000-a", "p0001-o0000-a", "p0002-o0000-a", "p0000-o0000-b", "p0001-o0000-b", "p0002-o0000-b"]
    assert "rounds" not in config.identity()


# --- the command ------------------------------------------------------------------


def _run(args: Sequence[str]):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_command_plays_a_swiss_with_a_bye_and_shows_its_table(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    result = _run(["tournament", "run", "--format", "swiss", "--rounds", "3", "--bots", ",".join(FIVE),
                   "--workers", "1", "--db", db, "--name", "sw"])
    assert result.exit_code == 0, result.output
    assert "12 games played" in result.output
    assert "Swiss: 3 of 3 rounds" in result.output and "byes: round 1: random:stream=5" in result.output
    assert "Buchholz" in result.output and "first move:" in result.output  # beside the Elo table
    data = json.loads(_run(["standings", "--db", db, "--tournament", "sw", "--format", "json"]).output)
    assert data["swiss"]["rounds_complete"] == 3 and len(data["swiss"]["byes"]) == 3
    assert [row["bot"] for row in data["swiss"]["table"]][:1] and all(
        row["elo"] is not None for row in data["swiss"]["table"])
    assert len(data["standings"]) == 5
    csv = _run(["standings", "--db", db, "--tournament", "sw", "--format", "csv"]).stdout
    assert csv.splitlines()[0] == ("rank,bot,points,played,won,drawn,lost,byes,buchholz,sonneborn_berger,direct,"
                                   "elo")
    again = _run(["tournament", "run", "--format", "swiss", "--rounds", "3", "--bots", ",".join(FIVE),
                  "--workers", "1", "--db", db, "--name", "sw"])
    assert "0 games played" in again.output and "12 were already stored" in again.output


def test_a_bots_name_is_escaped_in_the_swiss_table(tmp_path: Path) -> None:
    from arena.ratings.standings import render_swiss

    record = swiss_record(["A\x1b[31m", "B"], 2, [_Game("r01-p0000-o0000-a", "A\x1b[31m", "B", 0),
                                                   _Game("r01-p0000-o0000-b", "B", "A\x1b[31m", 0)])
    text = render_swiss(swiss_table(record), 1, record, {})
    assert "\x1b" not in text


@pytest.mark.parametrize(("args", "message"), [
    (["--rounds", "0"], "needs its number of rounds, at least 1 (--rounds N), got 0"),
    ([], "needs its number of rounds, at least 1 (--rounds N), got None"),
    (["--rounds", "4"], "4 Swiss rounds need at least 7 bots, got 5: play at most 3 rounds"),
    (["--rounds", "2", "--games", "3"], "games (per pairing) must be even in a Swiss tournament"),
], ids=["rounds 0", "no rounds", "too many rounds", "odd games"])
def test_bad_swiss_settings_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = _run(["tournament", "run", "--format", "swiss", "--bots", ",".join(FIVE), "--db",
                   str(tmp_path / "a.db"), *args])
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "a.db").exists()


def test_rounds_belong_to_a_swiss_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rounds are for format"):
        load_config(None, {"bots": FIVE, "rounds": 2})
    definition = tmp_path / "cup.toml"
    definition.write_text('format = "swiss"\nrounds = 2\ngames = 2\nbots = ["random", "greedy", "blocker"]\n')
    assert load_config(str(definition)).rounds == 2
    definition.write_text('format = "swiss"\nrounds = "two"\nbots = ["random", "greedy", "blocker"]\n')
    with pytest.raises(ConfigError, match="rounds must be int"):
        load_config(str(definition))
