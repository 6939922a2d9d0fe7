"""The one base class of the arena's errors: a mistake in what a person gave it.

Every library error that reports such a mistake (bad rules, an illegal move, an
unknown bot, a database that is not one...) subclasses :class:`ArenaError`, so
the command line can print exactly those as one line with exit code 2 and let
anything else, a real bug, show its traceback.

This module imports nothing: the engine, the bot contract and the sandboxed bot
process all use it, and the sandbox must stay light to start.
"""

from __future__ import annotations


class ArenaError(ValueError):
    """A mistake in what a person gave the arena.

    The message is one line that names the offending value and says what to do
    instead. It stays a ``ValueError`` so code that caught the library's errors
    as ``ValueError`` keeps working.

    Where the message's advice is a command to type (``list them with 'arena
    games'``), ``site`` says the same for a visitor of the league site, who types no
    commands; the site shows it in place of the message.
    """

    site: str | None = None

    def __init__(self, *args: object, site: str | None = None) -> None:
        super().__init__(*args)
        if site is not None:
            self.site = site


class ArenaFault(Exception):
    """The arena itself failed during a game: its spawner, its control groups, a
    fork or the memory of its own processes. Not the bot's doing, so never charged
    to a bot: the game is void (stored as such, in no table) and played again.

    Raised only by the arena's own code, never on a bot's word: a bot cannot have a
    game it is losing voided by claiming a fault.
    """


class NoSandbox(ArenaError):
    """Code others wrote was to run on a system without the sandbox (see arena/sandbox/system.py)."""


class BuildFailed(ArenaError):
    """An uploaded program whose build (in the sandbox) did not give a program: its
    command failed, or it broke a limit. The message is one line; ``log`` is what
    the build printed (the author's to read; hostile: shown escaped)."""

    def __init__(self, reason: str, log: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log
