"""Variants live in the engine: what differs between them (where a stone lands, the
notation, the score, the rules' code, what a picture of the board needs) is asked of
``Rules`` and ``Board``, and nothing outside the engine, the option parsing and the
bots whose play differs by variant reads ``gravity`` or ``scoring`` itself.

The properties play random legal games in every variant (stones that fall or stay,
line or count scoring) and check the engine's answers against tests/reference.py,
which knows the rules on its own, and against the board itself.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.game import (
    RULES_FIELDS,
    Board,
    IllegalMoveError,
    Rules,
    RulesError,
    column_label,
    format_move,
    format_moves,
    parse_move,
    parse_moves,
)

try:
    from tests.reference import ReferenceGame
except ImportError:  # tests/ is on sys.path itself (pytest's default rootdir import)
    from reference import ReferenceGame
from tests.site_process import ARENA, chromium, require_browser, serving

ROOT = Path(__file__).resolve().parents[1]
PROPERTY = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def any_rules(draw, max_side: int = 9) -> Rules:
    width = draw(st.integers(3, max_side))
    height = draw(st.integers(3, max_side))
    connect = draw(st.integers(3, min(5, max(width, height))))
    return Rules(width, height, connect, gravity=draw(st.booleans()), scoring=draw(st.sampled_from(["line", "count"])))


def random_moves(data, rules: Rules) -> list[int]:
    """A random legal game (to its end half of the time), as its moves."""
    board = Board(rules)
    count = data.draw(st.just(rules.cells) | st.integers(0, rules.cells), label="plies")
    while board.ply < count and not board.is_over():
        board.play(data.draw(st.sampled_from(board.legal_moves()), label="move"))
    return board.history


# --- where stones land ------------------------------------------------------------------


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_the_landing_cells_the_rules_report_are_the_cells_the_board_fills(rules, data):
    moves = random_moves(data, rules)
    landings = rules.landings(moves)
    assert len(landings) == len(moves)
    board, reference = Board(rules), ReferenceGame.from_rules(rules)
    for move, (column, row) in zip(moves, landings):
        assert reference.target(move) == (column, row)  # the rules as the reference knows them
        assert board.move_cell(move) == (column, row)
        before = board.occupied
        board.play(move)
        reference.play(move)
        filled = board.occupied ^ before
        assert filled == 1 << (column * (rules.height + 1) + row)  # exactly that cell, one stone
        assert board.cell(column, row) == (board.ply - 1) % 2
        assert board.last_cell() == (column, row)


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_a_stone_falls_from_above_the_board_or_appears_in_its_cell(rules, data):
    moves = random_moves(data, rules)
    drawing = rules.drawing
    board = Board(rules)
    for move, (column, row) in zip(moves, rules.landings(moves)):
        fall = drawing.fall(row)
        if rules.moves_are_columns:
            # It comes in above the top row and falls past the empty cells onto the stones below.
            assert fall == rules.height - row >= 1
            assert move == column
            assert all(board.cell(column, r) is not None for r in range(row))
        else:
            assert fall == 0
            assert board.cell_move(column, row) == move
        board.play(move)


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_landings_check_every_move(rules, data):
    moves = random_moves(data, rules)
    board = Board.from_moves(moves, rules)
    illegal = [m for m in range(-1, rules.move_count + 1) if not board.is_legal(m)]
    for move in illegal:
        with pytest.raises(IllegalMoveError):
            rules.landings([*moves, move])


# --- what a move is called, and why it cannot be played ---------------------------------------


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_a_filled_place_is_named_by_the_rules(rules, data):
    board = Board.from_moves(random_moves(data, rules), rules)
    if board.winner is not None:
        return  # every move is illegal for that reason instead
    for move in range(rules.move_count):
        if board.is_legal(move):
            assert board.illegal_cause(move) == ""
            continue
        assert board.illegal_cause(move) == rules.filled_text()
        noun, verb = rules.filled_text().split(" ", 1)
        assert rules.filled_text(move) == f"{noun} {format_move(move, rules)} {verb}"


def test_filled_places_in_words():
    assert Rules().filled_text() == "column is full"
    assert Rules().filled_text(3) == "column 4 is full"
    assert Rules(3, 3, 3, gravity=False).filled_text() == "cell is taken"
    assert Rules(3, 3, 3, gravity=False).filled_text(4) == "cell b2 is taken"


@PROPERTY
@given(rules=any_rules(max_side=40), data=st.data())
def test_every_move_string_could_be_moves(rules, data):
    text = format_moves(random_moves(data, rules) if rules.cells <= 100 else [], rules)
    assert rules.could_be_moves(text)
    assert rules.could_be_moves(", ".join(format_move(m, rules) for m in range(rules.move_count)))


def test_a_letter_cannot_be_a_column_number():
    assert not Rules().could_be_moves("4a")
    assert not Rules(12, 6, 4).could_be_moves("10,x")
    assert Rules().could_be_moves("10,3")
    assert Rules(3, 3, 3, gravity=False).could_be_moves("zz!")  # only parsing tells


@given(rules=any_rules(max_side=40))
def test_the_labels_of_a_drawing_name_the_moves(rules):
    drawing = rules.drawing
    assert drawing.column_labels == tuple(column_label(c, rules) for c in range(rules.width))
    if rules.moves_are_columns:
        assert drawing.row_labels == ()
        assert [parse_move(label, rules) for label in drawing.column_labels] == list(range(rules.width))
    else:
        assert len(drawing.row_labels) == rules.height
        for column, label in enumerate(drawing.column_labels):
            for row, row_label in enumerate(drawing.row_labels):
                assert parse_move(label + row_label, rules) == column * rules.height + row
    assert drawing.style in ("gravity", "cells")
    assert drawing.face == (drawing.style == "gravity")


# --- the rules' code ------------------------------------------------------------------------


@given(rules=any_rules(max_side=40))
def test_the_code_of_the_rules_reads_back(rules):
    assert Rules.from_code(rules.code) == rules
    assert Rules.from_code(rules.code.upper()) == rules


@pytest.mark.parametrize(("rules", "code"), [
    (Rules(), "7x6c4"), (Rules(15, 15, 5, gravity=False), "15x15c5n"), (Rules(4, 4, 3, scoring="count"), "4x4c3w"),
    (Rules(4, 4, 3, gravity=False, scoring="count"), "4x4c3nw"), (Rules(12, 6, 4), "12x6c4"),
])
def test_codes(rules, code):
    assert rules.code == code


@pytest.mark.parametrize("text", ["7x6", "7x6c4x", "4a", "", "7x6c4wn"])
def test_what_is_no_code_says_what_one_is(text):
    with pytest.raises(RulesError, match="expected WIDTHxHEIGHTcCONNECT"):
        Rules.from_code(text)


def test_a_code_of_impossible_rules_says_why():
    with pytest.raises(RulesError, match="width must be between 3 and 40, got 41"):
        Rules.from_code("41x6c4")


def test_the_fields_of_the_rules_are_what_as_dict_may_hold():
    assert RULES_FIELDS == ("width", "height", "connect", "gravity", "scoring")
    assert set(Rules(scoring="count").as_dict()) == set(RULES_FIELDS)


# --- the score --------------------------------------------------------------------------------


@PROPERTY
@given(rules=any_rules(), data=st.data())
def test_the_score_in_words_is_the_window_count_where_windows_are_counted(rules, data):
    moves = random_moves(data, rules)
    board = Board.from_moves(moves, rules)
    text = board.score_text()
    if rules.scoring == "line":
        assert text is None
        return
    reference = ReferenceGame.from_rules(rules)
    for move in moves:
        reference.play(move)
    first, second = reference.window_count(0), reference.window_count(1)
    assert text == f"Windows of {rules.connect}: X {first}, O {second}"
    if board.is_full():
        assert board.winner == (None if first == second else 0 if first > second else 1)


# --- nothing else asks which variant is played -----------------------------------------------

#: The modules that read ``gravity``, ``scoring`` or ``counts_windows`` of the rules:
#: the engine, and the built-in bots whose play differs by variant (their searches
#: keep their own bitboard tricks for stones that fall).
READS_THE_VARIANT = {
    "arena/engine/game.py",
    "bots/mcts.py", "bots/mcts_fast.py", "bots/minimax.py", "bots/neighbour.py", "bots/opening_book.py",
    "bots/solver.py", "bots/solver_fast.py", "bots/kernel_c4.py", "bots/kernel_source.py",
}
#: The option and configuration parsing: it makes rules from the flags, keys and
#: keyword arguments that name the variant (``Rules(gravity=...)``, ``"rules.gravity"``,
#: ``arena.play_match(..., gravity=False)``), and reads none back.
PARSES_THE_VARIANT = {"arena/cli/main.py", "arena/cli/tournament.py", "arena/tournament/config.py", "arena/api.py"}
#: The protocol's variants: a program bot declares in these words which games it plays
#: (docs/protocol.md, hello); the arena matches a game's rules against them, and the
#: conformance suite picks the games it plays from them.
DECLARES_THE_VARIANT = {"arena/protocol/handshake.py", "arena/entry/conformance.py"}
VARIANT_ATTRIBUTES = {"gravity", "scoring", "counts_windows"}
VARIANT_NAME = re.compile(r"(?:\w+\.)*(gravity|scoring|counts_windows)")
#: Words the browser's scripts and the templates never hold: the server hands them
#: cells, falls and labels instead.
PAGE_WORDS = re.compile(r"\b(gravity|scoring|counts_windows|moves_are_columns)\b", re.IGNORECASE)


def python_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for folder in ("arena", "bots") for p in (ROOT / folder).rglob("*.py"))


def variant_questions(source: str) -> list[tuple[int, str]]:
    """Where ``source`` asks which variant is played: ``x.gravity`` (read or tested),
    a keyword ``gravity=``, a string ``"gravity"`` or ``"rules.scoring"`` (a key, a
    ``getattr``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in VARIANT_ATTRIBUTES:
            # The default of a flag left unset (``defaults = Rules()``) is read, not asked.
            of_defaults = isinstance(node.value, ast.Name) and node.value.id == "defaults"
            found.append((node.lineno, f".{node.attr}" + (" of defaults" if of_defaults else "")))
        elif isinstance(node, ast.keyword) and node.arg in VARIANT_ATTRIBUTES:
            found.append((node.value.lineno, f"{node.arg}="))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIANT_NAME.fullmatch(node.value):
            found.append((node.lineno, repr(node.value)))
    return found


@pytest.mark.parametrize("path", python_files())
def test_only_the_engine_the_option_parsing_and_some_bots_ask_which_variant_is_played(path):
    if path in READS_THE_VARIANT or path in PARSES_THE_VARIANT:  # the option parsing: the test below
        return
    if path in DECLARES_THE_VARIANT:
        return
    found = variant_questions((ROOT / path).read_text(encoding="utf-8"))
    assert not found, (
        f"{path} asks which variant is played at " + ", ".join(f"line {line} ({what})" for line, what in found)
        + ": ask the rules instead (Rules.moves_are_columns, drawing, code, filled_text, Board.score_text...), "
        "or add what the question needs to arena/engine/game.py"
    )


@pytest.mark.parametrize("path", sorted(PARSES_THE_VARIANT))
def test_the_option_parsing_reads_no_variant_back(path):
    """It may name the variant to make rules (a keyword, a key), never read one back."""
    found = [(line, what) for line, what in variant_questions((ROOT / path).read_text(encoding="utf-8"))
             if what.startswith(".") and not what.endswith(" of defaults")]
    assert not found, f"{path} reads the variant at {found}: ask the rules instead"


def test_the_check_finds_a_question_where_one_is_added():
    assert variant_questions("if rules.gravity:\n    pass\n") == [(1, ".gravity")]
    assert variant_questions("x = board.rules.counts_windows") == [(1, ".counts_windows")]
    assert variant_questions("x = getattr(rules, 'scoring')") == [(1, "'scoring'")]
    assert variant_questions("r = Rules(7, 6, 4, gravity=False)") == [(1, "gravity=")]
    assert variant_questions("d = {'rules.gravity': True}") == [(1, "'rules.gravity'")]
    assert variant_questions('"""Stones stay where placed without gravity."""') == []
    assert variant_questions("if rules.moves_are_columns:\n    pass\n") == []


def page_files() -> list[str]:
    web = ROOT / "arena" / "web"
    return sorted(str(p.relative_to(ROOT)) for p in [*web.glob("static/*.js"), *web.glob("templates/*.html")])


@pytest.mark.parametrize("path", page_files())
def test_the_pages_and_their_scripts_never_ask_which_variant_is_played(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group()) for m in PAGE_WORDS.finditer(text)]
    assert not found, f"{path} names the variant at {found}: the server should hand the page what it needs"


