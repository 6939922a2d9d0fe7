"""Bots and matchups: a bot's page (what it is, its results against every opponent,
its forfeits, its rating over time, its latest games), the page of two bots' games
against each other, and the same as JSON.

A bot here is an entrant of the whole league, named as the league's standings name
it (``minimax:depth=3``, ``guard@v2``, ``mybot.py#3fa2c1``). What takes the whole
league to know (the results per pair, each bot's rating after each of its games,
the forfeits) is computed once per state of the database and kept in the site's
cache (:func:`league_bots`); a page adds only what one bot's or one pair's games
say, read through the store's bot indexes.

A bot's rating over time is its incremental Elo after each of its games, not the
Elo fitted per tournament: it is the standings' own "Inc. Elo" column followed game
by game (the line ends at the column's value), one pass over the games draws every
bot's line, and it moves within a tournament. A fit per tournament gives a bot one
point per tournament, each on the scale of that tournament's field (a fit centres
the bots it saw on 1500), so two of its points would not compare.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from arena.entry.submissions import resolve_bot
from arena.errors import ArenaError
from arena.players.plugins import installed_bots
from arena.ratings.fit import MEAN_RATING
from arena.ratings.results import LeagueResults, first_player_score
from arena.ratings.selection import Selection, SelectionError, select
from arena.ratings.sequence import EloSequence, FollowedElo
from arena.ratings.sprt import elo_with_interval
from arena.store import Store, StoredBot, StoredGame, Submission
from arena.store.removal import Removals
from arena.text import printable
from arena.web.cache import TableCache
from arena.web.pages import NARROW, StoreDep, apart, data_version, page, tables

router = APIRouter()

K = 16.0  # the incremental Elo's step, as in the standings' column (league_standings' default)
PLOT_POINTS = 400  # points of a rating history drawn: more than the plot has pixels to show apart
RECENT_GAMES = 20
PAGE_GAMES = 50  # games per page of a matchup
SHOWN_REASONS = 10  # forfeit reasons listed on a bot's page, most frequent first
NAMED_IN_ERRORS = 40  # known bots a "no such bot" message names

BotName = Annotated[str, Query(min_length=1, max_length=500, description="A bot, named as in the standings.")]


class UnknownBot(ArenaError):
    """A name that is no bot of the league."""


@dataclass(frozen=True)
class History:
    """A bot's incremental Elo after each of its games, in at most PLOT_POINTS steps:
    where a step stands for several games, its last game's Elo and the lowest and
    highest of them, so that what the line leaves out still shows as a band."""

    games: int
    points: list[tuple[int, float, float, float]]  # (game number from 1, Elo after it, lowest, highest since the last)
    low: tuple[int, float]  # (game, Elo) where it was lowest
    high: tuple[int, float]

    @property
    def final(self) -> float:
        return self.points[-1][1]


@dataclass(frozen=True)
class LeagueBots:
    """What the bot and matchup pages take from the whole league."""

    selection: dict[str, Any] = field(default_factory=dict)  # what the games are (Selection.as_dict)
    ids: dict[str, list[int]] = field(default_factory=dict)  # entrant name -> its bot ids
    names: dict[tuple[str, str], str] = field(default_factory=dict)  # (spec, code hash) -> entrant name
    results: LeagueResults = field(default_factory=LeagueResults)
    tally: dict[str, list[int]] = field(default_factory=dict)  # bot -> [wins, draws, losses, forfeit losses]
    history: dict[str, History] = field(default_factory=dict)
    forfeits: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # bot -> (reason, count), most first

    def name_of(self, spec: str, code: str) -> str:
        """The entrant name of a game's player (its spec, where it is no entrant: a
        person, an unnamed player of an import, a bot with only unfinished games)."""
        return self.names.get((spec, code), spec)

    def find(self, name: str) -> list[int]:
        """The bot ids of the entrant ``name``; UnknownBot, naming the known ones, if none."""
        if name in self.ids:
            return self.ids[name]
        # A tournament's own tables name a bot by its spec where only one code played
        # under it there; the whole league may hold several, each named with its hash.
        versions = sorted(bot for bot in self.ids if bot.startswith(name + "#"))
        if versions:
            raise UnknownBot(f"{name!r} is {len(versions)} bots with different code in the whole league: "
                             f"{', '.join(versions)}")
        known = sorted(self.ids)
        shown = ", ".join(known[:NAMED_IN_ERRORS]) or "none yet"
        if len(known) > NAMED_IN_ERRORS:
            shown += f" and {len(known) - NAMED_IN_ERRORS} more (/api/bots lists them all)"
        raise UnknownBot(f"no bot named {name!r} has a finished game in the league; bots: {shown}")


def entrant_named(store: Store, bots: LeagueBots, name: str) -> str:
    """The entrant a page is asked for: ``name`` as the standings name it, or a
    submitted bot's bare name (``mybot``) for its newest version, as every command
    takes it (:func:`~arena.entry.submissions.resolve_bot`)."""
    if name in bots.ids:
        return name
    try:
        pinned = resolve_bot(name, store).spec
    except ArenaError:  # no bot anywhere: find says so, naming the league's bots
        return name
    if pinned == name or pinned in bots.ids:
        return pinned
    played = sorted(bot for bot in bots.ids if bot.rpartition("@v")[0] == name)
    raise UnknownBot(f"{name!r} is {pinned}, its newest version, which has no finished game in the league yet"
                     + (f"; versions with games: {', '.join(played)}" if played else ""))


def league_bots(request: Request, store: Store) -> LeagueBots:
    """The whole league's bots, from the site's cache while the database is unchanged."""
    cache: TableCache = request.app.state.cache
    followed = cache.kept(("bots",), lambda: FollowedElo(K, histories=True))
    return cache.get(("bots",), data_version(store, None),
                     apart(request, lambda store: compute_league_bots(store, followed)))


def compute_league_bots(store: Store, followed: FollowedElo) -> LeagueBots:
    """Everything :class:`LeagueBots` holds, in three passes over the league's games:
    the results per pair and the forfeits (both counted in SQL), and the games in
    order for the ratings (``followed``: carried on from the games it read last)."""
    with store.snapshot():  # every pass sees the same games while the league stores more
        try:
            chosen = select(store, league=True)
        except SelectionError:  # no finished game yet: a league without bots
            return LeagueBots()
        return _league_bots(store, chosen, followed)


def _league_bots(store: Store, chosen: Selection, followed: FollowedElo) -> LeagueBots:
    ids: dict[str, list[int]] = {}
    for bot_id, name in chosen.entrants.items():
        ids.setdefault(name, []).append(bot_id)
    names = {(bot.spec, bot.content_hash): chosen.entrants[bot.id]
             for bot in store.bots.stored(chosen.entrants)}
    forfeits: dict[str, dict[str, int]] = {}
    for bot_id, reason, count in store.results.forfeit_reasons(None):
        reasons = forfeits.setdefault(chosen.entrants[bot_id], {})
        reasons[reason] = reasons.get(reason, 0) + count
    results = chosen.results()
    history = histories(followed.update(chosen, Removals(store).count()))
    return LeagueBots(
        chosen.as_dict(), ids, names, results, results.tally(), history,
        {bot: sorted(reasons.items(), key=lambda item: (-item[1], item[0])) for bot, reasons in forfeits.items()})


def histories(sequence: EloSequence, points: int = PLOT_POINTS) -> dict[str, History]:
    """Each bot's incremental Elo after each of its games: the standings' column
    (the same steps in the same order, arena.ratings.sequence), drawn in at most ``points`` steps."""
    assert sequence.series is not None
    return {name: sampled(values, points) for name, values in zip(sequence.names, sequence.series) if values}


def sampled(values: array[float], points: int) -> History:
    """The History of ``values``: cut into at most ``points`` runs of games as even as can be
    (each run's lowest and highest found by numpy: a league's histories are drawn again
    whenever a game arrives)."""
    n = len(values)
    steps = min(n, points)
    ends = [math.ceil((i + 1) * n / steps) for i in range(steps)]
    elo = np.array(values, dtype=np.float64)  # a copy: the history grows on while this is drawn
    starts = [0, *ends[:-1]]
    lows, highs = np.minimum.reduceat(elo, starts).tolist(), np.maximum.reduceat(elo, starts).tolist()
    drawn = [(end, values[end - 1], lowest, highest) for end, lowest, highest in zip(ends, lows, highs)]
    low_at, high_at = int(np.argmin(elo)), int(np.argmax(elo))  # the first game at each, as list.index finds
    return History(n, drawn, (low_at + 1, values[low_at]), (high_at + 1, values[high_at]))


def nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 5 times a power of ten that cuts ``span`` into at most ``most`` steps."""
    power = 10.0 ** math.floor(math.log10(max(span, 1e-9) / most))
    return next(power * m for m in (1, 2, 5, 10) if span / (power * m) <= most)


