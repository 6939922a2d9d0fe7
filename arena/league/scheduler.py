"""Leagues: long-lived competitions that play every new bot against the field by themselves.

A league has fixed settings (a tournament file's keys, plus a ``[league]`` table)
and a changing field: installed bots added when it is created, and the versions
authors submit. ``arena league run`` keeps it played: every active entrant meets
every other active entrant ``games`` times, both colours, from the league's shared
openings, so its crosstable is always complete. A new entrant's games come first;
an author's new version of a bot retires the previous one (its games stay).

The games are stored under a tournament row of the league's name (format
``league``), so every table, page and command that takes ``--tournament`` works
for a league. Keys name the two entrants and the game (``a~b-o0001-b``): the games
of a pairing are the same whenever and in whatever order they are played, which
makes a league resumable exactly as a tournament is.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
import tomllib
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine.openings import new_seed_secret
from arena.entry.checks import require_sandbox
from arena.entry.submissions import VERSIONED
from arena.league.gate import Gatekeeper, gate_of
from arena.league.pairing import MOST_WINDOW, Learning, pairing_of
from arena.league.policy import LEAGUE_FORMAT, LeagueError, delete_old_logs, settings_of
from arena.players.plugins import BotSpecError, installed_bots, load_entry, parse_spec
from arena.ratings.fit import PairCounts
from arena.ratings.results import first_player_score
from arena.records import BotCode, GameRecord, GameSpec
from arena.store import Entry, FinishedGame, League, Store, StoreWriteFailed
from arena.tournament.cluster import ClusterError, worker_needs
from arena.tournament.config import NO_CLUSTER, ConfigError, TournamentConfig, config_from_table
from arena.tournament.execution import Executor, WorkerLost
from arena.tournament.executors import make_executor
from arena.tournament.faults import ArenaFailing, Faults
from arena.tournament.runner import bot_identity, play_games
from arena.tournament.schedule import field_game, iter_openings
from arena.tournament.stopping import signals_deferred, stop_signals

ROUND_GAMES_PER_WORKER = 4  # games handed out per worker before the field is read again
IDLE_SECONDS = 2.0  # how often an idle league looks for a new entrant


def read_league_file(path: str | None) -> dict[str, Any]:
    """A league file's table (a tournament file's keys and a [league] table); an
    openings file is made absolute, so the stored settings do not depend on the
    folder the league runs from."""
    if path is None:
        return {}
    file = Path(path)
    if not file.is_file():
        raise LeagueError(f"league file {path!r} does not exist")
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LeagueError(f"{path}: not valid TOML: {exc}") from None
    openings_table = raw.get("openings")
    if isinstance(openings_table, dict) and isinstance(openings_table.get("file"), str):
        openings_table["file"] = str((file.resolve().parent / openings_table["file"]).resolve())
    return raw


def config_of(raw: dict[str, Any], name: str, source: str = "<league>") -> TournamentConfig:
    """The league's game settings as a tournament configuration (its field changes).
    A league always plays with private seeds (see :func:`run_league`): a league file
    that asks for public ones is refused."""
    table = {key: value for key, value in raw.items()
             if key not in ("league", "gate", "pairing", "name", "db", "format")}
    try:
        config = config_from_table(table, source, Path.cwd(), check_field=False)
    except ConfigError as exc:
        raise LeagueError(str(exc)) from None
    if table.get("private_seeds") is False:
        raise LeagueError(f"{source}: a league always plays with private seeds (with a public seed a bot can "
                          "predict its seeded opponents); remove private_seeds = false")
    return dataclasses.replace(config, name=name, format=LEAGUE_FORMAT)


def create_league(store: Store, name: str, path: str | None) -> League:
    """A new league named ``name`` with the settings of the league file at ``path``
    (defaults otherwise); its installed bots (``bots``) join at once."""
    if not name.strip() or len(name) > 100:
        raise LeagueError(f"bad league name {name!r}: give 1-100 characters")
    raw = read_league_file(path)
    source = path or "<league>"
    settings = settings_of(raw, source)
    gate_of(raw, source)
    config = config_of(raw, name, source)
    pairing_of(raw, config.games, source)
    for spec in config.bots:
        try:
            load_entry(parse_spec(spec), installed_bots())
        except BotSpecError as exc:
            raise LeagueError(f"{source}: bots: {exc}") from None
    if store.leagues.get(name) is not None or store.tournaments.get(name) is not None:
        raise LeagueError(f"there is already a league or tournament named {name!r} in {store.path}: pick another")
    identity = {"format": LEAGUE_FORMAT, "rules": config.rules.as_dict(), "name": name}
    with store.transaction():
        tournament_id = store.tournaments.start(name, LEAGUE_FORMAT, identity, raw, config.seed,
                                                seed_secret=new_seed_secret())
        store.tournaments.set_status(tournament_id, "interrupted")  # not running until 'arena league run'
        league = store.leagues.create(name, raw, tournament_id, settings.public_code, settings.closed)
        for spec in config.bots:
            store.leagues.add_entry(league.id, spec, "active")
        store.accounts.audit("create league", name, detail=", ".join(config.bots))
    return league


def active_field(
    store: Store, league: League, known: dict[int, BotCode] | None = None
) -> tuple[list[Entry], dict[str, BotCode]]:
    """The active entrants, in the order they joined, and the code of the submitted ones.

    ``known`` keeps the code already read, by submission id: a stored version never
    changes, so the runner reads each one's source once, not before every batch."""
    known = {} if known is None else known
    entries = store.leagues.entries(league.id, status="active")
    code: dict[str, BotCode] = {}
    for entry in entries:
        if entry.submission_id is None:
            continue
        if entry.submission_id not in known:
            submission = store.submissions.by_id(entry.submission_id)
            if submission is None:
                continue
            known[entry.submission_id] = store.submissions.code(submission)
        code[entry.spec] = known[entry.submission_id]
    return entries, code


