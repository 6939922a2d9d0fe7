"""League tables built from stored games: standings, as text, CSV or JSON.

The JSON field names are part of the interface (see README, "Standings JSON").
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from tabulate import tabulate

from arena.ratings.fit import Fit, Result, fit_ratings, incremental_elo
from arena.ratings.results import LeagueResults, first_player_score
from arena.ratings.swiss import SwissRecord, SwissStanding
from arena.store import StoredGame
from arena.text import printable

OUTPUT_FORMATS = ("table", "github", "csv", "json")


@dataclass
class Standing:
    rank: int
    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    score_pct: float
    elo: float
    elo_minus: float  # 95% interval: elo - elo_minus .. elo + elo_plus
    elo_plus: float
    incremental_elo: float
    forfeits: int  # games this bot lost by forfeit
    los_next: float | None  # likelihood of superiority over the next bot down (None: next is in another group)
    group: int = 1  # ratings compare only within a group of bots connected by games
    bound: str | None = None  # ">": won every game, its true rating is above; "<": lost every game


@dataclass(frozen=True)
class Model:
    """What the fit found besides the ratings, shown above the table."""

    first_move_elo: float  # the first player's advantage
    first_move_interval: float  # 95% half-width
    draw_rate: float  # how often two equal bots draw, the first move aside
    groups: list[int]  # bots in each group, largest first

    def line(self) -> str:
        text = (f"first move: {self.first_move_elo:+.0f} Elo (+/- {self.first_move_interval:.0f}); "
                f"draws: {100 * self.draw_rate:.0f}% between equal bots")
        if len(self.groups) > 1:
            text += (f"; {len(self.groups)} groups that never met ({', '.join(map(str, self.groups))} bots): "
                     "ratings compare only within a group")
        return text


class Standings(list[Standing]):
    """The rows, best first, with the fit's :class:`Model`."""

    model: Model | None = None


def results_of(games: Iterable[StoredGame]) -> list[Result]:
    """Rating inputs from game rows in memory, in (tournament, game key) order."""
    ordered = sorted(games, key=lambda g: (g.tournament, g.key))
    return [Result(g.first, g.second, first_player_score(g.winner)) for g in ordered]


def standings(
    games: Sequence[StoredGame],
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
    bots: Sequence[str] | None = None,
) -> Standings:
    """The standings of game rows in memory (a league in the store is counted there:
    see :func:`league_standings` and arena.ratings.selection)."""
    return league_standings(LeagueResults.of_games(games), results_of(games), anchor, k, bots)


def league_standings(
    results: LeagueResults,
    in_order: Iterable[Result],
    anchor: tuple[str, float] | None = None,
    k: float = 16.0,
    bots: Sequence[str] | None = None,
) -> Standings:
    """One row per bot, group by group (largest first), best first within one (by
    Elo, then score, then name: the same games give the same table whatever their
    order). ``in_order``: the games one by one for the incremental Elo, in the order
    it takes them (read once, never held)."""
    if not results.games:
        return Standings()
    return rated(results, incremental_elo(in_order, k=k), anchor, bots)


def rated(
    results: LeagueResults,
    incremental: dict[str, float],
    anchor: tuple[str, float] | None = None,
    bots: Sequence[str] | None = None,
) -> Standings:
    """:func:`league_standings` with the incremental Elo known already (the site keeps
    it between two states of a league: arena.ratings.sequence)."""
    if not results.games:
        return Standings()
    fit = fit_ratings(results.pairs, anchor=anchor, bots=bots)
    return ranked(fit, incremental, results.tally(), anchor)


def standings_order(results: LeagueResults) -> list[str]:
    """The bots in standings order, for tables that only need the order (a
    crosstable, results by colour): one fit, no incremental Elo."""
    return _order(fit_ratings(results.pairs), results.tally())


def _order(fit: Fit, tally: Mapping[str, Sequence[int]]) -> list[str]:
    def score(bot: str) -> float:
        t = tally.get(bot, [0, 0, 0, 0])
        return (t[0] + 0.5 * t[1]) / max(t[0] + t[1] + t[2], 1)

    return sorted(fit.ratings, key=lambda b: (fit.ratings[b].group, -round(fit.ratings[b].elo, 6), -score(b), b))


def ranked(
    fit: Fit,
    incremental: dict[str, float],
    tally: Mapping[str, Sequence[int]],
    anchor: tuple[str, float] | None = None,
) -> Standings:
    """The rows of :func:`standings` from their parts: the fit, the incremental Elo
    and each bot's [wins, draws, losses, forfeit losses]. Games that are not stored
    (arena.ratings.results_file) are tallied as they are read, never held."""
    table = Standings()
    table.model = Model(round(fit.first_move_elo, 1), round(fit.first_move_interval, 1), round(fit.draw_rate, 4),
                        fit.group_sizes)
    if anchor is not None and anchor[0] in incremental:  # the anchored bot has its rating in both columns
        shift = anchor[1] - incremental[anchor[0]]
        incremental = {bot: value + shift for bot, value in incremental.items()}
    order = _order(fit, tally)
    for rank, bot in enumerate(order, start=1):
        t = tally.get(bot, [0, 0, 0, 0])
        played = t[0] + t[1] + t[2]
        rating = fit.ratings[bot]
        los = fit.los(bot, order[rank]) if rank < len(order) else None
        table.append(
            Standing(
                rank=rank, bot=bot, games=played, wins=t[0], draws=t[1], losses=t[2],
                score_pct=round(100 * (t[0] + 0.5 * t[1]) / played, 1) if played else 0.0,
                elo=round(rating.elo, 1), elo_minus=round(rating.interval, 1),
                elo_plus=round(rating.interval, 1),
                incremental_elo=round(incremental.get(bot, 1500.0), 1), forfeits=t[3],
                los_next=None if los is None else round(los, 3), group=rating.group, bound=rating.bound,
            )
        )
    return table


