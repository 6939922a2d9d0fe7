"""A league's gate: a new version of a bot enters the ladder only once a sequential
test says it is stronger than its author's previous version.

A league file's ``[gate]`` table sets the test (``sprt``, in ``arena match
--sprt``'s words) and the most pairs of games it may take (``max_pairs``). A version
whose author has an active version of the same bot in the league waits as an
entrant of status ``testing``; the league plays it against that version, pair after
pair (one opening, each side moving first once), and counts each pair's points
(0, 1/2, 1, 3/2 or 2: the pentanomial SPRT of :mod:`arena.ratings.sprt`). H1
accepted: the new version becomes active and the previous one retires. H0
accepted, or ``max_pairs`` played with no decision: the new version is
``rejected``, the reason stored, and the previous one plays on. A first version
enters at once, as without a gate.

The test's games are stored under a tournament row of their own (format
``gate``), never the league's, so they count in none of its standings; and they are
the test's whole state: the decision is the test's verdict on the pairs stored, in
their order (pair 0, 1, 2, ... up to the first pair not stored yet), so a league
killed mid-test and run again decides exactly as one never stopped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from arena.engine.game import Rules
from arena.errors import ArenaError
from arena.league.settings_tables import checked_table
from arena.ratings.selection import GATE_FORMAT
from arena.ratings.sprt import ACCEPT_H0, ACCEPT_H1, CONTINUE, Outcomes, Sprt, SprtError, elo_with_interval
from arena.records import BotCode, GameRecord, GameSpec
from arena.store import Entry, GateTest, League, Store
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import field_game, iter_openings

#: The [gate] table of a league file.
GATE_KEYS: dict[str, tuple[type, ...]] = {"sprt": (str,), "max_pairs": (int,)}
DEFAULT_MAX_PAIRS = 1000  # 2,000 games: more than bounds 10 Elo apart take between bots that differ
MOST_PAIRS = 100_000  # as a match's sequential test plays at most
#: A gate test's game key: the new version, its previous one, the pair, who moved first
#: (``a``: the new version).
KEY = re.compile(r".*-p(?P<pair>\d+)-(?P<side>[ab])")


class GateError(ArenaError):
    """A league's [gate] table that cannot be used."""


@dataclass(frozen=True)
class GateSettings:
    test: Sprt
    max_pairs: int = DEFAULT_MAX_PAIRS

    def describe(self) -> str:
        """The test as stored with each gate test (:meth:`Sprt.parse` reads it back)."""
        return f"{self.test.describe()} model={self.test.model}"


def gate_of(raw: dict[str, Any], source: str = "<league>") -> GateSettings | None:
    """The [gate] table of a league's settings, checked; None for a league without one."""
    table = checked_table(raw, "gate", GATE_KEYS, GateError, source, 'as [gate] with sprt = "elo0=0 elo1=10"')
    if table is None:
        return None
    if "sprt" not in table:
        raise GateError(f"{source}: gate.sprt is missing: give the test's bounds, as sprt = \"elo0=0 elo1=10\"")
    try:
        test = Sprt.parse(table["sprt"], "gate.sprt")
    except SprtError as exc:
        raise GateError(f"{source}: {exc}") from None
    max_pairs = table.get("max_pairs", DEFAULT_MAX_PAIRS)
    if not 1 <= max_pairs <= MOST_PAIRS:
        raise GateError(f"{source}: gate.max_pairs must be 1 to {MOST_PAIRS:,}, got {max_pairs}")
    return GateSettings(test, max_pairs)


def open_test(store: Store, league: League, entry: Entry, previous: Entry, settings: GateSettings,
              rules: Rules) -> GateTest:
    """Start testing ``entry`` against ``previous`` (in the caller's transaction): the
    tournament row its games go under, and the test's own row."""
    # Named by the entry's number, not the bot's name: a removed account's bot names are
    # rewritten wherever they are stored, and a tournament's name is the organiser's.
    name = f"{league.name} gate {entry.id}"
    while store.tournaments.get(name) is not None:  # a tournament someone named so: the test takes another name
        name += "+"
    identity = {"format": GATE_FORMAT, "rules": rules.as_dict(), "name": name}
    config = {"league": league.name, "version": entry.spec, "previous": previous.spec, "sprt": settings.describe(),
              "max_pairs": settings.max_pairs}
    tournament_id = store.tournaments.start(name, GATE_FORMAT, identity, config, 0)
    return store.gates.start(entry.id, league.id, previous.id, tournament_id, settings.describe(),
                             settings.max_pairs)


