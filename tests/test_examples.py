"""The example bots of examples/, one per language, played over the program protocol.

Each example is built from its bot.toml (in a copy of its folder, as the arena
builds it) and run as a program: whole games against a random player on 7x6 connect
4 and on a gravity-free board it claims, as first and as second player, every move
checked legal by the arena's own engine; impossible positions answered with an error;
a clean exit on quit. A language whose toolchain is missing is skipped, unless
ARENA_EXAMPLES_REQUIRED=1 (CI sets it), when that is a failure.
"""

from __future__ import annotations

import json
import os
import random
import select
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Board, IllegalMoveError, Rules

EXAMPLES = Path(__file__).parent.parent / "examples"
NAMES = sorted(path.name for path in EXAMPLES.iterdir() if (path / "bot.toml").is_file())
TOOLCHAINS = {
    "c": ["gcc"],
    "cpp": ["g++"],
    "java": ["javac", "java"],
    "csharp": ["mcs", "mono"],
    "javascript": ["node"],
    "elixir": ["elixir"],
    "python": [],
    "rust": ["cargo"],
    "go": ["go"],
}
REQUIRED = os.environ.get("ARENA_EXAMPLES_REQUIRED") == "1"
# A guard against a bot that hangs, never a measure of its speed: each move is
# given 0.2 s, and the examples plan to use half of that at most.
PATIENCE = 60.0
LIMIT = {"move_seconds": 0.2, "bank_seconds": 2.0, "nodes": None}
CONNECT_FOUR = Rules()
# Not square, so that a row taken for a column (or width for height) shows.
NO_GRAVITY = Rules(width=9, height=7, connect=5, gravity=False)


def test_every_language_has_an_example() -> None:
    languages = {manifest(name)["language"] for name in NAMES}
    assert languages == {"c", "java", "csharp", "javascript", "elixir"}


@pytest.mark.parametrize("name", NAMES)
def test_manifest_names_the_bot_its_language_and_how_to_run_it(name: str) -> None:
    data = manifest(name)
    assert set(data) <= {"name", "language", "build", "run"}, data
    assert data["name"] == name
    assert data["language"] in TOOLCHAINS
    assert command(data["run"])
    # What a build writes stays out of the repository.
    if "build" in data:
        assert (EXAMPLES / name / ".gitignore").is_file()


# --- building and running -------------------------------------------------------


def manifest(name: str) -> dict[str, Any]:
    with open(EXAMPLES / name / "bot.toml", "rb") as file:
        return tomllib.load(file)


