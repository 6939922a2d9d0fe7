"""The red team: bots that attack the sandbox (tests/bots/red_team.py), each played in
a real tournament through the CLI, both as a bot file and as a bot submitted with
`arena submit` (whose checks run it in the sandbox too). Each test checks what the
sandbox promises (a process outside the game keeps its limits, nothing connects
out, nothing outlives the arena...), not only that the games ended.

Every run happens inside a PID namespace of its own, whose first process (the
harness, ``run_plan``) starts the arena commands: an attack on "every process" then
reaches only the arena and the test's canary, never the machine's other
processes, even where the sandbox fails, and whatever a bot leaves running dies
with the namespace. The harness also gives the arena control groups of its own
(as a container would have) and each command a session of its own, so that
neither meets another arena running on the same machine.

The attacks need a Linux machine and root, as the arena's own isolation does.
The runs as ``nobody`` need a Python that user can run, with the arena installed
(``ARENA_TEST_NOBODY_PYTHON``; .ci/run makes one): without it they are skipped,
with the reason. Their harness gives the arena control groups of its own as an
operator would (made by root, handed over with chown), see ``play``.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.store import Store, StoredGame
from tests.bots import red_team
from tests.conftest import TEST_BOTS

REPO = Path(__file__).resolve().parent.parent
RED = TEST_BOTS / "red_team.py"
PYTHON = sys.executable
NOBODY_PYTHON_VARIABLE = "ARENA_TEST_NOBODY_PYTHON"  # a Python nobody can run, with the arena installed
NOBODY = (65534, 65534)
SLACK_MB = 32  # what a bot's own report of memory held may exceed its limit by (measuring in 10 MB steps)

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the sandbox under attack is Linux's"),
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0,
                       reason="the attacks are on the arena run as root (and need root to be contained)"),
    pytest.mark.skipif(shutil.which("unshare") is None or shutil.which("mount") is None,
                       reason="no unshare(1) or mount(8) to contain the attacks in namespaces of their own"),
]


# --- running the arena in a PID namespace of its own ----------------------------------------


def run_plan(plan_file: str) -> None:
    """The harness, PID 1 of a fresh PID namespace: start the canary (if asked),
    run each arena command of the plan (as the plan's user), then write a report:
    each command's exit code, which tagged processes were alive a moment after
    it ended, and the canary's limits before and after. Run from its source
    (``HARNESS``): it imports only what it uses."""
    import json
    import os
    import subprocess
    import time

    with open(plan_file) as handle:
        plan = json.load(handle)
    uid, gid = plan["user"] or (0, 0)
    user: dict[str, Any] = {"user": uid, "group": gid, "extra_groups": []}  # also resets the saved id below
    # Out of reach of an attack on every process's limits, so that it can report
    # what that did to the rest: changing another process's limits takes all of
    # its user ids matching one's own (or a capability bots never have). Its
    # effective id, and so its powers, stay root's.
    os.setresuid(0, 0, 65534)

    def own_groups() -> list[str]:
        """A fresh control group below this process's own in each hierarchy the
        sandbox uses, with this process moved in (the arena follows), as a
        container would have: the sandbox makes its groups below the one it
        runs in, and must not meet another arena's there."""
        made = []
        with open("/proc/self/cgroup") as handle:
            own = [line.rstrip("\n").split(":", 2) for line in handle]
        with open("/proc/self/mountinfo") as handle:
            mounts = [line.split() for line in handle]
        name = f"red-team-{os.urandom(4).hex()}"
        for _, names, path in own:
            for fields in mounts:
                at = fields.index("-")
                kind, options = fields[at + 1], fields[at + 3].split(",")
                wanted = kind == "cgroup2" if not names else (
                    kind == "cgroup" and names in options and names in ("memory", "pids", "freezer"))
                if not wanted or fields[3] != "/":
                    continue
                folder = os.path.join(fields[4] + path.rstrip("/"), name)
                try:
                    os.mkdir(folder)
                    with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
                        procs.write("0")
                    made.append(folder)
                except OSError:
                    pass
        return made

    def delegate(groups: list[str]) -> list[str]:
        """A group below each of the harness's, handed over to the arena's user as an
        operator would (made by root, then chown; or systemd's Delegate=yes): the folder
        to make groups in and the files that move processes, not the limits set on it.
        The arena stays out of a v1 group (v1 lets a user move its own processes
        anywhere it may write); v2 lets it move processes only within a group it may
        write, so there the harness (and the arena it starts) moves into a subgroup of
        it first, and v2 is used only where v1 has no freezer."""
        v1_freezer = any(os.path.exists(os.path.join(g, "freezer.state")) for g in groups)
        delegated = []
        for group in groups:
            v2 = os.path.exists(os.path.join(group, "cgroup.controllers"))
            if v2 and v1_freezer:
                continue
            folder = os.path.join(group, "delegated")
            os.mkdir(folder)
            if v2:
                os.mkdir(os.path.join(folder, "main"))
                with open(os.path.join(folder, "main", "cgroup.procs"), "w") as procs:
                    procs.write("0")
                with open(os.path.join(group, "cgroup.controllers")) as available:
                    wanted = [c for c in available.read().split() if c in ("memory", "pids")]
                if wanted:  # for the delegated group's children, as the operator's echo +memory would
                    with open(os.path.join(group, "cgroup.subtree_control"), "w") as control:
                        control.write(" ".join(f"+{c}" for c in wanted))
                for path, _, files in os.walk(os.path.join(folder, "main")):
                    for name in ["", *files]:
                        os.chown(os.path.join(path, name), uid, gid)
            for name in ("", "cgroup.procs", "tasks", "cgroup.threads", "cgroup.subtree_control"):
                if os.path.exists(os.path.join(folder, name)):
                    os.chown(os.path.join(folder, name), uid, gid)
            delegated.append(folder)
        return delegated

    def stat_of(pid: int) -> tuple[str, str]:
        """(name, state) of a process; ('', 'gone') once it is no more."""
        try:
            with open(f"/proc/{pid}/stat") as handle:
                text = handle.read()
        except OSError:
            return "", "gone"
        return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2]

    def tagged() -> list[str]:
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                comm, state = stat_of(int(name))
                if plan["tag"] and comm.startswith(plan["tag"]) and state not in ("Z", "gone"):
                    found.append(f"{name} {comm} {state}")
        return found

    def limits_of(pid: int) -> str:
        try:
            with open(f"/proc/{pid}/limits") as handle:
                return handle.read()
        except OSError as exc:
            return type(exc).__name__

    # The bots' folders go in /dev/shm, where each arena removes what it takes for
    # the folders of dead arenas (by process id, which this namespace hides): a
    # /dev/shm of its own (the test's folder, bound over it in this process's
    # mount namespace) keeps it and the arenas outside from removing each other's.
    subprocess.run(["mount", "--bind", plan["shm"], "/dev/shm"], check=True)
    report: dict[str, Any] = {"steps": [], "groups": own_groups()}
    if plan["user"]:
        # Its own Python's arena, as installed for it: not the module path of whoever runs the tests.
        user["env"] = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "HOME": plan["cwd"]}
    if plan["user"] and plan["delegate"]:
        report["delegated"] = delegate(report["groups"])
        user["env"]["ARENA_CGROUP"] = ":".join(report["delegated"])
    canary = subprocess.Popen(["sleep", "600"], **user) if plan["canary"] else None
    if canary is not None:
        report["canary_before"] = limits_of(canary.pid)
    for step in plan["steps"]:
        started = time.monotonic()
        with open(step["log"], "wb") as log:
            # A session of its own: whatever the arena does to its process group stays there.
            command = subprocess.Popen(step["argv"], stdout=log, stderr=subprocess.STDOUT, cwd=plan["cwd"],
                                       start_new_session=True, **user)
            try:
                code: int | str = command.wait(step["timeout"])
            except subprocess.TimeoutExpired:
                command.kill()
                command.wait()
                code = "timeout"
        seconds = time.monotonic() - started
        time.sleep(plan["settle"])
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:  # orphans come to PID 1: collect the dead
                pass
        except ChildProcessError:
            pass
        report["steps"].append({"argv": step["argv"], "rc": code, "seconds": round(seconds, 2),
                                "survivors": tagged(), "log": step["log"]})
    if canary is not None:
        report["canary_after"] = limits_of(canary.pid)
        report["canary_state"] = stat_of(canary.pid)[1]
        canary.kill()
    with open(plan["report"], "w") as handle:
        json.dump(report, handle)


