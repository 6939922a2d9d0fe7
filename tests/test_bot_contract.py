"""The bot authors' contract (arena.bot): starting a game, failures, options."""

from __future__ import annotations

import random
from types import MappingProxyType

import pytest

from arena.bot import Bot, BotFailure, BotOptionError, Option
from arena.engine.game import Board, Rules
from arena.players.plugins import installed_bots
from arena.protocol.descriptors import BotTimeout
from bots.minimax import MinimaxBot


class _Plain(Bot):
    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def test_by_default_a_bot_starts_its_game_in_finish_start():
    bot = _Plain()
    rules = Rules(5, 4, 3)
    bot.begin_game(rules, 1, 99)
    assert (bot.rules, bot.player) == (Rules(), 0)  # nothing yet: the other bot may be starting a process
    bot.finish_start()
    fresh = _Plain()
    fresh.new_game(rules, 1, 99)
    assert (bot.rules, bot.player) == (rules, 1)
    assert bot.rng.random() == fresh.rng.random()


def test_before_any_game_a_bot_has_its_own_generator_seeded_with_0():
    first, second = _Plain(), _Plain()
    reference = random.Random(0)
    expected = [reference.random() for _ in range(3)]
    assert [first.rng.random() for _ in range(3)] == expected
    assert [second.rng.random() for _ in range(3)] == expected  # not advanced by the first bot's draws
    first.new_game(Rules(), 0, 5)
    assert first.rng.random() == random.Random(5).random()


def test_a_random_bot_draws_its_stream_from_the_game_seed_and_the_stream():
    from bots.random_bot import RandomBot

    plain, streamed = RandomBot(), RandomBot(stream=2)
    plain.new_game(Rules(), 0, 77)
    streamed.new_game(Rules(), 1, 77)
    assert plain.rng.random() == random.Random(77).random()
    assert streamed.rng.random() == random.Random("77:2").random()
    assert (streamed.rules, streamed.player) == (Rules(), 1)


def test_a_sandbox_timeout_is_a_bot_failure_with_a_reason():
    timeout = BotTimeout("time: no answer within 1 s")
    assert isinstance(timeout, BotFailure)
    assert timeout.reason == str(timeout) == "time: no answer within 1 s"


# --- options ---------------------------------------------------------------------------


class Searcher(Bot):
    """Declares its options the new way: as class attributes."""

    depth = Option(4, "search depth in plies")
    seconds = Option(1.5, "seconds per move")
    greedy = Option(True, "take an immediate win")
    style = Option("sharp", "how it plays")

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


class DeeperSearcher(Searcher):
    depth = Option(6, "deeper by default")
    width = Option(3, "moves searched per ply")


class OldStyle(Bot):
    """Declares its options the old way, as the README once showed."""

    options = {"depth": Option(4, "search depth in plies"), "greedy": Option(True, "take a win")}

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def test_options_read_as_typed_values_on_a_bot():
    bot = Searcher(depth="7", seconds=2, greedy="off")
    assert (bot.depth, bot.seconds, bot.greedy, bot.style) == (7, 2.0, False, "sharp")
    assert [type(value) for value in (bot.depth, bot.seconds, bot.greedy, bot.style)] == [int, float, bool, str]
    default = Searcher()
    assert (default.depth, default.seconds, default.greedy, default.style) == (4, 1.5, True, "sharp")


def test_an_option_read_on_the_class_is_the_option():
    assert isinstance(Searcher.depth, Option)
    assert (Searcher.depth.default, Searcher.depth.help, Searcher.depth.name) == (4, "search depth in plies", "depth")
    assert Searcher.options["depth"] is Searcher.depth
    assert list(Searcher.options) == ["depth", "seconds", "greedy", "style"]  # as declared


def test_a_subclass_inherits_options_and_may_override_one():
    assert list(DeeperSearcher.options) == ["depth", "seconds", "greedy", "style", "width"]
    assert DeeperSearcher.options["depth"].default == 6
    assert Searcher.options["depth"].default == 4  # the base is untouched
    bot = DeeperSearcher(seconds="0.5")
    assert (bot.depth, bot.seconds, bot.width) == (6, 0.5, 3)


def test_options_of_a_mixin_are_options_of_the_bot():
    class Timed:
        seconds = Option(2.0, "seconds per move")

    class TimedSearcher(Timed, Bot):
        depth = Option(4, "search depth in plies")

    assert list(TimedSearcher.options) == ["seconds", "depth"]
    assert TimedSearcher(seconds="3").seconds == 3.0


