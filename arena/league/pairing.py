"""How a league chooses its next games: in turn, or where they teach the most.

A league file's ``[pairing]`` table picks the rule. ``mode = "newest"`` (the
default) plays every pairing of the active field ``games`` times, the newest
entrant's pairings first. ``mode = "learn"`` plays the pairings whose next game
pair shrinks the uncertainty at the top of the table the most, each pairing up to
``max_games`` games, with a floor: no active entrant plays less than ``min_share``
of its fair share of the latest games.

The learning rule, *expected variance reduction at the top*: for the active
entrants a and b, fitted (:func:`arena.ratings.fit.fit_ratings`, the league's
Elo fit) at strengths r_a and r_b with V the variance of r_a - r_b (natural-log
units; infinite when no games connect them), the next game pair between them is
worth

    w_a * w_b * V I / (1 + V I),   I = 2 p (1 - p),  p = 1 / (1 + e^(r_b - r_a)),

the share of V that two games at their fitted gap are expected to remove (I is
their Fisher information about r_a - r_b), weighted toward the top: w is 1 for the
``top`` best-rated active entrants and, below them, twice the likelihood that the
entrant is stronger than the ``top``-th (at most 1). The pair of highest worth is
played; ties go to the pair that met least, then to the newest entrant's pairing,
as in turn. Within one batch the chosen pair's V is lowered as those two games
would lower it (V / (1 + V I)), so the batch spreads over the pairs that are close.

The floor: an active entrant that would have played fewer than ``min_share`` x 2/n
of the league's latest games once the next game pair is handed out (n active
entrants; the window is the latest ``WINDOW_PER_ENTRANT`` x n games, at most
``MOST_WINDOW``: those stored last, then those chosen since) is served first, the
one furthest below first, with its pairing of highest worth, a partner below the
floor too where it has one. Everything it reads is stored (the results per pair, the latest games in the
order they were stored): a league stopped and run again chooses as one that never
stopped, after the same stored games.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.league.settings_tables import checked_table
from arena.ratings.fit import ELO_PER_NATURAL, Covariance, Fit, PairCounts, fit_ratings

NEWEST, LEARN = "newest", "learn"
MODES = (NEWEST, LEARN)
#: The [pairing] table of a league file.
PAIRING_KEYS: dict[str, tuple[type, ...]] = {"mode": (str,), "min_share": (float, int), "max_games": (int,),
                                             "top": (int,)}
WINDOW_PER_ENTRANT = 4  # the floor's window, per active entrant: each one's fair share there is 8 games
MOST_WINDOW = 10_000  # games: the window of a field of 2,500 entrants and more
MOST_GAMES = 100_000  # per pairing, as a match plays at most


class PairingError(ArenaError):
    """A league's [pairing] table that cannot be used."""


@dataclass(frozen=True)
class PairingSettings:
    mode: str = NEWEST
    min_share: float = 0.5  # of an entrant's fair share (2/n) of the latest games, at least
    max_games: int = 2  # per pairing in learn mode (a league file's default: its games)
    top: int = 3  # the best-rated entrants whose order the league learns first

    @property
    def learning(self) -> bool:
        return self.mode == LEARN


def pairing_of(raw: dict[str, Any], games: int, source: str = "<league>") -> PairingSettings:
    """The [pairing] table of a league's settings, checked; ``games``: the league's
    games per pairing (``max_games`` is at least that, and that by default)."""
    table = checked_table(raw, "pairing", PAIRING_KEYS, PairingError, source, 'as [pairing] with mode = "learn"') or {}
    mode = table.get("mode", NEWEST)
    if mode not in MODES:
        raise PairingError(f"{source}: unknown pairing.mode {mode!r}: use " + " or ".join(repr(m) for m in MODES))
    min_share = float(table.get("min_share", PairingSettings.min_share))
    if not 0 < min_share <= 1:
        raise PairingError(f"{source}: pairing.min_share must be above 0 and at most 1 (a share of each "
                           f"entrant's fair share of the games), got {min_share:g}")
    max_games = table.get("max_games", games)
    if not games <= max_games <= MOST_GAMES:
        raise PairingError(f"{source}: pairing.max_games must be {games} (the league's games per pairing) to "
                           f"{MOST_GAMES:,}, got {max_games}")
    top = table.get("top", PairingSettings.top)
    if top < 1:
        raise PairingError(f"{source}: pairing.top must be at least 1, got {top}")
    if mode == NEWEST and set(table) - {"mode"}:
        raise PairingError(f"{source}: pairing." + ", pairing.".join(sorted(set(table) - {"mode"}))
                           + " only apply with mode = \"learn\": remove them or set the mode")
    return PairingSettings(mode, min_share, max_games, top)


