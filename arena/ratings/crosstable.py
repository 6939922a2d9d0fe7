"""Head-to-head scores of every pair of bots, and results by colour."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from arena.ratings.fit import PairCounts
from arena.ratings.selection import OpeningScore
from arena.ratings.standings import csv_text, selection_field
from arena.text import plural, printable


def crosstable(pairs: PairCounts, order: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """bot -> opponent -> [points, games], for bots in ``order``; a bot's games against
    itself (a match of ``random`` against ``random``) are left out, as the fit leaves them."""
    table: dict[str, dict[str, list[float]]] = {bot: defaultdict(lambda: [0.0, 0]) for bot in order}
    for (first, second), (wins, draws, losses) in sorted(pairs.counts.items()):
        if first == second:
            continue
        games = wins + draws + losses
        points = wins + draws / 2
        table[first][second][0] += points
        table[first][second][1] += int(games)
        table[second][first][0] += games - points
        table[second][first][1] += int(games)
    return table


def by_colour(pairs: PairCounts, order: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """bot -> "first"/"second" -> [wins, draws, losses]; a bot's games against itself
    are left out, as in :func:`crosstable`."""
    table = {bot: {"first": [0, 0, 0], "second": [0, 0, 0]} for bot in order}
    for (first, second), (wins, draws, losses) in pairs.counts.items():
        if first == second:
            continue
        for bot, colour, wdl in ((first, "first", (wins, draws, losses)), (second, "second", (losses, draws, wins))):
            for i, count in enumerate(wdl):
                table[bot][colour][i] += int(count)
    return table


def crosstable_data(
    table: dict[str, dict[str, list[float]]], selection: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON document of a crosstable (``--format json``, and the site's API)."""
    data = {bot: {opp: {"points": p, "games": n} for opp, (p, n) in row.items() if n} for bot, row in table.items()}
    return {**selection_field(selection), "crosstable": data}


def colours_data(table: dict[str, dict[str, list[int]]], selection: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document of results by colour (``--format json``, and the site's API)."""
    data = {
        bot: {colour: dict(zip(("wins", "draws", "losses"), wdl)) for colour, wdl in sides.items()}
        for bot, sides in table.items()
    }
    return {**selection_field(selection), "colours": data}


def render_crosstable(
    table: dict[str, dict[str, list[float]]], fmt: str = "table", selection: dict[str, Any] | None = None
) -> str:
    bots = list(table)
    if fmt == "json":
        return json.dumps(crosstable_data(table, selection), indent=2)
    short = [str(i + 1) for i in range(len(bots))]
    rows = []
    for i, bot in enumerate(bots):
        cells = []
        for opp in bots:
            points, n = table[bot].get(opp, (0.0, 0))
            cells.append("" if opp == bot or not n else f"{points:g}/{n}")
        total_points = sum(p for p, _ in table[bot].values())
        total_games = sum(n for _, n in table[bot].values())
        rows.append([short[i], printable(bot), *cells, f"{total_points:g}/{total_games}"])
    headers = ["#", "bot", *short, "total"]
    if fmt == "csv":  # data, names as stored (see render_standings)
        return csv_text(["bot", *bots], [[bot, *row[2:-1]] for bot, row in zip(bots, rows)])
    return tabulate(rows, headers=headers, tablefmt="github" if fmt == "github" else "simple",
                    disable_numparse=True)


def render_colours(
    table: dict[str, dict[str, list[int]]], fmt: str = "table", selection: dict[str, Any] | None = None
) -> str:
    if fmt == "json":
        return json.dumps(colours_data(table, selection), indent=2)
    headers = ["bot", "first: W-D-L", "score %", "second: W-D-L", "score %"]
    rows = []
    for bot, sides in table.items():
        row = [bot]
        for colour in ("first", "second"):
            wins, draws, losses = sides[colour]
            n = wins + draws + losses
            row += [f"{wins}-{draws}-{losses}", f"{100 * (wins + draws / 2) / n:.1f}" if n else ""]
        rows.append(row)
    if fmt == "csv":  # data, names as stored (see render_standings)
        return csv_text(headers, rows)
    rows = [[printable(row[0]), *row[1:]] for row in rows]
    return tabulate(rows, headers=headers, tablefmt="github" if fmt == "github" else "simple",
                    disable_numparse=True)


#: Openings listed under the table by colour at most, the most played first.
MAX_OPENING_ROWS = 40


def openings_data(rows: Sequence[OpeningScore]) -> list[dict[str, Any]]:
    """The first player's results per opening, as JSON (the table by colour's ``openings``)."""
    return [{"opening": row.opening, "value": row.value, "games": row.games, "wins": row.wins,
             "draws": row.draws, "losses": row.losses} for row in rows]


def render_openings(rows: Sequence[OpeningScore], fmt: str = "table") -> str:
    """The first player's score from each opening, with the opening's solver value
    for the first player where known (0 a proven draw): shown under the table by
    colour, so that a suite of balanced openings can be seen to be balanced."""
    headers = ["opening", "value", "games", "first: W-D-L", "first score %"]
    table = [[row.opening or "(none)", "" if row.value is None else str(row.value), str(row.games),
              f"{row.wins}-{row.draws}-{row.losses}", f"{100 * row.first_score:.1f}"] for row in rows]
    more = len(table) - MAX_OPENING_ROWS
    text = tabulate(table[:MAX_OPENING_ROWS], headers=headers, tablefmt="github" if fmt == "github" else "simple",
                    disable_numparse=True)
    return text + (f"\n... and {plural(more, 'more opening')}" if more > 0 else "")