def removed_meanwhile(store: Store, record: GameRecord) -> bool:
    """Whether a submitted version that played ``record`` is no longer stored under its
    name (its author's account was removed while the game was played)."""
    for name, _ in record.spec.submitted:
        match = VERSIONED.fullmatch(name)
        if match is not None and match["version"] and not store.submissions.has(match["name"],
                                                                                 int(match["version"])):
            return True
    return False


def league_seed_secret(store: Store, league: League) -> bytes:
    """The secret of ``league``'s seeds, stored with its tournament row. A league created
    before private seeds has none: it gets one now, and its games from here on are
    seeded (and their openings drawn) with it; the games it stored keep theirs."""
    secret = store.tournaments.seed_secret(league.tournament_id)
    if secret is None:
        store.tournaments.set_seed_secret(league.tournament_id, new_seed_secret())
        secret = store.tournaments.seed_secret(league.tournament_id)
        assert secret is not None
    return secret


class LeagueSchedule:
    """Which games to play next: in turn, every pairing of active entrants, newest
    entrant first; or, with ``learning`` (a league file's ``[pairing] mode =
    "learn"``, :mod:`arena.league.pairing`), the games that teach the most about the
    top of the table.

    What is stored is read once (``stored``) and kept up to date by the runner, and a
    pairing found complete is remembered: choosing the next games costs a pass over
    the pairings still open, never a scan of the stored games."""

    def __init__(self, config: TournamentConfig, stored: set[str], learning: Learning | None = None) -> None:
        self.config = config
        self.stored = stored
        self.learning = learning
        self._lines = iter_openings(config)  # game pair k plays opening k, drawn as a pairing needs it
        self.lines = list(itertools.islice(self._lines, (config.games + 1) // 2))
        self.complete: set[tuple[str, str]] = set()
        self.next_pair: dict[tuple[str, str], int] = {}  # learning: each pairing's first game pair not all stored

    @staticmethod
    def key(a: str, b: str, game: int) -> str:
        """Game ``game`` of the pairing of ``a`` (the older entrant) and ``b``: opening
        ``game // 2``, ``b`` moving first in the odd ones."""
        return f"{a}~{b}-o{game // 2:04d}-{'b' if game % 2 else 'a'}"

    def keys(self, a: str, b: str) -> list[tuple[str, int]]:
        return [(self.key(a, b, game), game) for game in range(self.config.games)]

    def next_games(self, entries: list[Entry], code: dict[str, BotCode], limit: int,
                   in_flight: AbstractSet[str] = frozenset()) -> list[GameSpec]:
        """Up to ``limit`` games not stored nor in flight, pairings with the newest entrant first."""
        if self.learning is not None:
            return self._learnt_games(entries, code, limit, in_flight)
        chosen: list[GameSpec] = []
        for newer in range(len(entries) - 1, 0, -1):
            for older in range(newer):
                a, b = entries[older].spec, entries[newer].spec
                if (a, b) in self.complete:
                    continue
                open_keys = [(key, game) for key, game in self.keys(a, b) if key not in self.stored]
                if not open_keys:
                    self.complete.add((a, b))
                    continue
                for key, game in open_keys:
                    if key in in_flight:
                        continue
                    chosen.append(self._spec(key, game, a, b, code))
                    if len(chosen) >= limit:
                        return chosen
        return chosen

    def played(self, records: list[GameRecord]) -> None:
        """The league's games just stored, in the order they were stored."""
        if self.learning is not None:
            for record in records:
                self.learning.stored(record.spec.first, record.spec.second, first_player_score(record.winner))

    def _learnt_games(self, entries: list[Entry], code: dict[str, BotCode], limit: int,
                      in_flight: AbstractSet[str]) -> list[GameSpec]:
        assert self.learning is not None
        most = self.learning.settings.max_games

        def next_open(a: str, b: str, taken: frozenset[int]) -> list[int]:
            """The open games of the pairing's first game pair with one to play."""
            start = self.next_pair.get((a, b), 0)
            while 2 * start < most and all(self.key(a, b, game) in self.stored
                                           for game in range(2 * start, min(2 * start + 2, most))):
                start += 1
            self.next_pair[a, b] = start
            for pair in range(start, (most + 1) // 2):
                games = [game for game in range(2 * pair, min(2 * pair + 2, most)) if game not in taken
                         and self.key(a, b, game) not in self.stored and self.key(a, b, game) not in in_flight]
                if games:
                    return games
            return []

        choices = self.learning.choose([entry.spec for entry in entries], next_open, limit)
        return [self._spec(self.key(c.older, c.newer, game), game, c.older, c.newer, code)
                for c in choices for game in c.games]

    def _line(self, pair: int) -> tuple[int, ...]:
        while len(self.lines) <= pair:  # beyond ``games``: learning plays more game pairs of a close pairing
            self.lines.append(next(self._lines))
        return self.lines[pair]

    def _spec(self, key: str, game: int, a: str, b: str, code: dict[str, BotCode]) -> GameSpec:
        first, second = (b, a) if game % 2 else (a, b)
        return field_game(self.config, key, f"{a}~{b}", first, second, self._line(game // 2), code)


def learning_of(store: Store, league: League, config: TournamentConfig) -> Learning | None:
    """What learn mode chooses from, read from the stored games (None in turn): the
    results per pair and the players of the latest games, in the order they were stored."""
    settings = pairing_of(league.config, config.games)
    if not settings.learning:
        return None
    pairs = store.results.pairs(league.tournament_id)
    specs = {bot.id: bot.spec for bot in store.bots.stored({bot for row in pairs for bot in row[:2]})}
    results = PairCounts()
    for first, second, wins, draws, losses, _, _ in pairs:
        results.add(specs[first], specs[second], wins, draws, losses)
    return Learning(settings, results, store.games.latest_players(league.tournament_id, MOST_WINDOW))


@dataclass
class LeagueOutcome:
    played: int = 0
    interrupted: bool = False
    problem: str | None = None
    signal: int | None = None
    #: Failures the run recovered from (a worker, the cluster, the arena, the disk).
    healed: int = 0

    @property
    def exit_code(self) -> int:
        if not self.interrupted:
            return 0
        return 1 if self.problem else 128 + (self.signal or 2)


Report = Callable[[str], None]

#: Seconds a healing league waits before it plays again, by failures in a row: the
#: first retry is quick (a worker died), later ones give a scheduler, a disk or the
#: machine time to come back without a busy loop.
HEAL_DELAYS = (1.0, 2.0, 5.0, 15.0, 30.0, 60.0)


class Healing:
    """What a league does when something other than a game fails: says so in one
    line, waits (longer each time in a row), and plays again. ``sleep`` is a
    parameter so tests need not wait."""

    def __init__(self, say: Report, name: str, delays: tuple[float, ...] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.say = say
        self.name = name
        self.delays = HEAL_DELAYS if delays is None else delays
        self.sleep = sleep
        self.in_a_row = 0

    def recover(self, what: str) -> None:
        delay = self.delays[min(self.in_a_row, len(self.delays) - 1)]
        self.in_a_row += 1
        self.say(f"league {self.name!r}: {what}; playing again in {delay:g} s")
        self.sleep(delay)

    def going(self) -> None:
        """A game was stored: the next failure is a first one again."""
        self.in_a_row = 0


#: Seconds between two looks for logs older than a league keeps them.
LOGS_DELETED_EVERY = 3600.0


def run_league(
    store: Store,
    league: League,
    workers: int = 0,
    executor: Executor | None = None,
    report: Report | None = None,
    until_complete: bool = False,
    idle_seconds: float = IDLE_SECONDS,
    cluster: str | None = None,
    heal: Healing | bool = False,
) -> LeagueOutcome:
    """Keep ``league`` played until stopped (Ctrl-C, SIGTERM), or with ``until_complete``
    until every pairing of the active field is complete. Each finished game is stored
    at once; a stop stores what finished and leaves the rest for the next run.

    With ``heal`` (``arena league run`` always heals) the league outlives what fails
    around its games: a worker or the cluster's scheduler lost, the arena failing
    game after game (its spawners, its cgroups), the database that cannot be written
    (a full disk, a lock held too long). Each is said in one line; the league waits,
    makes its workers again where it made them, and plays on. Games that finished are
    kept in memory until they are stored, never played twice; games in play when a
    worker was lost are played again. Without ``heal`` such a failure stops the run
    (``outcome.problem``)."""
    # Always private seeds: the league's authors' bots meet each other and the reference
    # bots, and with a public seed a bot could work out its opponent's seed from its own.
    config = dataclasses.replace(config_of(league.config, league.name), private_seeds=True,
                                 seed_secret=league_seed_secret(store, league))
    # --cluster (none: here), else the league file's, else ARENA_CLUSTER, else DASK_SCHEDULER_ADDRESS
    cluster = None if cluster == NO_CLUSTER else cluster or config.cluster
    if cluster is None and executor is None:  # its entrants play here: never without the sandbox
        require_sandbox(f"league {league.name!r} (its entrants are code others wrote)")
    stored = store.games.keys(league.tournament_id)
    schedule = LeagueSchedule(config, stored, learning_of(store, league, config))
    outcome = LeagueOutcome()
    bot_ids: dict[str, int] = {}
    own_executor = executor is None
    pending: list[GameRecord] = []
    say = report or (lambda text: None)
    healing = heal if isinstance(heal, Healing) else Healing(say, league.name) if heal else None
    known_code: dict[int, BotCode] = {}
    gate = Gatekeeper(store, league, config, say)

    faults = Faults()
    logs_kept_until = [0.0]  # when (time.monotonic()) the old logs are looked for again

    def delete_logs() -> None:
        """Delete the logs older than the league's keep time, once an hour (its settings
        read again: they may have changed while it runs)."""
        if time.monotonic() < logs_kept_until[0]:
            return
        with signals_deferred():
            delete_old_logs(store, store.leagues.check(league.name))
        logs_kept_until[0] = time.monotonic() + LOGS_DELETED_EVERY

    def by_tournament(records: list[GameRecord]) -> dict[int, list[GameRecord]]:
        grouped: dict[int, list[GameRecord]] = {}
        for record in records:
            test = gate.owns(record)
            grouped.setdefault(league.tournament_id if test is None else test.tournament_id, []).append(record)
        return grouped

    def store_pending() -> None:
        """Store what finished, all of it in one transaction: a batch that fails to
        be stored stays pending, whole, to be stored again."""
        if not pending:
            return
        with signals_deferred():
            ids = dict(bot_ids)  # a bot's row added by a write that fails is rolled back with it
            with store.writing():
                # A game of a version removed meanwhile with its author's account would bring
                # its old name back: it is not stored (the version is retired: not played again).
                pending[:] = [record for record in pending if not removed_meanwhile(store, record)]
                for record in pending:
                    for spec in record.spec.bots:
                        if spec not in ids:
                            ids[spec] = store.bots.id_of(bot_identity(spec, dict(record.spec.submitted)))
                # A void game (the arena failed) is kept apart; its key stays unplayed, so
                # the schedule gives it again.
                played = [record for record in pending if not record.void]
                count = 0
                # A gate test's games go under its own tournament row: never the league's standings.
                for tournament_id, records in by_tournament(pending).items():
                    store.games.record_void(tournament_id, [FinishedGame.of(r) for r in records if r.void], ids)
                    count += store.games.record(tournament_id, [r for r in records if not r.void], ids)
            bot_ids.update(ids)
            outcome.played += count
            own = [record for record in played if gate.owns(record) is None]
            stored.update(record.spec.key for record in own)
            schedule.played(own)
            gate.stored(played)
            for record in pending:
                faults.count(record)
            pending.clear()
        with signals_deferred():
            gate.settle()
        if count and healing is not None:
            healing.going()
        if faults.too_many:
            raise ArenaFailing(faults.describe())

    def play(executor: Executor) -> None:
        """Play until the field is complete (``until_complete``) or forever."""
        idle = False
        while True:
            store_pending()  # what a failed write left, before anything new is played
            delete_logs()
            with signals_deferred():
                gate.refresh()
            entries, code = active_field(store, league, known_code)
            width = getattr(executor, "workers", 1)  # a cluster's workers come and go
            in_flight = {record.spec.key for record in pending}
            # A version waiting at the gate plays its test first: its author waits for it.
            batch = gate.next_games(width * ROUND_GAMES_PER_WORKER, in_flight)
            if len(batch) < width * ROUND_GAMES_PER_WORKER:
                batch += schedule.next_games(entries, code, width * ROUND_GAMES_PER_WORKER - len(batch), in_flight)
            if not batch:
                if until_complete:
                    return
                if not idle:
                    say(f"league {league.name!r}: every pairing of its {len(entries)} active entrants is "
                        "played; waiting for a new entrant")
                    idle = True
                time.sleep(idle_seconds)
                continue
            idle = False
            chunks = [batch[i:i + ROUND_GAMES_PER_WORKER] for i in range(0, len(batch), ROUND_GAMES_PER_WORKER)]
            for records in executor.map_unordered(play_games, iter(chunks)):
                pending.extend(records)
                store_pending()
                if records:
                    say(f"league {league.name!r}: {outcome.played} games played by this run")

    def new_executor() -> Executor:
        # The field changes as authors submit: a cluster's workers need the league's
        # installed bots and a sandbox for the versions to come.
        needs = worker_needs(config.bots, (), isolate=True) if cluster else None
        return make_executor(workers, None, cluster, needs, say)

    def give_up(failure: BaseException) -> None:
        outcome.interrupted = True
        outcome.problem = str(failure)

    with store.tournaments.running(league.name), stop_signals(outcome) as hold:
        store.tournaments.set_status(league.tournament_id, "running")
        started = False
        try:
            while True:
                try:
                    if executor is None:
                        executor = new_executor()
                    started = True
                    play(executor)
                    break
                except (WorkerLost, ArenaFailing, StoreWriteFailed, ClusterError) as failure:
                    if isinstance(failure, ClusterError) and not started:
                        raise  # a cluster that cannot play at all: the caller's mistake, said as one
                    if healing is None or not own_executor:
                        give_up(failure)
                        break
                    if executor is not None:
                        pending.extend(executor.drain())
                        executor.close(cancel=True)
                        executor = None
                    faults.in_a_row = 0
                    outcome.healed += 1
                    healing.recover(_failure_line(failure))
        except KeyboardInterrupt:
            outcome.interrupted = True
        except BaseException:  # a bug: what finished is kept
            outcome.interrupted = True
            raise
        finally:
            hold()
            if outcome.interrupted and executor is not None:
                pending.extend(executor.drain())
            try:
                store_pending()
            except (ArenaFailing, StoreWriteFailed):
                pass  # said already, or about to be: the run is stopping
            finally:
                if own_executor and executor is not None:
                    executor.close(cancel=outcome.interrupted)
                try:
                    store.tournaments.set_status(league.tournament_id,
                                                 "interrupted" if outcome.interrupted else "finished")
                except StoreWriteFailed:
                    pass  # the status is read from the lock, not only this row
    return outcome


def _failure_line(failure: BaseException) -> str:
    """One line for the log: what failed, in the league's words."""
    text = " ".join(str(failure).split())
    if isinstance(failure, StoreWriteFailed):
        # What the store says up to its advice: "run the same command again" is for a
        # command that stopped, and this one goes on by itself.
        found = re.match(r"(.*?\))[:;] ", text)
        return (f"the games that finished could not be stored ({found.group(1) if found else text}); they are "
                "kept until they can be")
    if isinstance(failure, ArenaFailing):
        return f"the arena is failing ({text}); making its workers again"
    if isinstance(failure, ClusterError):
        return f"the cluster cannot be reached ({text})"
    return f"workers lost ({text}); the games in play will be played again"
