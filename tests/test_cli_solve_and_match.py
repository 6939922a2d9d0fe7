"""The commands at their edges: bare groups print help; Ctrl-C everywhere; solve's
budget, progress and move numbers; match forfeits, time controls and progress."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.terminal.ticker import Ticker

# --- item 13: bare `arena` and `arena tournament` --------------------------------------


@pytest.mark.parametrize("args, last_command", [([], "users"), (["tournament"], "run")])
def test_a_bare_group_prints_its_help_on_stdout_with_exit_code_0(args: list[str], last_command: str) -> None:
    result = CliRunner().invoke(main, args, prog_name="arena")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.startswith("Usage: arena")
    assert "Error" not in result.stdout
    assert "; see '" not in result.stdout  # the usage-error suffix glued to the last line
    assert result.stdout.rstrip().splitlines()[-1].startswith(f"  {last_command}  ")


# --- helpers -------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _in_a_fresh_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """arena match stores its games (in arena.db by default): each test in a folder of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)


def _run(*args: str, **kwargs: object):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), prog_name="arena", **kwargs)


def _one_error_line(result, *fragments: str) -> str:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


class FakeSolver:
    """A solver plug-in stand-in that records the deadlines it was given."""

    def __init__(self, score: int | None = None, moves: dict[int, int | None] | None = None) -> None:
        self.score = score
        self.moves = moves
        self.deadlines: list[float | None] = []

    def solve(self, board, deadline=None, nodes=None):  # type: ignore[no-untyped-def]
        self.deadlines.append(deadline)
        return self.score

    def solve_moves(self, board, deadline=None, nodes=None):  # type: ignore[no-untyped-def]
        self.deadlines.append(deadline)
        return self.moves if self.moves is not None else dict.fromkeys(board.legal_moves(), self.score)


def _fake_solver(monkeypatch: pytest.MonkeyPatch, solver: FakeSolver) -> FakeSolver:
    import arena.cli.solve

    monkeypatch.setattr(arena.cli.solve, "find_solver", lambda rules: solver)
    return solver


# --- item 9: arena solve ---------------------------------------------------------------


def test_solve_has_a_default_budget_and_says_what_it_could_not_prove(monkeypatch: pytest.MonkeyPatch) -> None:
    solver = _fake_solver(monkeypatch, FakeSolver(score=None))
    before = time.monotonic()
    result = _run("solve", "4")
    assert result.exit_code == 0, result.output
    assert solver.deadlines and all(d is not None for d in solver.deadlines)
    assert all(before + 9 < d <= time.monotonic() + 10 for d in solver.deadlines)  # type: ignore[operator]
    assert "unknown within 10 s; --budget 0 to search to the end" in result.stdout
    assert "score None" not in result.stdout


def test_solve_json_keeps_stdout_json_and_notes_the_budget_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_solver(monkeypatch, FakeSolver(score=2, moves={0: 1, 1: None}))
    result = _run("solve", "4", "--json", "--budget", "3")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"score": 2, "moves": {"1": 1, "2": None}}
    assert "unknown within 3 s; --budget 0 to search to the end" in result.stderr


def test_solve_budget_0_searches_to_the_end_but_still_hears_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budget 0 is no limit; the solver still gets a (far) deadline, so that the compiled
    solver looks at the clock, where Ctrl-C gets in."""
    solver = _fake_solver(monkeypatch, FakeSolver(score=0))
    result = _run("solve", "4", "--budget", "0")
    assert result.exit_code == 0, result.output
    assert all(d is not None and d > time.monotonic() + 10**8 for d in solver.deadlines)  # type: ignore[operator]
    assert "unknown" not in result.stdout


def test_solve_refuses_a_negative_budget() -> None:
    result = _run("solve", "4", "--budget", "-1")
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize("moves, message", [
    ("4444444", "move 7 ('4') is illegal: column is full"),
    ("44444454", "move 8 ('4') is illegal: column is full"),
    ("45454545", "move 8 ('5') comes after the game was won at move 7"),
])
def test_solve_names_a_bad_move_by_its_1_based_number_as_import_does(moves: str, message: str) -> None:
    _one_error_line(_run("solve", moves), message)


def test_solve_readme_example_answers_within_the_default_budget() -> None:
    result = _run("solve", "445535", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["score"] == 18 and data["moves"]["2"] == 18 and None not in data["moves"].values()


def test_the_ticker_draws_on_a_terminal_only_and_clears_its_line() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    with Ticker(tty, "solving", 10.0, every=0.01):
        time.sleep(0.2)
    with Ticker(pipe, "solving", 10.0, every=0.01):
        time.sleep(0.05)
    assert "\rsolving: " in tty.getvalue() and " of 10 s" in tty.getvalue()
    assert tty.getvalue().endswith("\r\033[K")
    assert pipe.getvalue() == ""


# --- item 11: Ctrl-C -------------------------------------------------------------------


def _interrupted(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 130, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "Aborted" not in result.output
    assert result.output.strip().splitlines() == ["Interrupted."], result.output


def _ctrl_c(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_in_solve_is_one_line_and_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.cli.solve

    monkeypatch.setattr(arena.cli.solve, "find_solver", _ctrl_c)
    _interrupted(_run("solve", "4"))


def test_ctrl_c_inside_compiled_solver_code_is_one_line_and_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba turns a KeyboardInterrupt in its clock call into a SystemError caused by it."""

    def numba_style(rules):  # type: ignore[no-untyped-def]
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<built-in method _now of _dynfunc._Closure> returned a result") from exc

    import arena.cli.solve

    monkeypatch.setattr(arena.cli.solve, "find_solver", numba_style)
    _interrupted(_run("solve", "4"))


