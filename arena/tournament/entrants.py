"""Resolving a tournament's bots: the step between loading a definition and running it.

A loaded :class:`TournamentConfig` holds bot specs as written. Resolving finds
each one (an installed plug-in, a bot file, or a submitted ``name@vN`` in the
league database), pins a submitted bot's latest version, builds every bot once
and starts each untrusted one in the sandbox, so that a bot that cannot play is
reported, naming the file and the key, before any game.

A submitted bot that fails to start there is not the organiser's mistake: it
passed its submission checks, and its author may have made it fail only here.
It stays in the field and forfeits each of its games, with why
(``TournamentConfig.failed_start``), so that one author cannot stop a run that
names their bot. A bot file that fails to start still stops the run: whoever
runs the tournament holds the file, and can mend it or leave it out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from arena.engine.game import Rules
from arena.entry.submissions import existing_store, resolve_bot
from arena.players.plugins import BotChecker, BotSpecError, BotStartError, file_identity, parse_spec, spec_text
from arena.records import BotCode
from arena.store import Store
from arena.tournament.config import ConfigError, TournamentConfig, check_field_of_play, check_listed_once


def resolve_bots(
    config: TournamentConfig, store: Store | None, checker: BotChecker | None = None
) -> TournamentConfig:
    """``config`` with every bot found, checked and (if submitted) pinned to a version.

    Submitted bots are looked up in ``store``; with None, no spec names a submitted
    bot. ``checker`` remembers which untrusted bots already started (a fresh one if
    not given). A config that is already resolved is returned as it is.
    """
    if config.resolved:
        return config
    checker = checker or BotChecker()

    def fail(message: str) -> ConfigError:
        return ConfigError(f"{config.origin}: {message}")

    submitted: dict[str, BotCode] = {}
    failed: dict[str, str] = {}
    bots = _resolve_specs(config.bots, "bots", fail, store, checker, submitted, failed, config.rules)
    challengers = _resolve_specs(config.challengers, "challengers", fail, store, checker, submitted, failed,
                                 config.rules)
    check_field_of_play(config.format, bots, challengers, fail)  # x and x@v2 may be one bot
    resolved = dataclasses.replace(
        config, bots=bots, challengers=challengers, submitted=tuple(sorted(submitted.items())),
        failed_start=tuple(failed.items()), resolved=True,
    )
    if not resolved.name:  # given by flags alone: named by what it is, versions pinned, bot files' code
        code = {text: file_identity(spec.path, spec.program)[1] for text in resolved.entrants
                if (spec := parse_spec(text)).path is not None}
        resolved = dataclasses.replace(resolved, name=resolved.default_name(code), named_by_code=True)
    return resolved


def resolve_bots_in_database(config: TournamentConfig, checker: BotChecker | None = None) -> TournamentConfig:
    """:func:`resolve_bots` against ``config.db`` if that database exists.

    The database is only read here (not created, not migrated), so a definition
    with a mistake leaves the file as it was. One that cannot be opened is no place to look up submitted
    bots; the error comes when the tournament opens it to store games.
    """
    with existing_store(config.db) as store:
        return resolve_bots(config, store, checker)


def _resolve_specs(
    specs: tuple[str, ...],
    key: str,
    fail: Callable[[str], ConfigError],
    store: Store | None,
    checker: BotChecker,
    submitted: dict[str, BotCode],
    failed: dict[str, str],
    rules: Rules,
) -> tuple[str, ...]:
    resolved = []
    for text in specs:
        try:
            found = resolve_bot(text, store)
            if found.code is not None:
                submitted.update(found.submitted)
                try:
                    checker.check(found.spec, submitted=submitted, rules=rules)
                except BotStartError as exc:  # the author's bot, not the organiser's mistake: it forfeits
                    failed[found.spec] = exc.reason
                resolved.append(found.spec)
            else:
                resolved.append(spec_text(checker.check(found.spec, rules=rules)))
        except BotSpecError as exc:
            raise fail(f"{key}: {exc}") from None
    check_listed_once(resolved, key, fail)  # "x" and "x@v2" are one bot when v2 is the latest
    return tuple(resolved)