#: The games of a pairing still open (older entrant, newer entrant, game numbers taken in
#: this batch) -> the game numbers of its next game pair not stored, in flight nor taken.
NextOpen = Callable[[str, str, frozenset[int]], list[int]]


@dataclass(frozen=True)
class Choice:
    older: str
    newer: str
    games: tuple[int, ...]  # game numbers of one game pair (one when the other is played or in flight)


class Learning:
    """What learn mode chooses from: the league's results per ordered pair (the rating
    fit's input) and the players of its latest games, in the order they were stored."""

    def __init__(self, settings: PairingSettings, results: PairCounts | None = None,
                 latest: Iterable[tuple[str, str]] = ()) -> None:
        self.settings = settings
        self.results = results if results is not None else PairCounts()
        self.latest: deque[tuple[str, str]] = deque(latest, maxlen=MOST_WINDOW)
        self.played: Counter[tuple[str, str]] = Counter()  # games per unordered pair
        for (first, second), wdl in self.results.counts.items():
            self.played[_unordered(first, second)] += int(sum(wdl))
        self._fit: tuple[tuple[str, ...], Fit] | None = None
        self.fits = 0  # how many fits were made (one per batch at most)

    def stored(self, first: str, second: str, score: float) -> None:
        """A game of the league stored: ``score``, the first player's."""
        self.results.add_game(first, second, score)
        self.played[_unordered(first, second)] += 1
        self.latest.append((first, second))
        self._fit = None

    def fit(self, field: Sequence[str]) -> Fit:
        """The league's fit, made again only when a game was stored or the field changed."""
        if self._fit is None or self._fit[0] != tuple(field):
            self._fit = (tuple(field), fit_ratings(self.results, bots=field))
            self.fits += 1
        return self._fit[1]

    def choose(self, field: Sequence[str], next_open: NextOpen, limit: int) -> list[Choice]:
        """Up to ``limit`` games of ``field`` (the active entrants, oldest first): the
        floor's entrants first, then by worth (see the module's text)."""
        n = len(field)
        if n < 2 or limit <= 0:
            return []
        worth = _Worth(self.fit(field), field, self.settings.top)
        window = WINDOW_PER_ENTRANT * n if n * WINDOW_PER_ENTRANT <= MOST_WINDOW else MOST_WINDOW
        recent: deque[tuple[str, str]] = deque(list(self.latest)[-window:], maxlen=window)
        taken: dict[tuple[str, str], frozenset[int]] = {}
        open_games: dict[tuple[str, str], list[int]] = {}
        added: Counter[tuple[str, str]] = Counter()  # games chosen in this batch, per pairing
        position = {spec: i for i, spec in enumerate(field)}

        def games_of(pair: tuple[str, str]) -> list[int]:
            if pair not in open_games:
                open_games[pair] = next_open(pair[0], pair[1], taken.get(pair, frozenset()))
            return open_games[pair]

        def rank(pair: tuple[str, str]) -> tuple[float, int, int, int]:
            # Highest worth; then the pairing that met least; then in turn's order (newest first).
            a, b = pair
            return (-worth.of(a, b), self.played[_unordered(a, b)] + added[pair], -position[b], position[a])

        pairs = [(field[older], field[newer]) for newer in range(n - 1, 0, -1) for older in range(newer)]
        chosen: list[Choice] = []
        count = 0  # games chosen
        while count < limit:
            playable = [pair for pair in pairs if games_of(pair)]
            if not playable:
                break
            short = _below_floor(field, recent, self.settings.min_share, playable)
            if short:
                # The furthest below is served, by a partner below the floor too where it can be.
                playable = [pair for pair in playable if short[0] in pair]
                both = [pair for pair in playable if pair[0] in short and pair[1] in short]
                playable = both or playable
            pair = min(playable, key=rank)
            games = tuple(games_of(pair)[:limit - count])
            chosen.append(Choice(pair[0], pair[1], games))
            count += len(games)
            taken[pair] = taken.get(pair, frozenset()) | set(games)
            del open_games[pair]
            added[pair] += len(games)
            worth.played(*pair, len(games))
            recent.extend([pair] * len(games))
        return chosen