def test_the_old_dict_style_still_works():
    bot = OldStyle(depth="5")
    assert (bot.depth, bot.greedy) == (5, True)
    assert dict(OldStyle.options) == {"depth": Option(4, "search depth in plies"), "greedy": Option(True, "take a win")}
    assert "depth" not in vars(OldStyle)  # values are the bot's own attributes, as they were
    with pytest.raises(AttributeError):
        OldStyle.depth  # noqa: B018
    message = r"^unknown option 'width' for bot 'oldstyle'; valid options: depth, greedy$"
    with pytest.raises(BotOptionError, match=message):
        OldStyle(width=3)
    with pytest.raises(BotOptionError, match=r"^option greedy='maybe' must be bool \(default True\)$"):
        OldStyle(greedy="maybe")


def test_a_dict_style_subclass_lists_all_its_options_as_before():
    # A dict named every option of its class: inherited ones it left out are not options.
    class Narrower(Searcher):
        options = {"depth": Option(2, "shallow")}

    class Wider(OldStyle):
        options = {**OldStyle.options, "width": Option(3, "moves per ply")}

    assert list(Narrower.options) == ["depth"]
    assert Narrower().depth == 2
    with pytest.raises(BotOptionError, match=r"unknown option 'seconds' for bot 'narrower'; valid options: depth$"):
        Narrower(seconds=1.0)
    assert Wider(width="4").width == 4 and Wider().depth == 4


def test_an_unknown_option_is_refused_with_the_valid_ones_named():
    with pytest.raises(BotOptionError) as refused:
        Searcher(dpeth=5)
    assert str(refused.value) == (
        "unknown option 'dpeth' for bot 'searcher'; valid options: depth, greedy, seconds, style"
    )
    with pytest.raises(BotOptionError, match=r"^unknown option 'depth' for bot '_plain'; valid options: none$"):
        _Plain(depth=5)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"depth": "deep"}, "option depth='deep' must be int (default 4)"),
        ({"depth": 2.5}, "option depth=2.5 must be int (default 4)"),
        ({"depth": True}, "option depth=True must be int (default 4)"),
        ({"seconds": "soon"}, "option seconds='soon' must be float (default 1.5)"),
        ({"greedy": "maybe"}, "option greedy='maybe' must be bool (default True)"),
        ({"style": 3}, "option style=3 must be str (default 'sharp')"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(given, message):
    with pytest.raises(BotOptionError) as refused:
        Searcher(**given)
    assert str(refused.value) == message


def test_two_bot_classes_never_share_a_mutable_options_mapping():
    class First(Bot):
        pass

    class Second(Bot):
        pass

    assert First.options is not Second.options
    assert First.options is not Bot.options
    for bot_class in (Bot, First, Searcher, OldStyle):
        assert isinstance(bot_class.options, MappingProxyType)
        with pytest.raises(TypeError):
            bot_class.options["depth"] = Option(1)  # type: ignore[index]
    assert dict(Bot.options) == {} and dict(First.options) == {}
    # The dict a class declares is copied, so changing it later changes nothing.
    declared = {"depth": Option(4, "search depth in plies")}

    class Declared(Bot):
        options = declared

    declared["width"] = Option(3, "moves per ply")
    assert list(Declared.options) == ["depth"]
    with pytest.raises(BotOptionError, match="unknown option 'width'"):
        Declared(width=3)


def test_an_option_value_does_not_leak_to_another_bot():
    deep, shallow, default = Searcher(depth=9), Searcher(depth=1), Searcher()
    assert (deep.depth, shallow.depth, default.depth) == (9, 1, 4)
    deep.depth = 12
    assert (shallow.depth, default.depth, Searcher().depth) == (1, 4, 4)
    assert Searcher.depth.default == 4


def test_option_values_live_in_the_bots_own_dict_so_reads_stay_fast():
    # A non-data descriptor (no __set__): the bot's own value wins the lookup
    # without a call into Option.__get__ on every read in a search loop.
    bot = Searcher(depth=5)
    assert vars(bot)["depth"] == 5
    assert not hasattr(Option, "__set__") and not hasattr(Option, "__delete__")


def test_reading_an_option_before_bot_init_says_so():
    class Early(Searcher):
        def __init__(self) -> None:
            self.planned = self.depth * 2
            super().__init__()

    with pytest.raises(AttributeError, match=r"'Early' bot has no value for option 'depth'"):
        Early()


def test_every_built_in_bot_declares_its_options_as_attributes():
    for name, entry in installed_bots().items():
        assert entry.bot_class is not None, name
        for key, option in entry.bot_class.options.items():
            assert getattr(entry.bot_class, key) is option, f"{name}:{key}"
    assert MinimaxBot.depth.default == 4 and MinimaxBot().depth == 4


@pytest.mark.parametrize("taken", ["name", "rules", "player", "rng", "time_allowed", "choose_move", "options"])
def test_an_option_may_not_take_a_name_the_bot_class_uses(taken):
    with pytest.raises(BotOptionError, match=f"option named '{taken}', a name the Bot class uses itself"):
        type("Clash", (Bot,), {taken: Option(1, "clashes")})
