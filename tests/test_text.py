"""One home for the small things every room did its own way: clipping text for
a message, hashing a bot's code, the cell a move lands on."""

from __future__ import annotations

import hashlib

from arena.bot import describe_non_move
from arena.engine.game import Board, Rules
from arena.players.plugins import file_identity
from arena.text import clip, content_hash


def test_clip_keeps_short_text_and_cuts_long_text_to_the_limit_with_dots():
    assert clip("x" * 60) == "x" * 60
    assert clip("x" * 61) == "x" * 57 + "..."
    assert clip("abcdef", 5) == "ab..." and len(clip("y" * 500, 200)) == 200
    assert describe_non_move("z" * 100) == f"{clip(repr('z' * 100), 60)} (str)"


def test_a_bots_code_hashes_the_same_as_text_and_as_the_file_it_came_from(tmp_path):
    source = "from arena.bot import Bot  # é\n"
    path = tmp_path / "bot.py"
    path.write_text(source, encoding="utf-8")
    assert content_hash(source) == content_hash(source.encode()) == hashlib.sha256(source.encode()).hexdigest()
    assert file_identity(str(path))[1] == content_hash(source)


def test_the_landing_bit_is_where_play_puts_the_stone():
    for rules, moves in ((Rules(), [1, 1, 2, 1, 3]), (Rules(4, 4, 3, gravity=False), [1, 5, 2, 14])):
        board = Board(rules)
        for move in moves:
            bit = board.landing_bit(move)
            before = board.occupied
            column, row = board.move_cell(move)
            board.play(move)
            assert (board.occupied ^ before) == bit
            assert board.last_cell() == (column, row)
