"""A league's pairing rule: in turn (the default, its schedule unchanged) or learning,
which finds the true top of the table in fewer games, never lets an entrant's share
of the latest games fall below its floor, and chooses after a restart as it would
have without one. Most of it is measured on simulated leagues (results drawn from
the Elo model, seeded): no game is played."""

from __future__ import annotations

from collections import Counter

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli.main import main
from arena.league import pairing, scheduler
from arena.league.pairing import Learning, PairingSettings, pairing_of
from arena.league.scheduler import LeagueSchedule, config_of, create_league, learning_of, run_league
from arena.league.simulation import Simulation, simulate, strengths
from arena.store import Entry, Store


def entries_of(*specs: str) -> list[Entry]:
    return [Entry(i + 1, 1, spec, None, None, "active", "", "", None) for i, spec in enumerate(specs)]


def learn(min_share: float = 0.5, max_games: int = 10, top: int = 3) -> PairingSettings:
    return PairingSettings("learn", min_share, max_games, top)


# --- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("table", "message"), [
    ('[pairing]\nmode = "learn"\nmin_share = 0\n', "pairing.min_share must be above 0 and at most 1"),
    ('[pairing]\nmode = "learn"\nmin_share = 1.5\n', "got 1.5"),
    ('[pairing]\nmode = "learn"\nmin_share = -0.2\n', "pairing.min_share must be above 0"),
    ('[pairing]\nmode = "learn"\nmin_share = "half"\n', "pairing.min_share must be float, got 'half'"),
    ('[pairing]\nmode = "fastest"\n', "unknown pairing.mode 'fastest': use 'newest' or 'learn'"),
    ('[pairing]\nmode = "learn"\nmax_games = 1\n', "pairing.max_games must be 2 (the league's games per pairing)"),
    ('[pairing]\nmode = "learn"\ntop = 0\n', "pairing.top must be at least 1, got 0"),
    ('[pairing]\nmode = "learn"\nrounds = 3\n', "unknown key 'pairing.rounds'"),
    ('[pairing]\nmin_share = 0.5\n', "only apply with mode = \"learn\""),
    ('pairing = "learn"\n', "pairing must be a table"),
])
def test_bad_pairing_settings_are_refused_when_the_league_file_is_read(tmp_path, table, message):
    file = tmp_path / "league.toml"
    file.write_text('bots = ["random", "greedy"]\ngames = 2\n' + table)
    result = CliRunner().invoke(main, ["league", "create", "x", str(file), "--db", str(tmp_path / "l.db")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "l.db").exists() or Store(tmp_path / "l.db").leagues.get("x") is None


def test_pairing_settings_and_their_defaults():
    assert pairing_of({}, 4) == PairingSettings("newest", 0.5, 4, 3)
    assert not pairing_of({"pairing": {"mode": "newest"}}, 4).learning
    read = pairing_of({"pairing": {"mode": "learn", "min_share": 1, "max_games": 12, "top": 5}}, 4)
    assert read == PairingSettings("learn", 1.0, 12, 5) and read.learning


# --- the default: in turn, unchanged ---------------------------------------------------------------

# What the schedule handed out, batch by batch, before learning was added (a field of
# four, games = 3, two games stored and one in flight): the same keys, players and
# openings in the same order.
IN_TURN = [
    [("random~bot@v2-o0000-b", "bot@v2", "random", (1, 2)), ("random~bot@v2-o0001-a", "random", "bot@v2", (0, 3)),
     ("greedy~bot@v2-o0000-a", "greedy", "bot@v2", (1, 2)), ("greedy~bot@v2-o0000-b", "bot@v2", "greedy", (1, 2)),
     ("lefty@v1~bot@v2-o0000-a", "lefty@v1", "bot@v2", (1, 2))],
    [("lefty@v1~bot@v2-o0000-b", "bot@v2", "lefty@v1", (1, 2)),
     ("lefty@v1~bot@v2-o0001-a", "lefty@v1", "bot@v2", (0, 3)),
     ("random~lefty@v1-o0000-a", "random", "lefty@v1", (1, 2)),
     ("random~lefty@v1-o0001-a", "random", "lefty@v1", (0, 3)),
     ("greedy~lefty@v1-o0000-a", "greedy", "lefty@v1", (1, 2))],
    [("greedy~lefty@v1-o0000-b", "lefty@v1", "greedy", (1, 2)),
     ("greedy~lefty@v1-o0001-a", "greedy", "lefty@v1", (0, 3)), ("random~greedy-o0000-a", "random", "greedy", (1, 2)),
     ("random~greedy-o0000-b", "greedy", "random", (1, 2)), ("random~greedy-o0001-a", "random", "greedy", (0, 3))],
]


def test_the_default_order_is_the_one_before_learning():
    entries = entries_of("random", "greedy", "lefty@v1", "bot@v2")
    config = config_of({"games": 3, "seed": 7}, "order")
    schedule = LeagueSchedule(config, {"random~lefty@v1-o0000-b", "greedy~bot@v2-o0001-a"})
    batches = []
    while chosen := schedule.next_games(entries, {}, 5, {"random~bot@v2-o0000-a"}):
        batches.append([(g.key, g.first, g.second, g.opening) for g in chosen])
        schedule.stored.update(g.key for g in chosen)
    assert batches == IN_TURN


def test_learning_keys_a_game_as_in_turn_does():
    """Game N of a pairing has one key, opening and colours whichever rule chose it."""
    entries = entries_of("random", "greedy", "lefty@v1")
    config = config_of({"games": 4, "seed": 7}, "order")
    in_turn = {g.key: g for g in LeagueSchedule(config, set()).next_games(entries, {}, 100)}
    learning = LeagueSchedule(config, set(), Learning(learn(max_games=8)))
    chosen = []
    while batch := learning.next_games(entries, {}, 3):
        chosen += batch
        learning.stored.update(g.key for g in batch)
        for g in batch:
            assert learning.learning is not None
            learning.learning.stored(g.first, g.second, 0.5)
    assert len(chosen) == 3 * 8 and len({g.key for g in chosen}) == 24  # every pairing to max_games, none twice
    for g in chosen:
        if g.key in in_turn:
            assert (g.first, g.second, g.opening, g.seed) == (in_turn[g.key].first, in_turn[g.key].second,
                                                              in_turn[g.key].opening, in_turn[g.key].seed)
    assert set(in_turn) < {g.key for g in chosen}


# --- learning finds the top sooner ------------------------------------------------------------------

SEEDS = (1, 2, 3, 4, 5, 6)


def right_from(simulation: Simulation) -> int:
    """Games to a top three right for good (every game of the simulation where it never was)."""
    found = simulation.right_from()
    return simulation.games if found is None else found


def test_learning_finds_the_true_top_three_in_fewer_games_than_in_turn():
    """Ten entrants, ten games per pairing (450 games): the same games either way (their
    results drawn by key), only their order differs. Learning has the true top three in
    the right order for good after no more games in any seeded league, and a fifth fewer in all."""
    in_turn, learnt = [], []
    for seed in SEEDS:
        true = strengths(10, seed, spread=300)
        in_turn.append(right_from(simulate(true, PairingSettings(max_games=10), 10, seed)))
        learnt.append(right_from(simulate(true, learn(max_games=10), 10, seed)))
    assert all(a <= b for a, b in zip(learnt, in_turn)), (learnt, in_turn)
    assert sum(learnt) < 0.8 * sum(in_turn), (learnt, in_turn)


def test_learning_narrows_the_top_intervals_sooner():
    """After a third of the games the intervals of the true top four's neighbouring
    differences (how sure the order at the top is) are narrower learning than in
    turn, in every seeded league."""
    for seed in SEEDS[:4]:
        true = strengths(10, seed, spread=300)
        in_turn = simulate(true, PairingSettings(max_games=10), 10, seed, budget=150)
        learnt = simulate(true, learn(max_games=10), 10, seed, budget=150)
        assert learnt.interval_at(150) < in_turn.interval_at(150), seed


# --- the floor -----------------------------------------------------------------------------------


def least_in_a_window(simulation: Simulation, field: list[str]) -> int:
    """The fewest games any entrant played in any 4n games in a row (n entrants)."""
    window = 4 * len(field)
    return min(min(Counter(player for game in simulation.players[start:start + window] for player in game)[spec]
                   for spec in field)
               for start in range(len(simulation.players) - window + 1))


@settings(max_examples=12, deadline=None)
@given(st.integers(3, 12), st.sampled_from([0.25, 0.5, 0.75, 1.0]), st.integers(1, 10_000),
       st.sampled_from([1, 2, 7, 8, 16]), st.sampled_from([50.0, 300.0, 800.0]))
def test_every_entrant_gets_its_floor_in_every_window(n, min_share, seed, batch, spread):
    """In every 4n games in a row (8 games each is the fair share) each entrant plays at
    least floor(8 x min_share) - 1, and 5 at min_share 1, however far it is from the top."""
    true = strengths(n, seed, spread)
    simulation = simulate(true, learn(min_share, max_games=1000), 2, seed, batch=batch, budget=12 * n)
    floor = 5 if min_share == 1 else int(8 * min_share) - 1
    assert least_in_a_window(simulation, list(true)) >= floor


def test_without_the_floor_the_bottom_starves(monkeypatch):
    """The floor is what keeps the bottom playing: without it the league leaves the
    weakest entrant out of whole windows; with it each plays its 3 at least."""
    true = {**strengths(7, 3, spread=100), "weakest": 500.0}
    served = simulate(true, learn(0.5, max_games=1000), 2, 3, budget=200)
    monkeypatch.setattr(pairing, "_below_floor", lambda *args: [])
    starved = simulate(true, learn(0.5, max_games=1000), 2, 3, budget=200)
    assert least_in_a_window(served, list(true)) >= 3
    assert least_in_a_window(starved, list(true)) == 0


def test_a_new_entrant_is_served_first():
    """It has played none of the latest games: below its floor, its pairings come first."""
    field = entries_of("a", "b", "c", "d")
    config = config_of({"games": 2, "seed": 1}, "new")
    learning = Learning(learn(max_games=20), latest=[("a", "b"), ("c", "d"), ("a", "c"), ("b", "d")] * 4)
    chosen = LeagueSchedule(config, set(), learning).next_games([*field, *entries_of("new")], {}, 8)
    assert sum("new" in g.bots for g in chosen) >= 4


# --- the same choices after a restart -----------------------------------------------------------------

LEARNING = """bots = ["random", "greedy", "neighbour", "blocker"]
games = 2
seed = 5
[openings]
plies = 2
[pairing]
mode = "learn"
max_games = 8
"""


def test_a_restarted_league_chooses_as_the_one_that_stopped(tmp_path, monkeypatch):
    """Stopped after a batch: the schedule the stopped run held and the one read from
    the stored games (as the next run reads it) choose the same next games."""
    (tmp_path / "league.toml").write_text(LEARNING)
    path = tmp_path / "league.db"
    held: list[LeagueSchedule] = []
    real = scheduler.LeagueSchedule.played

    def keep(self: LeagueSchedule, records: list) -> None:
        held.append(self)
        real(self, records)

    monkeypatch.setattr(scheduler.LeagueSchedule, "played", keep)
    stops = []

    def stop_after_two_batches(line: str) -> None:
        if "games played" in line:
            stops.append(line)
            if len(stops) == 2:
                raise KeyboardInterrupt

    with Store(path) as store:
        league = create_league(store, "l", str(tmp_path / "league.toml"))
        assert run_league(store, league, workers=1, until_complete=True, report=stop_after_two_batches).interrupted
        entries = store.leagues.entries(league.id, status="active")
        config = held[-1].config
        again = LeagueSchedule(config, store.games.keys(league.tournament_id), learning_of(store, league, config))
        assert 0 < len(again.stored) < 6 * 8
        assert again.learning is not None and held[-1].learning is not None
        assert list(again.learning.latest) == list(held[-1].learning.latest)
        assert ([g.key for g in again.next_games(entries, {}, 8)]
                == [g.key for g in held[-1].next_games(entries, {}, 8)])
        # Played on, every pairing reaches max_games and the league is complete.
        assert run_league(store, league, workers=1, until_complete=True).played == 6 * 8 - len(again.stored)
        assert len(store.games.keys(league.tournament_id)) == 6 * 8
