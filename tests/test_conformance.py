"""The conformance suite of protocol v1 (``arena check`` on a program bot): a bot
written from docs/protocol.md passes every check; a bot with one flaw fails the
check named for it, with the exchange that failed (the request it was sent).

The bots are Python scripts of the standard library, run as programs (sandboxed
where this machine has the sandbox). Limits are small and every slow bot sleeps
far past them, and far within what a check waits for an answer it does not time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.engine.game import Board, Rules, RulesError
from arena.entry.conformance import (
    FAILED,
    PASSED,
    Conformance,
    Result,
    Settings,
    games_to_play,
    impossible_positions,
    options_problem,
    patience,
    won_then_moved,
)
from arena.errors import ArenaError
from arena.protocol.handshake import CONNECT_FOUR, Variant

START, MOVE = 3.0, 3.0
#: Seconds a slow bot sleeps: past the limits above, within patience of them.
SLOW = 5.5
assert START + 2 <= SLOW <= patience(START) - 2 and MOVE + 2 <= SLOW <= patience(MOVE) - 2

BOT = r'''#!/usr/bin/env python3
import json, random, sys, time

FLAWS = set(__FLAWS__)
VARIANTS = __VARIANTS__
OPTIONS = __OPTIONS__
SLOW = __SLOW__


def say(answer):
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def line_of(grid, cell, player, k):
    column, row = cell
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        count = 1
        for sign in (1, -1):
            c, r = column + sign * dc, row + sign * dr
            while grid.get((c, r)) == player:
                count, c, r = count + 1, c + sign * dc, r + sign * dr
        if count >= k:
            return True
    return False


def read(rules, moves):
    """(the board, why the moves are no game or None)."""
    width, height, k, gravity = rules["width"], rules["height"], rules["connect"], rules["gravity"]
    grid, heights, won = {}, [0] * width, False
    for ply, move in enumerate(moves):
        if won:
            return grid, "a move after the game was won"
        if gravity:
            if not 0 <= move < width:
                return grid, "off the board"
            if heights[move] >= height:
                return grid, "the column is full"
            cell = (move, heights[move])
            heights[move] += 1
        else:
            if not 0 <= move < width * height:
                return grid, "off the board"
            cell = (move // height, move % height)  # column * height + row
            if cell in grid:
                return grid, "the cell is taken"
        grid[cell] = ply % 2
        won = line_of(grid, cell, ply % 2, k)
    return grid, None


def choose(rules, moves, rng):
    width, height = rules["width"], rules["height"]
    if rules["gravity"]:
        full = [moves.count(c) >= height for c in range(width)]
        return rng.choice([c for c in range(width) if not full[c]])
    if "illegal_without_gravity" in FLAWS:
        return 0
    taken = set(moves)
    return rng.choice([cell for cell in range(width * height) if cell not in taken])


rules, rng = None, random.Random(0)
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind == "hello":
        if "silent" in FLAWS:
            continue
        if "slow_start" in FLAWS:
            time.sleep(SLOW)
        hello = {"type": "hello", "protocol": 0 if "version" in FLAWS else 1, "name": "tester",
                 "author": "A. Student", "version": "1.0"}
        if OPTIONS is not None:
            hello["options"] = OPTIONS
        if VARIANTS is not None:
            hello["variants"] = VARIANTS
        say(hello)
    elif kind == "new_game":
        rules, rng = request["rules"], random.Random(request["seed"])
        given = request["options"]
        if any(name not in (OPTIONS or {}) for name in given):
            say({"error": "unknown option"})
        else:
            say({"ok": True})
    elif kind == "move":
        moves = request["moves"]
        _, wrong = read(rules, moves)
        if wrong and "answers_impossible" not in FLAWS:
            say({"error": wrong})
            continue
        if "slow_moves" in FLAWS:  # a position it reads at once, a move it thinks on too long
            time.sleep(SLOW)
        if "junk" in FLAWS:
            print("thinking \x1b[2J...", flush=True)
        move = choose(rules, [m for m in moves if m >= 0], rng)
        say({"move": move, "info": {"depth": 1}})
        if "twice" in FLAWS:
            say({"move": move})
    elif kind == "quit":
        if "ignores_quit" in FLAWS:
            continue
        sys.exit(3 if "exit_3" in FLAWS else 0)
'''

#: What the correct bot declares: every size from 3 to 8, both gravities, and an option.
EVERYTHING = [{"width": [3, 8], "height": [3, 8], "connect": [3, 5], "gravity": [True, False]}]
DEPTH = {"depth": {"type": "int", "default": 3, "help": "search depth", "min": 1, "max": 9}}


def program(folder: Path, name: str, *flaws: str, variants: object = None, options: object = None) -> str:
    path = folder / name
    text = (BOT.replace("__FLAWS__", repr(sorted(flaws))).replace("__VARIANTS__", repr(variants))
            .replace("__OPTIONS__", repr(options)).replace("__SLOW__", repr(SLOW)))
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def run(spec: str, **settings: object) -> list[Result]:
    return list(Conformance(spec, Settings(start_seconds=START, move_seconds=MOVE, **settings)).checks())  # type: ignore[arg-type]


def failed(results: list[Result]) -> list[Result]:
    return [result for result in results if result.outcome == FAILED]


def test_a_bot_written_from_the_protocol_passes_every_check(tmp_path: Path) -> None:
    bot = program(tmp_path, "good", variants=EVERYTHING, options=DEPTH)
    results = run(f"cmd:{bot}:depth=2")
    assert failed(results) == []
    assert all(result.outcome == PASSED for result in results)
    names = [result.name for result in results]
    assert names[:6] == ["handshake", "start-up", "options declared", "option values", "only answers on stdout",
                         "one answer per request"]
    assert names[-3:] == ["move time", "impossible positions", "clean quit"]
    played = [name for name in names if name.startswith("legal moves")]
    assert "legal moves: 7x6 connect 4" in played
    assert "legal moves: 3x3 connect 3, no gravity" in played
    assert "legal moves: 8x8 connect 4" in played
    by_name = {result.name: result for result in results}
    assert "tester 1.0 by A. Student" in by_name["handshake"].detail
    assert by_name["option values"].detail == "their defaults and the values given accepted"
    assert "full column" in by_name["impossible positions"].detail
    assert "taken cell" in by_name["impossible positions"].detail


@pytest.mark.parametrize(("flaw", "check", "request_sent"), [
    ("version", "handshake", '{"type": "hello", "protocol": 1}'),
    ("silent", "handshake", '{"type": "hello", "protocol": 1}'),
    ("slow_start", "start-up", '"type": "new_game"'),
    ("answers_impossible", "impossible positions", '"moves": [0, 0, 0, 0, 0, 0, 0]'),
    ("junk", "only answers on stdout", '"type": "move"'),
    ("twice", "one answer per request", '"type": "move"'),
    ("slow_moves", "move time", '"type": "move"'),
    ("ignores_quit", "clean quit", '{"type": "quit"}'),
    ("exit_3", "clean quit", '{"type": "quit"}'),
])
def test_a_flawed_bot_fails_the_check_of_its_flaw_naming_the_request(
    tmp_path: Path, flaw: str, check: str, request_sent: str
) -> None:
    results = run(f"cmd:{program(tmp_path, flaw, flaw)}")
    assert [result.name for result in failed(results)] == [check], [(r.name, r.detail) for r in failed(results)]
    failure = failed(results)[0]
    assert any(request_sent in line for line in failure.exchange), failure.exchange
    assert all(result.outcome in (PASSED, "skipped") for result in results if result.name != check)


def test_a_failure_says_what_came_back_or_did_not(tmp_path: Path) -> None:
    checks = {flaw: failed(run(f"cmd:{program(tmp_path, flaw, flaw)}"))[0]
              for flaw in ("version", "silent", "exit_3", "ignores_quit", "slow_start")}
    assert "the bot speaks version 0, the arena version 1" in checks["version"].detail
    assert '< {"type": "hello", "protocol": 0' in checks["version"].exchange[-1]
    assert checks["silent"].exchange[-1] == f"  (time: no answer within {patience(START):g} s)"
    assert checks["exit_3"].detail == "exited with code 3 after quit, not 0"
    assert checks["ignores_quit"].detail == "did not exit within 1 s of quit"
    assert f"over start_seconds {START:g} s" in checks["slow_start"].detail


def test_a_start_that_fails_skips_the_checks_that_stand_on_it(tmp_path: Path) -> None:
    results = run(f"cmd:{program(tmp_path, 'version', 'version')}")
    assert results[0].outcome == FAILED
    assert {result.outcome for result in results[1:]} == {"skipped"}
    assert [result.name for result in results[:2]] == ["handshake", "start-up"]
    assert len(results) == 10


def test_a_variant_it_claims_but_plays_illegally_fails_that_game(tmp_path: Path) -> None:
    variants = [{"width": [7, 7], "height": [6, 6], "connect": [4, 4], "gravity": [True]},
                {"width": [4, 4], "height": [4, 4], "connect": [3, 3], "gravity": [False]}]
    results = run(f"cmd:{program(tmp_path, 'illegal', 'illegal_without_gravity', variants=variants)}")
    assert [result.name for result in failed(results)] == ["legal moves: 4x4 connect 3, no gravity"]
    failure = failed(results)[0]
    assert "illegal move" in failure.detail and "player" in failure.detail
    assert any('"type": "move"' in line for line in failure.exchange)
    assert failure.exchange[-1].startswith("< {\"move\": 0")


@pytest.mark.parametrize(("options", "problem"), [
    ({"depth": {"type": "integer", "default": 3}}, "must give its type"),
    ({"depth": {"type": "int", "default": "deep"}}, "its default 'deep' is not a int"),
    ({"depth": {"type": "int", "default": 3, "min": 5, "max": 9}}, "outside min 5"),
    ({"depth": {"type": "int"}}, "has no default"),
    ({"a=b": {"type": "int", "default": 3}}, "a name holds no"),
    ({"depth": {"type": "str", "default": "x", "min": 1}}, "min and max are for numbers"),
    ({"depth": {"type": "int", "default": 3, "min": 9, "max": 1}}, "above max"),
    (["depth"], "options must be an object"),
])
def test_options_declared_otherwise_than_the_protocol_says_are_named(options: object, problem: str) -> None:
    found = options_problem(options)
    assert found is not None and problem in found


def test_a_bad_options_declaration_fails_that_check_alone(tmp_path: Path) -> None:
    bot = program(tmp_path, "options", options={"depth": {"type": "int", "default": "deep"}})
    results = run(f"cmd:{bot}")
    assert [result.name for result in failed(results)] == ["options declared"]
    assert any('{"type": "hello", "protocol": 1}' in line for line in failed(results)[0].exchange)
    assert next(r for r in results if r.name == "option values").outcome == "skipped"


def test_an_option_value_it_cannot_take_fails_the_option_values(tmp_path: Path) -> None:
    bot = program(tmp_path, "good", options=DEPTH)
    results = run(f"cmd:{bot}:depth=deep")
    assert [result.name for result in failed(results)] == ["option values"]
    assert "depth='deep': not a int" in failed(results)[0].detail
    assert [r.outcome for r in results if r.name in ("legal moves", "move time")] == ["skipped", "skipped"]


def test_the_bots_words_in_a_transcript_are_escaped(tmp_path: Path) -> None:
    failure = failed(run(f"cmd:{program(tmp_path, 'junk', 'junk')}"))[0]
    assert any("thinking \\x1b[2J..." in line for line in failure.exchange)
    assert not any("\x1b" in line for line in failure.exchange)


def test_quit_is_checked_without_the_sandbox_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.sandbox.system

    monkeypatch.setattr(arena.sandbox.system, "sandbox_missing", lambda: "no sandbox in this test")
    good, bad = program(tmp_path, "good"), program(tmp_path, "exit_3", "exit_3")
    conformance = Conformance(f"cmd:{good}")
    assert type(conformance.fresh()).__name__ == "LocalProgram"
    assert conformance._quit(Rules()).outcome == PASSED
    assert Conformance(f"cmd:{bad}")._quit(Rules()).detail == "exited with code 3 after quit, not 0"


# --- what the checks ask ---------------------------------------------------------------------


def test_the_games_played_come_from_the_variants_declared() -> None:
    assert games_to_play((CONNECT_FOUR,)) == [Rules()]
    wide = Variant((3, 40), (3, 40), (3, 10), (True, False))
    chosen = games_to_play((wide,))
    assert chosen == [Rules(), Rules(3, 3, 3), Rules(3, 3, 3, False), Rules(40, 40, 4)]
    # a line longer than the smallest board: the board grows to hold it
    assert games_to_play((Variant((3, 9), (3, 5), (6, 6), (True,)),)) == [Rules(6, 3, 6), Rules(9, 5, 6)]


@given(st.integers(3, 12), st.integers(3, 12), st.integers(3, 12), st.booleans())
def test_a_won_position_is_won_by_the_first_player_and_then_moved_in(
    width: int, height: int, connect: int, gravity: bool
) -> None:
    try:
        rules = Rules(width, height, connect, gravity)
    except RulesError:
        return
    moves = won_then_moved(rules)
    board = Board(rules)
    for move in moves[:-1]:
        assert board.winner is None
        board.play_checked(move)
    assert board.winner == 0
    last = moves[-1]
    assert 0 <= last < rules.move_count
    if gravity:  # a column with room
        assert moves.count(last) <= height
    else:  # a free cell
        assert last not in moves[:-1]


def test_every_impossible_position_is_refused_by_the_engine() -> None:
    for rules, what, moves in impossible_positions([Rules(), Rules(4, 4, 3, False)]):
        board = Board(rules)
        with pytest.raises(ArenaError):
            for move in moves:
                board.play_checked(move)
        assert what


# --- the command -----------------------------------------------------------------------------


def test_arena_check_prints_a_line_per_check_and_exits_0_when_all_pass(tmp_path: Path, cli) -> None:
    bot = program(tmp_path, "good")
    result = cli("check", f"cmd:{bot}", "--seconds", str(MOVE), "--start-seconds", str(START))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("  ok    handshake: tester 1.0 by A. Student; plays 7x6 connect 4 with gravity")
    assert any(line.startswith("  ok    clean quit: exited with code 0 in") for line in lines)
    assert lines[-1] == f"cmd:{bot}: every check passed"


def test_arena_check_shows_the_failed_exchange_and_exits_1(tmp_path: Path, cli) -> None:
    bot = program(tmp_path, "exit_3", "exit_3")
    result = cli("check", f"cmd:{bot}", "--seconds", str(MOVE), "--start-seconds", str(START))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    at = lines.index("  FAIL  clean quit: exited with code 3 after quit, not 0")
    assert lines[at + 1] == '        > {"type": "hello", "protocol": 1}'
    assert '        > {"type": "quit"}' in lines[at:]
    assert lines[-1] == f"cmd:{bot}: 1 of 10 checks failed (clean quit)"


def test_arena_check_plays_the_rules_given(tmp_path: Path, cli) -> None:
    bot = program(tmp_path, "good", variants=EVERYTHING)
    result = cli("check", f"cmd:{bot}", "--width", "5", "--height", "4", "--connect", "3", "--no-gravity",
                 "--seconds", str(MOVE))
    assert result.exit_code == 0, result.output
    assert next(line for line in result.output.splitlines() if "legal moves" in line).startswith(
        "  ok    legal moves: 5x4 connect 3, no gravity:")
    refused = cli("check", f"cmd:{program(tmp_path, 'four')}", "--width", "5", "--seconds", str(MOVE))
    assert refused.exit_code == 1
    assert "FAIL  handshake: bot 'tester' does not play 5x6 connect 4" in refused.output


def test_arena_check_refuses_a_spec_that_names_no_program_in_one_line(tmp_path: Path, cli) -> None:
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "bot.toml").write_text('run = "./bot"\nlanguage = "klingon"\n')
    for spec, message in [(f"cmd:{tmp_path / 'absent'}", "does not exist"),
                          (f"cmd:{script}", "is not executable"),
                          (str(folder), "language 'klingon' is not one of")]:
        result = cli("check", spec)
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1
    bot = tmp_path / "bot.py"
    bot.write_text("")
    assert "--start-seconds is for a program" in cli("check", str(bot), "--start-seconds", "3").output



@pytest.mark.parametrize("sandbox", [True, False])
def test_a_command_that_cannot_run_fails_the_handshake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: bool
) -> None:
    import arena.sandbox.system

    if not sandbox:
        monkeypatch.setattr(arena.sandbox.system, "sandbox_missing", lambda: "no sandbox in this test")
    (tmp_path / "bot.toml").write_text('run = "./nothing"\n')
    results = run(str(tmp_path))
    assert results[0].outcome == FAILED
    assert "could not run its command './nothing'" in results[0].detail
    assert {result.outcome for result in results[1:]} == {"skipped"}
