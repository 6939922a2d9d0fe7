"""The schedule: who meets whom, from which opening, with which colours and seeds;
pure and deterministic so that tournaments can resume."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import pytest

from arena.engine.game import Board, Rules
from arena.engine.openings import game_seed, iter_random_openings, random_openings
from arena.records import TimeControl
from arena.tournament.config import TournamentConfig, load_config
from arena.tournament.schedule import iter_schedule, openings, pairings, schedule

BOTS = ["random", "greedy", "blocker", "neighbour", "minimax:depth=1"]
KEY = re.compile(r"p(\d{4,})-o(\d{4,})-([ab])")


def config(**overrides) -> TournamentConfig:
    """A config from overrides only; dotted keys may be given with '__' for '.'."""
    values = {"name": "test", "bots": BOTS[:3]}
    values.update({k.replace("__", "."): v for k, v in overrides.items()})
    return load_config(None, values)


def check_opening(line: tuple[int, ...], rules: Rules, plies: int) -> None:
    assert isinstance(line, tuple)
    assert len(line) == plies
    board = Board.from_moves(list(line), rules)  # raises on an illegal move
    assert not board.is_over(), line
    assert not any(board.is_winning_move(m) for m in board.legal_moves()), line


# --- pairings and sizes ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("games", [1, 2, 4, 5])
def test_round_robin_sizes(n, games):
    cfg = config(bots=BOTS[:n], games=games)
    pairs = pairings(cfg)
    assert len(pairs) == n * (n - 1) // 2
    assert {frozenset(p) for p in pairs} == {frozenset(p) for p in combinations(BOTS[:n], 2)}
    assert all(a != b for a, b in pairs)
    specs = schedule(cfg)
    assert len(specs) == games * len(pairs)
    assert len({s.key for s in specs}) == len(specs)
    assert len(openings(cfg)) == (games + 1) // 2


def test_each_game_carries_its_pairing_the_key_prefix_stored_before():
    specs = schedule(config(bots=BOTS[:4], games=2))
    assert all(spec.pairing == spec.key.split("-", 1)[0] for spec in specs)
    by_pairing = defaultdict(set)
    for spec in specs:
        by_pairing[spec.pairing].add(frozenset(spec.bots))
    assert len(by_pairing) == 6 and all(len(pair) == 1 for pair in by_pairing.values())


def test_every_pairing_plays_each_opening_once_with_each_colour():
    cfg = config(bots=BOTS[:4], games=6, openings__plies=3)
    specs = schedule(cfg)
    by_pair: dict[frozenset, list] = defaultdict(list)
    for spec in specs:
        by_pair[frozenset(spec.bots)].append(spec)
    assert len(by_pair) == 6
    lines = openings(cfg)
    for _pair, games in by_pair.items():
        assert len(games) == 6
        firsts = Counter(s.first for s in games)
        assert sorted(firsts.values()) == [3, 3]  # colours balanced
        by_opening = defaultdict(dict)
        for spec in games:
            _number, index, side = KEY.fullmatch(spec.key).groups()
            by_opening[int(index)][side] = spec
        assert sorted(by_opening) == [0, 1, 2]
        for index, sides in by_opening.items():
            a, b = sides["a"], sides["b"]
            assert (a.first, a.second) == (b.second, b.first)
            assert a.opening == b.opening == lines[index]
            assert a.key[:-1] == b.key[:-1]
    # The three openings differ, so each pairing plays three different games.
    assert len(set(lines)) == 3


def test_keys_are_unique_and_well_formed_and_seeds_follow_keys():
    cfg = config(bots=BOTS, games=7, seed=9)
    specs = schedule(cfg)
    keys = [s.key for s in specs]
    assert len(set(keys)) == len(keys)
    for spec in specs:
        assert KEY.fullmatch(spec.key), spec.key
        assert spec.seed == game_seed(9, spec.key)
        assert spec.rules == cfg.rules
        assert spec.time_control == cfg.time_control
        assert spec.first in BOTS and spec.second in BOTS and spec.first != spec.second
    assert len({s.seed for s in specs}) == len(specs)


def test_games_are_interleaved_so_every_pairing_advances_together():
    cfg = config(bots=BOTS[:4], games=4)
    specs = schedule(cfg)
    pairs = pairings(cfg)
    for game in range(4):
        block = specs[game * len(pairs) : (game + 1) * len(pairs)]
        assert {frozenset(s.bots) for s in block} == {frozenset(p) for p in pairs}
        assert len({s.opening for s in block}) == 1


def test_an_odd_number_of_games_plays_the_last_opening_once():
    cfg = config(bots=BOTS[:3], games=5, openings__plies=2)
    specs = schedule(cfg)
    lines = openings(cfg)
    assert len(lines) == 3
    assert len(specs) == 15
    uses = Counter((frozenset(s.bots), s.opening) for s in specs)
    for pair in map(frozenset, pairings(cfg)):
        assert uses[pair, lines[0]] == 2
        assert uses[pair, lines[1]] == 2
        assert uses[pair, lines[2]] == 1
    last = [s for s in specs if KEY.fullmatch(s.key).group(2) == "0002"]
    assert [KEY.fullmatch(s.key).group(3) for s in last] == ["a", "a", "a"]
    assert [(s.first, s.second) for s in last] == pairings(cfg)


def test_a_single_game_per_pairing():
    cfg = config(bots=BOTS[:2], games=1)
    specs = schedule(cfg)
    assert [(s.key, s.first, s.second) for s in specs] == [("p0000-o0000-a", "random", "greedy")]


# --- determinism ------------------------------------------------------------------------------


def test_the_same_config_gives_the_identical_schedule():
    one = schedule(config(bots=BOTS, games=6, seed=3, openings__plies=4))
    two = schedule(config(bots=BOTS, games=6, seed=3, openings__plies=4))
    assert one == two
    assert [s.key for s in one] == [s.key for s in two]
    assert [s.seed for s in one] == [s.seed for s in two]
    assert [s.opening for s in one] == [s.opening for s in two]


def test_the_schedule_ignores_global_random_state():
    random.seed(1)
    one = schedule(config(games=4, seed=3))
    random.seed(2)
    random.random()
    assert schedule(config(games=4, seed=3)) == one


def test_the_schedule_is_the_same_in_another_process():
    # Resuming happens in a new process, possibly with another hash seed.
    code = (
        "import json; from arena.tournament.config import load_config; from arena.tournament.schedule import schedule;"
        "c = load_config(None, {'name': 't', 'bots': ['random', 'greedy', 'blocker'], 'games': 4, 'seed': 11});"
        "print(json.dumps([[s.key, s.first, s.second, list(s.opening), s.seed] for s in schedule(c)]))"
    )
    here = [
        [s.key, s.first, s.second, list(s.opening), s.seed]
        for s in schedule(config(bots=BOTS[:3], games=4, seed=11))
    ]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == here


def test_a_different_seed_gives_different_openings_and_seeds():
    one = schedule(config(bots=BOTS[:3], games=10, seed=1, openings__plies=4))
    two = schedule(config(bots=BOTS[:3], games=10, seed=2, openings__plies=4))
    assert [s.key for s in one] == [s.key for s in two]
    assert [s.opening for s in one] != [s.opening for s in two]
    assert not {s.seed for s in one} & {s.seed for s in two}


# --- openings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules,plies",
    [
        (Rules(), 0),
        (Rules(), 2),
        (Rules(), 8),
        (Rules(), 21),
        (Rules(3, 3, 3), 4),
        (Rules(3, 3, 3, gravity=False), 4),
        (Rules(4, 4, 3), 8),
        (Rules(5, 5, 4, gravity=False), 12),
        (Rules(9, 7, 5), 10),
        (Rules(15, 15, 5, gravity=False), 30),
    ],
    ids=lambda v: v.describe() if isinstance(v, Rules) else str(v),
)
def test_openings_are_legal_open_and_give_no_immediate_win(rules, plies):
    cfg = config(games=12, rules__width=rules.width, rules__height=rules.height,
                 rules__connect=rules.connect, rules__gravity=rules.gravity, openings__plies=plies)
    lines = openings(cfg)
    assert len(lines) == 6
    for line in lines:
        check_opening(line, rules, plies)
    for spec in schedule(cfg):
        assert spec.opening in lines


def test_random_openings_over_many_seeds_are_always_valid():
    rules = Rules(4, 4, 3)
    for seed in range(30):
        for line in random_openings(rules, 6, 3, random.Random(seed)):
            check_opening(line, rules, 6)


def test_openings_are_distinct_when_enough_exist():
    cfg = config(games=40, openings__plies=2)  # 20 openings out of 49 two-ply lines
    lines = openings(cfg)
    assert len(lines) == 20
    assert len(set(lines)) == 20


def test_random_openings_repeat_only_when_there_are_too_few():
    # On 3x3 connect 3 there are exactly three one-ply openings.
    lines = random_openings(Rules(3, 3, 3), 1, 7, random.Random(0))
    assert len(lines) == 7
    assert set(lines) == {(0,), (1,), (2,)}
    assert len(set(lines[:3])) == 3  # all distinct ones come first
    assert random_openings(Rules(), 0, 3, random.Random(0)) == [(), (), ()]


def test_random_openings_stay_distinct_for_a_large_count():
    # 7 x 7 x 7 x 7 = 2401 four-ply Connect Four openings exist, none with a threat,
    # so 900 distinct ones are possible (a tournament with games = 1800).
    lines = random_openings(Rules(), 4, 900, random.Random(1))
    assert len(lines) == 900
    for line in lines[:50]:
        check_opening(line, Rules(), 4)
    duplicates = len(lines) - len(set(lines))
    assert duplicates == 0, f"{duplicates} repeated openings although 2401 distinct ones exist"


@pytest.mark.parametrize("gravity", [True, False])
def test_random_openings_raise_when_no_opening_can_exist(gravity):
    # Nine plies fill a 3x3 board, so no opening of nine plies leaves the game open.
    # (Every opening length a config accepts, at most half the cells, has at least
    # one valid opening on every board up to 20 cells: the error needs a direct call.)
    rules = Rules(3, 3, 3, gravity=gravity)
    with pytest.raises(ValueError, match="9 plies"):
        random_openings(rules, 9, 1, random.Random(0))
    # Eight plies are still possible on the same board.
    lines = random_openings(rules, 8, 1, random.Random(0))
    check_opening(lines[0], rules, 8)


def test_openings_from_a_file_are_cycled(tmp_path: Path):
    lines_file = tmp_path / "book.txt"
    lines_file.write_text("44\n435\n1\n", encoding="utf-8")
    cfg = config(bots=BOTS[:3], games=8, openings__file=str(lines_file))
    assert cfg.opening_lines == ((3, 3), (3, 2, 4), (0,))
    assert openings(cfg) == [(3, 3), (3, 2, 4), (0,), (3, 3)]
    specs = schedule(cfg)
    assert len(specs) == 8 * 3
    for spec in specs:
        index = int(KEY.fullmatch(spec.key).group(2))
        assert spec.opening == cfg.opening_lines[index % 3]


def test_a_file_with_more_openings_than_needed_uses_the_first_ones(tmp_path: Path):
    lines_file = tmp_path / "book.txt"
    lines_file.write_text("1\n2\n3\n4\n", encoding="utf-8")
    cfg = config(games=3, openings__file=str(lines_file))
    assert openings(cfg) == [(0,), (1,)]


# --- gauntlet ---------------------------------------------------------------------------------


def test_gauntlet_pairs_each_challenger_with_every_field_bot_only():
    challengers = ["minimax:depth=1", "neighbour"]
    field = ["random", "greedy", "blocker"]
    cfg = config(format="gauntlet", challengers=challengers, bots=field, games=4)
    pairs = pairings(cfg)
    assert pairs == [(c, b) for c in challengers for b in field]
    specs = schedule(cfg)
    assert len(specs) == 4 * 6
    for spec in specs:
        assert len(set(spec.bots) & set(challengers)) == 1
        assert len(set(spec.bots) & set(field)) == 1
    firsts = Counter(s.first for s in specs)
    for challenger in challengers:
        assert firsts[challenger] == 6  # half of its 12 games


# --- game seeds ----------------------------------------------------------------------------------


def test_game_seed_is_stable_and_differs_across_keys_and_seeds():
    # sha256("1:p0000-o0000-a"), first 8 bytes, shifted right by one.
    assert game_seed(1, "p0000-o0000-a") == 1090465900309190024
    assert game_seed(42, "p0003-o0001-b") == 6093569550749793320
    assert game_seed(1, "p0000-o0000-a") == game_seed(1, "p0000-o0000-a")
    keys = [f"p{p:04d}-o{o:04d}-{s}" for p in range(10) for o in range(10) for s in "ab"]
    seeds = [game_seed(1, k) for k in keys]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**63 for s in seeds)
    assert game_seed(2, "p0000-o0000-a") != game_seed(1, "p0000-o0000-a")


def test_time_control_travels_into_every_spec():
    cfg = config(time__move_seconds=0.25, time__bank_seconds=1)
    assert {s.time_control for s in schedule(cfg)} == {TimeControl(0.25, 1.0)}


@pytest.mark.parametrize("games", [1, 2, 7, 40])
@pytest.mark.parametrize("lines", [(), ((3,), (2, 4))])
def test_the_schedule_draws_its_openings_one_at_a_time_as_the_list_gives_them(games, lines):
    """iter_schedule reads the openings lazily (a pairing of a million games holds no
    list of them) and gets exactly the openings of openings(config), pair by pair."""
    config = dataclasses.replace(load_config(None, {"bots": ["random", "greedy"], "games": games, "seed": 4}),
                                 opening_lines=lines)
    listed = openings(config)
    for spec in iter_schedule(config):
        game = int(spec.key.split("-o")[1][:4])
        assert spec.opening == listed[game]


def test_lazy_random_openings_are_the_listed_ones():
    rules = Rules()
    listed = random_openings(rules, 2, 200, random.Random(9))
    lazy = list(itertools.islice(iter_random_openings(rules, 2, random.Random(9)), 200))
    assert lazy == listed and len(set(listed)) == 49  # every 2-ply opening, then repeats


def _line_asking_every_move(rules: Rules, plies: int, rng: random.Random) -> tuple[int, ...] | None:
    """An opening drawn as if every move were asked whether it wins at every ply."""
    board = Board(rules)
    for _ in range(plies):
        safe = [m for m in board.legal_moves() if not board.is_winning_move(m)]
        if not safe:
            return None
        board.play(rng.choice(safe))
    if board.is_over() or any(board.is_winning_move(m) for m in board.legal_moves()):
        return None
    return tuple(board.history)


@pytest.mark.parametrize(
    ("rules", "plies"),
    [
        (Rules(), 2), (Rules(), 9), (Rules(3, 3, 3), 4), (Rules(3, 3, 3, gravity=False), 8),
        (Rules(3, 3, 3), 5), (Rules(4, 3, 3, gravity=False), 6), (Rules(4, 4, 3, scoring="count"), 15),
        (Rules(3, 3, 3, scoring="count"), 8), (Rules(5, 5, 4, gravity=False), 12),
    ],
    ids=lambda v: v.describe() if isinstance(v, Rules) else str(v),
)
def test_openings_skip_asking_for_wins_only_where_no_move_can_win(rules, plies):
    # The same lines, draw for draw, as asking every move at every ply: the shortcut
    # changes the cost, never an opening.
    from arena.engine.openings import _random_line

    for seed in range(40):
        ours, reference = random.Random(seed), random.Random(seed)
        for _ in range(5):
            assert _random_line(rules, plies, ours) == _line_asking_every_move(rules, plies, reference)
