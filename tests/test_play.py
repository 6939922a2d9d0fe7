"""Playing in the terminal (arena.play), replaying stored games (arena.replay), and
sharing games as text (arena.formats.game_files). Sessions are driven by io.StringIO scripts."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from arena.engine.game import Board, Rules, parse_moves
from arena.formats.game_files import (
    GameFileError,
    export_json,
    export_moves,
    import_game,
    parse_rules_prefix,
    rules_prefix,
)
from arena.terminal.play import PlaySession, render_board
from arena.terminal.replay import ReplaySession

C4 = Rules()
TIC_TAC_TOE = Rules(3, 3, 3, gravity=False)
WIDE = Rules(12, 6, 4)
GOMOKU = Rules(15, 15, 5, gravity=False)
ESC = "\x1b["


def script(*lines: str) -> io.StringIO:
    return io.StringIO("".join(line + "\n" for line in lines))


@pytest.fixture
def leftmost(tmp_path: Path) -> str:
    """A bot file that always plays the leftmost legal column, with some info."""
    path = tmp_path / "leftmost.py"
    path.write_text(textwrap.dedent("""
        from arena.bot import Bot, Choice

        class Leftmost(Bot):
            def choose_move(self, board):
                return Choice(board.legal_moves()[0], {"score": 7, "depth": 1})
    """))
    return str(path)


class Saver:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, board: Board, finished: bool) -> str:
        self.calls.append((board.moves_string(), finished))
        return f"saved as game {len(self.calls)}"


def play(rules: Rules, bot: str | None, lines: list[str], **kwargs) -> tuple[PlaySession, Board, str]:
    out = io.StringIO()
    kwargs.setdefault("hint_bot", "minimax:depth=2")
    session = PlaySession(rules, bot, input=script(*lines), output=out, **kwargs)
    board = session.run()
    return session, board, out.getvalue()


# --- PlaySession ----------------------------------------------------------------------


def test_full_game_against_a_bot(leftmost: str) -> None:
    saver = Saver()
    lines = [
        "junk",  # not a move
        "1",  # X1, bot O1
        "9",  # out of range
        "h",  # hint, not played
        "u",  # back to the empty board (both plies)
        "u",  # nothing to undo
        "r",  # X1 O1 again
        "r",  # nothing to redo
        "s",  # saved unfinished
        "1", "1",  # column 1 is now full (X O X O X O)
        "1",  # illegal: column full
        "4", "4", "4", "4",  # the bot plays column 2 each time; X wins in column 4
        "q",  # never read: the game is over
    ]
    session, board, out = play(C4, leftmost, lines, on_save=saver)
    assert board.moves_string() == "1111114242424"
    assert board.winner == 0 and session.outcome == "X wins"
    assert saver.calls == [("11", False), ("1111114242424", True)]
    assert "saved as game 1" in out and "saved as game 2" in out
    assert "not a move: 'junk'" in out and "not a move: '9'" in out
    assert "illegal move: column 1 is full" in out
    assert "nothing to undo" in out and "nothing to redo" in out
    assert "took back 1 1" in out and "replayed 1 1" in out
    hint = [line for line in out.splitlines() if "hint: " in line]
    assert len(hint) == 1 and "depth 2" in hint[0]
    assert "X to move (1-7, u undo, r redo, h hint, s save, q quit): " in out
    assert "score 7, depth 1" in out  # the bot's info on the status line
    assert "game over: X wins" in out
    assert "Traceback" not in out
    # The final board is shown, last move in lower case, and records line up with it.
    assert board.render() in out
    assert len(session.records) == board.ply
    assert [r.by_bot for r in session.records[:2]] == [False, True]
    assert session.records[1].info == {"score": 7, "depth": 1} and session.records[1].ms is not None


def test_a_new_move_after_undo_clears_redo(leftmost: str) -> None:
    _, board, out = play(C4, leftmost, ["4", "u", "3", "r", "q"])
    assert board.moves_string() == "31"
    assert "nothing to redo" in out


def test_bot_moves_first_and_undo_keeps_its_opening(leftmost: str) -> None:
    _, board, out = play(C4, leftmost, ["u", "4", "u", "q"], human_player=1)
    assert board.moves_string() == "1"  # the bot's first move stays: it is the person's turn
    assert out.count("nothing to undo") == 1
    assert "O to move (1-7" in out


def test_minimax_opponent_wins_against_a_careless_person() -> None:
    saver = Saver()
    lines = [str(c) for c in range(1, 8) for _ in range(6)]  # fill columns left to right
    session, board, out = play(C4, "minimax:depth=2", lines, on_save=saver)
    assert board.winner == 1 and session.outcome == "O wins"
    assert "game over: O wins" in out
    assert saver.calls == [(board.moves_string(), True)]
    assert "depth 2" in out and "nodes" in out


def test_two_people() -> None:
    saver = Saver()
    lines = ["4", "3", "u", "5", "4", "5", "4", "5", "4"]
    session, board, out = play(C4, None, lines, on_save=saver)
    assert board.moves_string() == "4545454"
    assert session.outcome == "X wins" and "game over: X wins" in out
    assert "took back 3" in out
    assert "O to move (1-7" in out and "X to move (1-7" in out
    assert saver.calls == [("4545454", True)]


def test_tic_tac_toe_with_cell_names() -> None:
    _, board, out = play(TIC_TAC_TOE, None, ["b2", "b2", "a1", "z9", "c3", "a3", "a2", "c1", "b1"])
    assert "X to move (a1-c3, u undo" in out
    assert "illegal move: cell b2 is taken" in out
    assert "not a move: 'z9'" in out
    assert board.moves_string() == "b2a1c3a3a2c1b1"
    assert board.winner is None and not board.is_over()  # input ran out
    _, board, out = play(TIC_TAC_TOE, None, ["b2", "a1", "a3", "c1", "b1", "b3", "a2", "c2", "c3"])
    assert board.is_draw() and "game over: draw" in out


def test_tic_tac_toe_against_a_bot_with_hint() -> None:
    session, board, out = play(TIC_TAC_TOE, "random", ["h", "b2", "q"], seed=3)
    assert board.ply == 2 and board.history[0] == parse_moves("b2", TIC_TAC_TOE)[0]
    hint = next(line for line in out.splitlines() if "hint: " in line)
    assert hint.split("hint: ")[1][:2] in {"a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"}
    assert session.outcome == "quit"


def test_end_of_input_quits_without_saving(leftmost: str) -> None:
    saver = Saver()
    session, board, out = play(C4, leftmost, ["4"], on_save=saver)
    assert board.moves_string() == "41"
    assert session.outcome == "quit" and "quit at ply 2" in out
    assert saver.calls == []
    _, board, out = play(C4, None, [])
    assert board.ply == 0 and "quit at ply 0" in out


def test_save_without_a_saver_and_a_failing_saver() -> None:
    def broken(board: Board, finished: bool) -> str:
        raise OSError("disk full")

    _, _, out = play(C4, None, ["s", "q"])
    assert "saving is not available" in out
    _, _, out = play(C4, None, ["s", "q"], on_save=broken)
    assert "save failed: disk full" in out and "Traceback" not in out


def test_no_escape_codes_without_colour_and_some_with_it(leftmost: str) -> None:
    _, _, plain = play(C4, leftmost, ["4", "h", "q"])
    assert ESC not in plain and "\x1b" not in plain
    _, board, coloured = play(C4, leftmost, ["4", "q"], color=True)
    assert ESC in coloured
    assert render_board(board, color=False) == board.render()
    picture = render_board(board, color=True)
    assert "\x1b[7m" in picture  # the last move is highlighted
    assert picture.splitlines()[-1] == board.render().splitlines()[-1]  # labels untouched


def test_failing_bot_ends_the_game_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "crasher.py"
    path.write_text(textwrap.dedent("""
        from arena.bot import Bot

        class Crasher(Bot):
            def choose_move(self, board):
                raise RuntimeError("boom")
    """))
    session, board, out = play(C4, str(path), ["4", "4"])
    assert session.outcome == "bot failed" and board.moves_string() == "4"
    assert "game abandoned" in out and "Traceback" not in out


def test_bad_bot_spec_raises_before_any_output() -> None:
    with pytest.raises(ValueError, match="nosuchbot"):
        PlaySession(C4, "nosuchbot", input=script(), output=io.StringIO())


def test_bad_hint_bot_is_only_a_message() -> None:
    _, _, out = play(C4, None, ["h", "q"], hint_bot="nosuchbot")
    assert "no hint: nosuchbot failed" in out
    _, _, out = play(C4, None, ["h", "q"], hint_bot=None)
    assert "no hint bot" in out


# --- ReplaySession --------------------------------------------------------------------

GAME = parse_moves("4455447", C4)  # an unfinished record
INFO = [None, {"score": 12, "depth": 6}, None, None, None, None, {"nodes": 99}]
MS = [None, 3.5, 120.0, None, None, None, 7.25]
MARKS = [None, None, "?? blunder", None, None, None, "!"]


def replay(lines: list[str], **kwargs) -> tuple[ReplaySession, int, str]:
    out = io.StringIO()
    session = ReplaySession(
        C4, GAME, ("minimax:depth=6", "random"), INFO, MS, MARKS, input=script(*lines), output=out, **kwargs
    )
    return session, session.run(), out.getvalue()


def test_replay_steps_and_jumps() -> None:
    _session, ply, out = replay(["", "n", "p", "j 3", "7", "n", "99", "j x", "0", "p", "q", "n"])
    assert ply == 0
    assert "ply 0/7: start, X (minimax:depth=6) to move" in out
    assert "ply 2/7: O (random) played 4 in 3.5 ms (score 12, depth 6)" in out
    assert "ply 3/7: X (minimax:depth=6) played 5 in 120 ms  mark: ?? blunder" in out
    assert "ply 7/7: X (minimax:depth=6) played 7 in 7.2 ms (nodes 99)  mark: !" in out
    assert "already at the last ply (7)" in out
    assert "no ply 99" in out and "unknown command 'j x'" in out
    assert "already at the start" in out
    assert "end of the record" in out
    assert "7x6 connect 4: X minimax:depth=6 vs O random, 7 plies" in out
    assert ESC not in out
    assert Board.from_moves(GAME[:3], C4).render() in out


def test_replay_quits_at_end_of_input_and_shows_the_result() -> None:
    moves = parse_moves("1212121", C4)
    out = io.StringIO()
    session = ReplaySession(C4, moves, ("a", "b"), [], [], None, input=script("7"), output=out)
    assert session.run() == 7
    assert "game over: X wins" in out.getvalue()
    out = io.StringIO()
    ending = ReplaySession(C4, moves[:3], ("a", "b"), [], [], None, input=script(), output=out,
                           ending="0-1 forfeit: crashed", start=3)
    assert ending.run() == 3 and "end: 0-1 forfeit: crashed" in out.getvalue()


def test_replay_colour_and_bad_records() -> None:
    _, _, out = replay(["3", "q"], color=True)
    assert ESC in out
    with pytest.raises(ValueError):
        ReplaySession(C4, [3] * 7, ("a", "b"), [], [], None)
    with pytest.raises(ValueError):
        ReplaySession(C4, GAME, ("a", "b"), [], [], None, start=8)


def test_play_through_with_a_fake_sleep() -> None:
    slept: list[float] = []
    out = io.StringIO()
    session = ReplaySession(C4, GAME, ("a", "b"), INFO, MS, MARKS, input=script(), output=out)
    session.play_through(0.25, sleep=slept.append)
    text = out.getvalue()
    assert slept == [0.25] * len(GAME)
    positions = [Board.from_moves(GAME[:n], C4).render() for n in range(len(GAME) + 1)]
    offsets = [text.index(f"ply {n}/7") for n in range(len(GAME) + 1)]
    assert offsets == sorted(offsets)
    assert all(p in text for p in positions)
    assert session.ply == len(GAME)


# --- exchange -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "moves_text", "line"),
    [
        (C4, "4453", "7x6c4 4453"),
        (WIDE, "10,3,12,6", "12x6c4 10,3,12,6"),
        (GOMOKU, "h8i9g7", "15x15c5n h8i9g7"),
        (TIC_TAC_TOE, "b2a1", "3x3c3n b2a1"),
        (Rules(9, 9, 5), "", "9x9c5"),
    ],
)
def test_one_line_round_trip(rules: Rules, moves_text: str, line: str) -> None:
    moves = parse_moves(moves_text, rules)
    assert export_moves(rules, moves) == line
    game = import_game(line)
    assert (game.rules, game.moves) == (rules, moves)
    assert game.moves_string == moves_text
    assert parse_rules_prefix(rules_prefix(rules)) == rules
    assert import_game(export_json(rules, moves)).moves == moves


def test_bare_move_strings_mean_connect_four() -> None:
    game = import_game("  4453\n")
    assert game.rules == C4 and game.moves == [3, 3, 4, 2]
    assert game.board().moves_string() == "4453"
    assert import_game("10,3", rules=WIDE).moves == [9, 2]
    assert import_game("7X6C4 44").moves == [3, 3]


def test_json_round_trip() -> None:
    moves = parse_moves("1212121", C4)
    info = [{"score": 1}, None, None, None, None, None, {"score": 999, "pv": [1, 2]}]
    ms = [1.5, None, 2.0, 3.0, 4.0, 5.0, 6.0]
    text = export_json(C4, moves, ("minimax:depth=6", "random"), "1-0", "win", None, info, ms)
    assert "\n" not in text
    data = json.loads(text)
    assert data["rules"] == {"width": 7, "height": 6, "connect": 4, "gravity": True}
    assert data["moves"] == "1212121"
    assert data["plies"][0] == {"ply": 0, "move": "1", "ms": 1.5, "info": {"score": 1}}
    assert data["players"] == {"first": "minimax:depth=6", "second": "random"}
    assert (data["result"], data["termination"], data["reason"]) == ("1-0", "win", None)
    game = import_game(text)
    assert game.moves == moves and game.rules == C4
    assert game.players == ("minimax:depth=6", "random")
    assert (game.result, game.termination, game.reason) == ("1-0", "win", None)
    assert game.move_info == info and game.move_ms == ms
    gomoku = export_json(GOMOKU, parse_moves("h8i9", GOMOKU), ("a", "b"), "0-1", "forfeit", "crashed", indent=2)
    game = import_game(gomoku)
    assert game.rules == GOMOKU and (game.result, game.reason) == ("0-1", "crashed")
    assert game.move_ms == [None, None]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("junk 4453", "'junk'"),
        ("7x6 4453", "'7x6'"),
        ("50x6c4 44", "'50x6c4'"),
        ("7x6c4 4444444", "move 7 ('4')"),
        ("4458", "'8'"),
        ("3x3c3n a1b1a2b2a3c3", "move 6 ('c3')"),
        ("3x3c3n b2b2", "move 2 ('b2')"),
        ("{\"moves\": \"44\"", "bad JSON"),
        ("{\"moves\": \"4\", \"rules\": {\"width\": 99, \"height\": 6, \"connect\": 4}}", "99"),
        ("{\"moves\": 44}", "44"),
        ("{\"moves\": \"1212121\", \"result\": \"0-1\"}", "'0-1'"),
        ("{\"moves\": \"12\", \"result\": \"2-0\"}", "\"2-0\""),
        ("{\"moves\": \"44\", \"plies\": [{\"ply\": 0, \"move\": \"5\"}]}", "'44'"),
        ("", "empty"),
    ],
)
def test_bad_imports_name_the_value(text: str, named: str) -> None:
    with pytest.raises(GameFileError) as caught:
        import_game(text)
    message = str(caught.value)
    assert named in message and "\n" not in message
    assert isinstance(caught.value, ValueError)
