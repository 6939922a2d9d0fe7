"""What a notebook shows: a board as an SVG picture (its stones, the last one, the
winning line), a game as the site's replay in one self-contained fragment (its
moves, the site's own replay.js, ids no other replay shares), and a match as a
table of its results, played by arena.play_match exactly as the referee plays its
specs."""

from __future__ import annotations

import json
import random
import re
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena
from arena.engine.game import Board, Rules, format_move
from arena.records import GameSpec, Termination
from arena.referee.referee import play_game
from arena.tournament.match import match_specs
from bots.greedy import GreedyBot
from bots.minimax import MinimaxBot
from tests.site_process import chromium, require_browser

SVG = "{http://www.w3.org/2000/svg}"
REPLAY_JS = (resources.files("arena") / "web" / "static" / "replay.js").read_text(encoding="utf-8")


def drawn(board: Board) -> ET.Element:
    return ET.fromstring(board._repr_svg_())  # raises on a picture that is not well-formed XML


def stones(svg: ET.Element) -> list[tuple[int, int, int]]:
    return [(int(c.get("data-col")), int(c.get("data-row")), int(c.get("data-player")))
            for c in svg.iter(f"{SVG}circle") if c.get("class") == "stone"]


def marked_line(svg: ET.Element) -> list[tuple[int, int]]:
    return sorted((int(c.get("data-col")), int(c.get("data-row")))
                  for c in svg.iter(f"{SVG}circle") if c.get("class") == "win")


def last_mark(svg: ET.Element) -> ET.Element:
    return next(c for c in svg.iter(f"{SVG}circle") if c.get("class") == "last")


# --- the board as a picture -------------------------------------------------------------


def test_a_connect_four_win_is_drawn_with_every_stone_the_last_and_the_line():
    board = Board.from_moves("4455667")  # X: 4 5 6 7 along the bottom
    svg = drawn(board)
    assert stones(svg) == [(3, 0, 0), (3, 1, 1), (4, 0, 0), (4, 1, 1), (5, 0, 0), (5, 1, 1), (6, 0, 0)]
    assert marked_line(svg) == [(3, 0), (4, 0), (5, 0), (6, 0)]
    last = last_mark(svg)
    assert last.get("visibility") is None and (last.get("cx"), last.get("cy")) == ("260", "220")


def test_a_board_without_gravity_is_drawn_with_its_cells_and_a_diagonal_line():
    rules = Rules(5, 5, 3, gravity=False)
    board = Board.from_moves("a1 a5 b2 e5 c3", rules)
    svg = drawn(board)
    assert "cells" in svg.get("class").split()
    assert len([r for r in svg.iter(f"{SVG}rect") if r.get("class") == "square"]) == 25
    assert sorted(stones(svg)) == [(0, 0, 0), (0, 4, 1), (1, 1, 0), (2, 2, 0), (4, 4, 1)]
    assert marked_line(svg) == [(0, 0), (1, 1), (2, 2)]
    assert [t.text for t in svg.iter(f"{SVG}text")] == ["a", "b", "c", "d", "e", "1", "2", "3", "4", "5"]


def test_an_open_game_a_draw_and_the_empty_board_mark_no_line():
    assert marked_line(drawn(Board.from_moves("4455"))) == []
    empty = drawn(Board())
    assert stones(empty) == [] and last_mark(empty).get("visibility") == "hidden"
    draw = Board.from_moves("a1 b1 c1 b2 a2 a3 c2 c3 b3", Rules(3, 3, 3, gravity=False))
    assert draw.is_draw() and marked_line(drawn(draw)) == []


def test_count_scoring_marks_no_line_though_it_has_a_winner():
    rules = Rules(4, 3, 3, scoring="count")
    board = Board(rules)
    rng = random.Random(5)
    while not board.is_over():
        board.play(rng.choice(board.legal_moves()))
    assert board.winning_line() == [] and marked_line(drawn(board)) == []


def test_a_large_board_labels_every_fifth_line_and_scales_to_a_notebook():
    board = Board.from_moves("a1 t20", Rules(40, 40, 5, gravity=False))
    svg = drawn(board)
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert labels[:3] == ["a", "e", "j"] and "40" in labels and "2" not in labels
    assert float(svg.get("width")) <= 420


def test_a_line_of_more_than_connect_and_two_lines_at_once_are_marked_whole():
    rules = Rules(7, 7, 3, gravity=False)
    # X: a1 b1, d1 e1, then c1 joins them into five; O plays far away.
    board = Board.from_moves("a1 a7 b1 b7 d1 d7 e1 g4 c1", rules)
    assert marked_line(drawn(board)) == [(c, 0) for c in range(5)]
    # X: c2 c3 (up) and d1 e1 (across), then c1 makes both lines.
    board = Board.from_moves("c2 a7 c3 b7 d1 g7 e1 g5 c1", rules)
    assert marked_line(drawn(board)) == [(2, 0), (2, 1), (2, 2), (3, 0), (4, 0)]


