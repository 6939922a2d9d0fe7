"""``arena ratings FILE``: games played elsewhere, from a CSV, rated like stored ones."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.ratings.results_file import MAX_LINE_BYTES, file_standings, read_games

from .test_cli import ok, user_error

GAMES = "first,second,result\nalice,bob,1-0\nbob,carol,1/2-1/2\ncarol,alice,0-1\nalice,carol,1/2-1/2\n"


def write(tmp_path: Path, content: str | bytes, name: str = "games.csv") -> str:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return name


def standings_json(output: str) -> list[dict[str, object]]:
    rows = json.loads(output)["standings"]
    assert isinstance(rows, list)
    return rows


# --- unhappy paths: one line naming the file, the line, the column and the value -----------------

BAD_FILES = {
    "empty": (b"", ["games.csv is empty", "first,second,result"]),
    "only blank lines": (b"\n\r\n\n", ["games.csv is empty"]),
    "only the header": (b"first,second,result\n", ["games.csv has no games"]),
    "no header": (b"alice,bob,1-0\n", ["games.csv, line 1", "no header", '"alice,bob,1-0"']),
    "a column missing": (b"first,result\nalice,1-0\n", ["games.csv, line 1", "no 'second' column", "'first'"]),
    "a column twice": (b"first,second,result,first\n", ["line 1", "'first' twice"]),
    "semicolons": (b"first;second;result\nalice;bob;1-0\n", ["line 1", "separate the columns with commas"]),
    "an empty bot name": (b"first,second,result\nalice,bob,1-0\n ,bob,0-1\n", ["line 3, column first", "no bot name"]),
    "a bot playing itself": (b"first,second,result\nalice,alice,1-0\n", ["line 2", '"alice" plays itself']),
    "a bad result": (b"first,second,result\nalice,bob,2-0\n", ["line 2, column result", '"2-0" is not a result']),
    "no result": (b"first,second,result\nalice,bob,\n", ["line 2, column result", "no result"]),
    "an unfinished game": (b"first,second,result\nalice,bob,*\n", ["line 2, column result", "unfinished"]),
    "a Latin-1 name": (b"first,second,result\nalice,b\xe9a,1-0\n",
                       ["games.csv, line 2, column second", "0xe9 is not UTF-8"]),
    "a Latin-1 header": (b"fir\xe9st,second,result\n", ["line 1, column 1", "0xe9 is not UTF-8"]),
    "UTF-16": ("first,second,result\nalice,bob,1-0\n".encode("utf-16"), ["games.csv is UTF-16", "save it as UTF-8"]),
    "too many cells": (b"first,second,result\nalice,bob,jr,1-0\n", ["line 2", "4 cells but the header names 3"]),
    "too few cells": (b"first,second,result\nalice,bob\n", ["line 2, column result", "missing"]),
    "an open quote": (b'first,second,result\n"alice,bob,1-0\nbob,carol,0-1\n', ["games.csv, line 2", "not CSV"]),
    "the header again": (b"first,second,result\nalice,bob,1-0\nFirst,second,result\n", ["line 3", "header again"]),
    "an endless line": (b"first,second,result\n" + b"a" * (MAX_LINE_BYTES + 10), ["line 2", "longer than"]),
}


@pytest.mark.parametrize(("content", "fragments"), BAD_FILES.values(), ids=BAD_FILES)
def test_a_bad_file_is_one_line_naming_where_and_what(cli, tmp_path, content, fragments):
    user_error(cli("ratings", write(tmp_path, content)), *fragments)


def test_an_anchor_bot_not_in_the_file_is_one_line(cli, tmp_path):
    user_error(cli("ratings", write(tmp_path, GAMES), "--anchor", "dave=0"), "dave", "played no game")


def test_a_missing_file_is_one_line(cli):
    user_error(cli("ratings", "nowhere.csv"), "nowhere.csv")


# --- what a file may look like ------------------------------------------------------------


def test_bom_crlf_blank_lines_spaced_headers_extra_columns_and_draw_spellings_read_as_plain_games(cli, tmp_path):
    plain = ok(cli("ratings", write(tmp_path, GAMES, "plain.csv"), "--format", "json"))
    spreadsheet = (
        "\ufeff First , SECOND,Round,Result,,\r\n"
        "\r\n"
        "alice,bob,1,1-0,,\r\n"
        ",,,,,\r\n"
        " bob ,carol,1,½-½,,\r\n"
        "carol,alice,2,0-1\r\n"
        "alice,carol,2,=,,\r\n"
        "\r\n"
    )
    rated = ok(cli("ratings", write(tmp_path, spreadsheet), "--format", "json"))
    assert standings_json(rated) == standings_json(plain)
    assert json.loads(rated)["selection"] == {"file": "games.csv", "games": 4}


def test_every_draw_spelling_is_a_draw():
    spellings = ["1/2-1/2", "½-½", "0.5-0.5", "="]
    text = "first,second,result\n" + "".join(f"a,b,{s}\n" for s in spellings)
    assert [g.score for g in read_games(io.BytesIO(text.encode()), "f")] == [0.5] * len(spellings)


def test_the_opening_is_kept_with_each_game():
    text = "first,second,result,opening\na,b,1-0,44\nb,a,0-1,44\na,b,1-0,\n"
    games = list(read_games(io.BytesIO(text.encode()), "f"))
    assert [(g.line, g.first, g.second, g.score, g.opening) for g in games] == [
        (2, "a", "b", 1.0, "44"), (3, "b", "a", 0.0, "44"), (4, "a", "b", 1.0, None),
    ]
    assert all(g.opening is None for g in read_games(io.BytesIO(GAMES.encode()), "f"))


def test_games_come_from_stdin(tmp_path):
    result = CliRunner().invoke(main, ["ratings", "-", "--format", "csv"], input=GAMES.encode())
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("Ratings from stdin: 4 games, 3 bots")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["bot"] for row in rows] == ["alice", "carol", "bob"]
    assert {row["forfeits"] for row in rows} == {"0"}


class GeneratedGames(io.RawIOBase):
    """A results file of ``count`` games made up as it is read, never held whole."""

    def __init__(self, count: int) -> None:
        self.lines = (f"bot{i % 5},bot{(i + 1 + i // 5 % 4) % 5},{('1-0', '0-1', '=')[i % 3]}\n"
                      for i in range(count))
        self.pending = b"first,second,result\n"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while len(self.pending) < len(buffer):
            line = next(self.lines, None)
            if line is None:
                break
            self.pending += line.encode()
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def peak_memory_rating(count: int) -> int:
    stream = io.BufferedReader(GeneratedGames(count))
    tracemalloc.start()
    try:
        rated = file_standings(stream, "big.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rated.games == count
    return peak


def test_memory_does_not_grow_with_the_number_of_games():
    small, large = peak_memory_rating(5_000), peak_memory_rating(50_000)
    # Ten times the games: holding them (a few hundred bytes each) would add megabytes.
    assert large < small + 200_000, (small, large)


# --- the same games rated from a file and from the database ---------------------------------


def test_a_file_of_stored_games_rates_exactly_as_their_standings(cli, tmp_path):
    ok(cli("tournament", "run", "--bots", "random,neighbour,greedy,blocker", "--games", "4", "--name", "t",
           "--db", "league.db", "--workers", "1", "--openings", "2"))
    stored = json.loads(ok(cli("games", "--db", "league.db", "--limit", "1000", "--json")))
    assert len(stored) == 24
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["first", "second", "result", "opening", "termination"])
    # In game-key order, the order the standings' incremental Elo takes them in.
    for game in sorted(stored, key=lambda g: g["key"]):
        writer.writerow([game["first"], game["second"], game["result"], game["opening"], game["termination"]])
    write(tmp_path, out.getvalue())
    for extra in ([], ["--anchor", "random=0", "--k", "32"]):
        from_file = standings_json(ok(cli("ratings", "games.csv", "--format", "json", *extra)))
        from_db = standings_json(ok(cli("standings", "--db", "league.db", "--format", "json", *extra)))
        assert from_file == from_db
        assert len(from_file) == 4