def _below_floor(field: Sequence[str], recent: deque[tuple[str, str]], min_share: float,
                 playable: list[tuple[str, str]]) -> list[str]:
    """The entrants with a game to play that would be below the floor once the next
    game pair is handed out (the window's two oldest games gone, when it is full),
    furthest below first, the newest of those tied first."""
    window = len(recent)
    quota = min_share * 2 * window / len(field)
    kept = list(recent)[2:] if window == recent.maxlen else list(recent)
    counts = Counter(player for game in kept for player in game)
    can_play = {spec for pair in playable for spec in pair}
    short = sorted((counts[spec], -i, spec) for i, spec in enumerate(field)
                   if counts[spec] < quota and spec in can_play)
    return [spec for _, _, spec in short]


def _unordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


class _Worth:
    """The worth of each pairing's next game pair, from one fit (see the module's text)."""

    def __init__(self, fit: Fit, field: Sequence[str], top: int) -> None:
        self.index = {spec: i for i, spec in enumerate(field)}
        self.elo = np.array([fit.ratings[spec].elo for spec in field]) / ELO_PER_NATURAL
        groups = np.array([fit.ratings[spec].group for spec in field])
        same = groups[:, None] == groups[None, :]
        if isinstance(fit.covariance, Covariance):
            block = fit.covariance.block(field) / ELO_PER_NATURAL**2
            diagonal = np.diag(block)
            variance = diagonal[:, None] + diagonal[None, :] - 2 * block
        else:  # no game yet: nothing connects any two
            variance = np.zeros((len(field), len(field)))
        self.variance = np.where(same, np.maximum(variance, 0.0), math.inf)
        self.weight = self._weights(field, top)
        self.lowered: dict[tuple[int, int], float] = {}  # variances lowered by the games chosen in this batch

    def _weights(self, field: Sequence[str], top: int) -> np.ndarray:
        order = sorted(range(len(field)), key=lambda i: (-self.elo[i], field[i]))
        weight = np.ones(len(field))
        if len(field) <= top:
            return weight
        border = order[top - 1]
        for i in order[top:]:
            spread = self.variance[i, border]
            if math.isinf(spread):
                continue  # nothing compares them yet: it may belong at the top
            gap = self.elo[i] - self.elo[border]
            likelihood = 0.5 * (1 + math.erf(gap / math.sqrt(2 * spread))) if spread > 0 else float(gap >= 0)
            weight[i] = min(1.0, 2 * likelihood)
        return weight

    def _information(self, i: int, j: int) -> float:
        p = 1 / (1 + math.exp(max(-700.0, min(700.0, self.elo[j] - self.elo[i]))))
        return 2 * p * (1 - p)

    def of(self, a: str, b: str) -> float:
        i, j = self.index[a], self.index[b]
        variance = self.lowered.get((i, j), float(self.variance[i, j]))
        information = self._information(i, j)
        share = 1.0 if math.isinf(variance) else variance * information / (1 + variance * information)
        return float(self.weight[i] * self.weight[j]) * share

    def played(self, a: str, b: str, games: int) -> None:
        """Lower the pair's variance as ``games`` more games between them would."""
        i, j = self.index[a], self.index[b]
        variance = self.lowered.get((i, j), float(self.variance[i, j]))
        information = max(self._information(i, j) * games / 2, 1e-300)
        self.lowered[i, j] = 1 / information if math.isinf(variance) else variance / (1 + variance * information)
