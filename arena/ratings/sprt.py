"""Two-bot comparisons: the Elo difference with its interval, and a sequential
probability ratio test that stops a match as soon as the evidence decides.

The test is the generalised SPRT of chess engine testing (fishtest, fastchess).
H0 says the first bot's Elo advantage is ``elo0``, H1 says ``elo1``; the
log-likelihood ratio (LLR) of the results seen so far is compared with the bounds
log(beta / (1 - alpha)) and log((1 - beta) / alpha).

The results are counted as a multinomial: per game (loss, draw, win: trinomial),
or, when every opening is played twice with the colours swapped, per pair of games
(0, 0.5, 1, 1.5 or 2 points: pentanomial). A pair is one observation because the
two games of a pair are not independent: the opening and the colour shape both,
and counting them as independent games overstates how noisy the results are, so
the trinomial test plays more games than it needs and errs less than it says.

Each hypothesis is a set of distributions: those whose expected score is the
logistic Elo's (``model=logistic``), or whose normalized Elo (the score's distance
from one half in standard deviations of a game's score, ``model=normalized``) is
the bound. The likelihood of each hypothesis is the largest one over its set: the
maximum of sum n_i log p_i under that constraint, found exactly by a root find on
the Lagrange multiplier (M. Van den Bergh, "Comments on normalized Elo"). No
normal approximation is made, so a short run of wins is not mistaken for proof.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.errors import ArenaError

CONTINUE, ACCEPT_H0, ACCEPT_H1 = "continue", "H0", "H1"
MODELS = ("logistic", "normalized")

Z95 = 1.959963984540054  # the two-sided 95% quantile of the normal distribution
#: A result that has not happened yet is counted this many times instead of zero
#: (as fishtest and fastchess do): with a true zero the constrained maximum would
#: sit on the simplex's edge and a sweep would be infinitely convincing.
UNSEEN = 1e-3
#: Normalized Elo per unit of t = (score - 1/2) / (standard deviation of a game's score).
NELO_PER_T = 800 / math.log(10)
#: The normalized Elo bounds allowed: beyond this the constraint leaves almost no
#: distribution of results to choose from, and a bound that far apart tests nothing useful.
MAX_NORMALIZED_ELO = 200.0
PRIOR_DRAWS = 1.0  # virtual draws of each bot against an average field, as in the standings


class SprtError(ArenaError):
    """SPRT settings that do not make sense."""


@dataclass(frozen=True)
class Outcomes:
    """How often each result happened to the first bot, lowest score first: per game
    (losses, draws, wins) or per pair of games on one opening with the colours
    swapped (pairs where it took 0, 0.5, 1, 1.5 and 2 points)."""

    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.counts) not in (3, 5) or min(self.counts) < 0:
            raise ValueError(f"outcomes are 3 or 5 counts, none negative: {self.counts}")

    @classmethod
    def games(cls, wins: int, draws: int, losses: int) -> Outcomes:
        return cls((losses, draws, wins))

    @classmethod
    def pairs(cls, points: Iterable[float]) -> Outcomes:
        """From the first bot's points in each pair (0, 0.5, 1, 1.5 or 2)."""
        counts = [0] * 5
        for value in points:
            counts[round(2 * value)] += 1
        return cls(tuple(counts))

    @property
    def paired(self) -> bool:
        return len(self.counts) == 5

    @property
    def games_played(self) -> int:
        return sum(self.counts) * (2 if self.paired else 1)

    @property
    def scores(self) -> tuple[float, ...]:
        """Each result's score per game: 0, 1/2, 1 (or 0, 1/4, ..., 1 for a pair)."""
        last = len(self.counts) - 1
        return tuple(i / last for i in range(len(self.counts)))

    def swapped(self) -> Outcomes:
        """The same results seen by the other bot."""
        return Outcomes(self.counts[::-1])

    def label(self) -> str:
        return "pentanomial" if self.paired else "trinomial"


