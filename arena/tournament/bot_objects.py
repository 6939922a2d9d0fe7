"""Bots a match is given as Python objects rather than specs: a :class:`Bot`
subclass (a fresh bot for every game) or a bot (the same one in every game, each
begun by ``new_game``), played in this process beside bots named by specs, which
the referee builds as it always does. Trusted code: it is the caller's own."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from arena.bot import Bot
from arena.players.plugins import BotSpecError, check_spec, spec_text
from arena.records import GameRecord, GameSpec
from arena.referee.referee import play_game

#: What a match may be given as a bot: a spec ("minimax:depth=4", "my_bot.py"), a Bot subclass, or a bot.
BotLike = str | type[Bot] | Bot


@dataclass(frozen=True)
class Contender:
    """One side of a match: its name in the results, and how to get its bot for a
    game (None: the referee builds it from the name, a spec)."""

    label: str
    make: Callable[[], Bot] | None = None


def contenders(bot_a: BotLike, bot_b: BotLike) -> tuple[Contender, Contender]:
    """The two sides of a match. A spec is checked now (a mistake is one line before
    any game); one bot given for both sides plays the second as a copy of itself."""
    a = contender(bot_a)
    if isinstance(bot_b, Bot) and bot_b is bot_a:
        twin = copy.deepcopy(bot_b)
        return a, Contender(a.label, lambda: twin)
    return a, contender(bot_b)


def contender(bot: BotLike) -> Contender:
    if isinstance(bot, str):
        return Contender(spec_text(check_spec(bot)))
    if isinstance(bot, type) and issubclass(bot, Bot):
        return Contender(bot.bot_name(), bot)
    if isinstance(bot, Bot):
        return Contender(_label(bot), lambda: bot)
    raise BotSpecError(
        f"not a bot: {bot!r}; give a spec ('minimax:depth=4', 'my_bot.py'), a Bot subclass or a bot"
    )


def _label(bot: Bot) -> str:
    """A bot's name as a spec would write it: its options that differ from their defaults."""
    changed = {key: getattr(bot, key) for key, option in bot.options.items() if getattr(bot, key) != option.default}
    options = ",".join(f"{key}={_option_text(value)}" for key, value in sorted(changed.items()))
    return f"{bot.bot_name()}:{options}" if options else bot.bot_name()


def _option_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def play_with(sides: tuple[Contender, Contender]) -> Callable[[Iterable[GameSpec]], Iterator[GameRecord]]:
    """What plays a match's games (see :func:`~arena.tournament.match.play_match`'s
    ``play``) with the bots of ``sides``: the first side moves first in the even
    games, as :func:`~arena.tournament.match.match_specs` numbers them."""

    def play(specs: Iterable[GameSpec]) -> Iterator[GameRecord]:
        for spec in specs:
            bots = [side.make() if side.make is not None else None for side in sides]
            if int(spec.key.rsplit("-", 1)[-1]) % 2:
                bots.reverse()
            yield play_game(spec, (bots[0], bots[1]))

    return play
