"""Runs a tournament: schedules games, farms them out, streams results into the store.

Workers only play: they receive picklable GameSpecs and return each finished game
as the rows the store writes (a FinishedGame: made where the game was played, so
the coordinator only inserts). The coordinator (this process) is the only writer
to the database. The executor
(:mod:`arena.tournament.executors`) decides where games are played.
"""

from __future__ import annotations

import dataclasses
import itertools
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from arena.engine.openings import new_seed_secret
from arena.players.plugins import installed_bots, load_entry, parse_spec
from arena.ratings.knockout_record import SEEDING_ORDER
from arena.records import BotCode, GameRecord, GameSpec, Termination
from arena.referee.kept_bots import KeptBots
from arena.referee.referee import LogSink, play_game, referee_game
from arena.store import BotIdentity, FinishedGame, Store, StoreError, StoreWriteFailed
from arena.text import content_hash
from arena.tournament.cluster import worker_needs
from arena.tournament.config import TournamentConfig
from arena.tournament.entrants import resolve_bots
from arena.tournament.execution import Executor, WorkerLost
from arena.tournament.executors import make_executor
from arena.tournament.faults import ArenaFailing, Faults
from arena.tournament.knockout import KNOCKOUT, seeded
from arena.tournament.rounds import RoundFormat
from arena.tournament.schedule import game_count, iter_schedule
from arena.tournament.stopping import signals_deferred, stop_signals
from arena.tournament.swiss import SWISS

Progress = Callable[[int, int, float], None]  # (games done, games to play, seconds)


@dataclass
class RunOutcome:
    tournament_id: int
    scheduled: int  # games in the whole tournament
    already_stored: int  # found in the database at start (resume)
    played: int  # stored by this run
    voided: int = 0  # games the arena failed during: stored apart as void, and played again
    interrupted: bool = False
    seconds: float = 0.0
    problem: str | None = None  # why it stopped early, when not by Ctrl-C
    signal: int | None = None  # the signal that stopped it: SIGINT (Ctrl-C), SIGTERM or SIGHUP
    store_failed: bool = False  # the database could not be written (a full disk, say): problem says what to do

    @property
    def exit_code(self) -> int:
        """The shell's convention for a stop by signal: 128 + its number (Ctrl-C 130,
        a hang-up 129, SIGTERM 143); 1 for a problem, 0 when it finished; 2 for a database
        that could not be written (a full disk), which is the person's to fix, as every
        problem with the database is."""
        if not self.interrupted:
            return 0
        if self.store_failed:
            return 2
        if self.problem:
            return 1
        return 128 + (self.signal or signal.SIGINT)


class EarlyStop(Protocol):
    """A test that may end a run before its schedule does (a match's SPRT).

    It is told the games stored (StoredGames, then FinishedGames: each has ``key``,
    ``first``, ``second``, ``winner``, ``termination`` and ``reason``): those the
    database holds when the run starts, then each batch's once the whole batch is
    stored. The run then plays in batches of one pair of games per worker, and
    stops, finished, as soon as :meth:`decided` says so. The stored games are the
    test's whole state: a resumed run tells it them again and it goes on."""

    def decided(self, games: Sequence[Any]) -> bool: ...


#: The formats played round by round, each round paired from the results before it.
ROUND_FORMATS: dict[str, RoundFormat] = {"swiss": SWISS, "knockout": KNOCKOUT}

#: Pairs of games in a batch on a cluster, whose workers are not counted here.
CLUSTER_BATCH_PAIRS = 8


def run_tournament(
    config: TournamentConfig,
    store: Store,
    executor: Executor | None = None,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
    early_stop: EarlyStop | None = None,
) -> RunOutcome:
    """Play every scheduled game that is not stored yet; store each as it finishes
    (or only until ``early_stop`` decides: see :class:`EarlyStop`).

    A config straight from :func:`~arena.tournament.config.load_config` is resolved
    first (:func:`~arena.tournament.entrants.resolve_bots`, submitted bots looked up
    in ``store``), so its bots are checked before the tournament is stored or any
    game is played; a resolved one is run as it is. ``notify`` gets the lines a
    cluster has to say as it plays (a worker refused).
    """
    config = resolve_bots(config, store)
    with store.tournaments.running(config.name):
        return _run(config, store, executor, progress, notify, early_stop)


