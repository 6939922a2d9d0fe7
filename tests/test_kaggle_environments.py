"""Exported bots and episodes in kaggle-environments itself (the ``kaggle`` extra).

Without kaggle-environments these tests skip; with ARENA_KAGGLE_TESTS=required (as in
.ci/run's own step for them) they fail instead. tests/test_kaggle_submission.py checks the
exported file in every run, without it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena.entry.kaggle_submission import export_submission
from arena.formats.kaggle_episodes import episode_of_game, game_of_episode
from arena.protocol import connectx

#: The bots exported, with node budgets: their moves do not depend on the machine's speed.
BOTS = {"solver": "solver:nodes=3000,fallback_playouts=200", "minimax": "minimax:depth=3"}
OPPONENTS = ("negamax", "random")


@pytest.fixture(scope="module")
def make() -> Any:
    try:
        from kaggle_environments import make
    except ImportError:
        message = "kaggle-environments is not installed: pip install -e '.[kaggle]'"
        if os.environ.get("ARENA_KAGGLE_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)
    return make


@pytest.fixture(scope="module")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kaggle")
    return {name: export_submission(spec, folder / f"{name}.py").path for name, spec in BOTS.items()}


@pytest.mark.parametrize("bot", sorted(BOTS))
@pytest.mark.parametrize("opponent", OPPONENTS)
@pytest.mark.parametrize("side", [0, 1])
def test_an_exported_bot_plays_whole_episodes_in_kaggle_environments(
        make: Any, submissions: dict[str, Path], bot: str, opponent: str, side: int) -> None:
    env = make("connectx", debug=False)
    agents: list[Any] = [opponent, opponent]
    agents[side] = str(submissions[bot])
    env.run(agents)
    episode = env.toJSON()
    assert episode["statuses"] == ["DONE", "DONE"], episode["statuses"]  # no ERROR, TIMEOUT or INVALID
    if bot == "solver" and side == 0:
        assert episode["rewards"][0] >= 0, "the solver lost as first player"
    game = game_of_episode(episode)  # every move legal, as the arena checks them
    assert game.board().is_over()
    assert {0: 1, 1: -1, None: 0}[game.board().winner] == episode["rewards"][0]


def test_an_exported_episode_is_one_kaggle_environments_takes(make: Any) -> None:
    env = make("connectx", debug=False)
    env.run(["negamax", "random"])
    played = env.toJSON()
    ours = episode_of_game(game_of_episode(played))
    assert [step[0]["observation"]["board"] for step in ours["steps"]] == [
        step[0]["observation"]["board"] for step in played["steps"]]
    assert ours["rewards"] == played["rewards"] and ours["statuses"] == played["statuses"]
    # Kaggle's own environment loads it as an episode's steps (each state checked against its schema).
    again = make("connectx", configuration=ours["configuration"], steps=ours["steps"], info=ours["info"])
    assert again.done and json.loads(json.dumps(again.toJSON()))["rewards"] == ours["rewards"]
    assert connectx.grid(game_of_episode(again.toJSON()).board()) == played["steps"][-1][0]["observation"]["board"]
