"""Elo ratings as pure functions of game results.

The model is made for this game, where moving first is an advantage and draws
happen: each bot has a strength r, the first player gets a bonus h, and a game
between strengths a (with the bonus) and b is won, drawn or lost with
probabilities proportional to e^(a/2 - b/2), nu and e^(b/2 - a/2) (Davidson's
draw model, on the logistic Elo scale: with no draws it is Bradley-Terry). The
first-move advantage h and the draw parameter nu are estimated with the
ratings, in one maximum-likelihood fit of all games at once, so the result does
not depend on the order games finished in. Davidson's model is an exponential
family (its statistics are wins minus losses, and draws): its Fisher
information does not depend on the data, so the intervals take a draw for what
it is, a less variable result than a win or a loss.

A bot that won (or lost) every game has no finite maximum; nor do bots that
never met. So:

- bots are rated in *groups* (connected by games played between them); each
  group is centred on its own, and ratings are comparable only inside one;
- each bot plays a small virtual draw (``PRIOR_DRAWS`` in all) spread over the
  opponents it actually met, in proportion to the games it played against
  each (as BayesElo does): it keeps a perfect score finite without pulling a
  ladder's ends towards a fixed centre, and such a bot is flagged as a bound.

Intervals come from the inverse Fisher information, for each bot against its
group's centre; LOS (likelihood of superiority) from the covariance of a pair.
Newton's method finds the maximum, its steps solved by Cholesky, or from 1000
bots by conjugate gradients on the sparse matrix (a pairing is one entry), and
the inverse is formed once, at the end.

Incremental (K-factor) Elo is offered beside it, computed in the order given,
which callers make the game-key order so that it is reproducible too.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.errors import ArenaError

ELO_PER_NATURAL = 400 / math.log(10)  # 400 * log10 odds, in natural-log units
MEAN_RATING = 1500.0
Z95 = 1.959963984540054
PRIOR_DRAWS = 0.5  # virtual draws of each bot, spread over the opponents it met
# Weak normal priors on the first-move advantage and on log nu, worth a few games:
# without them a pair that always met in the same colours could not tell the
# advantage from the gap, and a league of draws only would send nu to infinity.
PRIOR_FIRST_MOVE_SD = 1000 / ELO_PER_NATURAL
PRIOR_LOG_NU_SD = 5.0
# From this many bots a Newton step is solved by conjugate gradients on the sparse
# information matrix (O(pairings) an iteration) instead of a dense Cholesky (O(n^3)).
SPARSE_FROM = 1000
CG_ITERATIONS = 2000  # see _Information.solve_sparse
CG_TOLERANCE = 1e-12  # of the residual, relative to the gradient's norm


def cg(*args: Any, **kwargs: Any) -> tuple[np.ndarray, int]:
    """scipy's conjugate gradients, imported on first use: a tournament's start-up
    need not pay for scipy (the tests count the solves through this name)."""
    from scipy.sparse.linalg import cg as conjugate_gradients

    return conjugate_gradients(*args, **kwargs)


class RatingsError(ArenaError):
    """Ratings asked for in a way the games cannot give (an anchor bot that played no game)."""


@dataclass(frozen=True)
class Result:
    """One game: who played first and second, and the first player's score (1, 0.5, 0)."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class Rating:
    bot: str
    elo: float
    interval: float  # half-width of the 95% confidence interval, in Elo
    group: int = 1  # bots are comparable only within a group (1 is the largest)
    bound: str | None = None  # ">" for a bot that won every game, "<" for one that lost every game