def rating_plot(history: History, width: int = 640, height: int = 260,
                fitted: float | None = None) -> dict[str, Any]:
    """Where the points of a rating history fall in the SVG on a bot's page, with the
    standings' fitted Elo (``fitted``, None for a bound) as a level line to compare;
    ``width``: :data:`arena.web.pages.NARROW` for a phone's plot (fewer ticks)."""
    left, right, top, bottom = 56, width - 14, 12, height - 36
    shown = [history.low[1], history.high[1], MEAN_RATING, *([] if fitted is None else [fitted])]
    low, high = min(shown), max(shown)
    if high - low < 20:
        low, high = low - 10, high + 10
    games = history.games

    def x(game: float) -> float:
        return round(left + (game - 1) / max(games - 1, 1) * (right - left), 1)

    def y(elo: float) -> float:
        return round(bottom - (elo - low) / (high - low) * (bottom - top), 1)

    most_ticks = 6 if width > NARROW else 4
    step = nice_step(high - low, most_ticks)
    y_ticks = [{"y": y(tick), "label": f"{tick:.0f}"}
               for tick in (step * i for i in range(math.ceil(low / step), math.floor(high / step) + 1))]
    every = max(1, round(nice_step(games - 1, most_ticks)))
    x_ticks = [{"x": x(game), "label": str(game)}
               for game in (1, *(n for n in range(every, games + 1, every) if n - 1 >= every / 2))]
    return {"width": width, "height": height, "left": left, "right": right, "top": top, "bottom": bottom,
            "line": " ".join(f"{x(game)},{y(elo)}" for game, elo, _, _ in history.points),
            # The band: over the highest of each step, back under the lowest (none where a step is one game).
            "band": "" if len(history.points) == games else " ".join(
                [f"{x(game)},{y(highest)}" for game, _, _, highest in history.points]
                + [f"{x(game)},{y(lowest)}" for game, _, lowest, _ in reversed(history.points)]),
            "start_y": y(MEAN_RATING), "y_ticks": y_ticks, "x_ticks": x_ticks,
            "end": {"x": x(games), "y": y(history.final)}, "fitted_y": None if fitted is None else y(fitted),
            "narrow": width <= NARROW}


