"""Issue 13, items 3, 9, 11 and 13: bare groups print help; Ctrl-C everywhere; solve's
budget, progress and move numbers; match forfeits, time controls and progress."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.cli.main import main

# --- item 13: bare `arena` and `arena tournament` --------------------------------------


@pytest.mark.parametrize("args, last_command", [([], "tournament"), (["tournament"], "run")])
def test_a_bare_group_prints_its_help_on_stdout_with_exit_code_0(args: list[str], last_command: str) -> None:
    result = CliRunner().invoke(main, args, prog_name="arena")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith("Usage: arena")
    assert "Error" not in result.stdout
    assert "; see '" not in result.stdout  # the usage-error suffix glued to the last line
    assert result.stdout.rstrip().splitlines()[-1].startswith(f"  {last_command}  ")