@dataclass(frozen=True)
class Sprt:
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise SprtError(f"SPRT needs elo0 < elo1, got elo0={self.elo0:g}, elo1={self.elo1:g}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise SprtError(f"SPRT {name} must be between 0 and 0.5, got {value:g}")
        if self.model not in MODELS:
            raise SprtError(f"SPRT model must be logistic or normalized, got {self.model!r}")
        if self.model == "normalized" and max(abs(self.elo0), abs(self.elo1)) > MAX_NORMALIZED_ELO:
            raise SprtError(
                f"normalized Elo bounds must lie within +-{MAX_NORMALIZED_ELO:g}, "
                f"got elo0={self.elo0:g}, elo1={self.elo1:g}"
            )
        for name in ("elo0", "elo1"):
            if not math.isfinite(getattr(self, name)):
                raise SprtError(f"SPRT {name} must be a finite number")

    @classmethod
    def parse(cls, text: str, where: str = "--sprt") -> Sprt:
        """From ``elo0=0,elo1=20[,alpha=0.05,beta=0.05,model=logistic|normalized]``, the
        items apart by commas or spaces (as :meth:`describe` writes them); ``where``: what
        an error names (the option or the league file's key)."""
        usage = "use elo0=0,elo1=20[,alpha=0.05,beta=0.05,model=logistic|normalized]"
        values: dict[str, float] = {}
        model = "logistic"
        for item in filter(None, re.split(r"[,\s]+", re.sub(r"\s*=\s*", "=", text))):
            key, eq, value = item.partition("=")
            if not eq or key not in ("elo0", "elo1", "alpha", "beta", "model"):
                raise SprtError(f"bad {where} item {item[:40]!r}: {usage}")
            if key == "model":
                model = value
                continue
            try:
                values[key] = float(value)
            except ValueError:
                raise SprtError(f"bad {where} value {item[:40]!r}: {value[:20]!r} is not a number") from None
        return cls(**values, model=model)

    def describe(self) -> str:
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}"

    @property
    def bounds(self) -> tuple[float, float]:
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, outcomes: Outcomes) -> float:
        """Log-likelihood ratio of H1 over H0 given the first bot's results."""
        if not any(outcomes.counts):
            return 0.0
        counts = [count or UNSEEN for count in outcomes.counts]
        total = sum(counts)
        observed = [count / total for count in counts]
        scores = outcomes.scores
        if self.model == "logistic":
            p0 = _mle_with_mean(scores, observed, expected_score(self.elo0))
            p1 = _mle_with_mean(scores, observed, expected_score(self.elo1))
        else:
            # A pair's mean score has half a game's variance (when the games are
            # independent), so a game's t is a pair's t over sqrt(2) (fastchess's convention).
            per_unit = math.sqrt(2) if outcomes.paired else 1.0
            p0 = _mle_with_t(scores, observed, self.elo0 / NELO_PER_T * per_unit)
            p1 = _mle_with_t(scores, observed, self.elo1 / NELO_PER_T * per_unit)
        return sum(count * (math.log(q1) - math.log(q0)) for count, q0, q1 in zip(counts, p0, p1))

    def decision(self, outcomes: Outcomes) -> str:
        lower, upper = self.bounds
        llr = self.llr(outcomes)
        if llr >= upper:
            return ACCEPT_H1
        if llr <= lower:
            return ACCEPT_H0
        return CONTINUE


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def _mle_with_mean(scores: Sequence[float], observed: Sequence[float], mean: float) -> list[float]:
    """The distribution over ``scores`` with this mean that makes the observed
    frequencies likeliest: p_i = observed_i / (1 + x (score_i - mean)), with the
    multiplier x making the mean right."""
    shifted = [score - mean for score in scores]
    x = _multiplier(observed, shifted)
    return [p / (1 + x * a) for p, a in zip(observed, shifted)]


