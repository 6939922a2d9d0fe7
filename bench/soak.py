"""A league under fire: does it lose anything, charge a bot for the arena's faults,
answer a 500, or stop playing for long?

It sets up a league as the docs say (``arena league create``, ``arena users add``),
with 20+ entrants (installed bots, then bots uploaded through the API), and runs, as
separate processes watched by a supervisor that restarts whatever exits (as systemd's
``Restart=always`` does): a Dask scheduler, 2 Dask workers, ``arena league run
--cluster`` and ``arena serve``. Then, for the run's length:

- an author uploads a new bot through ``POST /api/bots`` every few seconds;
- 50 viewers read the site's pages and API (with a short think time each);
- a chaos loop kills (SIGKILL), in turn and at random moments, the league runner, a
  sandbox spawner, a bot process, a Dask worker and the scheduler; once, half way,
  it fills the disk holding the database for a while (a tmpfs of its own, when this
  process may mount one).

At the end it reports requests served and errors by status, uploads by status, games
played, games void and how many of those were played again, games lost (stored at
some point, missing or changed at the end: must be 0), games charged to a bot for an
arena fault (every bot here is well-behaved, so every forfeit is one: must be 0), 500
answers (must be 0), and the longest time the league was not playing (no game
stored) while it had games to play. Exit code 1 if a must-be-0 figure is not.

Run: python bench/soak.py [--minutes 3] [--viewers 50] [--local] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

BIN = Path(sys.executable).parent
ARENA = str(BIN / "arena")
INSTALLED = ["random", "neighbour", "greedy", "blocker", "minimax:depth=1", "minimax:depth=2"]
AUTHORS = ["ada", "bo", "cy", "di", "ed"]
LEAGUE = """bots = {bots}
games = 2
seed = 7
[openings]
plies = 2
[time]
move_seconds = 5.0
bank_seconds = 30.0
[league]
submissions_per_hour = 1000
"""
#: Moves an uploaded bot may prefer: the games differ, and every bot is well-behaved.
STYLES = ["moves[0]", "moves[-1]", "moves[len(moves) // 2]", "random.Random({n}).choice(moves)",
          "min(moves, key=lambda m: (m * 7 + {n}) % 5)"]
BOT = '''import random

from arena.bot import Bot


class Soak{n}(Bot):
    """Soak entrant {n}."""

    def choose_move(self, board):
        moves = board.legal_moves()
        return {style}
'''
PAGES = ["/", "/standings", "/crosstable", "/colours", "/games", "/leagues", "/leagues/class", "/api/standings",
         "/api/games", "/api/version", "/api/leagues/class", "/api/bots", "/tournaments/class"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Supervised:
    """A service: started again, a second after it exits, until the soak ends."""

    def __init__(self, name: str, command: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.name, self.command, self.log, self.env = name, command, log, env
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True, env=self.env)
        self.starts += 1

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.alive():
            assert self.process is not None
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.alive():
            assert self.process is not None
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def _processes() -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        found.append((int(entry.name), parent, cmdline))
    return found


def _ours(table: list[tuple[int, int, str]], services: set[int]) -> set[int]:
    """The processes that descend from the soak's own services: a chaos loop kills
    nothing else on the machine (another arena's tests, say)."""
    parent = {pid: ppid for pid, ppid, _ in table}
    ours = set()
    for pid, _, _ in table:
        seen, walk = [], pid
        while walk in parent and walk not in services and walk not in seen and walk > 1:
            seen.append(walk)
            walk = parent[walk]
        if walk in services:
            ours.add(pid)
    return ours


def spawners(services: set[int]) -> list[int]:
    table = _processes()
    ours = _ours(table, services)
    return [pid for pid, _, cmd in table if "arena.sandbox.spawner_process" in cmd and pid in ours]


def bot_processes(services: set[int]) -> list[int]:
    """Processes below one of our spawners: the bots' own (and their namespaces' first process)."""
    table = _processes()
    ours = _ours(table, services)
    roots = {pid for pid, _, cmd in table if "arena.sandbox.spawner_process" in cmd and pid in ours}
    children: dict[int, list[int]] = {}
    for pid, parent, _ in table:
        children.setdefault(parent, []).append(pid)
    below, todo = [], list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            below.append(child)
            todo.append(child)
    return below


def multipart(fields: dict[str, str], file_name: str, content: bytes) -> tuple[bytes, str]:
    boundary = f"soak{random.getrandbits(64):x}"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
             for key, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
                 f"Content-Type: text/x-python\r\n\r\n".encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Soak:
    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.db = folder / "data" / "arena.db"
        self.site = f"http://127.0.0.1:{free_port()}"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.uploads: Counter[str] = Counter()
        self.uploaded: list[str] = []
        self.chaos: Counter[str] = Counter()
        self.events: list[str] = []
        self.seen: dict[str, str] = {}  # game key -> its moves, as first seen stored
        self.longest_still = 0.0
        self.services: list[Supervised] = []
        self.tokens: dict[str, str] = {}
        self.uploads_made = 0
        self.ballast: Path | None = None
        self.started = time.monotonic()

    def log(self, text: str) -> None:
        line = f"{time.monotonic() - self.started:7.1f}s {text}"
        self.events.append(line)
        if self.args.verbose:
            print(line, flush=True)

    # --- set-up, as a teacher would -----------------------------------------------------------
    def arena(self, *words: str) -> str:
        done = subprocess.run([ARENA, *words, "--db", str(self.db)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"arena {' '.join(words)} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def set_up(self) -> None:
        (self.folder / "data").mkdir(exist_ok=True)
        league = self.folder / "league.toml"
        league.write_text(LEAGUE.format(bots=json.dumps(INSTALLED)))
        self.arena("league", "create", "class", str(league))
        for author in AUTHORS:
            out = self.arena("users", "add", author)
            self.tokens[author] = re.search(r"API token: (\S+)", out).group(1)  # type: ignore[union-attr]

    def upload(self) -> None:
        n = self.uploads_made
        self.uploads_made += 1
        author = AUTHORS[n % len(AUTHORS)]
        source = BOT.format(n=n, style=STYLES[n % len(STYLES)].format(n=n)).encode()
        body, kind = multipart({"name": f"soak{n}", "league": "class"}, f"soak{n}.py", source)
        headers = {"Content-Type": kind, "Authorization": f"Bearer {self.tokens[author]}"}
        request = urllib.request.Request(f"{self.site}/api/bots", data=body, method="POST", headers=headers)
        status = self.fetch(request, timeout=120)
        with self.lock:
            self.uploads[status] += 1
            if status == "201":
                self.uploaded.append(f"soak{n}")

    def fetch(self, request: urllib.request.Request | str, timeout: float = 60) -> str:
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                answer.read()
                return str(answer.status)
        except urllib.error.HTTPError as error:
            body = error.read()[:300].decode(errors="replace")
            url = request if isinstance(request, str) else request.full_url
            self.log(f"{error.code} from {url}: {body}")
            return str(error.code)
        except (urllib.error.URLError, OSError, TimeoutError) as error:
            return f"no answer ({type(getattr(error, 'reason', error)).__name__})"

    # --- the services -------------------------------------------------------------------------
    def start_services(self) -> None:
        logs = self.folder / "logs"
        logs.mkdir(exist_ok=True)
        site_port = self.site.rsplit(":", 1)[1]
        self.site_service = Supervised("site", [ARENA, "serve", "--db", str(self.db), "--port", site_port],
                                       logs / "site.log")
        run = [ARENA, "league", "run", "class", "--db", str(self.db)]
        self.scheduler = self.workers = None
        if self.args.local:
            run += ["--workers", "2"]
        else:
            port = free_port()
            address = f"tcp://127.0.0.1:{port}"
            self.scheduler = Supervised("scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1",
                                                      "--port", str(port), "--no-dashboard"], logs / "scheduler.log")
            self.workers = [Supervised(f"worker{i}", [str(BIN / "dask"), "worker", address, "--nworkers", "1",
                                                      "--nthreads", "1", "--no-dashboard", "--no-nanny",
                                                      "--death-timeout", "120"], logs / f"worker{i}.log")
                            for i in range(2)]
            run += ["--cluster", address]
        self.runner = Supervised("league runner", run, logs / "league.log")
        self.services = [s for s in (self.scheduler, *(self.workers or []), self.site_service, self.runner) if s]
        for service in self.services:
            service.start()
            time.sleep(1.0)
        deadline = time.monotonic() + 60
        while self.fetch(f"{self.site}/api/version", timeout=5) != "200":
            if time.monotonic() > deadline:
                raise SystemExit(f"the site did not start: see {logs / 'site.log'}")
            time.sleep(0.5)

    def supervise(self) -> None:
        while not self.stop.is_set():
            for service in self.services:
                if not service.alive() and not self.stop.is_set():
                    if self.stop.wait(1.0):  # RestartSec=1; nothing starts once the soak ends
                        return
                    self.log(f"restart {service.name}")
                    service.start()
            self.stop.wait(0.5)

    # --- the load ----------------------------------------------------------------------------
    def viewer(self, rng: random.Random) -> None:
        while not self.stop.is_set():
            path = rng.choice(PAGES)
            if path == "/games" and self.seen and rng.random() < 0.5:  # a game's page (the ids are dense)
                path = f"/games/{rng.randint(1, len(self.seen))}"
            status = self.fetch(self.site + path)
            with self.lock:
                self.requests[status] += 1
            self.stop.wait(rng.uniform(0.5, 2.0))

    def uploader(self) -> None:
        while not self.stop.wait(self.args.upload_seconds):
            self.upload()

    def chaos_loop(self, rng: random.Random) -> None:
        targets = ["league runner", "spawner", "bot process", "worker", "scheduler"]
        if self.args.local:
            targets = targets[:3]
        disk_full_at = self.args.minutes * 30
        rng.shuffle(targets)
        turn = 0
        while not self.stop.wait(rng.uniform(0.5, 1.5) * self.args.chaos_seconds):
            if self.ballast is None and self.args.disk_full and time.monotonic() - self.started > disk_full_at:
                self.fill_disk()
                continue
            target = targets[turn % len(targets)]
            turn += 1
            pids: list[int] = []
            if target == "league runner":
                self.runner.kill()
            elif target == "scheduler" and self.scheduler:
                self.scheduler.kill()
            elif target == "worker" and self.workers:
                rng.choice(self.workers).kill()
            else:
                services = {s.process.pid for s in self.services if s.process is not None}
                pids = spawners(services) if target == "spawner" else bot_processes(services)
                if not pids:
                    self.log(f"chaos: no {target} to kill")
                    continue
                try:
                    os.kill(rng.choice(pids), signal.SIGKILL)
                except ProcessLookupError:
                    continue
            self.chaos[target] += 1
            self.log(f"chaos: killed a {target}")

    def fill_disk(self) -> None:
        """Fill the database's disk for a while, then free it: the league must wait, not lose."""
        self.ballast = self.db.parent / "ballast"
        self.log("chaos: disk full")
        with open(self.ballast, "wb") as out:
            try:
                while True:
                    out.write(b"\0" * (1 << 20))
                    out.flush()
            except OSError:
                pass
        self.chaos["disk full"] += 1
        self.stop.wait(self.args.disk_full_seconds)
        self.ballast.unlink()
        self.log("chaos: disk freed")

    def watch(self) -> None:
        """How the stored games change: every game seen stored must stay stored, the same."""
        last_count, last_change = -1, time.monotonic()
        while not self.stop.wait(0.5):
            try:
                games = self.read_games()
            except sqlite3.Error:
                continue
            now = time.monotonic()
            for key, moves in games.items():
                self.seen.setdefault(key, moves)
            if len(games) != last_count:
                last_count, last_change = len(games), now
            else:
                self.longest_still = max(self.longest_still, now - last_change)

    def read_games(self) -> dict[str, str]:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return dict(conn.execute("select key, moves from games"))
        finally:
            conn.close()

    # --- the run -----------------------------------------------------------------------------
    def run(self) -> int:
        self.set_up()
        self.start_services()
        for _ in range(self.args.entrants - len(INSTALLED)):
            self.upload()
        self.log(f"{len(INSTALLED) + len(self.uploaded)} entrants; the soak begins")
        rng = random.Random(self.args.seed)
        threads = [threading.Thread(target=self.supervise), threading.Thread(target=self.uploader),
                   threading.Thread(target=self.watch), threading.Thread(target=self.chaos_loop, args=(rng,))]
        threads += [threading.Thread(target=self.viewer, args=(random.Random(i),)) for i in range(self.args.viewers)]
        self.started_play = time.monotonic()
        for thread in threads:
            thread.start()
        self.stop.wait(self.args.minutes * 60)
        self.stop.set()
        for thread in threads:
            thread.join()
        for service in reversed(self.services):
            service.stop()
        return self.report()

    def report(self) -> int:
        final = self.read_games()
        lost = [key for key, moves in self.seen.items() if final.get(key) != moves]
        conn = sqlite3.connect(self.db)
        forfeits = conn.execute("select g.key, g.reason from games g join tournaments t on t.id = g.tournament_id "
                                "where t.name = 'class' and g.termination = 'forfeit'").fetchall()
        void_keys = [key for (key,) in conn.execute("select key from void_games")]
        specs = {spec for (spec,) in conn.execute("select s.name from submissions s")}
        conn.close()
        submissions_lost = [name for name in self.uploaded if name not in specs]
        errors = {status: n for status, n in self.requests.items() if status != "200"}
        served = sum(self.requests.values())
        figures = {
            "minutes": self.args.minutes,
            "entrants": len(INSTALLED) + len(self.uploaded),
            "requests served": served,
            "requests by status": dict(sorted(self.requests.items())),
            "uploads by status": dict(sorted(self.uploads.items())),
            "games played": len(final),
            "games void": len(void_keys),
            "void games played again": len({key for key in void_keys if key in final}),
            "games lost": len(lost),
            "uploads lost": len(submissions_lost),
            "games charged to a bot for an arena fault": len(forfeits),
            "responses 500": self.requests.get("500", 0) + self.uploads.get("500", 0),
            "longest time not playing (s)": round(self.longest_still, 1),
            "chaos": dict(self.chaos),
            "restarts": {s.name: s.starts - 1 for s in self.services},
        }
        width = max(len(name) for name in figures)
        for name, value in figures.items():
            print(f"{name:<{width}}  {value}")
        if errors:
            print(f"non-200 answers: {errors}")
        for key, reason in forfeits[:10]:
            print(f"forfeit {key}: {reason}")
        if self.args.verbose or lost:
            print("\n".join(self.events))
        bad = lost or submissions_lost or forfeits or figures["responses 500"]
        return 1 if bad else 0


def tmpfs(folder: Path, megabytes: int) -> bool:
    """A small disk of the soak's own for the database (to fill without harm), where
    this process may mount one (root); otherwise the soak runs without a disk-full episode."""
    target = folder / "data"
    target.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(target)],
                          capture_output=True)
    return done.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--entrants", type=int, default=22, help="entrants before the soak begins")
    parser.add_argument("--upload-seconds", type=float, default=5.0)
    parser.add_argument("--chaos-seconds", type=float, default=8.0, help="mean time between two kills")
    parser.add_argument("--disk-full-seconds", type=float, default=10.0)
    parser.add_argument("--disk-mb", type=int, default=256, help="the size of the database's own tmpfs")
    parser.add_argument("--local", action="store_true", help="local worker processes instead of a Dask cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the database and the services' logs in this folder")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    mounted = tmpfs(folder, args.disk_mb)
    args.disk_full = mounted
    if not mounted:
        print("no tmpfs of its own (not root?): the soak runs without its disk-full episode")
    try:
        return Soak(args, folder).run()
    finally:
        if mounted and not args.keep:
            subprocess.run(["umount", "-l", str(folder / "data")], check=False)


if __name__ == "__main__":
    sys.exit(main())