def _run(
    config: TournamentConfig, store: Store, executor: Executor | None, progress: Progress | None,
    notify: Callable[[str], None] | None = None, early_stop: EarlyStop | None = None,
) -> RunOutcome:
    if config.knockout is not None:  # the seeding it started with, else settled now, to be stored
        config = seeded(config, store)
    round_format = ROUND_FORMATS.get(config.format)
    total = round_format.game_count(config) if round_format is not None else game_count(config)
    submitted = dict(config.submitted)
    identities = {spec: bot_identity(spec, submitted) for spec in config.entrants}
    if notify is not None and config.named_by_code and store.tournaments.get(config.name) is None:
        _say_code_changed(config, store, identities.values(), notify)
    tournament_id = store.tournaments.start(
        config.name, config.format, config.identity(), _as_given(config), config.seed, identities.values(),
        seed_secret=new_seed_secret() if config.private_seeds else None,
    )
    if config.private_seeds:
        # The stored secret, not the one just made: a resumed tournament keeps its own,
        # so the games still to play get the seeds an uninterrupted run gave them.
        secret = store.tournaments.seed_secret(tournament_id)
        if secret is None:
            raise StoreError(f"tournament {config.name!r} in {store.path} has private seeds but its secret is "
                             "missing from the database: it cannot be resumed; pick another --name")
        config = dataclasses.replace(config, seed_secret=secret)
    bot_ids = {spec: store.bots.id_of(identity) for spec, identity in identities.items()}
    stored = store.games.keys(tournament_id)
    todo_count = total - len(stored)
    outcome = RunOutcome(tournament_id, total, len(stored), 0)
    started = time.perf_counter()
    own_executor = executor is None
    pending: list[FinishedGame] = []  # finished games not stored yet
    voided: list[FinishedGame] = []  # void games (the arena failed) not stored yet
    in_flight: dict[str, GameSpec] = {}  # sent to the workers, not back yet: a void one is played again
    replay: list[GameSpec] = []
    faults = Faults()
    batch: list[FinishedGame] = []  # the games of this batch stored, for early_stop

    def tracked(specs: Iterable[GameSpec]) -> Iterator[GameSpec]:
        for spec in specs:
            in_flight[spec.key] = spec
            yield spec

    def take(records: Iterable[FinishedGame]) -> None:
        for game in records:
            spec = in_flight.pop(game.key, None)
            faults.count(game)
            if game.termination == _VOID:
                voided.append(game)
                outcome.voided += 1
                if spec is not None:
                    replay.append(spec)
            else:
                pending.append(game)
                if early_stop is not None:
                    batch.append(game)

    def store_pending() -> None:
        if pending or voided:
            with signals_deferred():  # a stop comes after the games are stored, never between
                try:
                    outcome.played += store.games.record_finished(tournament_id, pending, bot_ids)
                    store.games.record_void(tournament_id, voided, bot_ids)
                except StoreWriteFailed as exc:  # a full disk, a lost file: the games are played again
                    outcome.store_failed = True
                    raise _StoreFailed(str(exc)) from None
                pending.clear()
                voided.clear()

    with stop_signals(outcome) as hold:
        try:
            if early_stop is not None and todo_count and early_stop.decided(store.games.all(tournament=config.name)):
                todo_count = 0  # decided before: a resumed run that has nothing to play
            if todo_count and executor is None:
                needs = (worker_needs(config.entrants, config.submitted, config.isolate, config.rules)
                         if config.cluster else None)
                executor = make_executor(config.workers, todo_count, config.cluster, needs, notify)
            todo: Iterable[GameSpec] = (spec for spec in iter_schedule(config) if spec.key not in stored)
            batches: Iterable[Iterable[GameSpec]] = [todo] if todo_count else []
            if round_format is not None and todo_count:  # a round, once the rounds before it are stored
                batches = _rounds_to_play(round_format, config, store, tournament_id)
            if early_stop is not None and todo_count:  # a pair of games per worker, then the test
                size = 2 * getattr(executor, "workers", CLUSTER_BATCH_PAIRS)
                batches = iter(lambda: list(itertools.islice(todo, size)), [])
            for games in batches:
                rounds = 0
                while True:
                    assert executor is not None
                    count = len(games) if isinstance(games, list) else todo_count  # chunks sized to it
                    for records in executor.map_unordered(play_for_store, chunked(tracked(games), count, executor)):
                        take(records)
                        store_pending()
                        if faults.too_many:
                            raise ArenaFailing(faults.describe())
                        if progress is not None:
                            progress(outcome.played, todo_count, time.perf_counter() - started)
                    if not replay:
                        break
                    rounds += 1
                    if rounds > MAX_REPLAY_ROUNDS:
                        raise ArenaFailing(faults.describe())
                    games, replay[:] = list(replay), []  # the void games, played again
                if early_stop is not None:
                    told, batch[:] = list(batch), []
                    if early_stop.decided(told):
                        break
        except KeyboardInterrupt:
            outcome.interrupted = True
        except (WorkerLost, ArenaFailing, _StoreFailed) as lost:
            outcome.interrupted = True
            outcome.problem = str(lost)
        except BaseException:  # a cluster that cannot play, a bug: not finished, and what finished is kept
            outcome.interrupted = True
            raise
        finally:
            hold()  # from here on a stop signal changes nothing: what finished is stored
            if outcome.interrupted and executor is not None:
                take(executor.drain())  # games that finished in the workers meanwhile
            try:
                store_pending()
            except _StoreFailed as failed:
                outcome.problem = outcome.problem or str(failed)
            finally:
                if own_executor and executor is not None:
                    executor.close(cancel=outcome.interrupted)
                outcome.seconds = time.perf_counter() - started
                status = "interrupted" if outcome.interrupted else "finished"
                try:
                    with store.writing():
                        store.tournaments.set_status(tournament_id, status)
                except StoreWriteFailed:
                    pass  # said above: the database cannot be written
    return outcome


