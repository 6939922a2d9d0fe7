"""Bots kept from one game to the next of a run of games, where their class allows
it (:attr:`arena.bot.Bot.reusable`): a worker plays a chunk of a tournament's games
between the same few bots, and building two bots for every game costs a game of
random bots as much as a dozen of its moves."""

from __future__ import annotations

from arena.protocol.player import InProcessPlayer, Player


class KeptBots:
    """The players of the games played so far that may play the next ones: one for
    each bot spec and side (a bot playing itself has two), handed out again by the
    referee (:func:`arena.referee.referee.play_game`) instead of building new ones.
    Only Python bots called in this process are kept, and only those whose class
    says it can play game after game; a game that ends in a forfeit or is void
    leaves nothing kept, so a bot that failed is built anew."""

    def __init__(self) -> None:
        self._players: dict[tuple[str, int], Player] = {}

    def get(self, spec: str, side: int) -> Player | None:
        return self._players.get((spec, side))

    def keep(self, spec: str, side: int, player: Player) -> None:
        if isinstance(player, InProcessPlayer) and player.reusable:
            self._players[(spec, side)] = player

    def clear(self) -> None:
        self._players.clear()
