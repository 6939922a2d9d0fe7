"""Two-bot comparisons: the Elo difference with its interval, and a sequential
probability ratio test that stops a match as soon as the evidence decides.

The test is the generalised SPRT on the logistic Elo scale used by chess engine
testers: H0 says the Elo difference is ``elo0``, H1 says ``elo1``; the
log-likelihood ratio of the game scores seen so far is compared with the bounds
log(beta / (1 - alpha)) and log((1 - beta) / alpha).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.errors import ArenaError
from arena.league.ratings import Z95, Result, fit_ratings

CONTINUE, ACCEPT_H0, ACCEPT_H1 = "continue", "H0", "H1"


class SprtError(ArenaError):
    """SPRT settings that do not make sense."""


@dataclass(frozen=True)
class Sprt:
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise SprtError(f"SPRT needs elo0 < elo1, got elo0={self.elo0:g}, elo1={self.elo1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise SprtError(f"SPRT {name} must be between 0 and 0.5, got {value:g}")

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """From ``elo0=0,elo1=20[,alpha=0.05,beta=0.05]``."""
        values: dict[str, float] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or key not in ("elo0", "elo1", "alpha", "beta"):
                raise SprtError(f"bad --sprt item {item!r}: use elo0=0,elo1=20[,alpha=0.05,beta=0.05]")
            try:
                values[key] = float(value)
            except ValueError:
                raise SprtError(f"bad --sprt value {item!r}: {value.strip()!r} is not a number") from None
        return cls(**values)

    @property
    def bounds(self) -> tuple[float, float]:
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """Log-likelihood ratio of H1 over H0 given the first bot's results."""
        n = wins + draws + losses
        if n == 0:
            return 0.0
        mean = (wins + draws / 2) / n
        # Variance of a game's score, with one virtual win and one virtual loss so that
        # a run of identical results cannot make it zero (and the ratio infinite).
        mean_sq = (wins + 1 + draws / 4) / (n + 2)
        centre = (wins + 1 + draws / 2) / (n + 2)
        variance = max(mean_sq - centre**2, 1e-9)
        s0, s1 = expected_score(self.elo0), expected_score(self.elo1)
        return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)

    def decision(self, wins: int, draws: int, losses: int) -> str:
        lower, upper = self.bounds
        llr = self.llr(wins, draws, losses)
        if llr >= upper:
            return ACCEPT_H1
        if llr <= lower:
            return ACCEPT_H0
        return CONTINUE


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def elo_with_interval(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """(Elo difference, lower, upper) of the 95% interval, from one bot's results.

    The same maximum-likelihood fit as the standings (with its one virtual draw
    per bot against an average field), so a 10-0 sweep gets a large but finite
    difference with a wide interval rather than infinity.
    """
    if wins + draws + losses == 0:
        raise ValueError("no games: nothing to rate")
    results = [Result("a", "b", 1.0)] * wins + [Result("a", "b", 0.5)] * draws + [Result("a", "b", 0.0)] * losses
    fit = fit_ratings(results)
    diff = fit.ratings["a"].elo - fit.ratings["b"].elo
    spread = math.sqrt(max(fit.covariance["a", "a"] + fit.covariance["b", "b"] - 2 * fit.covariance["a", "b"], 0.0))
    return diff, diff - Z95 * spread, diff + Z95 * spread
