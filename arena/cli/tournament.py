"""`arena tournament run`: flags to a configuration, a run, the standings."""

from __future__ import annotations

import importlib
import signal
import sys
import threading

import click

from arena.cli.cluster import cluster_options
from arena.cli.main import ArenaUsageError, db_option, main, open_store, rules_options
from arena.ratings.knockout_record import DECIDERS, SEEDINGS
from arena.terminal import progress as progress_bar
from arena.text import plural, printable, quote
from arena.tournament.config import TOURNAMENT_FORMATS, load_config, openings_overrides
from arena.tournament.entrants import resolve_bots_in_database
from arena.tournament.runner import Progress, RunOutcome, run_tournament
from arena.tournament.stopping import signals_deferred

#: What the standings table needs and takes about a second to import (numpy, and
#: the scipy of the ratings fit): loaded while the games play (see _meanwhile).
TABLE_MODULES = ("arena.ratings.selection", "arena.ratings.standings", "scipy.sparse.csgraph")


@main.group("tournament")
def tournament_group() -> None:
    """Run tournaments (round robin, gauntlet, Swiss or knockout) and store every move."""


@tournament_group.command("run")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--bots", help="Comma-separated bot specs (replaces the file's list).")
@click.option("--challengers", help="Gauntlet: comma-separated bots that face the field.")
@click.option("--format", "fmt", type=click.Choice(TOURNAMENT_FORMATS), help="Tournament format.")
@click.option("--games", type=int, help="Games per pairing (each opening twice, colours swapped); a knockout: "
              "per match, before its extra pairs.")
@click.option("--rounds", type=int, help="Swiss: rounds to play (N rounds need at least 2N - 1 bots).")
@click.option("--extra-pairs", type=int,
              help="Knockout: pairs of games played at most, one at a time, while a match is level (default 1).")
@click.option("--seeding", type=click.Choice(SEEDINGS),
              help="Knockout: seed 1 is the first bot listed (listed, the default) or the best rated in the "
                   "database's league-wide standings (rating; the unrated after the rated, as listed).")
@click.option("--decider", type=click.Choice(DECIDERS),
              help="Knockout: what decides a match level after its extra pairs: the solver's verdict on its "
                   "games, else a coin (solver: the default for 7x6 connect four), or the coin alone.")
@click.option("--openings", "openings_text", metavar="N|balanced:PLIES[:MARGIN]|file:PATH",
              help="Openings: N random plies; balanced:PLIES[:MARGIN], random openings the solver proves drawn "
                   "(or within MARGIN of a draw; 7x6 connect four); file:PATH, the openings of a file.")
@click.option("--openings-file", help="File of opening move strings, one per line.")
@click.option("--move-seconds", type=float, help="Time limit per move.")
@click.option("--bank-seconds", type=float, help="Extra time a bot may draw on over the game.")
@click.option("--workers", type=int, help="Worker processes (default: one per core).")
@cluster_options
@click.option("--isolate", is_flag=True, default=None, help="Run installed bots sandboxed too (bot files always are).")
@click.option("--memory-mb", type=int, help="Memory limit of a sandboxed bot, MB (default 1024).")
@click.option("--output-kb", type=int, help="Output limit of a sandboxed bot, KB (default 1024).")
@click.option("--processes", type=int, help="Processes and threads a sandboxed bot may have at once (default 64).")
@click.option("--adjudicate", metavar="solver[:STONES]",
              help="End a game once the solver proves its result, from STONES stones on the board (default "
                   "20); off by default.")
@click.option("--seed", type=int, help="Tournament seed: the same seed gives the same games.")
@click.option("--private-seeds", is_flag=True, default=None,
              help="Key every seed by a secret kept in the database, so no bot can work out its opponent's "
                   "seed from its own (the games replay only from this database).")
@db_option(from_config=False)
@click.option("--name", help="Tournament name (default: the file's name key, else the file's name, else "
              "tournament-HASH from the settings, so the same command resumes the same tournament).")
@rules_options
def tournament_run(config: str | None, bots: str | None, challengers: str | None, fmt: str | None,
                   games: int | None, rounds: int | None, extra_pairs: int | None, seeding: str | None,
                   decider: str | None, openings_text: str | None, openings_file: str | None,
                   move_seconds: float | None, bank_seconds: float | None, workers: int | None,
                   cluster: str | None, isolate: bool | None, memory_mb: int | None, output_kb: int | None,
                   processes: int | None, adjudicate: str | None, seed: int | None, private_seeds: bool | None,
                   db: str | None, name: str | None, width: int | None, height: int | None, connect: int | None,
                   no_gravity: bool, scoring: str | None) -> None:
    """Play a tournament defined by CONFIG (a TOML file) and flags, then print standings.

    Running it again with the same name and database resumes it: only the games
    not yet stored are played.
    """
    if openings_text is not None and openings_file is not None:
        drawn = "draws random openings" if openings_text.strip().isdigit() else "says where the openings come from"
        raise ArenaUsageError(f"--openings {openings_text} {drawn} and --openings-file {openings_file!r} reads them "
                              "from a file: give one of them")
    overrides = {
        "bots": _split(bots), "challengers": _split(challengers), "format": fmt, "games": games,
        "rounds": rounds, "extra_pairs": extra_pairs, "seeding": seeding, "decider": decider,
        "openings.file": openings_file, "adjudicate": adjudicate,
        **(openings_overrides(openings_text) if openings_text is not None else {}),
        "time.move_seconds": move_seconds, "time.bank_seconds": bank_seconds, "workers": workers,
        "cluster": cluster, "isolate": isolate, "limits.memory_mb": memory_mb, "limits.output_kb": output_kb,
        "limits.processes": processes, "seed": seed, "private_seeds": private_seeds,
        "db": db, "name": name, "rules.width": width, "rules.height": height,
        "rules.connect": connect, "rules.gravity": False if no_gravity else None, "rules.scoring": scoring,
    }
    cfg = resolve_bots_in_database(load_config(config, overrides))
    for bot, why in cfg.failed_start:  # said once here; each of its games stores why
        click.echo(f"Bot {printable(bot)!r} failed its start-up check and forfeits its games: {quote(why)}", err=True)
    store = open_store(cfg.db, create=True)
    bar = progress_bar.ProgressBar.for_stderr()

    def note(line: str) -> None:  # on its own line, where the progress bar was
        try:
            click.echo(("\r\x1b[K" if bar else "") + printable(line), err=True)
        except OSError:
            pass  # the terminal is gone (a hang-up)

    progress: Progress | None = bar.update if bar else None
    if not cfg.cluster:
        progress = _meanwhile(progress)
    outcome = run_tournament(cfg, store, progress=progress, notify=note)
    if bar:
        try:
            bar.close()
        except OSError:
            pass  # the terminal is gone (a hang-up)
    report_stop(outcome, cfg.db)
    already = outcome.already_stored
    resumed = f", {already} {'was' if already == 1 else 'were'} already stored" if already else ""
    rate = outcome.played / outcome.seconds if outcome.seconds else 0.0
    click.echo(
        f"Tournament {cfg.name!r}: {plural(outcome.played, 'game')} played in {outcome.seconds:.1f} s "
        f"({rate:.3g} games/s){resumed}; {cfg.rules.describe()}{_adjudicated(cfg.adjudicate)}; database {cfg.db}"
    )
    report_voided(outcome)
    from arena.cli.standings import standings_text
    from arena.ratings.selection import SelectionError, select
    from arena.ratings.standings import league_standings, render_standings

    try:  # counted in the store: no game row is held, however many were played
        chosen = select(store, cfg.name)
    except SelectionError:
        click.echo(render_standings([]))  # not one game finished
        return
    rows = league_standings(chosen.results(), chosen.in_order(), bots=cfg.entrants)
    click.echo(standings_text(chosen, rows))


def _meanwhile(progress: Progress | None) -> Progress:
    """``progress``, which also starts loading the table's modules in a thread the
    first time it is told of games stored: the workers are started by then (a worker
    forked during an import would inherit it half done), and the coordinator mostly
    waits for them, so the import costs the run no time, where before the games it
    was a second of every run."""
    loading: list[threading.Thread] = []

    def update(done: int, total: int, seconds: float) -> None:
        if not loading:
            loading.append(threading.Thread(target=_load_table_modules, daemon=True))
            # Started with the stop signals blocked, which it keeps: a signal the system
            # gave this thread would reach the run while it holds them back, as it
            # stores a batch of games (they would be stored twice).
            with signals_deferred():
                loading[0].start()
        if progress is not None:
            progress(done, total, seconds)

    return update


def _load_table_modules() -> None:
    for name in TABLE_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            pass  # imported again, for real, when the table is printed: any error shows there


def report_stop(outcome: RunOutcome, db: str) -> None:
    """A run that did not finish (Ctrl-C, a signal, a problem): one line on stderr saying
    how many games are stored and how to resume, then the exit code the outcome says."""
    if not outcome.interrupted:
        return
    if outcome.problem:
        why = f"Stopped: {printable(outcome.problem)}"
    else:
        why = "Interrupted" + _SIGNAL_NAMES.get(outcome.signal or signal.SIGINT, "")
    kept = f"{outcome.already_stored + outcome.played} of {plural(outcome.scheduled, 'game')} stored in {db}"
    # A database that could not be written says itself what to do, and that the command resumes.
    line = f"{why} ({kept})." if outcome.store_failed else f"{why}: {kept}; run the same command again to resume."
    try:
        click.echo(line, err=True)
    except OSError:
        pass  # the terminal is gone (a hang-up): the database says it all
    sys.exit(outcome.exit_code)


def report_voided(outcome: RunOutcome) -> None:
    """One line on stderr when games were played again because the arena failed during them."""
    if outcome.voided:
        click.echo(f"{plural(outcome.voided, 'game')} played again: the arena failed during "
                   f"{'it' if outcome.voided == 1 else 'them'} (charged to no bot; 'arena doctor' checks the machine)",
                   err=True)


_SIGNAL_NAMES: dict[int, str] = {signal.SIGTERM: " (SIGTERM)", signal.SIGHUP: " (hang-up)"}


def _adjudicated(stones: int | None) -> str:
    return "" if stones is None else f"; adjudicated by the solver from {stones} stones"


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in _split_specs(text) if part.strip()]


def _split_specs(text: str) -> list[str]:
    """Split "a,minimax:depth=3,seed=1,b" into bot specs: a comma followed by key=value
    continues the options of the previous spec."""
    specs: list[str] = []
    for part in text.split(","):
        if specs and "=" in part and ":" in specs[-1] and ":" not in part:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs
