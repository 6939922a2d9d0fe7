"""Kaggle ConnectX agents run as Kaggle runs them: called with one argument or two
as they declare, given every configuration field Kaggle gives, and refused before
any game on rules Kaggle's ConnectX cannot express."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.bot import Limit
from arena.engine.game import Board, Rules
from arena.protocol.connectx import KaggleAgentBot, arguments_taken
from arena.protocol.messages import Hello, Move, NewGame, Quit
from arena.protocol.player import InProcessPlayer
from arena.protocol.server import Job
from arena.records import BotCode, TimeControl
from tests.test_protocol import exchange

KAGGLE_FIELDS = {"rows", "columns", "inarow", "actTimeout", "agentTimeout", "runTimeout", "episodeSteps", "timeout"}


def seen_by(agent_takes: str, time_control: TimeControl | None, limit: Limit, rules: Rules | None = None) -> list[Any]:
    """What an agent was called with for one move, played in this process."""
    calls: list[Any] = []
    agents = {
        "one": lambda obs: calls.append((obs,)) or 0,
        "two": lambda obs, config: calls.append((obs, config)) or 0,
        "args": lambda *args: calls.append(args) or 0,
    }
    player = InProcessPlayer(KaggleAgentBot(agents[agent_takes]))
    rules = rules or Rules()
    player.new_game(rules, 0, 0, time_control)
    player.play(Board.from_moves([3], rules), limit)
    (call,) = calls
    return list(call)


def test_a_one_argument_agent_is_called_with_the_observation_alone() -> None:
    (obs,) = seen_by("one", None, Limit(60.0))
    assert obs.mark == 2 and obs["step"] == 1


def test_an_agent_with_star_args_gets_the_observation_and_the_configuration() -> None:
    obs, config = seen_by("args", None, Limit(60.0))
    assert set(config) == KAGGLE_FIELDS and obs.board[-4] == 1


@pytest.mark.parametrize(("source", "count"), [
    ("def agent(obs): pass", 1), ("def agent(obs, config): pass", 2), ("def agent(obs, config=None): pass", 2),
    ("def agent(*args): pass", 2), ("def agent(obs, *rest): pass", 2), ("def agent(obs, *, x=1): pass", 1),
    ("def agent(): pass", 0),
])
def test_the_arguments_an_agent_takes_are_read_from_its_signature(source: str, count: int) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    assert arguments_taken(namespace["agent"]) == count


def test_without_a_time_control_the_configuration_holds_kaggles_values() -> None:
    obs, config = seen_by("two", TimeControl(), Limit(60.0))
    assert dict(config) == {"rows": 6, "columns": 7, "inarow": 4, "actTimeout": 2, "timeout": 2,
                            "agentTimeout": 60, "runTimeout": 1200, "episodeSteps": 1000}
    assert obs.remainingOverageTime == 60


def test_the_configuration_and_the_overage_follow_the_games_clock() -> None:
    rules = Rules(9, 7, 5)
    obs, config = seen_by("two", TimeControl(1.5, 10.0), Limit(1.5, 7.25), rules)
    assert (config.actTimeout, config["timeout"], config.agentTimeout) == (1.5, 1.5, 10.0)
    assert config.runTimeout == 63 * 1.5 + 2 * 10.0  # the longest a game can last on both clocks
    assert (config.rows, config.columns, config.inarow) == (7, 9, 5)
    assert obs.remainingOverageTime == 7.25  # what is left of the bank now
    obs, _ = seen_by("two", TimeControl(1.0), Limit(1.0, None))
    assert obs["remainingOverageTime"] == 0  # a move limit and no bank: no overage at all


def test_episode_steps_never_end_a_game_on_a_big_board() -> None:
    _, config = seen_by("two", None, Limit(60.0), Rules(40, 40, 5))
    assert config.episodeSteps > 40 * 40


def test_a_one_argument_agent_file_plays_in_the_bot_process() -> None:
    code = BotCode("agent.py", text="def agent(obs):\n    return obs.board[35:].index(1) + 1\n")
    answers = exchange([Hello(), NewGame(Rules(), 1, 0), Move((0,), Limit(1.0)), Quit()], job=Job(code, {}))
    assert answers[1:] == [{"ok": True}, {"move": 1, "info": {}}]


def test_the_bot_process_gives_the_agent_the_games_clock() -> None:
    code = BotCode("agent.py", text="def agent(obs, config):\n"
                                    "    return int(config.actTimeout) + int(obs['remainingOverageTime'])\n")
    answers = exchange([Hello(), NewGame(Rules(), 0, 0, TimeControl(3.0, 2.0)), Move((), Limit(3.0, 2.0)), Quit()],
                       job=Job(code, {}))
    assert answers[2] == {"move": 5, "info": {}}


def test_an_agent_that_takes_no_argument_is_one_line_when_loaded() -> None:
    code = BotCode("agent.py", text="def agent():\n    return 3\n")
    (answer,) = exchange([Hello()], job=Job(code, {}))
    assert "takes no argument" in answer["error"]


AGENT = "def agent(obs):\n    return [c for c in range(7) if obs.board[c] == 0][0]\n"


@pytest.mark.parametrize(("command", "flag", "fragment"), [
    (["match", "kaggle_agent.py", "random"], "--no-gravity", "no games without gravity"),
    (["match", "kaggle_agent.py", "random"], "--scoring=count", "no count scoring"),
    (["tournament", "run", "--bots", "kaggle_agent.py,random", "--db", "arena.db"], "--no-gravity",
     "no games without gravity"),
])
def test_rules_kaggle_cannot_express_are_refused_before_any_game(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], flag: str, fragment: str
) -> None:
    from arena.tournament import match, runner

    (tmp_path / "kaggle_agent.py").write_text(AGENT)
    monkeypatch.setattr(match, "play_match", lambda *a, **k: pytest.fail("a game was played"))
    monkeypatch.setattr(runner, "play_tournament", lambda *a, **k: pytest.fail("a game was played"), raising=False)
    result = cli(*command, flag)
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("Error: ") and "is a Kaggle ConnectX agent" in line and fragment in line


def test_a_kaggle_agent_plays_connect_four_against_a_bot(cli, tmp_path: Path) -> None:
    (tmp_path / "kaggle_agent.py").write_text(AGENT)
    result = cli("match", "kaggle_agent.py", "random", "-n", "2")
    assert result.exit_code == 0, result.output
    (row,) = [line.split() for line in result.output.splitlines() if line.startswith("kaggle_agent.py")]
    assert row[1] == "2" and row[5] == "0"  # two games, no forfeit


@pytest.mark.parametrize(("board", "refused"), [("gravity = false", True), ("gravity = true", False)])
def test_a_league_refuses_an_agent_its_board_has_no_place_for(tmp_path: Path, board: str, refused: bool) -> None:
    """A ConnectX agent entered in a league without gravity would forfeit every game:
    the upload is refused, saying why; on a board with gravity it is taken."""
    from arena.league.accounts import add_user
    from arena.league.policy import Refused, submit_to_league
    from arena.league.scheduler import create_league
    from arena.store import Store

    (tmp_path / "league.toml").write_text(f'bots = ["random"]\ngames = 2\n[rules]\nwidth = 5\nheight = 5\n{board}\n')
    with Store(tmp_path / "arena.db") as store:
        create_league(store, "class", str(tmp_path / "league.toml"))
        user = add_user(store, "alice")[0]
        league = store.leagues.check("class")
        if refused:
            with pytest.raises(Refused, match="Kaggle ConnectX agent, and Kaggle's ConnectX has no games without"):
                submit_to_league(store, league, user, "kag", AGENT.replace("range(7)", "range(5)").encode())
            assert store.submissions.all() == []
        else:
            submit_to_league(store, league, user, "kag", AGENT.replace("range(7)", "range(5)").encode())
            assert [s.spec for s in store.submissions.all()] == ["kag@v1"]
