"""Games played elsewhere, as a CSV of results: read, checked and rated.

Teachers keep results on paper, other arenas export them: a CSV with a header row
naming the columns ``first``, ``second`` and ``result``, and optionally
``opening`` (two games with one opening and the colours swapped are a pair).
Header names are matched without regard to case or surrounding spaces; other
columns (a date, a round, the moves) are ignored, as exports carry many.

A result is the first player's: ``1-0``, ``0-1`` or ``1/2-1/2`` as in PGN, and for
a draw also ``½-½``, ``0.5-0.5`` or ``=``. An unfinished game (``*``) is refused,
not skipped: a rating must not quietly leave out games the file lists.

The file is read as a stream and tallied as it is read: memory grows with the
bots and the pairs that met, never with the number of games, so an export of
millions of games rates like a class's dozen. Every mistake in the file is one
:class:`ResultsFileError` naming the file, the line, the column and the value.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from arena.errors import ArenaError
from arena.ratings.fit import PairCounts, Result, fit_ratings, incremental_elo
from arena.ratings.standings import Standing, ranked
from arena.text import clip, printable, quote

REQUIRED = ("first", "second", "result")
OPENING = "opening"

#: What the result column may say, and the first player's score for each.
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "½-½": 0.5, "0.5-0.5": 0.5, "=": 0.5}
RESULTS_TEXT = "1-0, 0-1 or 1/2-1/2 (a draw also ½-½, 0.5-0.5 or =)"

#: The longest line read: a bot name and a result fit many times over, and a file
#: that is not a CSV of games (a binary, one endless line) stops here instead of
#: being read whole into memory.
MAX_LINE_BYTES = 1 << 16

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class ResultsFileError(ArenaError):
    """A results file that cannot be read as games: what is wrong, and where."""


@dataclass(frozen=True)
class FileGame:
    """One game of a results file, as read."""

    line: int  # where it stands in the file, from 1
    first: str
    second: str
    score: float  # the first player's: 1, 0.5 or 0
    opening: str | None  # None where the file has no opening column, or leaves it empty

    @property
    def result(self) -> Result:
        return Result(self.first, self.second, self.score)


@dataclass
class Tally:
    """Games counted as they go by: per ordered pair and score, and per bot.

    The fit is order-free, so these counts give it all it needs; only the
    incremental Elo depends on the order, and it is computed during the same
    pass (:meth:`count` hands each game on as it counts it).
    """

    pairs: PairCounts = field(default_factory=PairCounts)
    per_bot: dict[str, list[int]] = field(default_factory=dict)  # [wins, draws, losses, forfeits]
    games: int = 0

    def count(self, games: Iterable[FileGame]) -> Iterator[Result]:
        """Each game's result, counted on the way through."""
        for game in games:
            self.pairs.add_game(game.first, game.second, game.score)
            # A file's games have no forfeits: a loss is a loss, however it came.
            first = self.per_bot.setdefault(game.first, [0, 0, 0, 0])
            second = self.per_bot.setdefault(game.second, [0, 0, 0, 0])
            if game.score == 0.5:
                first[1] += 1
                second[1] += 1
            else:
                (first if game.score == 1.0 else second)[0] += 1
                (second if game.score == 1.0 else first)[2] += 1
            self.games += 1
            yield game.result


@dataclass(frozen=True)
class FileStandings:
    rows: list[Standing]
    games: int


def file_standings(
    stream: IO[bytes], name: str, anchor: tuple[str, float] | None = None, k: float = 16.0
) -> FileStandings:
    """The standings of the games in a results file, as ``arena standings`` gives them
    for stored games; the incremental Elo takes the games in the file's order."""
    tally = Tally()
    incremental = incremental_elo(tally.count(read_games(stream, name)), k=k)
    if not tally.games:
        raise ResultsFileError(f"{name} has no games: only a header")
    fit = fit_ratings(tally.pairs, anchor=anchor)
    return FileStandings(ranked(fit, incremental, tally.per_bot, anchor), tally.games)


def read_games(stream: IO[bytes], name: str) -> Iterator[FileGame]:
    """The games of a results file (bytes, UTF-8), one at a time, checked.

    Blank lines (and rows of empty cells, as spreadsheets write) are skipped;
    line ends may be LF or CRLF; a UTF-8 byte-order mark is allowed."""
    columns: dict[str, int] | None = None
    header: list[str] = []
    for number, raw in _lines(stream, name):
        cells = _cells(raw, number, name, header)
        if not any(cell.strip() for cell in cells):
            continue
        if columns is None:
            header = [cell.strip().lower() for cell in cells]
            columns = _columns(header, number, name)
            continue
        if [cell.strip().lower() for cell in cells] == header:
            raise ResultsFileError(f"{name}, line {number}: the header again (two files joined?): remove the line")
        yield _game(cells, columns, header, number, name)
    if columns is None:
        raise ResultsFileError(f"{name} is empty: its first line must be the header {','.join(REQUIRED)}")