class Covariance(Mapping[tuple[str, str], float]):
    """The covariance of the centred ratings, in Elo^2, for pairs of bots in the
    same group: a view of one matrix F, covariance[a, b] being the dot product of
    its columns a and b (F is the inverse Cholesky factor of the fit's information,
    each group's columns centred). A dict of every pair would hold n^2 Python
    floats, and forming the covariance matrix from F would more than double the
    fit's time (see ``_inverse_factor``); a pair costs O(n) here, and a rating table
    asks for few."""

    def __init__(self, names: list[str], rows: np.ndarray, factor: np.ndarray, groups: np.ndarray) -> None:
        self._index = {name: int(row) for name, row in zip(names, rows.tolist())}
        self._matrix = factor
        self._groups = groups

    def __getitem__(self, pair: tuple[str, str]) -> float:
        i, j = self._index[pair[0]], self._index[pair[1]]
        if self._groups[i] != self._groups[j]:
            raise KeyError(pair)  # nothing relates bots of different groups
        return float(self._matrix[:, i] @ self._matrix[:, j])

    def block(self, names: Sequence[str]) -> np.ndarray:
        """The covariance of ``names`` among themselves as one matrix, in one product:
        what a pass over every pair of a field needs. An entry of two bots in different
        groups means nothing (where :meth:`__getitem__` raises): the caller checks groups."""
        columns = self._matrix[:, [self._index[name] for name in names]]
        result: np.ndarray = columns.T @ columns
        return result

    def __iter__(self) -> Iterator[tuple[str, str]]:
        names = list(self._index)
        return ((a, b) for a in names for b in names if self._groups[self._index[a]] == self._groups[self._index[b]])

    def __len__(self) -> int:
        return int(sum(count**2 for count in np.bincount(self._groups).tolist()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Covariance):  # the same bits, not just close
            return self._index == other._index and np.array_equal(self._matrix, other._matrix) and np.array_equal(
                self._groups, other._groups)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a dict

    def __repr__(self) -> str:
        digest = hashlib.sha256(self._matrix.tobytes()).hexdigest()[:16]
        return f"Covariance({len(self._index)} bots, matrix sha256 {digest})"


@dataclass
class Fit:
    ratings: dict[str, Rating]
    covariance: Mapping[tuple[str, str], float]  # of the centred ratings within a group, in Elo^2
    first_move_elo: float = 0.0  # the first player's advantage, in Elo
    first_move_interval: float = 0.0
    draw_rate: float = 0.0  # how often two equal bots draw, the first move aside (nu / (2 + nu))
    groups: int = 1
    group_sizes: list[int] = field(default_factory=list)

    def los(self, a: str, b: str) -> float | None:
        """Likelihood of superiority: the probability that ``a`` is stronger than
        ``b``; None when they are in different groups (nothing compares them)."""
        if self.ratings[a].group != self.ratings[b].group:
            return None
        var = self.covariance[a, a] + self.covariance[b, b] - 2 * self.covariance[a, b]
        diff = self.ratings[a].elo - self.ratings[b].elo
        if var <= 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return 0.5 * (1 + math.erf(diff / math.sqrt(2 * var)))


@dataclass
class PairCounts:
    """Results aggregated by (first, second): the fit needs nothing else."""

    counts: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0, 0.0]))

    def add(self, first: str, second: str, wins: float, draws: float, losses: float) -> None:
        row = self.counts[first, second]
        row[0] += wins
        row[1] += draws
        row[2] += losses

    def add_game(self, first: str, second: str, score: float) -> None:
        """One game, ``score`` the first player's (1, 0.5 or 0)."""
        self.add(first, second, float(score == 1), float(score == 0.5), float(score == 0))

    @classmethod
    def of(cls, results: Iterable[Result]) -> PairCounts:
        pairs = cls()
        for r in results:
            pairs.add_game(r.first, r.second, r.score)
        return pairs