# --- what a bot is ---------------------------------------------------------------------


def bot_about(name: str, rows: list[StoredBot], submitted: dict[str, list[Submission]],
              bots: LeagueBots) -> dict[str, Any]:
    """What a bot is: its spec, where its code came from, its description and options;
    for a submitted bot, every version of it. The fields of ``arena bots --json``
    (name, source, description, options, error, sha256), and more. ``rows``: the bots
    table's rows of this entrant; ``submitted``: every submission, by name."""
    row = rows[-1]  # one spec and code stored from several sources (plug-in versions) is one bot: the latest says
    about: dict[str, Any] = {
        "name": name, "spec": row.spec, "kind": "other", "source": row.source, "description": "", "options": {},
        "given_options": json.loads(row.options or "{}"), "error": None, "sha256": row.content_hash or None,
        "installed": None, "submission": None, "sources": [r.source for r in rows],
    }
    base, _, number = row.name.rpartition("@v")
    if row.source.startswith("submitted ") and base in submitted:
        about.update(kind="submitted", **submission_about(submitted[base], number, bots))
    elif not row.content_hash and (entry := installed_bots().get(row.name)) is not None:
        plugin = entry.as_dict()
        about.update(kind="plug-in", description=plugin["description"], options=plugin["options"],
                     error=plugin["error"], installed=plugin["source"])
    elif row.content_hash:
        about["kind"] = "file"
    return about


def submission_about(versions: list[Submission], number: str, bots: LeagueBots) -> dict[str, Any]:
    """A submitted bot's description, and every version submitted under its name."""
    this = next((v for v in versions if str(v.version) == number), versions[-1])
    return {
        "description": this.description,
        "submission": {
            "name": this.name, "version": this.version, "kind": this.kind, "submitted_at": this.submitted_at,
            "versions": [{"spec": v.spec, "version": v.version, "kind": v.kind, "submitted_at": v.submitted_at,
                          "sha256": v.content_hash, "played": v.spec in bots.ids} for v in versions],
        },
    }


def submissions_by_name(store: Store, name: str | None = None) -> dict[str, list[Submission]]:
    found: dict[str, list[Submission]] = {}
    for submission in store.submissions.all(name):
        found.setdefault(submission.name, []).append(submission)
    return found


