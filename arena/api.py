"""The supported way to use the arena from Python: four calls over the library.

Each is what the matching command does (``arena match``, ``arena tournament run``,
``--db``, ``arena standings``), without the command line::

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

if TYPE_CHECKING:
    from arena.engine.game import Rules
    from arena.ratings.standings import Standings
    from arena.records import TimeControl
    from arena.store import Store
    from arena.tournament.config import TournamentConfig
    from arena.tournament.match import MatchResult
    from arena.tournament.runner import RunOutcome

# Each call imports what it needs when it runs: `import arena` stays light for the
# spawner, `--help` and a bot author's script.


def play_match(
    bot_a: str,
    bot_b: str,
    games: int = 2,
    rules: Rules | None = None,
    seed: int = 0,
    time_control: TimeControl | None = None,
    opening_plies: int = 2,
) -> MatchResult:
    """Play ``games`` games between two bot specs (``"minimax:depth=4"``, ``"path/to/bot.py"``),
    alternating who moves first, each pair of games from one seeded random opening.
    Nothing is stored; the result holds every game's record."""
    from arena.tournament.match import match_specs
    from arena.tournament.match import play_match as play

    specs = match_specs(bot_a, bot_b, games, seed, rules, time_control, opening_plies)
    return play(specs, (bot_a, bot_b))


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
