"""A league played without games, to measure how it chooses them.

Entrants of known strengths (Elo) join at once; the league's own schedule
(:class:`arena.league.scheduler.LeagueSchedule`, in turn or learning) hands out its
batches, and each game's result is drawn from the Elo model the fit assumes
(Davidson's draws, no first-move advantage), from a generator seeded by the game's
key: a game has the same result whenever it is played, so two ways of choosing
compare on the same games. After each batch the league's fit is read: is its top
``top`` the true one, in order, and how wide are the true top's intervals.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

from arena.league.pairing import Learning, PairingSettings
from arena.league.scheduler import LeagueSchedule, config_of
from arena.ratings.fit import ELO_PER_NATURAL, Z95, Fit, PairCounts, fit_ratings
from arena.store import Entry


@dataclass(frozen=True)
class Look:
    """The league's fit after a batch."""

    games: int  # played so far
    top_right: bool  # its top entrants are the true ones, in the true order
    #: The mean 95% interval (half-width, Elo) of the rating differences of the true top
    #: entrants and the next one, each with its neighbour in the true order (infinite
    #: while no games connect two of them): how sure the league is of its top's order.
    top_interval: float


@dataclass
class Simulation:
    looks: list[Look] = field(default_factory=list)
    players: list[tuple[str, str]] = field(default_factory=list)  # each game's two entrants, as handed out
    keys: list[str] = field(default_factory=list)

    @property
    def games(self) -> int:
        return len(self.keys)

    def right_from(self) -> int | None:
        """The games after which the top was right at every later look (None: wrong at the last)."""
        found = None
        for look in self.looks:
            found = (found if found is not None else look.games) if look.top_right else None
        return found

    def interval_at(self, games: int) -> float:
        """The true top's mean interval at the first look after ``games`` games played."""
        return next(look.top_interval for look in self.looks if look.games >= games)


def strengths(count: int, seed: int, spread: float = 200.0) -> dict[str, float]:
    """``count`` entrants (``e00``, ``e01``, ...) of strengths drawn around 1500 with
    standard deviation ``spread``, in the order they join."""
    rng = random.Random(seed)
    return {f"e{i:02d}": 1500 + rng.gauss(0, spread) for i in range(count)}


def first_player_score(key: str, seed: int, gap: float, draw_rate: float) -> float:
    """A game's result drawn from the model: ``gap`` the first player's strength less
    the second's (Elo); two equal entrants draw ``draw_rate`` of their games."""
    half = gap / ELO_PER_NATURAL / 2
    nu = 2 * draw_rate / (1 - draw_rate)
    win, loss = math.exp(half), math.exp(-half)
    draw_at = random.Random(f"{seed}:{key}").random() * (win + nu + loss)
    return 1.0 if draw_at < win else 0.5 if draw_at < win + nu else 0.0


def simulate(true: dict[str, float], pairing: PairingSettings, games: int, seed: int = 1, batch: int = 8,
             budget: int | None = None, draw_rate: float = 0.2) -> Simulation:
    """Play a league of entrants of strengths ``true`` (by name, in the order they
    joined) with ``games`` per pairing and ``pairing``'s rule, ``batch`` games handed
    out at a time, until nothing is left to play or ``budget`` games are played."""
    config = config_of({"games": games, "seed": seed}, "simulated")
    entries = [Entry(i + 1, 1, name, None, None, "active", "", "", None) for i, name in enumerate(true)]
    schedule = LeagueSchedule(config, set(), Learning(pairing) if pairing.learning else None)
    order = sorted(true, key=lambda name: -true[name])
    top = order[:pairing.top]
    results = PairCounts()
    simulation = Simulation()
    while budget is None or simulation.games < budget:
        chosen = schedule.next_games(entries, {}, batch if budget is None else min(batch, budget - simulation.games))
        if not chosen:
            break
        for spec in chosen:
            score = first_player_score(spec.key, seed, true[spec.first] - true[spec.second], draw_rate)
            results.add_game(spec.first, spec.second, score)
            schedule.stored.add(spec.key)
            if schedule.learning is not None:
                schedule.learning.stored(spec.first, spec.second, score)
            simulation.players.append((spec.first, spec.second))
            simulation.keys.append(spec.key)
        # Learning fits the league anyway, once per batch: its fit is the one read.
        fit = schedule.learning.fit(list(true)) if schedule.learning is not None else fit_ratings(results,
                                                                                                 bots=list(true))
        fitted = sorted(true, key=lambda name: (-fit.ratings[name].elo, name))[:pairing.top]
        simulation.looks.append(Look(simulation.games, fitted == top, _gaps_interval(fit, order[:pairing.top + 1])))
    return simulation


def _gaps_interval(fit: Fit, order: list[str]) -> float:
    """The mean 95% interval of the differences of neighbours in ``order``."""
    widths = []
    for better, worse in itertools.pairwise(order):
        if fit.ratings[better].group != fit.ratings[worse].group:
            return math.inf
        variance = (fit.covariance[better, better] + fit.covariance[worse, worse]
                    - 2 * fit.covariance[better, worse])
        widths.append(Z95 * math.sqrt(max(variance, 0.0)))
    return sum(widths) / len(widths)
