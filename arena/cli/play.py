"""`arena play` and `arena replay`: a game at the terminal, live or stored."""

from __future__ import annotations

import json
import os
import sys

import click

from arena.cli.main import ArenaUsageError, db_option, main, make_rules, open_store, rules_options
from arena.engine.game import Board, parse_moves
from arena.entry.submissions import check_bot
from arena.errors import ArenaError
from arena.ratings.analysis import analyse_stored
from arena.store import Store, check_database, rules_of
from arena.terminal.bot_logs import LiveLog
from arena.terminal.casual import HUMAN, save_game
from arena.terminal.play import PlaySession
from arena.terminal.replay import ReplaySession


@main.command("play")
@click.argument("bot", required=False)
@click.option("--first", "first", is_flag=True, help="Move first against the bot (the default).")
@click.option("--second", "second", is_flag=True, help="Move second against the bot.")
@rules_options
@click.option("--hint-bot", default="minimax:depth=6", show_default=True, help="The bot that answers 'h'.")
@click.option("--seed", type=int, default=0, help="Seed for the bot.")
@click.option("--debug", is_flag=True, help="Print what the bot writes (stdout, stderr) to stderr as it writes it.")
@db_option
def play_command(bot: str | None, first: bool, second: bool, width: int | None, height: int | None, connect: int | None,
                 no_gravity: bool, scoring: str | None, hint_bot: str, seed: int, debug: bool, db: str) -> None:
    """Play in the terminal against BOT, or two people at one keyboard without one.

    Type a move (a column; a cell such as c3 without gravity), u to undo, r to
    redo, h for a hint, s to save, q to quit. Finished and saved games are stored
    in the database (a "casual" tournament) for replay and analysis.
    """
    if first and second:
        raise ArenaUsageError("--first and --second each say who moves first: give one of them")
    human_first = not second
    rules = make_rules(width, height, connect, no_gravity, scoring)
    found = check_bot(bot, db, rules=rules) if bot else None
    bot_spec = found.spec if found else None
    submitted = found.submitted if found else {}
    try:  # both checked before the first move, not when 'h' is pressed or the game is saved
        hint = check_bot(hint_bot, db, rules=rules)
    except ArenaError as exc:
        raise ArenaUsageError(f"--hint-bot {hint_bot!r}: {exc}") from None
    submitted = {**submitted, **hint.submitted}
    check_database(db)
    human = 0 if human_first else 1
    players = (HUMAN, HUMAN) if bot_spec is None else ((HUMAN, bot_spec) if human == 0 else (bot_spec, HUMAN))
    saved: dict[str, int] = {}

    def on_save(board: Board, finished: bool) -> str:
        plies = [(r.ms, r.info) for r in session.records]
        with Store(db) as store:
            saved["id"] = save_game(store, rules, players, board, plies, replace=saved.get("id"), submitted=submitted)
        return f"{'stored' if finished else 'saved'} as game {saved['id']} in {db}"

    session = PlaySession(rules, bot_spec, human_player=human, color=_colour(), hint_bot=hint.spec,
                          on_save=on_save, seed=seed, submitted=submitted,
                          log_sink=LiveLog(sys.stderr) if debug else None)
    try:
        session.run()
    except KeyboardInterrupt:
        session.close()
        click.echo("\nStopped.", err=True)


@main.command("replay")
@click.argument("game_id", type=int)
@click.option("--delay", type=click.FloatRange(min=0), default=None,
              help="Play it through with this many seconds between moves instead of stepping.")
@db_option
def replay_command(game_id: int, delay: float | None, db: str) -> None:
    """Step through a stored game: Enter/n next, p previous, a number to jump, q quit."""
    store = open_store(db)
    game = store.games.get(game_id)
    rules = rules_of(game)
    rows = store.games.moves(game_id)
    marks = {p.ply: p.mark for p in analyse_stored(store, game_id, None)}
    ending = f"{game.result} ({game.termination}{': ' + game.reason if game.reason else ''})"
    session = ReplaySession(
        rules, parse_moves(game.moves or "", rules), players=(game.first, game.second),
        move_info=[json.loads(m.info) if m.info else None for m in rows],
        move_ms=[m.ms for m in rows], marks=[marks.get(m.ply) for m in rows] if marks else None,
        color=_colour(), ending=ending, opening_plies=game.opening_plies or 0,
    )
    if delay is None:
        session.run()
    else:
        session.play_through(delay)


def _colour() -> bool:
    """Colours only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