HARNESS = textwrap.dedent(inspect.getsource(run_plan)) + "\nimport sys\nrun_plan(sys.argv[1])\n"


@dataclass
class Played:
    """What a contained run of arena commands left: its report and its league."""

    folder: Path
    db: Path
    report: dict[str, Any] = field(repr=False)

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.report["steps"]

    def store(self) -> Store:
        return Store(str(self.db), read_only=True)


def submitted_name(cls: str) -> str:
    return f"red-{cls.lower()}"


def spec(cls: str, submitted: bool, **options: object) -> str:
    head = submitted_name(cls) if submitted else f"{RED}:{cls}"
    return head + (":" + ",".join(f"{k}={v}" for k, v in options.items()) if options else "")


def both(cls: str, **options: object) -> list[str]:
    """The bot as a file and as a submitted bot, with the same options."""
    return [spec(cls, False, **options), spec(cls, True, **options)]


def tournament(name: str, challengers: list[str], bots: tuple[str, ...] = ("random",), **settings: Any) -> dict:
    """A gauntlet: every challenger plays every bot, twice (colours swapped), from the empty board."""
    config: dict[str, Any] = {
        "name": name, "format": "gauntlet", "challengers": challengers, "bots": list(bots), "games": 2,
        "seed": 11, "workers": 2, "db": "arena.db", "openings": {"plies": 0}, "time": {"move_seconds": 2.0},
    }
    config.update(settings)
    return config