def _rounds_to_play(
    rounds: RoundFormat, config: TournamentConfig, store: Store, tournament_id: int
) -> Iterator[list[GameSpec]]:
    """The games still to play of each round in turn, each round paired from the games
    stored when it is asked for: after the rounds before it are played and stored."""
    while True:
        games = rounds.next_round(config, store.games.all(tournament=config.name))
        if games is None:
            return
        stored = store.games.keys(tournament_id)
        todo = [spec for spec in games if spec.key not in stored]
        if not todo:  # a round whose games are all stored is whole: a format that gives it again is wrong
            raise RuntimeError(f"{config.format} gave round games that are all stored already "
                               f"({games[0].pairing if games else 'none'}): the round would repeat forever")
        yield todo


#: Read once: an enum's member is a lookup through its class, and every game is taken.
_VOID = Termination.VOID
#: Rounds of playing void games again, after the first pass, before a run gives up.
MAX_REPLAY_ROUNDS = 5


class _StoreFailed(Exception):
    """The database could not be written: stop; the games not stored are played on resume.
    Its message is the store's, which says what to do (free space, run the command again)."""


def play_games(specs: list[GameSpec]) -> Iterator[GameRecord]:
    """Worker entry point: play a chunk of games, yielding each record as its game
    finishes (top-level, so it pickles)."""
    for spec in specs:
        yield play_game(spec)


def play_for_store(specs: list[GameSpec], log_sink: LogSink | None = None) -> Iterator[FinishedGame]:
    """Worker entry point of a tournament: :func:`play_games`, each game yielded as
    the rows the store writes, so that the one writer has only to insert them
    (``log_sink``: told what the bots write, played in this process only). The
    bots whose class allows it play every game of the chunk that they play in
    (see :class:`~arena.referee.kept_bots.KeptBots`)."""
    kept = KeptBots()
    for spec in specs:
        yield FinishedGame.of_refereed(referee_game(spec, log_sink=log_sink, kept=kept))


def chunked(specs: Iterable[GameSpec], count: int, executor: Any) -> Iterator[list[GameSpec]]:
    """Small chunks keep workers busy to the end; larger ones cut the per-chunk cost
    when games are short (each game's record comes back as it finishes, whatever the
    chunk's size). Aim for ~8 chunks per worker, at most 64 games each."""
    workers = getattr(executor, "workers", 1)
    size = max(1, min(64, count // (workers * 8)))
    chunk: list[GameSpec] = []
    for spec in specs:
        chunk.append(spec)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _say_code_changed(
    config: TournamentConfig, store: Store, bots: Iterable[BotIdentity], notify: Callable[[str], None]
) -> None:
    """Say that a tournament named by its code starts anew because a bot file was
    edited: another one with the same settings was played with other code."""
    for earlier in reversed(store.tournaments.same_settings(config.identity())):
        changed = store.tournaments.played_by_other_code(earlier, bots)
        if changed:
            notify(f"New tournament {config.name!r}: the code of {', '.join(changed)} changed since "
                   f"{earlier.name!r} was played with the same settings (restore the code to resume that one)")
            return


def bot_identity(spec_text: str, submitted: dict[str, BotCode] | None = None) -> BotIdentity:
    """Where a bot's code comes from, for the bots table."""
    spec = parse_spec(spec_text)
    if submitted and spec.name in submitted:
        return BotIdentity(
            spec=spec_text, name=spec.name, options=dict(spec.options), source=f"submitted {spec.name}",
            content_hash=content_hash(submitted[spec.name].text or ""),
        )
    entry = load_entry(spec, installed_bots())
    return BotIdentity(
        spec=spec_text,
        name=entry.name if not spec.is_file else spec.name,
        options=dict(spec.options),
        source=entry.source,
        content_hash=entry.content_hash or "",
    )


def _as_given(config: TournamentConfig) -> dict[str, Any]:
    seeds = {SEEDING_ORDER: list(config.seeds)} if config.seeds else {}
    return {"source": config.origin, "workers": config.workers, "db": config.db, **config.identity(), **seeds}