def _lines(stream: IO[bytes], name: str) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, without their line ends, each at most MAX_LINE_BYTES long."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if number == 1:
            if raw.startswith(_UTF16_BOMS):
                raise ResultsFileError(f"{name} is UTF-16 (it starts with a UTF-16 byte-order mark): save it as UTF-8")
            raw = raw.removeprefix(_UTF8_BOM)
        line = raw.rstrip(b"\r\n")
        if len(line) > MAX_LINE_BYTES:
            raise ResultsFileError(f"{name}, line {number}: longer than {MAX_LINE_BYTES} bytes: not a CSV of games")
        yield number, line


def _cells(raw: bytes, number: int, name: str, header: list[str]) -> list[str]:
    """The cells of one line; a line is one row (no name spans lines)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Which cell: the valid text before the bad byte, split as CSV.
        before = next(csv.reader([raw[: exc.start].decode("utf-8")]), [])
        where = _where(name, number, header, max(len(before) - 1, 0))
        raise ResultsFileError(
            f"{where}: byte 0x{raw[exc.start]:02x} is not UTF-8 (a Latin-1 or Windows export?): save the file as UTF-8"
        ) from None
    try:
        # strict: a quote left open or a stray one after a quoted cell is an error, not
        # a cell that swallows the rest of the file.
        return next(csv.reader([text], strict=True), [])
    except csv.Error as exc:
        raise ResultsFileError(
            f"{name}, line {number}: not CSV ({exc}): a name with a comma or quote is written \"in quotes\","
            " a quote inside doubled"
        ) from None


def _columns(header: list[str], number: int, name: str) -> dict[str, int]:
    """Where each known column is, from the header row."""
    columns: dict[str, int] = {}
    for index, title in enumerate(header):
        if title in (*REQUIRED, OPENING):
            if title in columns:
                raise ResultsFileError(f"{name}, line {number}: the header names column {title!r} twice")
            columns[title] = index
    if not columns:
        hint = ""
        if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
            hint = "; separate the columns with commas"
        raise ResultsFileError(
            f"{name}, line {number}: no header: the first line must name the columns {','.join(REQUIRED)}"
            f" (it reads {quote(','.join(header), 80)}){hint}"
        )
    missing = [title for title in REQUIRED if title not in columns]
    if missing:
        raise ResultsFileError(
            f"{name}, line {number}: the header has no {' or '.join(repr(t) for t in missing)} column"
            f" (it has {', '.join(repr(clip(t, 40)) for t in header)})"
        )
    return columns


def _game(cells: list[str], columns: dict[str, int], header: list[str], number: int, name: str) -> FileGame:
    extra = cells[len(header):]
    if any(cell.strip() for cell in extra):
        raise ResultsFileError(
            f"{name}, line {number}: {len(cells)} cells but the header names {len(header)}"
            " (a name with a comma is written \"in quotes\")"
        )

    def cell(title: str) -> str:
        index = columns[title]
        if index >= len(cells):
            raise ResultsFileError(
                f"{_where(name, number, header, index)}: missing (the line has {len(cells)} cells,"
                f" the header {len(header)})"
            )
        return cells[index].strip()

    first, second = cell("first"), cell("second")
    for title, bot in (("first", first), ("second", second)):
        if not bot:
            raise ResultsFileError(f"{_where(name, number, header, columns[title])}: no bot name")
    if first == second:
        raise ResultsFileError(f"{name}, line {number}: {quote(first, 60)} plays itself (columns first and second)")
    result = cell("result")
    if result not in RESULTS:
        where = _where(name, number, header, columns["result"])
        if result == "*":
            raise ResultsFileError(f"{where}: \"*\" is an unfinished game: rate finished games only (remove the line)")
        if not result:
            raise ResultsFileError(f"{where}: no result: write {RESULTS_TEXT}")
        raise ResultsFileError(f"{where}: {quote(result, 40)} is not a result: write {RESULTS_TEXT}")
    opening = cell(OPENING) if OPENING in columns and columns[OPENING] < len(cells) else ""
    return FileGame(number, first, second, RESULTS[result], opening or None)


def _where(name: str, number: int, header: list[str], index: int) -> str:
    """"games.csv, line 7, column result": where in the file a cell is."""
    if index < len(header) and header[index]:
        return f"{name}, line {number}, column {printable(clip(header[index], 40))}"
    return f"{name}, line {number}, column {index + 1}"