def test_a_system_error_not_caused_by_ctrl_c_is_still_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.cli.solve

    def broken(rules):  # type: ignore[no-untyped-def]
        raise SystemError("a real bug")

    monkeypatch.setattr(arena.cli.solve, "find_solver", broken)
    result = _run("solve", "4")
    assert result.exit_code == 1 and isinstance(result.exception, SystemError)


def _db_with_games(tmp_path: Path, games: int = 2) -> str:
    db = str(tmp_path / "a.db")
    result = _run("tournament", "run", "--bots", "random,greedy", "--games", str(games), "--name", "t",
                  "--db", db, "--workers", "1")
    assert result.exit_code == 0, result.output
    return db


def test_ctrl_c_in_replay_and_match_is_one_line_and_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.terminal.replay
    import arena.tournament.runner

    db = _db_with_games(tmp_path)
    monkeypatch.setattr(arena.terminal.replay.ReplaySession, "run", _ctrl_c)
    _interrupted(_run("replay", "1", "--db", db))
    monkeypatch.setattr(arena.tournament.runner, "referee_game", _ctrl_c)
    result = _run("match", "random", "greedy", "-n", "2")
    assert result.exit_code == 130, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "Aborted" not in result.output
    assert result.output.strip().splitlines() == [
        "Interrupted: 0 of 2 games stored in arena.db; run the same command again to resume."], result.output


