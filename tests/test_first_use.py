"""Small things a new user trips over (issue 13, item 16): each one line, or the right words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.bot import BotOptionError
from arena.errors import ArenaError
from arena.plugins import make_bot
from arena.text import plural
from arena.tournament.match import match_labels, match_specs, play_match
from bots.minimax import MinimaxBot


def assert_one_line_error(result, fragment: str) -> None:
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("depth", ["0", "-3"])
def test_minimax_refuses_a_depth_below_one_as_its_help_says(cli, depth: str) -> None:
    with pytest.raises(BotOptionError, match=f"depth={depth} must be at least 1"):
        MinimaxBot(depth=int(depth))
    with pytest.raises(ArenaError, match=f"depth={depth} must be at least 1"):
        make_bot(f"minimax:depth={depth}")
    assert_one_line_error(cli("match", f"minimax:depth={depth}", "random", "--games", "2"),
                          f"depth={depth} must be at least 1")


def test_minimax_depth_one_still_plays(cli) -> None:
    result = cli("match", "minimax:depth=1", "random", "--games", "2")
    assert result.exit_code == 0, result.output


def test_a_bot_can_play_itself_as_two_labelled_instances(cli) -> None:
    result = cli("match", "random", "random", "--games", "4", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["games"] == 4
    assert set(data["results"]) == {"random", "random#2"}
    for tally in data["results"].values():
        assert tally["wins"] + tally["draws"] + tally["losses"] == 4  # each instance played every game
    a, b = data["results"]["random"], data["results"]["random#2"]
    assert (a["wins"], a["draws"], a["losses"]) == (b["losses"], b["draws"], b["wins"])
    table = cli("match", "random", "random", "--games", "4")
    assert table.exit_code == 0, table.output
    assert "Elo difference (random - random#2)" in table.output


def test_a_self_match_tallies_each_instance_by_its_seat() -> None:
    assert match_labels("random", "greedy") == ("random", "greedy")
    assert match_labels("random", "random") == ("random", "random#2")
    result = play_match(match_specs("greedy", "greedy", 6, seed=3), ("greedy", "greedy"))
    tally = result.tally()
    assert tally["greedy"].games == tally["greedy#2"].games == 6
    assert tally["greedy"].wins == tally["greedy#2"].losses
    # A moves first in the even games: its wins there are the first player's wins.
    first_wins = sum(1 for r in result.records if int(r.spec.key[-1]) % 2 == 0 and r.winner == 0)
    first_wins += sum(1 for r in result.records if int(r.spec.key[-1]) % 2 == 1 and r.winner == 1)
    assert tally["greedy"].wins == first_wins


def test_did_you_mean_is_a_sentence_of_its_own(cli) -> None:
    result = cli("tournament", "rn")
    assert result.exit_code == 2
    assert "?;" not in result.output
    assert "Did you mean 'run'? See '" in result.output  # the program name is the runner's here


def test_an_unknown_command_without_a_suggestion_keeps_its_pointer_to_help(cli) -> None:
    result = cli("nonsense")
    assert result.exit_code == 2
    assert result.output.startswith("Error: No such command 'nonsense'; see '")


@pytest.mark.parametrize(
    "content", [b"\x00\x01\x02", b"7x6c4 44\x0053", b"\x7fELF\x02\x01\x01\x00", b"\x89PNG\r\n\x1a\n"]
)
def test_importing_a_binary_file_says_it_is_not_a_game_file(cli, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "game.bin"
    path.write_bytes(content)
    result = cli("import", path, "--db", tmp_path / "arena.db")
    if content.startswith(b"\x89"):  # not UTF-8 at all
        assert_one_line_error(result, "is not a text file")
    else:
        assert_one_line_error(result, "not a game file")
    assert not (tmp_path / "arena.db").exists()


def test_plural() -> None:
    assert [plural(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert plural(1, "ply", "plies") == "1 ply"
    assert plural(3, "ply", "plies") == "3 plies"


def test_one_game_is_one_game_not_one_games(cli, tmp_path: Path) -> None:
    result = cli("match", "random", "greedy", "--games", "1")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("1 game, ")
    game = tmp_path / "one.txt"
    game.write_text("7x6c4 4\n")
    imported = cli("import", game, "--db", tmp_path / "arena.db")
    assert imported.exit_code == 0, imported.output
    assert imported.output.rstrip().endswith(", 1 ply")
    shown = cli("show", "1", "--db", tmp_path / "arena.db")
    assert "1 ply;" in shown.output and "1 plies" not in shown.output