@st.composite
def finished_games(draw: st.DrawFn) -> Board:
    width, height = draw(st.integers(3, 9)), draw(st.integers(3, 9))
    rules = Rules(width, height, draw(st.integers(3, min(5, max(width, height)))), gravity=draw(st.booleans()))
    board = Board(rules)
    rng = random.Random(draw(st.integers(0, 2**32)))
    while not board.is_over():
        board.play(rng.choice(board.legal_moves()))
    return board


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=finished_games())
def test_every_finished_game_draws_its_stones_and_marks_the_winners_line(board):
    svg = drawn(board)
    assert sorted(stones(svg)) == sorted((c, r, board.cell(c, r)) for c in range(board.rules.width)
                                         for r in range(board.rules.height) if board.cell(c, r) is not None)
    line = marked_line(svg)
    if board.winner is None:
        assert line == []
    else:
        assert len(line) >= board.rules.connect and board.last_cell() in line
        assert {board.cell(c, r) for c, r in line} == {board.winner}
        unmarked = Board.from_moves(board.history[:-1], board.rules)  # the line is the last stone's own
        assert unmarked.winning_line() == []


# --- a game as the site's replay ---------------------------------------------------------


class Ids(HTMLParser):
    """The ids of the page itself (a template's content is no part of the page until used)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.in_template = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_template += tag == "template"
        if not self.in_template:
            self.ids += [value or "" for name, value in attrs if name == "id"]

    def handle_endtag(self, tag: str) -> None:
        self.in_template -= tag == "template"


def page_ids(html: str) -> list[str]:
    parser = Ids()
    parser.feed(html)
    return parser.ids


def a_game(rules: Rules | None = None, first: str = "greedy", second: str = "random", seed: int = 3):
    return play_game(match_specs(first, second, 1, seed, rules)[0])


def replay_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)[1])


def test_a_replay_holds_every_move_and_the_sites_own_script():
    game = a_game()
    html = game._repr_html_()
    names = [format_move(move, game.spec.rules) for move in game.move_list()]
    data = replay_data(html)
    assert data["moves"] == names and data["ply"] == game.plies
    assert data["cells"] == [list(cell) for cell in game.spec.rules.landings(game.move_list())]
    assert re.findall(r'<tr data-ply="\d+" data-move="([^"]*)"', html) == names
    assert REPLAY_JS in html  # read from the package, not a copy of it


def test_a_replay_is_self_contained():
    html = a_game(Rules(6, 6, 4, gravity=False))._repr_html_()
    assert not re.search(r"<(link|iframe|img)\b|\bsrc=|@import|url\((?!#)", html, re.I)
    assert re.findall(r'href="([^"]*)"', html) == ["#"] * len(re.findall(r"data-goto=", html))
    assert set(re.findall(r"https?://[^\s\"')]+", html)) <= {"http://www.w3.org/2000/svg"}


def test_replays_side_by_side_share_no_id():
    game = a_game()
    page = game._repr_html_() + game._repr_html_() + arena.Board()._repr_svg_()
    ids = page_ids(page)
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(re.fullmatch(r"arena-replay-[0-9a-f]{32}", i) for i in ids)
    assert 'id="' not in arena.Board.from_moves("4455667")._repr_svg_()


def test_what_a_bot_chose_is_escaped_in_a_replay():
    hostile = "<script>alert(1)</script>\x1b[31m"
    spec = GameSpec(key="k", rules=Rules(), first=hostile, second="random", pairing="p")
    game = play_game(spec, (GreedyBot(), None))
    game.moves[-1] = game.moves[-1]._replace(info={"score": hostile, "note": hostile})
    html = game._repr_html_()
    assert "<script>alert" not in html and "\x1b" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m" in html


def test_a_stored_game_shows_as_its_replay(tmp_path):
    arena.run_tournament(bots=["greedy", "random"], games=2, workers=1, name="nb", db=tmp_path / "a.db")
    with arena.open_store(tmp_path / "a.db", read_only=True) as store:
        stored = store.games.all()[0]
    html = stored._repr_html_()
    rules = Rules()
    assert replay_data(html)["moves"] == [format_move(m, rules) for m in arena.Board.from_moves(stored.moves).history]
    assert f"{stored.result} ({stored.termination})" in html


def test_two_replays_on_one_page_step_apart_in_a_browser(tmp_path):
    require_browser()
    games = [a_game(), a_game(Rules(5, 5, 4, gravity=False), seed=1)]
    page = tmp_path / "page.html"
    page.write_text("<!doctype html><meta charset=utf-8><body>" + "".join(g._repr_html_() for g in games),
                    encoding="utf-8")
    driver = chromium()
    shown = ("return Array.from(document.querySelectorAll('.arena-replay'), "
             "h => h.shadowRoot.querySelectorAll('.stone').length)")
    try:
        driver.get(page.as_uri())
        assert driver.execute_script(shown) == [g.plies for g in games]
        driver.execute_script("document.querySelectorAll('.arena-replay')[0].shadowRoot"
                              ".querySelector('[data-step=first]').click()")
        driver.execute_script("document.querySelectorAll('.arena-replay')[1].shadowRoot"
                              ".querySelector('[data-step=back]').click()")
        deadline = time.monotonic() + 10
        while driver.execute_script(shown) != [0, games[1].plies - 1] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert driver.execute_script(shown) == [0, games[1].plies - 1]
        caption = driver.execute_script("return document.querySelectorAll('.arena-replay')[1].shadowRoot"
                                        ".getElementById('board-caption').textContent")
        assert caption.startswith(f"After {games[1].plies - 1} of {games[1].plies} plies")
        assert driver.current_url == page.as_uri()  # a replay keeps no ?ply= in the notebook's address
    finally:
        driver.quit()


# --- a match in one call --------------------------------------------------------------------


def test_play_match_plays_what_the_referee_plays_from_the_same_seed():
    result = arena.play_match("greedy", "random", games=6, seed=11)
    alone = [play_game(spec) for spec in match_specs("greedy", "random", 6, 11)]
    assert [(g.move_list(), g.outcome) for g in result.games] == [(g.move_list(), g.outcome) for g in alone]
    as_class = arena.play_match(GreedyBot, "random", games=6, seed=11)
    assert [(g.move_list(), g.outcome) for g in as_class.games] == [(g.move_list(), g.outcome) for g in alone]
    assert as_class.labels == ("greedy", "random")


def test_play_match_counts_the_score_and_gives_the_elo_difference():
    from arena.ratings.sprt import elo_with_interval

    result = arena.play_match(MinimaxBot(depth=2), "random", games=6, seed=2, width=5, height=4, connect=3)
    assert result.labels == ("minimax:depth=2", "random")
    assert {g.spec.rules for g in result.games} == {Rules(5, 4, 3)}
    assert result.wins + result.draws + result.losses == 6
    assert result.score == (result.wins + result.draws / 2, result.losses + result.draws / 2)
    assert tuple(result.elo_difference()) == elo_with_interval(result.wins, result.draws, result.losses)
    assert len(result.games_lost("random")) == result.wins and len(result.games_lost()) == result.losses
    html = result._repr_html_()
    assert "<td>minimax:depth=2</td><td>6</td>" in html and "Elo difference (minimax:depth=2 - random)" in html


class Crasher(arena.Bot):
    """Raises on its first move."""

    def choose_move(self, board):
        raise RuntimeError("<b>no</b>")


def test_play_match_tells_forfeits_with_their_reasons():
    result = arena.play_match(Crasher, "random", games=4)
    assert result.losses == 4 and result.score == (0, 4)
    [(reason, count)] = result.forfeits["crasher"].items()
    assert count == 4 and "RuntimeError" in reason and result.forfeits["random"] == {}
    html = result._repr_html_()
    assert "crasher forfeited 4 games: 4 x " in html and "<b>no</b>" not in html


def test_one_bot_object_plays_itself_as_two():
    bot = MinimaxBot(depth=1)
    result = arena.play_match(bot, bot, games=2)
    assert result.labels == ("minimax:depth=1", "minimax:depth=1#2") and sum(result.score) == 2


@pytest.mark.parametrize(("call", "message"), [
    (lambda: arena.play_match("minimx", "random"), "unknown bot 'minimx'"),
    (lambda: arena.play_match(42, "random"), "not a bot: 42"),
    (lambda: arena.play_match("random", "random", games=0), "games must be at least 1, got 0"),
    (lambda: arena.play_match("random", "random", width=2), "width must be between 3 and 40, got 2"),
    (lambda: arena.play_match("random", "random", bank_seconds=2), "bank_seconds=2 needs move_seconds"),
])
def test_play_match_refuses_a_mistake_in_one_line(call, message):
    with pytest.raises(arena.ArenaError, match=re.escape(message)) as caught:
        call()
    assert "\n" not in str(caught.value)


def test_play_match_takes_rules_or_their_fields_not_both():
    with pytest.raises(TypeError, match="give rules or width"):
        arena.play_match("random", "random", rules=Rules(), width=5)


def test_analyse_marks_the_move_that_let_a_win_go():
    rules = Rules(4, 4, 3)
    # X could win at once in column 3 (ply 4 is X's third stone) and plays column 4 instead.
    spec = GameSpec(key="k", rules=rules, first="a", second="b", pairing="p", opening=(0, 0, 1, 1, 3))
    game = play_game(spec, (GreedyBot(), GreedyBot()))
    marks = {p.ply: p.mark for p in arena.analyse(game, budget=5)}
    assert marks[4] == "lost win" and game.termination == Termination.WIN
