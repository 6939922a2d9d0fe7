"""What the kernel holds a bot to, attacked from inside a real bot process: its own
PID, IPC and network namespaces, one memory and process budget for all its
processes, no running while it is not on move, a referee that never blocks on it,
and no untrusted bot at all where the isolation cannot be set up."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.records import GameSpec, Limits, TimeControl
from arena.referee.referee import play_game
from arena.sandbox import cgroups
from arena.sandbox.spawner import PROCESS_SPAWNER
from tests.conftest import processes_named

REPORT = PROCESS_SPAWNER.get().containment()
CONTROLLERS = REPORT["controllers"]
needs = {name: pytest.mark.skipif(name not in CONTROLLERS, reason=f"no writable cgroup {name} controller here")
         for name in ("memory", "pids", "freezer")}


def game(first: str, second: str = "random", seed: int = 1, limits: Limits | None = None,
         rules: Rules | None = None, move_seconds: float | None = None):
    spec = GameSpec(key=str(seed), rules=rules or Rules(), first=first, second=second, pairing="p", seed=seed,
                    isolate=True, limits=limits or Limits(), time_control=TimeControl(move_seconds, 0.0))
    return play_game(spec)


def infos(record) -> list[dict]:
    return [move.info for move in record.moves if move.info and move.ply % 2 == 0]  # the first player's


def test_this_machine_isolates_bots():
    # Every other test here assumes it; CI runs as root on a kernel that has them.
    assert REPORT["missing"] == []


# --- memory and processes: the bot as a whole --------------------------------------------------


@needs["memory"]
def test_children_share_one_memory_budget(write_bot):
    path = write_bot("hoarders", """
        import os, time
        from arena.bot import Bot, Choice

        class Hoarders(Bot):
            def choose_move(self, board):
                children = []
                for _ in range(3):
                    r, w = os.pipe()
                    pid = os.fork()
                    if pid == 0:
                        block = bytearray(100 * 1024 * 1024)  # touched: every page is charged
                        for i in range(0, len(block), 4096):
                            block[i] = 1
                        os.write(w, b"x")
                        time.sleep(60)
                        os._exit(0)
                    os.close(w)
                    children.append((pid, r))
                time.sleep(0.3)  # the kernel's kill takes a moment
                # Holding now: children that filled their block and are still alive.
                held = 0
                for pid, r in children:
                    filled = os.read(r, 1) == b"x"
                    held += filled and os.waitpid(pid, os.WNOHANG) == (0, 0)
                return Choice(board.legal_moves()[0], {"held": held})
    """)
    record = game(path, limits=Limits(memory_mb=128))
    reports = infos(record)
    # Each child alone fits in 128 MB; two at once do not: the kernel kills one (or the bot).
    assert reports or (record.termination == "forfeit" and record.winner == 1), record.reason
    assert all(report["held"] <= 1 for report in reports), reports


@needs["memory"]
def test_memory_that_is_never_mapped_counts(write_bot):
    path = write_bot("memfd", """
        import os
        from arena.bot import Bot, Choice

        class Memfd(Bot):
            def choose_move(self, board):
                fd = os.memfd_create("hoard")
                chunk = b"x" * (1024 * 1024)
                written = 0
                try:
                    for _ in range(400):
                        written += os.write(fd, chunk)
                except OSError:
                    pass
                return Choice(board.legal_moves()[0], {"mb": written // (1024 * 1024)})
    """)
    record = game(path, limits=Limits(memory_mb=128))
    # A bot killed for it forfeits; one that lives never held more than its budget.
    assert (record.termination == "forfeit" and record.winner == 1) or all(r["mb"] <= 160 for r in infos(record))
    assert record.termination == "forfeit" or infos(record)


@needs["pids"]
def test_a_bot_has_a_limited_number_of_processes(write_bot):
    path = write_bot("forker", """
        import os, time
        from arena.bot import Bot, Choice

        class Forker(Bot):
            def choose_move(self, board):
                started = 0
                for _ in range(30):
                    try:
                        if os.fork() == 0:
                            time.sleep(60)
                            os._exit(0)
                        started += 1
                    except OSError:
                        break
                return Choice(board.legal_moves()[0], {"started": started})
    """)
    record = game(path, limits=Limits(processes=8))
    reports = infos(record)
    assert reports and max(r["started"] for r in reports) <= 7  # the bot itself is one of the 8


# --- namespaces ---------------------------------------------------------------------------------


def test_system_v_objects_are_private_and_gone_after_the_game(write_bot):
    path = write_bot("sysv", """
        import ctypes
        from arena.bot import Bot, Choice

        libc = ctypes.CDLL(None, use_errno=True)
        KEY, IPC_CREAT, IPC_EXCL = 0x4152454E, 0o1000, 0o2000

        class SysV(Bot):
            def choose_move(self, board):
                existed = libc.shmget(KEY, 4096, 0o600) >= 0  # left by an earlier game?
                made = libc.shmget(KEY, 4096, IPC_CREAT | 0o600) >= 0
                return Choice(board.legal_moves()[0], {"existed": existed, "made": made})
    """)
    for seed in (1, 2):
        reports = infos(game(path, seed=seed))
        assert reports and reports[0]["made"]
        assert not reports[0]["existed"]  # fresh in every game
        assert all(r["existed"] for r in reports[1:])  # (the bot does see its own)
    keys = [line.split()[0] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    assert str(0x4152454E) not in keys  # not in the arena's namespace, nor left behind


def test_no_network_reaches_outside(write_bot):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.1)
    path = write_bot("caller", f"""
        import socket
        from arena.bot import Bot, Choice

        def attempt(action):
            try:
                action()
                return "done"
            except Exception as exc:
                return type(exc).__name__

        class Caller(Bot):
            def choose_move(self, board):
                def tcp():
                    socket.create_connection(("127.0.0.1", {listener.getsockname()[1]}), timeout=0.2)

                def udp():
                    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    out.sendto(b"leak", ("127.0.0.1", {udp.getsockname()[1]}))

                def listen():
                    s = socket.socket()
                    s.listen()
                    return s.getsockname()

                return Choice(board.legal_moves()[0], {{"tcp": attempt(tcp), "udp": attempt(udp),
                                                        "listen": attempt(listen)}})
    """)
    record = game(path)
    reports = infos(record)
    assert reports
    assert all(r["tcp"] != "done" and r["udp"] != "done" for r in reports), reports
    with pytest.raises(TimeoutError):
        listener.accept()
    with pytest.raises(TimeoutError):
        udp.recvfrom(100)


# --- the bot not on move does not run ----------------------------------------------------------


@needs["freezer"]
def test_a_bots_children_do_not_run_during_its_opponents_time(write_bot):
    path = write_bot("spinner", """
        import fcntl, os, struct, time
        from arena.bot import Bot, Choice

        class Spinner(Bot):
            # Two children spin, watching the clock: whenever it jumps (they did not run
            # for a while) they tell the bot when, through a pipe. The bot compares those
            # stops with the time its opponent had.
            def new_game(self, rules, player, seed):
                self.last_end = None
                self.reader = None

            def choose_move(self, board):
                start = time.monotonic()
                if self.reader is None:
                    self.reader, writer = os.pipe()
                    fcntl.fcntl(self.reader, fcntl.F_SETFL, os.O_NONBLOCK)
                    for _ in range(2):
                        if os.fork() == 0:
                            last = time.monotonic()
                            while True:
                                now = time.monotonic()
                                if now - last > 0.02:
                                    os.write(writer, struct.pack("dd", last, now))
                                last = now
                    os.close(writer)
                time.sleep(0.02)
                stops = []
                try:
                    data = os.read(self.reader, 1 << 16)
                    stops = [struct.unpack_from("dd", data, i) for i in range(0, len(data) - 15, 16)]
                except BlockingIOError:
                    pass
                report = {}
                if self.last_end is not None:  # the opponent's time: from our last answer to now
                    a, b = self.last_end, start
                    stopped = [sum(max(0.0, min(b, y) - max(a, x)) for x, y in stops if x < b and y > a)]
                    report = {"opponent": b - a, "stopped": stopped[0] / 2}  # two children
                self.last_end = time.monotonic()
                legal = board.legal_moves()  # spread out: a long game, many turns to measure
                return Choice(legal[len(board.history) // 2 % len(legal)], report)
    """)
    thinker = write_bot("thinker", """
        import time
        from arena.bot import Bot

        class Thinker(Bot):
            def choose_move(self, board):
                end = time.monotonic() + 0.2  # thinks hard for a fifth of a second
                while time.monotonic() < end:
                    pass
                legal = board.legal_moves()
                return legal[(len(board.history) // 2 + 3) % len(legal)]
    """)
    record = game(path, second=thinker, seed=3)
    reports = [r for r in infos(record) if "opponent" in r]
    assert len(reports) >= 3, (record.reason, infos(record))
    assert record.reason is None or "time" not in record.reason, record.reason  # the opponent kept its clock
    # Frozen, the children saw the clock jump over nearly all of the opponent's time (but for the
    # moments between the bot's answer and the freeze, and the thaw and its next move). Had they
    # run, they would have seen no jump at all: about 0.
    stopped = sorted(r["stopped"] / r["opponent"] for r in reports)
    assert stopped[len(stopped) // 2] > 0.75, reports


# --- the referee never blocks on a bot ---------------------------------------------------------


def test_a_bot_that_stops_reading_never_holds_up_the_referee(write_bot):
    path = write_bot("deaf", """
        import os, socket, time
        from arena.bot import Bot

        class Deaf(Bot):
            # Answers every move at once, in advance, and never reads again: the
            # referee's requests pile up until its writes would block.
            def choose_move(self, board):
                channel = next(fd for fd in range(3, 64) if _is_socket(fd))
                answers = b"".join(b'{"move": %d}\\n' % (i % 40) for i in range(2000))
                os.write(channel, answers)
                time.sleep(3600)

        def _is_socket(fd):
            try:
                return socket.socket(fileno=os.dup(fd)).type is not None
            except OSError:
                return False
    """)
    started = time.monotonic()
    record = game(path, rules=Rules(width=40, height=40, connect=40), move_seconds=1.0)
    assert time.monotonic() - started < 60
    assert record.termination == "forfeit" and record.winner == 1
    # Its answers in advance are answers no request asked for: it forfeits at its
    # second move, before the requests it leaves unread could fill its channel.
    assert record.reason.startswith("protocol: answered twice"), record.reason


# --- fail closed ---------------------------------------------------------------------------------


def _without_namespaces(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the arena in a user namespace that may make no PID or network namespace."""
    script = ("echo 0 > /proc/sys/user/max_pid_namespaces && echo 0 > /proc/sys/user/max_net_namespaces && "
              'exec "$@"')
    return subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", script, "sh",
                           str(Path(sys.executable).with_name("arena")), *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


@pytest.fixture
def refusing_kernel():
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this kernel allows no user namespace to stand in for one without PID namespaces")


def test_untrusted_bots_do_not_run_without_isolation(refusing_kernel, tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text("from arena.bot import Bot\n\nclass B(Bot):\n    def choose_move(self, board):\n"
                   "        return board.legal_moves()[0]\n")
    db = tmp_path / "arena.db"
    refused = _without_namespaces("tournament", "run", "--bots", f"{bot},random", "--games", "2",
                                  "--db", str(db))
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot isolate bots here" in lines[0] and "--weak-sandbox" in lines[0], lines
    assert "Traceback" not in refused.stderr
    weak = _without_namespaces("--weak-sandbox", "tournament", "run", "--bots", f"{bot},random", "--games", "2",
                               "--db", str(db))
    assert weak.returncode == 0, weak.stderr
    doctor = _without_namespaces("doctor")
    assert doctor.returncode == 0 and "Untrusted bots are refused here" in doctor.stdout, doctor.stdout


def test_installed_bots_still_run_where_isolation_is_missing(refusing_kernel, tmp_path):
    ran = _without_namespaces("tournament", "run", "--bots", "random,greedy", "--games", "2",
                              "--db", str(tmp_path / "arena.db"))
    assert ran.returncode == 0, ran.stderr


def test_doctor_says_what_holds(cli):
    result = cli("doctor")
    assert result.exit_code == 0, result.output
    for mechanism in ("PID namespace", "network namespace", "IPC namespace", "Landlock", "seccomp"):
        assert mechanism in result.output
    assert "run fully isolated" in result.output


# --- the pieces ---------------------------------------------------------------------------------


def test_groups_are_found_for_the_controllers_this_process_can_write():
    found = cgroups.find_hierarchies()
    for controller, hierarchy in found.items():
        assert os.path.isdir(hierarchy.folder) and os.access(hierarchy.folder, os.W_OK), controller
    assert set(CONTROLLERS) <= set(found)


def test_frozen_groups_stop_their_processes_and_thaw():
    pool = cgroups.GroupPool()
    if "freezer" not in pool.controllers:
        pytest.skip("no freezer here")
    group = pool.take()
    assert group is not None
    child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.001)"])
    try:
        for h in group.folders:
            Path(h.folder, "cgroup.procs").write_text(str(child.pid))
        freezer = cgroups.Freezer(group.freezer())

        def child_ticks() -> int:
            return int(Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[11])

        freezer.rest()
        time.sleep(0.2)
        frozen_at = child_ticks()
        time.sleep(0.3)
        assert child_ticks() == frozen_at
        freezer.wake()
        deadline = time.monotonic() + 3
        while child_ticks() == frozen_at and time.monotonic() < deadline:
            time.sleep(0.05)
        assert child_ticks() > frozen_at
        freezer.close()
    finally:
        child.kill()
        child.wait()
        pool.give_back(group)
        pool.shut_down()
    assert not any(os.path.exists(h.folder) for h in group.folders)


def test_a_spawner_reports_json_safe_containment():
    assert json.loads(json.dumps(REPORT)) == REPORT


def v1_groups_of_our_own() -> list[str]:
    """A new group below this process's own in each cgroup v1 hierarchy of memory, pids and
    freezer (v2 lets a process move only within a group its user may write)."""
    with open("/proc/self/cgroup") as f:
        own = {name: path for _, names, path in (line.rstrip("\n").split(":", 2) for line in f)
               for name in names.split(",")}
    made = []
    for fstype, options, root, mountpoint in cgroups._mounts():
        for controller in ("memory", "pids", "freezer"):
            folder = cgroups._inside(mountpoint, root, own.get(controller, "")) if fstype == "cgroup" else None
            if controller in options and folder is not None:
                made.append(os.path.join(folder, f"not-root-{os.urandom(4).hex()}"))
                os.mkdir(made[-1])
    return made


def test_an_arena_that_is_not_root_still_isolates_its_bots(tmp_path):
    # The arena as uid 1000, without privileges on the machine (a user namespace made by the
    # test maps it; the files it needs look like its own, and so do control groups made by
    # root: delegated to it, as an operator would). Its spawner makes a user namespace of its
    # own, and each bot a PID namespace from there.
    probe = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this kernel allows no user namespace to run the arena as another user")
    delegated = v1_groups_of_our_own()
    if len(delegated) < 3:
        for folder in delegated:
            os.rmdir(folder)
        pytest.skip("no cgroup v1 memory, pids and freezer hierarchies to delegate groups of")
    try:
        arena = str(Path(sys.executable).with_name("arena"))
        bot = f"{Path(__file__).parent / 'bots' / 'hostile.py'}:ForksChildren"
        db = tmp_path / "arena.db"
        ran = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", "sh", "-c",
                              f'id -u && "{arena}" doctor && "{arena}" tournament run --bots "{bot},random" --games 4 '
                              f'--db "{db}" && "{arena}" show 1 --db "{db}"'],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env={**os.environ, "ARENA_CGROUP": ":".join(delegated)})
    finally:
        for folder in delegated:  # empty again: the arena removed its groups
            os.rmdir(folder)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("1000\n")
    assert re.search(r"PID namespace +yes", ran.stdout) and re.search(r"network namespace +yes", ran.stdout), \
        ran.stdout
    assert "Untrusted bots (bot files, submissions) run fully isolated." in ran.stdout, ran.stdout
    tags = re.findall(r"fc[0-9a-f]{12}", ran.stdout)
    assert tags, ran.stdout  # the bot's children's name, from its move info
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(processes_named(tag) for tag in tags):
        time.sleep(0.05)
    assert not [tag for tag in tags if processes_named(tag)]


def test_a_bot_cannot_even_see_files_outside_what_it_may_read(write_bot, tmp_path):
    secret = tmp_path / "league.db"
    secret.write_text("not for bots")
    path = write_bot("looker", f"""
        import os
        from arena.bot import Bot, Choice

        class Looker(Bot):
            def choose_move(self, board):
                seen = {{}}
                for path in ({str(secret)!r}, "/etc/passwd", "/etc", "/home", "/var/log"):
                    try:
                        os.stat(path)
                        seen[path] = "there"
                    except OSError as exc:
                        seen[path] = type(exc).__name__
                return Choice(board.legal_moves()[0], seen)
    """)
    if REPORT.get("file_system") is not None:
        pytest.skip(f"no private file system here: {REPORT['file_system']}")
    reports = infos(game(path))
    assert reports
    for report in reports:
        assert report[str(secret)] == "FileNotFoundError"
        assert report["/etc/passwd"] == report["/home"] == report["/var/log"] == "FileNotFoundError"