def fit_ratings(
    results: Iterable[Result] | PairCounts,
    anchor: tuple[str, float] | None = None,
    bots: Sequence[str] | None = None,
) -> Fit:
    """Maximum-likelihood Elo of every bot, with the first-move advantage and the
    draw rate; each group's mean is 1500, unless ``anchor`` = (bot, rating) pins
    one bot (and so its group) instead."""
    pairs = results if isinstance(results, PairCounts) else PairCounts.of(results)
    counts = {key: value for key, value in pairs.counts.items() if sum(value) > 0 and key[0] != key[1]}
    names = sorted({*(bots or ()), *(name for key in counts for name in key)})
    if anchor is not None and anchor[0] not in names:
        raise RatingsError(f"anchor bot {anchor[0]!r} played no game here; bots: {', '.join(names)}")
    if not names:
        return Fit({}, {})
    if not counts:  # listed bots, no game: each a group of its own, at the mean
        return Fit({name: Rating(name, MEAN_RATING, 0.0, group, None) for group, name in enumerate(names, start=1)},
                   {(name, name): 0.0 for name in names}, groups=len(names), group_sizes=[1] * len(names))
    index = {name: i for i, name in enumerate(names)}
    keys = sorted(counts)  # a fixed order: the same games give the same bits
    first = np.array([index[a] for a, _ in keys], dtype=np.int64)
    second = np.array([index[b] for _, b in keys], dtype=np.int64)
    wdl = np.array([counts[k] for k in keys], dtype=float).reshape(-1, 3)
    groups = _groups(len(names), first, second)
    # The fit's rows hold the bots group by group (in name order inside each), so that a
    # group's block of the matrices is a slice, worked on in place.
    order = np.argsort(groups, kind="stable")
    rows = np.empty(len(names), dtype=np.int64)
    rows[order] = np.arange(len(names))
    first, second, groups = rows[first], rows[second], groups[order]
    starts = np.flatnonzero(np.diff(groups, prepend=0))
    r, h, theta, factor = _fit(len(names), first, second, wdl, starts)
    return _report(names, rows, r, h, theta, factor, groups, starts, anchor, first, second, wdl)


def incremental_elo(
    results: Iterable[Result], k: float = 16.0, start: float = MEAN_RATING
) -> dict[str, float]:
    """Classic sequential Elo, applying ``results`` in the order given."""
    elo: dict[str, float] = defaultdict(lambda: start)
    for r in results:
        expected = 1 / (1 + 10 ** ((elo[r.second] - elo[r.first]) / 400))
        change = k * (r.score - expected)
        elo[r.first] += change
        elo[r.second] -= change
    return dict(elo)


def elo_difference(score: float) -> float:
    """The Elo gap that makes ``score`` (0..1, exclusive) the expected score."""
    if not 0 < score < 1:
        return math.copysign(math.inf, score - 0.5)
    return -400 * math.log10(1 / score - 1)


# --- the fit ----------------------------------------------------------------------