def test_end_of_input_at_a_prompt_still_aborts_with_1(monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    import arena.cli.solve

    def eof(rules):  # type: ignore[no-untyped-def]
        try:
            raise EOFError
        except EOFError:
            raise click.Abort() from None

    monkeypatch.setattr(arena.cli.solve, "find_solver", eof)
    result = _run("solve", "4")
    assert result.exit_code == 1 and "Aborted!" in result.output


def test_ctrl_c_in_analyse_keeps_whole_games_and_stores_no_half_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arena.cli.solve
    from arena.store import Store

    db = _db_with_games(tmp_path)
    with Store(db) as store:
        first, second = store.games.all(tournament="t")[:2]
    calls: list[int] = []

    def solver(rules):  # type: ignore[no-untyped-def]
        def solve(board, deadline):  # type: ignore[no-untyped-def]
            calls.append(board.ply)
            if len(calls) > first.plies + 1 + 3:  # three positions into the second game
                raise KeyboardInterrupt
            return None

        return solve

    monkeypatch.setattr(arena.cli.solve, "solver_solve", solver)
    _interrupted(_run("analyse", "--tournament", "t", "--db", db, "--budget", "0.5"))
    with Store(db) as store:
        assert len(store.analyses.values(first.id)) == first.plies + 1  # the whole first game stays
        assert store.analyses.values(second.id) == {}  # nothing of the half-analysed one


def test_sigint_stops_a_real_solve_with_one_line_and_130(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    run = subprocess.Popen(
        [sys.executable, "-m", "arena", "solve", "--budget", "0"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3)  # loading, or searching the empty board (minutes): Ctrl-C must stop either
    run.send_signal(signal.SIGINT)
    try:
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 130, err
    assert err.strip().splitlines() == ["Interrupted."], err
    assert out == ""


# --- item 3: arena match shows forfeits, has time controls and progress -----------------

HOSTILE = str(Path(__file__).resolve().parent / "bots" / "hostile.py")


def test_match_table_shows_forfeits_and_their_reasons() -> None:
    crasher = f"{HOSTILE}:Raises"
    result = _run("match", crasher, "random", "-n", "2")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if line.startswith("bot "))
    assert header.split() == ["bot", "games", "wins", "draws", "losses", "forfeits", "score", "%"]
    row = next(line for line in result.stdout.splitlines() if line.startswith(crasher))
    assert row.split()[1:7] == ["2", "0", "0", "2", "2", "0"]
    assert f"{crasher} forfeited 2 games:" in result.stdout
    assert '  2 x crashed: RuntimeError: "hostile raise" (hostile.py line 16, in choose_move)' in result.stdout
    assert "random forfeited" not in result.stdout


def test_match_json_gives_forfeits_and_reasons_per_bot() -> None:
    illegal = f"{HOSTILE}:IllegalColumn"
    result = _run("match", illegal, "random", "-n", "2", "--json")
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)["results"]
    assert results[illegal]["forfeits"] == 2 and results[illegal]["losses"] == 2
    assert results[illegal]["forfeit_reasons"] == {"illegal move: 99 is out of range 0..6": 2}
    assert results["random"]["forfeits"] == 0 and results["random"]["forfeit_reasons"] == {}


def test_match_move_seconds_makes_a_hung_bot_forfeit_on_time() -> None:
    hung = f"{HOSTILE}:SleepsForever"
    result = _run("match", hung, "random", "-n", "2", "--move-seconds", "0.3", "--bank-seconds", "0.2")
    assert result.exit_code == 0, result.output
    assert "0.3 s/move + 0.2 s bank" in result.stdout
    assert f"{hung} forfeited 2 games:" in result.stdout
    reasons = [line for line in result.stdout.splitlines() if line.startswith("  2 x time: ")]
    assert len(reasons) == 1, result.stdout


def test_match_gives_every_game_the_time_control(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.tournament.runner
    from arena.records import TimeControl

    seen: list[TimeControl] = []
    real = arena.tournament.runner.referee_game

    def spy(spec, **options):  # type: ignore[no-untyped-def]
        seen.append(spec.time_control)
        return real(spec, **options)

    monkeypatch.setattr(arena.tournament.runner, "referee_game", spy)
    result = _run("match", "random", "greedy", "-n", "2", "--move-seconds", "2", "--bank-seconds", "5")
    assert result.exit_code == 0, result.output
    assert seen == [TimeControl(2.0, 5.0)] * 2


@pytest.mark.parametrize("args, fragments", [
    (["--bank-seconds", "3"], ["--bank-seconds 3 needs --move-seconds"]),
    (["--move-seconds", "0"], ["--move-seconds", "0"]),
    (["--move-seconds", "-1"], ["--move-seconds", "-1"]),
    (["--bank-seconds", "-1", "--move-seconds", "1"], ["--bank-seconds", "-1"]),
])
def test_match_refuses_bad_time_controls_in_one_line(args: list[str], fragments: list[str]) -> None:
    _one_error_line(_run("match", "random", "greedy", "-n", "2", *args), *fragments)


def test_match_shows_progress_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.terminal import progress

    quiet = _run("match", "random", "greedy", "-n", "4")
    assert quiet.exit_code == 0 and quiet.stderr == ""  # not a terminal: no bar
    stream = io.StringIO()
    monkeypatch.setattr(progress.ProgressBar, "for_stderr", classmethod(lambda cls: cls(stream)))
    for extra in ([], ["--sprt", "elo0=0,elo1=400"]):
        stream.seek(0)
        stream.truncate()
        result = _run("match", "random", "greedy", "-n", "4", *extra, "--db", f"progress{len(extra)}.db")
        assert result.exit_code == 0, result.output
        assert "/4 games" in stream.getvalue()  # an SPRT may decide before the 4th
        if not extra:
            assert "4/4 games" in stream.getvalue()
        assert stream.getvalue().endswith("\n")


def test_play_match_tells_progress_after_each_game() -> None:
    from arena.tournament.match import match_specs, play_match

    told: list[tuple[int, int]] = []
    play_match(match_specs("random", "greedy", 3), ("random", "greedy"),
               progress=lambda done, total, seconds: told.append((done, total)))
    assert told == [(1, 3), (2, 3), (3, 3)]