def record(wins: int, draws: int, losses: int) -> dict[str, Any]:
    games = wins + draws + losses
    return {"games": games, "wins": wins, "draws": draws, "losses": losses,
            "score_pct": round(100 * (wins + draws / 2) / games, 1) if games else 0.0}


def wdl(counts: Iterable[float]) -> dict[str, int]:
    wins, draws, losses = (int(count) for count in counts)
    return {"wins": wins, "draws": draws, "losses": losses}


def opponents(bots: LeagueBots, name: str) -> list[dict[str, Any]]:
    """The bot's results against each opponent (moving first and second), most played first."""
    found: dict[str, list[list[int]]] = {}
    for (first, second), (wins, draws, losses) in bots.results.pairs.counts.items():
        if first == name:
            found.setdefault(second, [[0, 0, 0], [0, 0, 0]])[0] = [int(wins), int(draws), int(losses)]
        if second == name:
            found.setdefault(first, [[0, 0, 0], [0, 0, 0]])[1] = [int(losses), int(draws), int(wins)]
    rows = []
    for opponent, (as_first, as_second) in found.items():
        total = [a + b for a, b in zip(as_first, as_second)]
        rows.append({"opponent": opponent, **record(*total), "first": wdl(as_first), "second": wdl(as_second)})
    return sorted(rows, key=lambda row: (-row["games"], row["opponent"]))


def game_row(game: StoredGame, bots: LeagueBots, name: str) -> dict[str, Any]:
    """A game as the bot ``name`` played it: its colour, its opponent, its score."""
    first = bots.name_of(game.first, game.first_hash)
    second = bots.name_of(game.second, game.second_hash)
    colour = "first" if first == name else "second"
    score = None if not game.finished else first_player_score(game.winner)
    if score is not None and colour == "second":
        score = 1 - score
    return {"id": game.id, "tournament": game.tournament, "colour": colour,
            "opponent": second if colour == "first" else first, "result": game.result, "score": score,
            "termination": game.termination, "reason": game.reason, "plies": game.plies,
            "opening": game.opening or "", "finished_at": game.finished_at}


def bot_data(store: Store, bots: LeagueBots, name: str) -> dict[str, Any]:
    """Everything a bot's page shows, as JSON."""
    bot_ids = bots.find(name)
    wins, draws, losses, forfeits = bots.tally.get(name, [0, 0, 0, 0])
    history = bots.history.get(name)
    rows = store.bots.stored(bot_ids)
    base = rows[-1].name.rpartition("@v")[0]
    return {
        **bot_about(name, rows, submissions_by_name(store, base) if base else {}, bots),
        **record(wins, draws, losses), "forfeits": forfeits,
        "incremental_elo": None if history is None else round(history.final, 1),
        "opponents": opponents(bots, name),
        "forfeit_reasons": [{"reason": reason, "count": count} for reason, count in bots.forfeits.get(name, [])],
        "rating_history": None if history is None else {
            "games": history.games,
            "points": [[game, round(elo, 1), round(low, 1), round(high, 1)]
                       for game, elo, low, high in history.points]},
        "recent_games": [game_row(g, bots, name) for g in store.games.latest_of(bot_ids, RECENT_GAMES)],
    }


# --- two bots --------------------------------------------------------------------------


