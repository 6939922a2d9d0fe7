"""The supported way to use the arena from Python: five calls over the library.

Each is what the matching command does (``arena match``, ``arena tournament run``,
``--db``, ``arena standings``, ``arena analyse``), without the command line::

    import arena

    result = arena.play_match("minimax", "random", games=10)
    print(result.as_json())

    outcome = arena.run_tournament("config/quick.toml", db="quick.db")
    with arena.open_store("quick.db") as store:
        for row in arena.standings(store):
            print(row.bot, row.elo)

Everything here is reached through ``import arena`` (see ``arena.__all__``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.engine.game import Rules
    from arena.ratings.analysis import PlyAnalysis
    from arena.ratings.standings import Standings
    from arena.records import GameRecord, TimeControl
    from arena.store import Store, StoredGame
    from arena.tournament.bot_objects import BotLike
    from arena.tournament.config import TournamentConfig
    from arena.tournament.match import MatchResult
    from arena.tournament.runner import RunOutcome

# Each call imports what it needs when it runs: `import arena` stays light for the
# spawner, `--help` and a bot author's script.


def play_match(
    bot_a: BotLike,
    bot_b: BotLike,
    games: int = 2,
    rules: Rules | None = None,
    seed: int = 0,
    time_control: TimeControl | None = None,
    opening_plies: int = 2,
    *,
    width: int | None = None,
    height: int | None = None,
    connect: int | None = None,
    gravity: bool | None = None,
    scoring: str | None = None,
    move_seconds: float | None = None,
    bank_seconds: float | None = None,
) -> MatchResult:
    """Play ``games`` games between two bots, alternating who moves first, each pair
    of games from one seeded random opening (the same seed, the same games).
    Nothing is stored; the result holds every game's record (each shows as its
    replay in a notebook), the score, and the Elo difference with its interval.

    A bot is a spec (``"minimax:depth=4"``, ``"path/to/bot.py"``: checked first, a
    mistake is one line), a :class:`~arena.bot.Bot` subclass (a fresh bot each game)
    or a bot (the same one each game); classes and bots play in this process. The
    rules are ``rules``, or the defaults changed by ``width``, ``height``,
    ``connect``, ``gravity`` and ``scoring``; the clock ``time_control``, or
    ``move_seconds`` (with ``bank_seconds``)."""
    from arena.records import TimeControl
    from arena.tournament.bot_objects import contenders, play_with
    from arena.tournament.match import match_specs
    from arena.tournament.match import play_match as play

    changed = {"width": width, "height": height, "connect": connect, "gravity": gravity, "scoring": scoring}
    rules = _rules(rules, {key: value for key, value in changed.items() if value is not None})
    if time_control is not None and (move_seconds is not None or bank_seconds is not None):
        raise TypeError("give time_control or move_seconds and bank_seconds, not both")
    if bank_seconds and move_seconds is None:
        raise ArenaError(f"bank_seconds={bank_seconds:g} needs move_seconds: a bank adds to a move limit")
    if time_control is None:
        time_control = TimeControl(move_seconds, bank_seconds or 0.0)
    if games < 1:
        raise ArenaError(f"games must be at least 1, got {games}")
    sides = contenders(bot_a, bot_b)
    labels = (sides[0].label, sides[1].label)
    specs = match_specs(*labels, games, seed, rules, time_control, opening_plies)
    in_process = any(side.make is not None for side in sides)
    return play(specs, labels, play=play_with(sides) if in_process else None)


def _rules(rules: Rules | None, changed: dict[str, Any]) -> Rules:
    """``rules``, or the default rules with ``changed`` fields."""
    from arena.engine.game import Rules

    if rules is not None and changed:
        raise TypeError(f"give rules or {', '.join(changed)}, not both")
    return rules if rules is not None else Rules(**changed)


def run_tournament(
    config: str | Path | TournamentConfig | None = None,
    db: str | Path | None = None,
    **overrides: Any,
) -> RunOutcome:
    """Run (or resume) a tournament and store every move: ``config`` is a tournament
    file, a loaded configuration or None (the defaults); ``overrides`` are its keys
    (``bots=[...]``, ``games=4``, ``workers=1``...); ``db`` is the database (else the
    configuration's: its file's ``db``, else ``ARENA_DB``, else ``arena.db``)."""
    from arena.store import Store
    from arena.tournament.config import TournamentConfig, load_config
    from arena.tournament.runner import run_tournament as run

    if not isinstance(config, TournamentConfig):
        config = load_config(None if config is None else str(config), overrides or None)
    elif overrides:
        raise TypeError("overrides apply to a tournament file, not to a loaded configuration")
    with Store(db or config.db) as store:
        return run(config, store)


def open_store(path: str | Path | None = None, read_only: bool = False) -> Store:
    """The arena database at ``path`` (by default ``ARENA_DB``, else ``arena.db``), created if missing
    unless ``read_only``; use it in a ``with`` block so it is closed."""
    from arena.store import Store
    from arena.store.location import default_db

    return Store(path or default_db(), create=not read_only, read_only=read_only)


def standings(store: Store, tournament: str | None = None, league: bool = False) -> Standings:
    """The standings ``arena standings`` prints: of ``tournament``, of the whole
    league with ``league``, else of the latest tournament."""
    from arena.ratings.selection import select
    from arena.ratings.standings import league_standings

    chosen = select(store, tournament, league)
    return league_standings(chosen.results(), chosen.in_order())


def analyse(game: GameRecord | StoredGame, budget: float = 1.0) -> list[PlyAnalysis]:
    """The solver's verdict on every move of a game (``arena analyse`` for a game
    just played): the value of the position before it for the side that moved, and
    a mark where the move threw away a win or a draw. Each position gets up to
    ``budget`` seconds; one the solver cannot prove in that time stays unknown, and
    marks only a move whose both sides are known. Needs a solver plug-in for the
    game's rules (the built-in ``solver`` bot is one)."""
    from arena.engine.game import parse_moves
    from arena.ratings.analysis import analyse as marks
    from arena.ratings.analysis import position_values, solver_solve
    from arena.records import GameRecord
    from arena.store import rules_of

    if isinstance(game, GameRecord):
        rules, moves = game.spec.rules, game.move_list()
    else:
        rules = rules_of(game)
        moves = parse_moves(game.moves or "", rules)
    return marks(rules, moves, position_values(rules, moves, budget, solver_solve(rules)))