def _mle_with_t(scores: Sequence[float], observed: Sequence[float], t: float) -> list[float]:
    """The distribution over ``scores`` with (mean - 1/2) / sd = ``t`` that makes the
    observed frequencies likeliest. The stationarity condition is the mean case's
    with a shifted score that depends on the solution's own mean and sd, so it is
    solved to a fixed point (section 4 of Van den Bergh's note)."""
    p = [1 / len(scores)] * len(scores)  # a start with some spread, as fishtest's
    for _ in range(200):
        mean = sum(q * a for q, a in zip(p, scores))
        sd = math.sqrt(max(sum(q * (a - mean) ** 2 for q, a in zip(p, scores)), 1e-300))
        shifted = [a - 0.5 - t * sd * (1 + ((a - mean) / sd) ** 2) / 2 for a in scores]
        x = _multiplier(observed, shifted)
        new = [q / (1 + x * a) for q, a in zip(observed, shifted)]
        change = max(abs(u - v) for u, v in zip(new, p))
        p = new
        if change < 1e-15:
            break
    return p


def _multiplier(observed: Sequence[float], shifted: Sequence[float]) -> float:
    """The root x of sum_i observed_i shifted_i / (1 + x shifted_i) = 0 between the
    poles -1/max(shifted) and -1/min(shifted), where the sum falls from +inf to
    -inf: Newton's method, kept inside the shrinking bracket by bisection."""
    top, bottom = max(shifted), min(shifted)
    if not bottom < 0 < top:
        raise SprtError("these SPRT bounds leave no distribution of results to test: bring elo0 and elo1 closer to 0")
    low, high = -1 / top, -1 / bottom
    x = 0.0
    for _ in range(400):
        value = slope = 0.0
        for p, a in zip(observed, shifted):
            term = a / (1 + x * a)
            value += p * term
            slope -= p * term * term
        if value == 0:
            return x
        if value > 0:
            low = x
        else:
            high = x
        step = x - value / slope
        if not low < step < high:
            step = (low + high) / 2
        if abs(step - x) <= 1e-16 * max(1.0, abs(x)):
            return step
        x = step
    return x


def normalized_elo(outcomes: Outcomes) -> float:
    """(score - 1/2) / (standard deviation of a game's score) x 800 / ln 10, with a
    pair's variance counting as half a game's (fastchess's convention)."""
    counts = [count or UNSEEN for count in outcomes.counts]
    total = sum(counts)
    mean = sum(c * a for c, a in zip(counts, outcomes.scores)) / total
    variance = sum(c * (a - mean) ** 2 for c, a in zip(counts, outcomes.scores)) / total
    per_game = variance * (2 if outcomes.paired else 1)
    return (mean - 0.5) / math.sqrt(per_game) * NELO_PER_T


def elo_with_interval(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """(Elo difference, lower, upper) of the 95% interval, from one bot's results.

    The maximum-likelihood fit of the logistic model, with one virtual draw of each
    bot against an average field (as the standings do), so a 10-0 sweep gets a
    large but finite difference with a wide interval rather than infinity.
    """
    if wins + draws + losses == 0:
        raise ValueError("no games: nothing to rate")
    k = math.log(10) / 400
    up, down = wins + draws / 2, losses + draws / 2

    def slope(diff: float) -> float:
        # Each bot sits diff/2 from the average field it draws its virtual games against.
        e, half = expected_score(diff), expected_score(diff / 2)
        return k * (up * (1 - e) - down * e) + PRIOR_DRAWS * k * (1 - 2 * half) / 2

    low, high = -4000.0, 4000.0
    for _ in range(200):  # the log-likelihood is concave: its slope falls through zero once
        middle = (low + high) / 2
        if slope(middle) > 0:
            low = middle
        else:
            high = middle
    diff = (low + high) / 2
    e, half = expected_score(diff), expected_score(diff / 2)
    curvature = k * k * (up + down) * e * (1 - e) + PRIOR_DRAWS * k * k * half * (1 - half) / 2
    spread = 1 / math.sqrt(curvature)
    return diff, diff - Z95 * spread, diff + Z95 * spread