def render_standings(rows: list[Standing], fmt: str = "table", selection: dict[str, Any] | None = None) -> str:
    """The standings in one of OUTPUT_FORMATS; JSON starts with ``selection`` (what the
    table shows, see arena.ratings.selection) when one is given.

    The tables (``table``, ``github``) are for people: a bot's name is escaped
    (:func:`arena.text.printable`), as every command escapes what a bot may have
    written. CSV and JSON are data and carry names exactly as stored: JSON escapes
    control characters itself; CSV quotes what needs quoting and leaves the rest
    to the program that reads it, as a spreadsheet expects."""
    model = getattr(rows, "model", None)
    if fmt == "json":
        return json.dumps(standings_data(rows, selection), indent=2)
    if fmt == "csv":
        return csv_text(list(Standing.__dataclass_fields__), [list(asdict(r).values()) for r in rows])
    grouped = len({r.group for r in rows}) > 1
    headers = [
        "rank", "bot", "games", "wins", "draws", "losses", "score %", "elo", "-/+", "inc. elo", "forfeits", "LOS",
        *(["group"] if grouped else []),
    ]
    table = [
        [
            r.rank, printable(r.bot), r.games, r.wins, r.draws, r.losses, f"{r.score_pct:.1f}",
            elo_text(r),
            f"{r.elo_minus:.0f}", f"{r.incremental_elo:.0f}", r.forfeits,
            "" if r.los_next is None else f"{100 * r.los_next:.0f}%", *([r.group] if grouped else []),
        ]
        for r in rows
    ]
    text = tabulate(table, headers=headers, tablefmt="github" if fmt == "github" else "simple",
                    disable_numparse=True, colalign=("right", "left") + ("right",) * (10 + grouped))
    return text if model is None else f"{model.line()}\n{text}"


def elo_text(row: Standing) -> str:
    """A bot's rating as the tables show it. A perfect (or zero) score has no finite
    rating: what is known is a bound."""
    if row.bound == ">":
        return f"> {row.elo - row.elo_minus:.0f}"
    if row.bound == "<":
        return f"< {row.elo + row.elo_plus:.0f}"
    return f"{row.elo:.0f}"


def standings_data(rows: list[Standing], selection: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document of the standings (``--format json``, and the site's API)."""
    model = getattr(rows, "model", None)
    model_field = {} if model is None else {"model": asdict(model)}
    return {**selection_field(selection), **model_field, "standings": [asdict(r) for r in rows]}


def selection_field(selection: dict[str, Any] | None) -> dict[str, Any]:
    return {} if selection is None else {"selection": selection}


def csv_text(headers: list[str], table: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(table)
    return out.getvalue().rstrip("\n")


def active_rows(rows: Standings, active: set[str]) -> Standings:
    """The standings of the active entrants only, ranked again (the ratings are those
    of the fit of all the league's games, retired versions included: more games, the
    same scale). LOS is against the next row shown only where that was the next row."""
    shown = Standings()
    shown.model = rows.model
    kept = [row for row in rows if row.bot in active]
    for rank, row in enumerate(kept, start=1):
        following = rows[row.rank] if row.rank < len(rows) else None  # the next row of the full table
        next_shown = kept[rank] if rank < len(kept) else None
        los = row.los_next if following is not None and next_shown is not None and following.bot == next_shown.bot \
            else None
        shown.append(replace(row, rank=rank, los_next=los))
    return shown


def swiss_data(rows: Sequence[SwissStanding], rounds: int, record: SwissRecord,
               elo: Mapping[str, Standing]) -> dict[str, Any]:
    """The ``swiss`` field of the standings' JSON."""
    return {
        "rounds": rounds, "rounds_complete": record.rounds_complete,
        "byes": {str(r): bot for r, bot in sorted(record.byes.items())},
        "table": [{**asdict(row), "elo": elo[row.bot].elo if row.bot in elo else None} for row in rows],
    }


def swiss_csv_rows(rows: Sequence[SwissStanding], elo: Mapping[str, Standing]) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of the Swiss table as CSV (names as stored: CSV is data)."""
    headers = [*SwissStanding.__dataclass_fields__, "elo"]
    return headers, [[*asdict(row).values(), elo[row.bot].elo if row.bot in elo else ""] for row in rows]


def render_swiss(rows: Sequence[SwissStanding], rounds: int, record: SwissRecord,
                 elo: Mapping[str, Standing], fmt: str = "table") -> str:
    """The Swiss table for people (``table`` or ``github``): names escaped."""
    headers = ["rank", "bot", "points", "played", "+", "=", "-", "byes", "Buchholz", "S-B", "direct", "elo"]
    table = [[r.rank, printable(r.bot), _g(r.points), r.played, r.won, r.drawn, r.lost, r.byes,
              _g(r.buchholz), _g(r.sonneborn_berger), _g(r.direct),
              elo_text(elo[r.bot]) if r.bot in elo else ""] for r in rows]
    byes = ", ".join(f"round {r}: {printable(bot)}" for r, bot in sorted(record.byes.items()))
    title = (f"Swiss: {record.rounds_complete} of {rounds} rounds; points per mini-match 1 / 1/2 / 0, a bye 1"
             + (f"; byes: {byes}" if byes else ""))
    text = tabulate(table, headers=headers, tablefmt="github" if fmt == "github" else "simple",
                    disable_numparse=True, colalign=("right", "left") + ("right",) * 10)
    return f"{title}\n{text}"


def _g(value: float) -> str:
    return f"{value:g}"