def matchup_data(store: Store, bots: LeagueBots, a: str, b: str, page_number: int) -> dict[str, Any]:
    """Bot ``a`` against bot ``b``: the score, by colour, by opening, and one page of their games."""
    a_ids, b_ids = bots.find(a), bots.find(b)
    if a == b:
        raise HTTPException(422, f"a matchup is two bots: {a!r} is both")
    # Counted here, not taken from the league's bots: a matchup page is dated by its own pair's games.
    as_first, as_second = store.results.pair_record(a_ids, b_ids)
    wins, draws, losses = (x + y for x, y in zip(as_first, as_second))
    elo = None
    if wins + draws + losses:
        diff, low, high = elo_with_interval(wins, draws, losses)
        elo = {"elo": finite(diff), "low": finite(low), "high": finite(high)}
    game_ids = store.games.pair_ids(a_ids, b_ids)
    pages = max(1, -(-len(game_ids) // PAGE_GAMES))
    if page_number > pages:
        raise HTTPException(404, f"{a!r} against {b!r}: {len(game_ids)} stored games on {pages} pages, "
                                 f"no page {page_number}")
    shown = game_ids[(page_number - 1) * PAGE_GAMES:page_number * PAGE_GAMES]
    return {
        "a": a, "b": b, **record(wins, draws, losses), "elo_difference": elo,
        "by_colour": {"a_first": wdl(as_first), "a_second": wdl(as_second)},
        "by_opening": [{"opening": o.opening, **record(*(x + y for x, y in zip(o.first, o.second))),
                        "a_first": wdl(o.first), "a_second": wdl(o.second)}
                       for o in store.results.pair_openings(a_ids, b_ids)],
        "stored_games": len(game_ids), "page": page_number, "pages": pages,
        "games_on_page": [game_row(g, bots, a) for g in store.games.by_id(shown)],
    }


def cached_matchup(request: Request, store: Store, bots: LeagueBots, a: str, b: str,
                   page_number: int) -> dict[str, Any]:
    """:func:`matchup_data` from the site's cache while no game of the pair is stored,
    removed or changed: a game of two other bots leaves it in place."""
    cache: TableCache = request.app.state.cache
    a_ids, b_ids = bots.find(a), bots.find(b)
    version = (store.results.pair_changes(a_ids, b_ids), tuple(a_ids), tuple(b_ids), Removals(store).count())
    return cache.get(("matchup", a, b, page_number), version,
                     apart(request, lambda apart_store: matchup_data(apart_store, bots, a, b, page_number)))


def finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo difference is null (as in 'arena match --json')."""
    return round(value, 1) if math.isfinite(value) else None


# --- routes -----------------------------------------------------------------------------


@router.get("/bots/{name:path}", response_class=HTMLResponse, include_in_schema=False)
def bot_page(request: Request, store: StoreDep, name: str) -> HTMLResponse:
    bots = league_bots(request, store)
    name = entrant_named(store, bots, name)
    data = bot_data(store, bots, name)
    history = bots.history.get(name)
    # Its row of the whole league's standings: the fitted Elo the plot's line is set beside.
    row = next((r for r in tables(request, store, None, True).standings if r.bot == name), None)
    fitted = None if row is None or row.bound else row.elo
    plots = [] if history is None else [rating_plot(history, fitted=fitted),
                                        rating_plot(history, NARROW, 220, fitted)]
    # The title goes into base.html as it is: a bot's name is made printable here.
    return page(request, "bot.html", title=printable(name), bot=data, selection=bots.selection, known=bots.ids,
                shown_reasons=SHOWN_REASONS, plots=plots, history=history, row=row, k=K,
                gate_tests=store.gates.of_version(name))


@router.get("/matchup", response_class=HTMLResponse, include_in_schema=False)
def matchup_page(request: Request, store: StoreDep, a: BotName, b: BotName,
                 page_number: Annotated[int, Query(alias="page", ge=1, le=1_000_000)] = 1) -> HTMLResponse:
    bots = league_bots(request, store)
    a, b = entrant_named(store, bots, a), entrant_named(store, bots, b)
    data = cached_matchup(request, store, bots, a, b, page_number)
    return page(request, "matchup.html", title=printable(f"{a} v {b}"), m=data)


@router.get("/api/bots", summary="Every bot of the league with its games and score, and what 'arena bots --json' "
            "says of it")
def api_bots(request: Request, store: StoreDep) -> list[dict[str, Any]]:
    bots = league_bots(request, store)
    rows = {row.id: row for row in store.bots.stored()}
    submitted = submissions_by_name(store)
    listed = []
    for name in sorted(bots.ids):
        wins, draws, losses, forfeits = bots.tally.get(name, [0, 0, 0, 0])
        history = bots.history.get(name)
        about = bot_about(name, [rows[bot_id] for bot_id in bots.ids[name]], submitted, bots)
        listed.append({**about, **record(wins, draws, losses),
                       "forfeits": forfeits, "incremental_elo": None if history is None else round(history.final, 1)})
    return listed


@router.get("/api/bots/{name:path}", summary="One bot: what it is, its results against each opponent, its forfeits, "
            "its rating after each game and its latest games")
def api_bot(request: Request, store: StoreDep, name: str) -> dict[str, Any]:
    bots = league_bots(request, store)
    return bot_data(store, bots, entrant_named(store, bots, name))


@router.get("/api/matchup", summary="Two bots' games against each other: score, by colour, by opening, a page of "
            "the games")
def api_matchup(request: Request, store: StoreDep, a: BotName, b: BotName,
                page_number: Annotated[int, Query(alias="page", ge=1, le=1_000_000)] = 1) -> dict[str, Any]:
    bots = league_bots(request, store)
    return cached_matchup(request, store, bots, entrant_named(store, bots, a), entrant_named(store, bots, b),
                          page_number)