def toml(config: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)  # strings, ints, floats: TOML reads JSON's spelling of these

    lines = [f"{k} = {value(v)}" for k, v in config.items() if not isinstance(v, dict)]
    for table, entries in config.items():
        if isinstance(entries, dict):
            lines += [f"[{table}]", *(f"{k} = {value(v)}" for k, v in entries.items())]
    return "\n".join(lines) + "\n"


def play(
    folder: Path,
    submit: list[str],
    tournaments: list[dict[str, Any]],
    canary: bool = False,
    tag: str | None = None,
    user: tuple[int, int] | None = None,
    timeout: float = 60,
    delegate: bool = True,
) -> Played:
    """Submit each bot class with `arena submit`, then run each tournament with
    `arena tournament run`, all in a PID namespace of their own (see ``run_plan``).
    As ``user``: with nobody's Python, a copy of the bots in ``folder``, and (if
    ``delegate``) the harness's control groups handed over to that user."""
    db = folder / "arena.db"
    python, red = PYTHON, RED
    if user is not None:
        python, red = nobody_python(), folder / RED.name  # the repository may be out of its reach
        shutil.copy(RED, red)
        red.chmod(0o644)
    shm = folder / "shm"
    shm.mkdir(exist_ok=True)
    shm.chmod(0o1777)  # as /dev/shm is
    steps = [
        {"argv": [python, "-m", "arena", "submit", f"{red}:{cls}", "--name", submitted_name(cls), "--db", str(db)],
         "timeout": 30, "log": str(folder / f"submit-{cls}.log")}
        for cls in submit
    ]
    for config in tournaments:
        path = folder / f"{config['name']}.toml"
        path.write_text(toml(config).replace(str(RED), str(red)))
        steps.append({"argv": [python, "-m", "arena", "tournament", "run", str(path)], "timeout": timeout,
                      "log": str(folder / f"{config['name']}.log")})
    plan = {"steps": steps, "user": user, "canary": canary, "tag": tag, "cwd": str(folder), "shm": str(shm),
            "settle": 1.0 if tag else 0.0, "report": str(folder / "report.json"), "delegate": delegate}
    (folder / "plan.json").write_text(json.dumps(plan))
    if user is not None:
        for path in (folder, *folder.iterdir()):
            os.chown(path, *user)
    ran = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", PYTHON, "-c", HARNESS,
         str(folder / "plan.json")],
        cwd=REPO, capture_output=True, text=True, timeout=sum(s["timeout"] for s in steps) + 60,
    )
    report_file = folder / "report.json"
    # The harness is outside every game: an attack that breaks it got out of its sandbox.
    assert report_file.exists(), f"the harness failed (exit {ran.returncode}): {ran.stderr[-1500:]}"
    report = json.loads(report_file.read_text())
    remove_groups(report["groups"])
    return Played(folder, db, report)


def remove_groups(groups: list[str]) -> None:
    """Remove the harness's control groups and whatever the arena left in them,
    once the processes of the namespace (killed with its first) are gone."""
    deadline = time.monotonic() + 5
    for group in groups:
        while os.path.isdir(group) and time.monotonic() < deadline:
            for folder, _, _ in sorted(os.walk(group), key=lambda entry: -len(entry[0])):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            if os.path.isdir(group):
                time.sleep(0.05)


def log_tail(step: dict[str, Any]) -> str:
    return Path(step["log"]).read_text(errors="replace")[-1500:]


def assert_ran(played: Played) -> None:
    """Every command (submissions and tournaments) ran to its end and succeeded."""
    for step in played.steps:
        assert step["rc"] == 0, f"{' '.join(step['argv'][2:5])}: exit {step['rc']}\n{log_tail(step)}"


def assert_complete(played: Played, name: str, games: int) -> None:
    """The tournament has every one of its games, and is marked finished."""
    assert_ran(played)
    with played.store() as store:
        stored = store.tournaments.get(name)
        assert stored is not None and stored.status == "finished"
        assert len(store.games.all(tournament=name)) == games


def is_spec_of(text: str, cls: str) -> bool:
    """The bot class from the red team's file (the repository's, or a run's copy), or submitted."""
    return bool(re.fullmatch(rf"(?:[^:]*/)?{RED.name}:{cls}(?::.*)?", text)) or \
        text.startswith(f"{submitted_name(cls)}@")