def _groups(n: int, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Each bot's group, numbered from 1 by size (largest first), then by first name."""
    # scipy is imported where it is used: it takes longer to import (0.6 s) than a
    # tournament of thousands of short games takes to play, and only a fit needs it.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(first)), (first, second)), shape=(n, n))
    count, component = connected_components(graph, directed=False)
    sizes = np.bincount(component, minlength=count)
    # np.unique gives each component's first occurrence in index order: its first name.
    _, lowest = np.unique(component, return_index=True)
    numbers = np.empty(count, dtype=np.int64)
    numbers[np.lexsort((lowest, -sizes))] = np.arange(1, count + 1)
    labels: np.ndarray = numbers[component].astype(np.int64)
    return labels


@dataclass(frozen=True)
class _Information:
    """The Fisher information plus the priors' curvature at one point, in its parts,
    over (strengths, h, theta), the bots in group order: the strengths' block is a
    graph Laplacian, one weight per pairing, bordered by the columns of h (and theta)
    and their small corner.

    The Laplacian is singular (only differences within a group are fitted), so each
    group g adds alpha_g u_g u_g^T, u_g the unit vector along its strengths' sum (the
    ``gauge``, alpha_g / |g| on every entry of its block). That makes the matrix
    positive definite, Cholesky and conjugate gradients apply, and its inverse is the
    pseudo-inverse plus sum_g u_g u_g^T / alpha_g, a term the centring of each group
    removes exactly; a Newton step, the gradient having no component along any u_g,
    has none either, so each group's strengths keep their sum."""

    first: np.ndarray
    second: np.ndarray
    weight: np.ndarray  # one per pairing: the information of its strength difference
    border: np.ndarray  # n by k: the columns of h (and theta) in the strengths' rows
    corner: np.ndarray  # k by k: (h, theta) with themselves
    starts: np.ndarray  # the first row of each group (the groups are contiguous)
    gauge: np.ndarray  # alpha_g / |g| of each group

    @property
    def bots(self) -> int:
        return len(self.border)

    def dense(self) -> np.ndarray:
        """The whole matrix, in Fortran order for LAPACK to overwrite in place."""
        n, k = self.border.shape
        # np.empty and a fill, not np.zeros: adding to calloc's untouched pages costs a page
        # fault per read and per write, 2 s at 10,000 bots against 0.1 s.
        matrix = np.empty((n + k, n + k), order="F")
        matrix.fill(0.0)
        for start, end, add in zip(self.starts.tolist(), [*self.starts[1:].tolist(), n], self.gauge.tolist()):
            matrix[start:end, start:end] = add  # a view: no copy of the block
        strengths = np.arange(n)
        matrix[strengths, strengths] += self._degrees()
        # Through the flat view (entry (i, j) at i + j (n + k)): add.at on index pairs is 5 times slower.
        flat = matrix.ravel(order="F")
        np.add.at(flat, self.first + self.second * (n + k), -self.weight)
        np.add.at(flat, self.second + self.first * (n + k), -self.weight)
        matrix[:n, n:] = self.border
        matrix[n:, :n] = self.border.T
        matrix[n:, n:] = self.corner
        return matrix

    def solve_sparse(self, gradient: np.ndarray) -> np.ndarray | None:
        """The Newton step by conjugate gradients on the sparse Laplacian, the border and
        the gauge applied as they are (the gauge would fill the matrix), preconditioned by
        the diagonal; None when it does not converge in ``CG_ITERATIONS``. A league whose
        pairings mix it well converges in tens of iterations; 10,000 bots each against
        its 50 neighbours in a ranking, a band, take about 540 (0.2 s); a long ladder's
        Laplacian is ill-conditioned, and 2000 iterations (0.8 s there) are spent once
        before the dense steps (5 s and more at that size) take over."""
        from scipy.sparse import csr_matrix
        from scipy.sparse.linalg import LinearOperator

        n, k = self.border.shape
        strengths = np.arange(n)
        rows = np.concatenate([strengths, self.first, self.second])
        columns = np.concatenate([strengths, self.second, self.first])
        entries = np.concatenate([self._degrees(), -self.weight, -self.weight])
        laplacian = csr_matrix((entries, (rows, columns)), shape=(n, n))
        sizes = np.diff([*self.starts.tolist(), n])

        def product(vector: np.ndarray) -> np.ndarray:
            strengths, rest = vector[:n], vector[n:]
            out = np.empty(n + k)
            sums = np.add.reduceat(strengths, self.starts)
            out[:n] = laplacian @ strengths + self.border @ rest + np.repeat(self.gauge * sums, sizes)
            out[n:] = self.border.T @ strengths + self.corner @ rest
            return out

        diagonal = np.concatenate([self._degrees() + np.repeat(self.gauge, sizes), np.diag(self.corner)])
        step, info = cg(LinearOperator((n + k, n + k), matvec=product, dtype=float), gradient,
                        rtol=CG_TOLERANCE, atol=0.0, maxiter=CG_ITERATIONS,
                        M=LinearOperator((n + k, n + k), matvec=lambda v: v / diagonal, dtype=float))
        return step if info == 0 else None

    def _degrees(self) -> np.ndarray:
        n = self.bots
        degrees: np.ndarray = (np.bincount(self.first, weights=self.weight, minlength=n)
                               + np.bincount(self.second, weights=self.weight, minlength=n))
        return degrees


def _fit(
    n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, float, float, np.ndarray]:
    """Strengths (natural-log units, each group summing to 0), first-move advantage h,
    log nu, and the inverse L^-1 of the Cholesky factor of the information, the bots in
    group order, groups starting at ``starts``: the covariance of (strengths, h) is
    (L^-1)^T L^-1, up to the gauge, which the centring removes."""
    games = wdl.sum(axis=1)
    fit_draws = bool(wdl[:, 1].sum() > 0)  # with no draw at all nu is 0: Bradley-Terry
    # The prior: PRIOR_DRAWS virtual draws per bot, spread over its opponents by games played.
    played = np.bincount(first, weights=games, minlength=n) + np.bincount(second, weights=games, minlength=n)
    prior = PRIOR_DRAWS * games * (1 / played[first] + 1 / played[second]) / 2
    x = np.zeros(n + 2 if fit_draws else n + 1)  # strengths, h, theta = log nu
    if fit_draws:
        share = wdl[:, 1].sum() / games.sum()
        x[n + 1] = math.log(2 * share / (1 - share)) if share < 1 else 5.0
    sparse = n >= SPARSE_FROM
    for _ in range(100):
        gradient, information = _derivatives(x, n, first, second, wdl, prior, fit_draws, starts)
        step = information.solve_sparse(gradient) if sparse else None
        if step is None:
            sparse = False  # conjugate gradients failed here: the next steps are alike
            step = _solve(information.dense(), gradient)
        # Damped where it would overshoot: a strength can run far before the prior holds it.
        step *= min(1.0, 3.0 / float(np.max(np.abs(step), initial=1e-300)))
        x += step
        if float(np.max(np.abs(step), initial=0.0)) < 1e-11:
            break
    _, information = _derivatives(x, n, first, second, wdl, prior, fit_draws, starts)
    theta = float(x[n + 1]) if fit_draws else -math.inf
    return x[:n].copy(), float(x[n]), theta, _inverse_factor(information.dense())


def _solve(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """matrix^-1 vector by Cholesky, overwriting ``matrix``."""
    from scipy.linalg import lapack

    _, solution, info = lapack.dposv(matrix, vector, lower=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the information matrix is not positive definite (LAPACK dposv: {info})")
    result: np.ndarray = solution
    return result


def _inverse_factor(matrix: np.ndarray) -> np.ndarray:
    """L^-1 where matrix = L L^T, in the memory of ``matrix``: the dot products of its
    columns are the inverse. LAPACK's potri would form the inverse itself, but its
    second half (lauum, L^-T L^-1) is slow in OpenBLAS: at 6000 bots on two cores the
    factor takes 1.4 s, the triangular inverse 0.8 s and lauum 3.3 s."""
    from scipy.linalg import lapack

    factor, info = lapack.dpotrf(matrix, lower=1, clean=1, overwrite_a=1)
    if info == 0:
        factor, info = lapack.dtrtri(factor, lower=1, overwrite_c=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the information matrix is not positive definite (LAPACK: {info})")
    result: np.ndarray = factor
    return result


def _derivatives(
    x: np.ndarray, n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray, prior: np.ndarray,
    fit_draws: bool, starts: np.ndarray,
) -> tuple[np.ndarray, _Information]:
    """Gradient of the log-likelihood plus prior, and its negative Hessian (the
    Fisher information: Davidson's model is an exponential family), over
    (strengths, h, theta)."""
    wins, draws, losses = wdl[:, 0], wdl[:, 1], wdl[:, 2]
    games = wins + draws + losses
    d = x[first] - x[second] + x[n]
    nu = math.exp(x[n + 1]) if fit_draws else 0.0
    up, down = np.exp(np.clip(d / 2, -300, 300)), np.exp(np.clip(-d / 2, -300, 300))
    total = up + down + nu
    p_win, p_loss, p_draw = up / total, down / total, nu / total
    # The model's statistics: (wins - losses) / 2 for d, draws for theta.
    g_d = (wins - losses) / 2 - games * (p_win - p_loss) / 2
    i_dd = games * (p_win + p_loss - (p_win - p_loss) ** 2) / 4
    # The prior: neutral virtual draws (no first move), logistic.
    s = 1 / (1 + np.exp(-np.clip(x[first] - x[second], -300, 300)))
    g_p, i_p = prior * (0.5 - s), prior * s * (1 - s)
    gradient = np.zeros(len(x))
    gradient[:n] = np.bincount(first, weights=g_d + g_p, minlength=n) - np.bincount(
        second, weights=g_d + g_p, minlength=n)
    gradient[n] = g_d.sum() - x[n] / PRIOR_FIRST_MOVE_SD**2
    # h moves d like the first player's strength; the prior has no h.
    columns = [np.bincount(first, weights=i_dd, minlength=n) - np.bincount(second, weights=i_dd, minlength=n)]
    corner = np.array([[i_dd.sum() + 1 / PRIOR_FIRST_MOVE_SD**2]])
    if fit_draws:
        i_dt = -games * (p_win - p_loss) / 2 * p_draw
        i_tt = games * p_draw * (1 - p_draw)
        gradient[n + 1] = (draws - games * p_draw).sum() - x[n + 1] / PRIOR_LOG_NU_SD**2
        columns.append(np.bincount(first, weights=i_dt, minlength=n) - np.bincount(second, weights=i_dt, minlength=n))
        corner = np.array([[corner[0, 0], i_dt.sum()], [i_dt.sum(), i_tt.sum() + 1 / PRIOR_LOG_NU_SD**2]])
    weight = i_dd + i_p
    # alpha_g: the mean of the group's diagonal, the scale of its Laplacian's eigenvalues (1 for
    # a bot without games, whose diagonal is 0), so that the gauge leaves the conditioning alone.
    degrees = np.bincount(first, weights=weight, minlength=n) + np.bincount(second, weights=weight, minlength=n)
    sizes = np.diff([*starts.tolist(), n])
    alpha = np.add.reduceat(degrees, starts) / sizes
    alpha[alpha <= 0] = 1.0
    information = _Information(first, second, weight, np.stack(columns, axis=1), corner, starts, alpha / sizes)
    return gradient, information


def _report(
    names: list[str], rows: np.ndarray, r: np.ndarray, h: float, theta: float, factor: np.ndarray,
    groups: np.ndarray, starts: np.ndarray, anchor: tuple[str, float] | None, first: np.ndarray,
    second: np.ndarray, wdl: np.ndarray,
) -> Fit:
    """``names`` in name order, ``rows[i]`` the fit's row of ``names[i]``; ``r``,
    ``factor``, ``groups``, ``first`` and ``second`` are in rows."""
    n = len(names)
    # Each group centred on its own: on its mean, or on the anchor in the anchor's group.
    # centred = (I - W) r, every bot's row of W its group's weights; its covariance
    # (I - W) C (I - W)^T, C = (L^-1)^T L^-1, is that of the columns of L^-1 (I - W)^T:
    # each column less its group's weighted mean column, in place. (I - W) u_g = 0
    # since each group's weights sum to 1, so the gauge term of C goes too.
    anchored = int(rows[names.index(anchor[0])]) if anchor is not None else None
    offsets = np.full(n, MEAN_RATING)
    centred = np.empty(n)
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), n]):
        if anchored is not None and start <= anchored < end:
            centred[start:end] = r[start:end] - r[anchored]
            middle = factor[:, anchored].copy()
            offsets[start:end] = anchor[1]  # type: ignore[index]
        else:
            centred[start:end] = r[start:end] - r[start:end].mean()
            middle = factor[:, start:end].mean(axis=1)
        factor[:, start:end] -= middle[:, None]
    factor *= ELO_PER_NATURAL
    variance = np.einsum("ij,ij->j", factor[:, :n], factor[:, :n])
    scores = _scores(n, first, second, wdl)
    ratings = {}
    for name, row in zip(names, rows.tolist()):
        bound = None
        if scores[row][1] > 0 and scores[row][0] == scores[row][1]:
            bound = ">"
        elif scores[row][1] > 0 and scores[row][0] == 0:
            bound = "<"
        ratings[name] = Rating(name, float(offsets[row] + centred[row] * ELO_PER_NATURAL),
                               Z95 * math.sqrt(float(variance[row])), int(groups[row]), bound)
    pairs = Covariance(names, rows, factor, groups)
    nu = math.exp(theta) if math.isfinite(theta) else 0.0
    sizes = np.bincount(groups, minlength=int(groups.max()) + 1)[1:].tolist()
    return Fit(ratings, pairs, first_move_elo=h * ELO_PER_NATURAL,
               first_move_interval=Z95 * float(np.linalg.norm(factor[:, n])),
               draw_rate=nu / (2 + nu), groups=len(sizes), group_sizes=sizes)


def _scores(n: int, first: np.ndarray, second: np.ndarray, wdl: np.ndarray) -> list[tuple[float, float]]:
    """(points, games) of each bot."""
    points = np.bincount(first, weights=wdl[:, 0] + wdl[:, 1] / 2, minlength=n) + np.bincount(
        second, weights=wdl[:, 2] + wdl[:, 1] / 2, minlength=n)
    games = np.bincount(first, weights=wdl.sum(axis=1), minlength=n) + np.bincount(
        second, weights=wdl.sum(axis=1), minlength=n)
    return list(zip(points.tolist(), games.tolist()))