def withdraw(store: Store, entry: Entry, why: str) -> None:
    """End the test of ``entry`` undecided (in the caller's transaction): a newer
    version came, or its author retired it."""
    test = store.gates.get(entry.id)
    if test is not None and test.status == "running":
        store.gates.decide(entry.id, "withdrawn", why)
        store.tournaments.set_status(test.tournament_id, "finished")


# --- the test's state, from its games ------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What a test's stored games say: its decision over the pairs counted so far."""

    decision: str  # CONTINUE, ACCEPT_H0 or ACCEPT_H1
    pairs: int  # pairs counted: pair 0 onwards, up to the first not stored (or the decision)
    outcomes: Outcomes  # the new version's points per pair counted (pentanomial)
    llr: float
    wins: int  # the new version's games in the pairs counted
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def elo(self) -> tuple[float, float, float] | None:
        """The new version's Elo over the previous one, with its 95% interval (None before a pair)."""
        return elo_with_interval(self.wins, self.draws, self.losses) if self.pairs else None


class Tally:
    """A test's games as they are stored, in any order: the new version's points per
    game, and the test counted over the pairs stored in order, carried on as pairs
    come (each pair's log-likelihood ratio is computed once)."""

    def __init__(self, test: Sprt, max_pairs: int) -> None:
        self.test = test
        self.max_pairs = max_pairs
        self.points: dict[int, float] = {}  # by game number: 2 * pair, + 1 where the previous version moved first
        self.counts = [0] * 5
        self.games = [0, 0, 0]  # the new version's losses, draws, wins
        self.pairs = 0
        self.llr = 0.0
        self.decision = CONTINUE

    def add(self, number: int, points: float) -> None:
        self.points[number] = points
        while (self.decision == CONTINUE and self.pairs < self.max_pairs and 2 * self.pairs in self.points
               and 2 * self.pairs + 1 in self.points):
            first, second = self.points[2 * self.pairs], self.points[2 * self.pairs + 1]
            self.counts[round(2 * (first + second))] += 1
            for game in (first, second):
                self.games[round(2 * game)] += 1
            self.pairs += 1
            outcomes = Outcomes(tuple(self.counts))
            self.llr = self.test.llr(outcomes)
            self.decision = self.test.decision(outcomes)

    @property
    def undecided_at_the_end(self) -> bool:
        return self.decision == CONTINUE and self.pairs >= self.max_pairs

    def verdict(self) -> Verdict:
        losses, draws, wins = self.games
        return Verdict(self.decision, self.pairs, Outcomes(tuple(self.counts)), self.llr, wins, draws, losses)

    def reason(self) -> str:
        """The test's end in words (for its author and the test's page)."""
        lower, upper = self.test.bounds
        unit = "normalized Elo" if self.test.model == "normalized" else "Elo"
        seen = f"after {self.pairs} pair{'s' if self.pairs != 1 else ''} of games, LLR {self.llr:.2f}"
        if self.decision == ACCEPT_H1:
            return (f"accepted {seen} (upper bound {upper:.2f}): the games favour an advantage of "
                    f"{self.test.elo1:g} {unit} over {self.test.elo0:g}")
        if self.decision == ACCEPT_H0:
            return (f"rejected {seen} (lower bound {lower:.2f}): the games favour an advantage of "
                    f"{self.test.elo0:g} {unit} over {self.test.elo1:g}; the previous version plays on")
        return (f"rejected: undecided {seen} (bounds {lower:.2f}, {upper:.2f}) when the league's gate.max_pairs "
                f"({self.max_pairs}) was reached; the previous version plays on")


def game_number(key: str) -> int | None:
    """A gate game's number from its key (2 * pair, + 1 where the previous version moved first)."""
    found = KEY.fullmatch(key)
    return None if found is None else 2 * int(found["pair"]) + (found["side"] == "b")


def new_points(first: str, winner: int | None, version: str) -> float:
    """The tested version's points in a game: who moved first, who won."""
    if winner is None:
        return 0.5
    return 1.0 if (winner == 0) == (first == version) else 0.0


def stored_tally(store: Store, test: GateTest, version: str) -> Tally:
    """A test's tally from its stored games."""
    tally = Tally(Sprt.parse(test.sprt), test.max_pairs)
    for key, first, winner in store.gates.results(test.tournament_id):
        number = game_number(key)
        if number is not None:
            tally.add(number, new_points(first, winner, version))
    return tally


# --- the league's runner: the tests' games first, their decisions stored ------------------


@dataclass
class Running:
    """A test the league plays: the two versions, their code, and its tally."""

    test: GateTest
    version: Entry
    previous: Entry
    code: dict[str, BotCode]
    tally: Tally


class Gatekeeper:
    """The running tests of a league, as :func:`arena.league.scheduler.run_league`
    plays them: their next games (before the ladder's), the games that finished, and
    each decision stored as soon as the stored games make it."""

    def __init__(self, store: Store, league: League, config: TournamentConfig,
                 say: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.league = league
        self.config = config
        self.say = say or (lambda text: None)
        self.running: dict[int, Running] = {}  # by the tested version's entry id
        self.handed: dict[str, Running] = {}  # game key -> its test, for the games handed out
        self._openings: list[tuple[int, ...]] = []
        self._more_openings: Iterator[tuple[int, ...]] = iter_openings(config)

    def refresh(self) -> None:
        """Follow the tests started (a version submitted while the league runs) and ended
        elsewhere (withdrawn); a test seen for the first time is tallied from its stored
        games, and decided at once if they decide it (a league stopped between storing
        the deciding pair and storing the decision)."""
        tests = {test.entry_id: test for test in self.store.gates.of_league(self.league.id, status="running")}
        for entry_id in [e for e in self.running if e not in tests]:
            del self.running[entry_id]
        for entry_id, test in tests.items():
            if entry_id in self.running:
                continue
            version, previous = self.store.leagues.entry(entry_id), self.store.leagues.entry(test.previous_entry_id)
            if version is None or previous is None or version.status != "testing":
                continue
            code = {}
            for entry in (version, previous):
                submission = self.store.submissions.by_id(entry.submission_id) if entry.submission_id else None
                if submission is not None:
                    code[entry.spec] = self.store.submissions.code(submission)
            self.running[entry_id] = Running(test, version, previous, code,
                                             stored_tally(self.store, test, version.spec))
        self.settle()

    def next_games(self, limit: int, in_flight: AbstractSet[str] = frozenset()) -> list[GameSpec]:
        """Up to ``limit`` games of the running tests not stored nor in flight, each
        test's pairs in order, the oldest test first."""
        chosen: list[GameSpec] = []
        for run in self.running.values():
            tally = run.tally
            for number in range(2 * tally.pairs, 2 * tally.max_pairs):
                if len(chosen) >= limit:
                    return chosen
                if number in tally.points:
                    continue
                spec = self._spec(run, number)
                if spec.key in in_flight:
                    continue
                self.handed[spec.key] = run
                chosen.append(spec)
        return chosen

    def owns(self, record: GameRecord) -> GateTest | None:
        """The test a finished game is of (None: a game of the ladder)."""
        run = self.handed.get(record.spec.key)
        return None if run is None else run.test

    def stored(self, records: Sequence[GameRecord]) -> None:
        """Count the games of the tests just stored."""
        for record in records:
            run = self.handed.pop(record.spec.key, None)
            number = game_number(record.spec.key)
            if run is None or number is None or run.version.id not in self.running:
                continue
            run.tally.add(number, new_points(record.spec.first, record.winner, run.version.spec))

    def settle(self) -> None:
        """Store the decision of each test its games decided: the version let in (its
        previous one retired) or kept out, with the reason."""
        for entry_id, run in list(self.running.items()):
            tally = run.tally
            if tally.decision == CONTINUE and not tally.undecided_at_the_end:
                continue
            accepted = tally.decision == ACCEPT_H1
            reason = tally.reason()
            with self.store.transaction():
                current = self.store.leagues.entry(entry_id)
                if current is None or current.status != "testing":  # retired or replaced meanwhile
                    del self.running[entry_id]
                    continue
                self.store.gates.decide(entry_id, "accepted" if accepted else "rejected", reason)
                self.store.tournaments.set_status(run.test.tournament_id, "finished")
                self.store.leagues.set_entry_status(entry_id, "active" if accepted else "rejected")
                previous = self.store.leagues.entry(run.previous.id)
                if accepted and previous is not None and previous.status == "active":
                    self.store.leagues.retire_entry(previous.id)
                self.store.accounts.audit("gate", run.version.spec, None, f"league {self.league.name}: {reason}")
            del self.running[entry_id]
            self.say(f"league {self.league.name!r}: {run.version.spec} {reason}")

    def _spec(self, run: Running, number: int) -> GameSpec:
        new, old = run.version.spec, run.previous.spec
        pair = number // 2
        key = f"{new}~{old}-p{pair:04d}-{'b' if number % 2 else 'a'}"
        first, second = (old, new) if number % 2 else (new, old)
        return field_game(self.config, key, f"{new}~{old}", first, second, self._opening(pair), run.code)

    def _opening(self, pair: int) -> tuple[int, ...]:
        """The league's openings, in its order (a test's pair k opens as its pairings' k-th)."""
        while len(self._openings) <= pair:
            self._openings.append(next(self._more_openings))
        return self._openings[pair]