def games_of(played: Played, cls: str, tournament_name: str | None = None) -> list[tuple[StoredGame, int]]:
    """(game, the attacker's side) for every game the bot class played."""
    with played.store() as store:
        found = [(game, 0 if is_spec_of(game.first, cls) else 1) for game in store.games.all(tournament=tournament_name)
                 if is_spec_of(game.first, cls) or is_spec_of(game.second, cls)]
    assert found, f"{cls} played no game"
    return found


def reports(played: Played, game: StoredGame, side: int) -> list[dict[str, Any]]:
    """What one side reported with its moves, in order."""
    with played.store() as store:
        return [json.loads(m.info) for m in store.games.moves(game.id) if m.ply % 2 == side and m.info]


def all_reports(played: Played, cls: str) -> list[dict[str, Any]]:
    found = [report for game, side in games_of(played, cls) for report in reports(played, game, side)]
    assert found, f"{cls} reported nothing"
    return found


@functools.lru_cache(maxsize=1)
def nobody_can_run_the_arena() -> str:
    """Why the arena cannot be run as ``nobody`` here ('' if it can): no Python for
    that user was given, or the one given cannot run the arena."""
    python = os.environ.get(NOBODY_PYTHON_VARIABLE)
    if not python:
        return (f"set {NOBODY_PYTHON_VARIABLE} to a Python nobody can run, with the arena installed "
                f"({PYTHON} may be out of its reach; .ci/run makes one)")
    try:
        ran = subprocess.run([python, "-c", "import arena.sandbox.spawner"], user=NOBODY[0], group=NOBODY[1],
                             extra_groups=[], cwd="/", capture_output=True, text=True, timeout=60)
    except OSError as exc:
        return f"nobody cannot start {python}: {exc}"
    lines = (ran.stdout + ran.stderr).strip().splitlines() or ["no output"]
    return f"nobody cannot load the arena with {python}: {lines[-1]}" if ran.returncode else ""


def nobody_python() -> str:
    python = os.environ.get(NOBODY_PYTHON_VARIABLE)
    assert python and not nobody_can_run_the_arena(), nobody_can_run_the_arena()
    return python


def folder_for(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str,
               user: tuple[int, int] | None) -> Path:
    """A folder for one run; for a run as another user, one it can enter and write
    (pytest's own folders are open to their owner only), removed after the tests."""
    if user is None:
        return tmp_path_factory.mktemp(name)
    folder = Path(tempfile.mkdtemp(prefix=f"red-team-{name}-"))
    folder.chmod(0o755)
    os.chown(folder, *user)
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


def as_user(request: pytest.FixtureRequest) -> tuple[int, int] | None:
    """The user a parametrized run plays as: None (root) or nobody, skipped where no
    Python for nobody was given (and failing where the one given cannot be used)."""
    if request.param == "root":
        return None
    return as_nobody()


def as_nobody() -> tuple[int, int]:
    why = nobody_can_run_the_arena()
    if not os.environ.get(NOBODY_PYTHON_VARIABLE):
        pytest.skip(f"cannot run the arena as an unprivileged user: {why}")
    assert not why, why  # given, so the runs as nobody must happen
    return NOBODY


# --- 1. harm outside its game ---------------------------------------------------------------

HARMERS = ["ClampsEveryone", "StopsEveryone", "KillsEveryone"]


@pytest.fixture(scope="module", params=["root", "nobody"])
def harm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    """The harmers and greedy (an innocent bystander) each play random, with a
    canary process beside the arena."""
    user = as_user(request)
    challengers = [s for cls in HARMERS for s in both(cls)] + ["greedy"]
    config = tournament("harm", challengers, time={"move_seconds": 5.0})
    return play(folder_for(request, tmp_path_factory, "harm", user), HARMERS, [config], canary=True, user=user)


def test_a_bot_cannot_change_the_limits_of_a_process_outside_its_game(harm: Played) -> None:
    assert harm.report["canary_after"] == harm.report["canary_before"]
    for cls in HARMERS:
        for report in all_reports(harm, cls):
            assert report["done"] == 0, f"{cls} reached {report['done']} processes"


def test_a_bot_cannot_stop_or_kill_a_process_outside_its_game(harm: Played) -> None:
    assert harm.report["canary_state"] == "S"  # asleep, as it was: neither stopped (T) nor gone
    for cls in HARMERS:
        assert max(r["reached"] for r in all_reports(harm, cls)) == red_team.LAST_PID, f"{cls} did not try them all"


def test_attacks_on_every_process_leave_the_tournament_and_the_innocent_whole(harm: Played) -> None:
    assert_complete(harm, "harm", games=2 * (2 * len(HARMERS) + 1))
    with harm.store() as store:
        for game in store.games.all(tournament="harm"):
            if game.termination == "forfeit":
                loser = game.second if game.winner == 0 else game.first
                assert loser not in ("random", "greedy"), f"{loser} forfeited: {game.reason}"