def command(value: str | list[str]) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else list(value)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """built(name) -> the folder of a built copy of the example (built once)."""
    folders: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name in folders:
            return folders[name]
        data = manifest(name)
        missing = [tool for tool in TOOLCHAINS[data["language"]] if shutil.which(tool) is None]
        if missing:
            why = f"{name}: {data['language']} toolchain missing ({', '.join(missing)})"
            if REQUIRED:
                pytest.fail(why + " and ARENA_EXAMPLES_REQUIRED=1")
            pytest.skip(why)
        source = EXAMPLES / name
        ignored = source / ".gitignore"
        patterns = ignored.read_text().split() if ignored.is_file() else []
        folder = tmp_path_factory.mktemp("examples") / name
        # A copy without the outputs of a build made by hand in the folder.
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns(*patterns))
        if "build" in data:
            done = subprocess.run(command(data["build"]), cwd=folder, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{name}: build failed:\n{done.stdout}\n{done.stderr}"
        folders[name] = folder
        return folder

    return build


class Program:
    """One run of an example: requests written on its stdin, answers read from its stdout."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.started = time.perf_counter()
        self.log = open(folder / f"stderr-{time.monotonic_ns()}.log", "w+b")  # noqa: SIM115
        self.process = subprocess.Popen(
            command(manifest(name)["run"]), cwd=folder,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
        )
        self.pending = b""

    def send(self, *requests: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        # The arena writes ", " and ": " between items, as json.dumps does.
        self.process.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + PATIENCE
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"{self.name}: no answer within {PATIENCE} s; its log:\n{self.stderr()}"
            chunk = os.read(fd, 65536)
            assert chunk, f"{self.name}: stdout closed (exit {self.process.poll()}); its log:\n{self.stderr()}"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        answer = json.loads(line)
        assert isinstance(answer, dict), line
        return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.no_stray_lines()
        self.send(request)
        return self.read()

    def no_stray_lines(self) -> None:
        """Nothing on stdout but the answers: no line waiting before a request."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self.pending += chunk
        assert self.pending == b"", f"{self.name}: a line no request asked for: {self.pending[:200]!r}"

    def start(self, rules: Rules, side: int, seed: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """hello and new_game, sent together as the arena does; the hello answer."""
        hello, ready = self.greet(rules_dict(rules), side, seed, options)
        assert ready == {"ok": True}, ready
        self.startup = time.perf_counter() - self.started
        return hello

    def greet(self, rules: dict[str, Any], side: int, seed: int,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """hello and new_game with these rules as sent; the answers to both."""
        self.send(
            {"type": "hello", "protocol": 1},
            {"type": "new_game", "rules": rules, "side": side, "seed": seed,
             "time_control": {"move_seconds": LIMIT["move_seconds"], "bank_seconds": LIMIT["bank_seconds"]},
             "options": options or {}},
        )
        hello = self.read()
        assert hello["type"] == "hello" and hello["protocol"] == 1, hello
        assert isinstance(hello["name"], str) and hello["name"], hello
        return hello, self.read()

    def quit(self) -> int:
        self.no_stray_lines()
        self.send({"type": "quit"})
        try:
            code = self.process.wait(timeout=PATIENCE)
        finally:
            self.close()
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.log.close()

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]


def rules_dict(rules: Rules) -> dict[str, Any]:
    return {"width": rules.width, "height": rules.height, "connect": rules.connect, "gravity": rules.gravity}


def claims(hello: dict[str, Any], rules: Rules) -> bool:
    """The hello's variants (absent: Connect Four only) take these rules; a variant
    without "scoring" plays games won by a line only."""
    variants = hello.get("variants", [{"width": [7, 7], "height": [6, 6], "connect": [4, 4], "gravity": [True]}])
    return any(
        v["width"][0] <= rules.width <= v["width"][1] and v["height"][0] <= rules.height <= v["height"][1]
        and v["connect"][0] <= rules.connect <= v["connect"][1] and rules.gravity in v["gravity"]
        and rules.scoring in v.get("scoring", ["line"])
        for v in variants
    )


# --- games against a random player ------------------------------------------------


def play(name: str, folder: Path, rules: Rules, side: int, seed: int,
         options: dict[str, Any] | None = None) -> tuple[str, list[int], float]:
    """A whole game of the example against a random player: "win", "loss" or "draw"
    for the example, the moves, and the seconds it took to answer hello and new_game.
    The protocol numbers moves as the engine does, so the engine's history is sent
    as it stands and every answer is played on the engine's board, checked."""
    program = Program(name, folder)
    try:
        hello = program.start(rules, side, seed, options)
        assert claims(hello, rules), f"{name} does not claim {rules.describe()}: {hello.get('variants')}"
        board, opponent = Board(rules), random.Random(seed)
        while not board.is_over():
            if board.to_move == side:
                answer = program.ask({"type": "move", "moves": board.history, "limit": LIMIT})
                move = answer.get("move")
                assert type(move) is int, f"{name}: not a move: {answer}"
                assert "info" not in answer or isinstance(answer["info"], dict), answer
                try:
                    board.play_checked(move)
                except IllegalMoveError as error:
                    raise AssertionError(
                        f"{name}: illegal move {move} after {board.history} on {rules.describe()}: {error}"
                    ) from None
            else:
                board.play(opponent.choice(board.legal_moves()))
        assert program.quit() == 0, f"{name}: quit did not exit 0; its log:\n{program.stderr()}"
    finally:
        program.close()
    winner = board.winner
    result = "draw" if winner is None else "win" if winner == side else "loss"
    return result, board.history, program.startup


@pytest.mark.parametrize("rules", [CONNECT_FOUR, NO_GRAVITY], ids=["7x6", "9x7k5-no-gravity"])
@pytest.mark.parametrize("name", NAMES)
def test_example_plays_legal_games_against_random_as_both_sides(name: str, rules: Rules, built: Any) -> None:
    folder = built(name)
    results, startups = [], []
    for seed in (1, 2):
        for side in (0, 1):
            result, _, startup = play(name, folder, rules, side, seed)
            results.append(result)
            startups.append(startup)
    # Shown with -s: how it did, and how long hello and new_game took to answer.
    print(f"{name} on {rules.describe()}: {results.count('win')}/{len(results)} won, {results}; "
          f"start-up {', '.join(f'{s:.3f}' for s in startups)} s", file=sys.stderr)
    # Far stronger than random: a guard against a bot that reads the board wrongly
    # (a mirrored board still plays legal moves, but plays them blind).
    assert results.count("win") > results.count("loss"), f"{name} on {rules.describe()}: {results}"


# Options each example declares, and values that change how it plays.
OPTIONS = [
    ("java-classic", {"strategy": "random"}),
    ("java-classic", {"strategy": "neighbour"}),
    ("java-classic", {"strategy": "greedy"}),
    ("csharp-blocker", {"strategy": "blocking"}),
    ("csharp-blocker", {"strategy": "selfish"}),
    ("c-alphabeta", {"depth": 3}),
    ("js-mcts", {"playouts": 200}),
    ("elixir-lines", {}),
]


@pytest.mark.parametrize(("name", "options"), OPTIONS, ids=[f"{n}-{o}" for n, o in OPTIONS])
def test_the_same_seed_gives_the_same_game(name: str, options: dict[str, Any], built: Any) -> None:
    # Budgets counted, not timed: the bot's random numbers come from the seed alone.
    folder = built(name)
    first = play(name, folder, CONNECT_FOUR, 1, 7, options)[:2]
    assert play(name, folder, CONNECT_FOUR, 1, 7, options)[:2] == first


@pytest.mark.parametrize("name", NAMES)
def test_declared_options_are_well_formed(name: str, built: Any) -> None:
    program = Program(name, built(name))
    try:
        hello = program.start(CONNECT_FOUR, 0, 1)
        assert program.quit() == 0
    finally:
        program.close()
    for option, spec in hello.get("options", {}).items():
        assert spec["type"] in {"int", "float", "bool", "str"}, (option, spec)
        assert isinstance(spec.get("help"), str), (option, spec)
        python_type = {"int": int, "float": (int, float), "bool": bool, "str": str}[spec["type"]]
        assert isinstance(spec["default"], python_type), (option, spec)
    assert [o for n, o in OPTIONS if n == name], f"{name}: no entry in OPTIONS"
    for _, options in (entry for entry in OPTIONS if entry[0] == name):
        assert set(options) <= set(hello.get("options", {})), (name, options)


# --- positions that are no game -------------------------------------------------------


def impossible(rules: Rules) -> list[tuple[str, list[int]]]:
    """(what is wrong, moves) for positions that are no game under these rules."""
    if rules.gravity:
        # Column 0 four high for the first player, by its 7th move.
        won = [0, 1, 0, 1, 0, 1, 0]
        return [("full column", [3] * (rules.height + 1)), ("off the board", [rules.width]),
                ("negative", [-1]), ("moves after a win", [*won, 2]), ("a won game", won)]
    # Cells column * height + row, row 0 at the bottom: the first player's bottom row,
    # columns 0..4, by its 9th move; the second's on row 2. The top right cell is free.
    h, last = rules.height, rules.width * rules.height - 1
    won = [0, 2, h, h + 2, 2 * h, 2 * h + 2, 3 * h, 3 * h + 2, 4 * h]
    return [("taken cell", [10, 10]), ("off the board", [last + 1]),
            ("negative", [-1]), ("moves after a win", [*won, last]), ("a won game", won)]


@pytest.mark.parametrize("rules", [CONNECT_FOUR, NO_GRAVITY], ids=["7x6", "9x7k5-no-gravity"])
@pytest.mark.parametrize("name", NAMES)
def test_an_impossible_position_is_answered_with_an_error(name: str, rules: Rules, built: Any) -> None:
    program = Program(name, built(name))
    try:
        program.start(rules, 0, 3)
        for what, moves in impossible(rules):
            answer = program.ask({"type": "move", "moves": moves, "limit": LIMIT})
            assert isinstance(answer.get("error"), str) and "move" not in answer, (what, moves, answer)
        # The position read afresh for each request: a legal one still gets a move.
        answer = program.ask({"type": "move", "moves": [], "limit": LIMIT})
        assert Board(rules).is_legal(answer["move"]), answer
        assert program.quit() == 0
    finally:
        program.close()


def test_the_impossible_positions_are_what_they_say() -> None:
    # Each is refused by the engine too, but for the won ones, which are games until
    # their last move (and, for one, a move after it).
    for rules in (CONNECT_FOUR, NO_GRAVITY):
        cases = dict(impossible(rules))
        board = Board.from_moves(cases["a won game"], rules)
        assert board.winner == 0, rules
        assert cases["moves after a win"][:-1] == cases["a won game"]
        assert board.is_legal(cases["moves after a win"][-1]) is False  # the game is over
        assert Board(rules).is_legal(cases["moves after a win"][-1])
        for what in ("off the board", "negative"):
            assert not Board(rules).is_legal(cases[what][0]), (rules, what)


# The first player's four stones up column 2 (cells 14..17 of a 9x7 board, numbered
# column * height + row from the bottom), the second's far from them: cell 18 wins.
# Read as rows from the top, 14..17 would be a row, won at 13.
FOUR_UP_COLUMN_2 = [14, 60, 15, 62, 16, 50, 17, 40]


@pytest.mark.parametrize("name", NAMES)
def test_the_cells_are_read_and_answered_in_the_protocols_numbering(name: str, built: Any) -> None:
    board = Board.from_moves(FOUR_UP_COLUMN_2, NO_GRAVITY)
    assert [m for m in board.legal_moves() if Board.from_moves([*FOUR_UP_COLUMN_2, m], NO_GRAVITY).winner == 0] == [18]
    program = Program(name, built(name))
    try:
        program.start(NO_GRAVITY, 0, 6)
        answer = program.ask({"type": "move", "moves": FOUR_UP_COLUMN_2, "limit": LIMIT})
        assert answer.get("move") == 18, answer
        assert program.quit() == 0
    finally:
        program.close()


@pytest.mark.parametrize("name", NAMES)
def test_a_game_scored_by_counting_is_refused_unless_declared(name: str, built: Any) -> None:
    counted = Rules(width=7, height=6, connect=4, gravity=True, scoring="count")
    for scoring, rules in (("line", CONNECT_FOUR), ("count", counted)):
        program = Program(name, built(name))
        try:
            # "line" said outright, as a reader of the rules may meet it.
            hello, ready = program.greet({**rules_dict(rules), "scoring": scoring}, 0, 1)
            if claims(hello, rules):
                assert ready == {"ok": True}, (scoring, ready)
            else:
                assert scoring == "count", hello.get("variants")
                assert isinstance(ready.get("error"), str) and "ok" not in ready, ready
            assert program.quit() == 0
        finally:
            program.close()


@pytest.mark.parametrize("name", NAMES)
def test_requests_are_read_whatever_their_key_order_and_spacing(name: str, built: Any) -> None:
    program = Program(name, built(name))
    try:
        program.start(CONNECT_FOUR, 1, 4)
        # Keys in another order, no spaces, a nested "type" and fields no bot knows.
        assert program.process.stdin is not None
        program.process.stdin.write(
            b'{"limit":{"nodes":null,"bank_seconds":2.0,"move_seconds":0.2},'
            b'"future":{"type":"quit","moves":[9]},"moves":[ 3 , 3,2 ],"type":"move"}\n'
        )
        program.process.stdin.flush()
        answer = program.read()
        board = Board.from_moves([3, 3, 2], CONNECT_FOUR)
        assert board.is_legal(answer["move"]), answer
        assert program.quit() == 0
    finally:
        program.close()


@pytest.mark.parametrize("name", NAMES)
def test_the_end_of_input_ends_the_bot_with_code_0(name: str, built: Any) -> None:
    program = Program(name, built(name))
    try:
        program.start(CONNECT_FOUR, 0, 5)
        assert program.process.stdin is not None
        program.process.stdin.close()
        assert program.process.wait(timeout=PATIENCE) == 0
    finally:
        program.close()


@pytest.mark.parametrize("name", NAMES)
def test_example_passes_the_protocols_conformance_suite(name: str, built: Any) -> None:
    """Each example passes `arena check` as the arena runs it: sandboxed, built from
    its manifest in a copy of its folder, every check of the suite."""
    from arena.entry.conformance import Conformance, Settings

    folder = built(name)
    results = list(Conformance(str(folder), Settings(move_seconds=1.0)).checks())
    failed = [f"{r.name}: {r.detail}\n" + "\n".join(r.exchange) for r in results if not r.passed]
    assert not failed, "\n".join(failed)
    assert len(results) >= 10