def test_the_lists_name_files_that_exist():
    assert "arena/web/static/replay.js" in page_files() and "arena/web/templates/game.html" in page_files()
    missing = sorted(path for path in READS_THE_VARIANT | PARSES_THE_VARIANT if not (ROOT / path).is_file())
    assert not missing, f"moved or removed: {missing}; update the lists of this test"


def test_moves_and_their_landings_read_alike_in_every_variant():
    """The same game written, read and drawn by the rules alone."""
    for rules, text, cells in [
        (Rules(), "4453", [(3, 0), (3, 1), (4, 0), (2, 0)]),
        (Rules(3, 3, 3, gravity=False), "b2a1c3", [(1, 1), (0, 0), (2, 2)]),
        (Rules(4, 4, 3, scoring="count"), "1212", [(0, 0), (1, 0), (0, 1), (1, 1)]),
    ]:
        moves = parse_moves(text, rules)
        assert rules.landings(moves) == cells
        assert format_moves(moves, rules) == text


# --- the replay in a browser: the stone's way in comes from the server's data ----------------

#: Games whose stones come in differently: (one-line game, transforms of the first
#: stone's animation). 7x6: the first stone falls 6 rows of 40 units; 3x3 without
#: gravity: it appears in its cell.
REPLAYED = [("7x6c4 4453", ["translateY(-240px)", "translateY(0px)", "translateY(-4.8px)", "translateY(0px)"]),
            ("3x3c3n b2a1c3", ["scale(0.3)", "scale(1)"])]


@pytest.fixture(scope="module")
def replay_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    require_browser()
    folder = tmp_path_factory.mktemp("variants")
    db = folder / "league.db"
    for line, _ in REPLAYED:
        (folder / "game.txt").write_text(line)
        subprocess.run([ARENA, "import", str(folder / "game.txt"), "--db", str(db)], check=True, capture_output=True)
    browser = chromium()
    try:
        with serving(db) as base:
            yield browser, base
    finally:
        browser.quit()


@pytest.mark.parametrize(("game_id", "expected"), [(n, transforms) for n, (_, transforms) in enumerate(REPLAYED, 1)])
def test_a_replayed_stone_falls_or_appears_as_the_server_says(replay_site, game_id, expected):
    driver, base = replay_site
    driver.get(f"{base}/games/{game_id}?ply=0")
    transforms = driver.execute_script(
        "document.querySelector('[data-step=forward]').click();"  # one step forward animates its stone
        "return document.getAnimations().flatMap((a) => a.effect.getKeyframes().map((k) => k.transform));")
    assert [t.replace(" ", "") for t in transforms] == [t.replace(" ", "") for t in expected]