# --- 2. network -------------------------------------------------------------------------------

CALLERS = {"ConnectsTcp": "tcp", "FastOpens": "tcp", "ConnectsMptcp": "tcp", "SendsUdp": "udp",
           "ConnectsUnixPath": "unix"}
LISTENERS = ["ListensUnbound", "ListensAbstract"]


class Switchboard:
    """The test's side of the network attacks: a TCP, a UDP and a Unix socket
    listener that record whatever reaches them, and a caller that tries to
    connect into every listening bot it learns of (from the bots' output files,
    and the abstract names it knows)."""

    def __init__(self, folder: Path, nonce: str) -> None:
        self.nonce = nonce
        self.shm = folder / "shm"  # the run's /dev/shm (see ``play``)
        self.heard: list[str] = []  # what reached the test's listeners
        self.called_in: list[str] = []  # bots' sockets the test connected to
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(folder / "red-team.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o666)  # open to every user: only the sandbox stands in the way
        self.unix.listen()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=t, daemon=True) for t in (self.listen, self.call_in)]

    def __enter__(self) -> Switchboard:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(5)
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def listen(self) -> None:
        while not self.stop.is_set():
            for sock in select.select([self.tcp, self.udp, self.unix], [], [], 0.05)[0]:
                try:
                    self.heard.append(self.take(sock))
                except OSError:  # gone before it could be taken: it still reached us
                    self.heard.append(f"{sock.family.name} {sock.type.name}: not taken")

    def take(self, sock: socket.socket) -> str:
        """What reached a listener: a datagram, or a connection and what it sent."""
        if sock is self.udp:
            data, sender = sock.recvfrom(256)
            return f"udp from {sender}: {data!r}"
        conn, _ = sock.accept()
        with conn:
            conn.settimeout(0.5)
            try:
                data = conn.recv(256)
            except OSError:
                data = b""
        return f"{'tcp' if sock is self.tcp else 'unix'}: {data!r}"

    def outputs(self) -> Iterator[Path]:
        """The output files of the bots running now."""

        def listing(folder: Path, prefix: str) -> list[Path]:
            try:
                return [folder / name for name in os.listdir(folder) if name.startswith(prefix)]
            except OSError:  # removed meanwhile: its game is over
                return []

        for spawner in listing(self.shm, "arena-bots-"):
            for bot in listing(spawner, "bot-"):
                yield bot / "output.txt"

    def call_in(self) -> None:
        tried: set[str] = set()
        while not self.stop.wait(0.02):
            addresses = {f"abstract red-team-{self.nonce}-{variant}" for variant in ("file", "sub")}
            for output in self.outputs():
                try:
                    lines = output.read_text(errors="replace").splitlines()
                except OSError:
                    continue
                for line in lines:  # "red-team listening NONCE PORT", from ListensUnbound
                    words = line.split()
                    if len(words) == 4 and words[:2] == ["red-team", "listening"] and \
                            words[2].startswith(self.nonce) and words[3].isdigit():
                        addresses.add(f"tcp {words[3]}")
            for address in addresses:
                kind, where = address.split()
                family = socket.AF_UNIX if kind == "abstract" else socket.AF_INET
                with socket.socket(family, socket.SOCK_STREAM) as conn:
                    conn.settimeout(0.2)
                    try:
                        conn.connect("\0" + where if kind == "abstract" else ("127.0.0.1", int(where)))
                    except OSError:
                        continue
                if address not in tried:
                    self.called_in.append(address)
                tried.add(address)


@dataclass
class NetworkRun:
    played: Played
    board: Switchboard


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetworkRun]:
    folder = tmp_path_factory.mktemp("network")
    os.chmod(folder, 0o755)
    nonce = uuid.uuid4().hex[:8]
    with Switchboard(folder, nonce) as board:
        port = {"tcp": board.tcp_port, "udp": board.udp_port}
        challengers = []
        for cls, kind in CALLERS.items():
            where = {"path": board.unix_path} if kind == "unix" else {"port": port[kind]}
            challengers += both(cls, nonce=nonce, **where)
        for cls in LISTENERS:
            challengers += [spec(cls, False, nonce=f"{nonce}-file"), spec(cls, True, nonce=f"{nonce}-sub")]
        hear, tell = free_udp_ports()
        whispers = tournament("whispers", [spec("Whispers", False, me="a", hear=hear, tell=tell, nonce=nonce)],
                              (spec("Whispers", True, me="b", hear=tell, tell=hear, nonce=nonce),),
                              workers=1)  # one game at a time: each pair alone on its ports
        played = play(folder, [*CALLERS, *LISTENERS, "Whispers"], [tournament("network", challengers), whispers])
        yield NetworkRun(played, board)


def free_udp_ports() -> tuple[int, int]:
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = tuple(int(sock.getsockname()[1]) for sock in sockets)
    for sock in sockets:
        sock.close()
    return ports[0], ports[1]


def test_a_bot_reaches_no_socket_outside_its_game(network: NetworkRun) -> None:
    assert_complete(network.played, "network", games=2 * 2 * (len(CALLERS) + len(LISTENERS)))
    for cls in CALLERS:
        assert all("attack" in report for report in all_reports(network.played, cls))
    assert network.board.heard == []


def test_nothing_outside_a_game_can_connect_into_a_bot(network: NetworkRun) -> None:
    assert network.board.called_in == []
    for cls in LISTENERS:
        assert all(report["accepted"] == 0 for report in all_reports(network.played, cls))


def test_the_two_bots_of_a_game_cannot_talk_to_each_other(network: NetworkRun) -> None:
    assert_complete(network.played, "whispers", games=2)
    for report in all_reports(network.played, "Whispers"):
        assert report["heard"] == {"udp": 0, "unix": 0}, report


# --- 3. outliving the arena -------------------------------------------------------------------


@pytest.fixture(scope="module", params=["root", "nobody"])
def hydra(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    user = as_user(request)
    tag = f"redhydra{uuid.uuid4().hex[:7]}"
    config = tournament("hydra", both("Hydra", tag=tag, seconds=30))
    return play(folder_for(request, tmp_path_factory, "hydra", user), ["Hydra"], [config], tag="redhydra", user=user)


def test_nothing_a_bot_starts_outlives_the_arena(hydra: Played) -> None:
    assert_complete(hydra, "hydra", games=4)
    for step in hydra.steps:  # `arena submit` (its checks) and `arena tournament run`
        assert step["survivors"] == [], f"alive a second after {' '.join(step['argv'][2:4])}: {step['survivors']}"


# --- 4. memory --------------------------------------------------------------------------------

HOARDERS = ["ForkHoarder", "MemfdHoarder", "ShmHoarder"]
MEMORY_MB = 256


def hoarded_segments() -> set[int]:
    """Ids of SysV shared memory segments of the size ShmHoarder makes."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(row.split()[1]) for row in rows if int(row.split()[3]) == red_team.SHM_SEGMENT_BYTES}


def remove_segments(ids: set[int]) -> None:
    for shmid in ids:
        subprocess.run(["ipcrm", "-m", str(shmid)], capture_output=True, check=False)


@dataclass
class MemoryRun:
    played: Played
    leftover_segments: set[int]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryRun]:
    remove_segments({s for s in hoarded_segments() if not attached(s)})  # from an interrupted run
    before = hoarded_segments()
    # A generous output limit: RLIMIT_FSIZE, which caps the output file, caps a memory file too.
    config = tournament("memory", [s for cls in HOARDERS for s in both(cls)],
                        limits={"memory_mb": MEMORY_MB, "output_kb": 2**20}, time={"move_seconds": 10.0})
    try:
        played = play(tmp_path_factory.mktemp("memory"), HOARDERS, [config])
        yield MemoryRun(played, hoarded_segments() - before)
    finally:
        remove_segments(hoarded_segments() - before)


def attached(shmid: int) -> bool:
    for row in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]:
        if int(row.split()[1]) == shmid:
            return int(row.split()[6]) > 0
    return False


@pytest.mark.parametrize("cls", HOARDERS)
def test_a_bot_holds_no_more_memory_than_its_limit_in_all_its_processes(memory: MemoryRun, cls: str) -> None:
    assert_complete(memory.played, "memory", games=2 * 2 * len(HOARDERS))
    for game, side in games_of(memory.played, cls):
        if game.termination == "forfeit" and game.winner != side:
            continue  # stopped by its limit: fine
        for report in reports(memory.played, game, side):
            assert report["held_mb"] <= MEMORY_MB + SLACK_MB, f"{cls} held {report['held_mb']} MB at once"


def test_no_shared_memory_segment_outlives_its_bot(memory: MemoryRun) -> None:
    assert memory.leftover_segments == set()


# --- 5. hanging the referee -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hang(tmp_path_factory: pytest.TempPathFactory) -> Played:
    # Connect 40 on 40x40: nobody wins before the referee's requests fill the channel.
    config = tournament("hang", both("StopsReading"), rules={"width": 40, "height": 40, "connect": 40},
                        time={"move_seconds": 1.0})
    return play(tmp_path_factory.mktemp("hang"), ["StopsReading"], [config], timeout=30)


def test_a_bot_that_stops_reading_forfeits_and_the_tournament_finishes(hang: Played) -> None:
    assert_complete(hang, "hang", games=4)
    for game, side in games_of(hang, "StopsReading"):
        assert game.termination == "forfeit" and game.winner == 1 - side, game.reason
        # on time, or (answering in advance) for answering what no request asked
        assert (game.reason or "").startswith(("time", "protocol: answered twice")), game.reason


# --- 6. state carried from game to game -------------------------------------------------------

REMEMBERERS = {"RemembersIpc": ("shm", "sem", "msg"), "RemembersXattr": ("xattr",), "RemembersKeyring": ("key",)}


def forget(nonces: list[str]) -> None:
    """Remove whatever counters the rememberers left on this machine."""
    for nonce in nonces:
        for flag, salt in (("-M", "shm"), ("-S", "sem"), ("-Q", "msg")):
            subprocess.run(["ipcrm", flag, str(red_team.ipc_key(nonce, salt))], capture_output=True, check=False)
        invalidate_key(f"red-team-counter-{nonce}")


def invalidate_key(description: str) -> None:
    try:
        key = red_team.keyctl(red_team.KEYCTL_SEARCH, ctypes.c_int(red_team.KEY_SPEC_USER_KEYRING), b"user",
                              description.encode(), 0)
        red_team.keyctl(red_team.KEYCTL_INVALIDATE, ctypes.c_long(key))
    except OSError:
        pass


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    nonce = uuid.uuid4().hex[:8]
    forget(["check"])  # the submission checks' counters, from an earlier run
    # One worker: every game of the tournament shares one spawner, and its folder.
    config = tournament("state", [s for cls in REMEMBERERS for s in both(cls, nonce=nonce)], workers=1)
    try:
        yield play(tmp_path_factory.mktemp("state"), list(REMEMBERERS), [config])
    finally:
        forget([nonce, "check"])


@pytest.mark.parametrize("cls", list(REMEMBERERS))
def test_every_game_starts_with_nothing_left_by_an_earlier_one(state: Played, cls: str) -> None:
    assert_complete(state, "state", games=2 * 2 * len(REMEMBERERS))
    for game, side in games_of(state, cls):
        first = reports(state, game, side)[0]
        for counter in REMEMBERERS[cls]:
            assert first[counter] == 0, f"{cls} game {game.key} found {counter} = {first[counter]}: {first}"


# --- 7. stealing the opponent's clock ---------------------------------------------------------

THINKER = "minimax:depth=8"


@pytest.fixture(scope="module")
def clock(tmp_path_factory: pytest.TempPathFactory) -> Played:
    config = tournament("clock", both("StealsClock"), (THINKER,), time={"move_seconds": 3.0})
    return play(tmp_path_factory.mktemp("clock"), ["StealsClock"], [config])


def test_a_bot_gets_no_processor_time_while_its_opponent_thinks(clock: Played) -> None:
    assert_complete(clock, "clock", games=4)
    for game, side in games_of(clock, "StealsClock"):
        last = reports(clock, game, side)[-1]
        assert last["recorded"] > 0, "the spinners never ran"
        assert last["stolen_ms"] <= 25, f"its children ran {last['stolen_ms']} ms while the opponent thought"


def test_the_opponent_of_a_clock_thief_keeps_its_time(clock: Played) -> None:
    for game, side in games_of(clock, "StealsClock"):
        assert not (game.termination == "forfeit" and game.winner == side), game.reason


# --- 8. root's powers -------------------------------------------------------------------------

FILE_ATTACKS = {"OpensSecret": "secret", "SetsSetuid": "program", "Backdates": "stamp", "TagsFile": "tagged",
                "OpensDatabaseToAll": "db"}
IPC_CREAT, IPC_EXCL = 0o1000, 0o2000


@dataclass
class RootRun:
    played: Played
    files: dict[str, Path]
    before: dict[str, tuple[int, int]]  # name -> (mode, mtime_ns)
    secret: str
    shm_key: int
    shm_after: bytes


def shm_attach(key: int) -> int:
    shmid = red_team.checked(red_team.LIBC.shmget(key, 0, 0))
    address = red_team.LIBC.shmat(shmid, None, 0)
    assert address not in (None, ctypes.c_void_p(-1).value)
    return int(address)


@pytest.fixture(scope="module")
def root_powers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RootRun]:
    folder = tmp_path_factory.mktemp("root")
    private = folder / "private"
    private.mkdir(mode=0o700)
    files = {name: private / name for name in ("secret", "stamp", "tagged")}
    for path in files.values():
        path.write_text("root's\n")
        path.chmod(0o600)
    files["program"] = private / "program"
    shutil.copy(shutil.which("true") or "/bin/true", files["program"])
    files["program"].chmod(0o755)
    files["db"] = folder / "arena.db"
    files["db"].touch(mode=0o640)  # an empty file is a new database to the arena
    files["db"].chmod(0o640)
    os.utime(files["stamp"], ns=(10**18, 10**18))
    before = {name: (path.stat().st_mode, path.stat().st_mtime_ns) for name, path in files.items()}

    nonce = uuid.uuid4().hex[:8]
    secret = f"arena-secret-{nonce}"
    red_team.add_key(secret, f"the payload {nonce}".encode())
    shm_key = red_team.ipc_key(nonce, "root")
    shmid = red_team.checked(red_team.LIBC.shmget(shm_key, 4096, IPC_CREAT | IPC_EXCL | 0o600))
    ctypes.memmove(shm_attach(shm_key), b"root's data", 11)
    try:
        challengers = [s for cls, name in FILE_ATTACKS.items() for s in both(cls, path=files[name])]
        challengers += both("ReadsRootKeyring", secret=secret) + both("WritesRootShm", key=shm_key)
        played = play(folder, [*FILE_ATTACKS, "ReadsRootKeyring", "WritesRootShm"],
                      [tournament("root", challengers)])
        yield RootRun(played, files, before, f"the payload {nonce}", shm_key,
                      ctypes.string_at(shm_attach(shm_key), 11))
    finally:
        invalidate_key(secret)
        subprocess.run(["ipcrm", "-m", str(shmid)], capture_output=True, check=False)


@pytest.mark.parametrize("cls", list(FILE_ATTACKS))
def test_a_bot_cannot_use_the_powers_of_roots_user_id_on_files(root_powers: RootRun, cls: str) -> None:
    assert_complete(root_powers.played, "root", games=2 * 2 * (len(FILE_ATTACKS) + 2))
    name = FILE_ATTACKS[cls]
    path = root_powers.files[name]
    mode, mtime = root_powers.before[name]
    assert path.stat().st_mode == mode, name
    if name != "db":  # the arena writes the database, so its time moves
        assert path.stat().st_mtime_ns == mtime, name
    assert b"user.red-team" not in b"".join(n.encode() for n in os.listxattr(path))
    assert all(report["attack"] != "done" for report in all_reports(root_powers.played, cls))


def test_a_bot_cannot_read_roots_keyring(root_powers: RootRun) -> None:
    for report in all_reports(root_powers.played, "ReadsRootKeyring"):
        assert report["read"] != root_powers.secret


def test_a_bot_cannot_write_roots_shared_memory(root_powers: RootRun) -> None:
    assert root_powers.shm_after == b"root's data"
    assert all(report["attack"] != "done" for report in all_reports(root_powers.played, "WritesRootShm"))


# --- 10. seeds --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Played:
    config = tournament("seeds", both("PredictsRandom"), games=6)
    return play(tmp_path_factory.mktemp("seeds"), ["PredictsRandom"], [config])


def test_a_bot_cannot_predict_random_from_its_own_seed(seeds: Played) -> None:
    assert_complete(seeds, "seeds", games=12)
    tries, hits = 0, {"xor1": 0, "plus1": 0, "minus1": 0}
    for game, side in games_of(seeds, "PredictsRandom"):
        last = reports(seeds, game, side)[-1]
        tries += last["tries"]
        for guess in hits:
            hits[guess] += last["hits"][guess]
    assert tries >= 30
    # Chance is about one in seven (a column out of seven); a guessed seed gives all.
    assert max(hits.values()) < tries / 2, f"{hits} of {tries}"


# --- 11. side channels ------------------------------------------------------------------------


@dataclass
class SideRun:
    played: Played
    port: int


@pytest.fixture(scope="module")
def side_channels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SideRun]:
    folder = tmp_path_factory.mktemp("side")
    db = folder / "arena.db"
    with socket.create_server(("127.0.0.1", 0)) as host, socket.socket(socket.AF_UNIX) as named:
        named.bind(str(folder / "red-team-host.sock"))
        named.listen()
        challengers = both("WatchesFolders", folder=folder) + both("ReadsHostSockets") + both("LooksOutside", db=db)
        played = play(folder, ["WatchesFolders", "ReadsHostSockets", "LooksOutside"],
                      [tournament("side", challengers)])
        yield SideRun(played, int(host.getsockname()[1]))


def test_a_bot_cannot_watch_folders_outside_its_own(side_channels: SideRun) -> None:
    assert_complete(side_channels.played, "side", games=12)
    for report in all_reports(side_channels.played, "WatchesFolders"):
        assert report["database"] != "done" and report["bots"] != "done", report
        assert report["events"] == 0


def test_a_bot_sees_none_of_the_hosts_sockets(side_channels: SideRun) -> None:
    for report in all_reports(side_channels.played, "ReadsHostSockets"):
        assert side_channels.port not in report["tcp"]
        assert report["unix"] == []


def test_a_bot_reads_nothing_outside_its_folder(side_channels: SideRun) -> None:
    for report in all_reports(side_channels.played, "LooksOutside"):
        assert report["list_root"] != "done" and report["read_db"] != "done", report
