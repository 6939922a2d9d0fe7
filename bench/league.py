"""The open league, measured: how soon a submission shows in the standings, what
choosing the next games costs, and the site under load while the league plays.

1. From a submission to its first standings row: a league of 20 active submitted
   bots (sandboxed, each thinking 0.01 s a move) whose every pairing is already
   played, ``arena league run --workers 2`` waiting for entrants and ``arena serve``
   in their own processes; a new bot is posted to POST /api/bots and the league's
   JSON standings are polled until it has a row with a game. The field's earlier
   games are written straight into the database (as bench/standings.py does): only
   what a newcomer waits for is played.
2. Scheduling: LeagueSchedule.next_games with 200 active versions, every pairing
   but the newest entrant's stored (19,701 pairings, 39,402 games), asked for
   batches of 8 until the newcomer's 398 games are chosen; and reading the active
   field from the database (what the runner does before each batch).
3. The site under load: 50 viewers at once, 20 pages each (1,000 requests, then
   they stop), on the league of part 1 while ``arena league run`` plays and new
   versions are uploaded (each 2 s after the last was answered): median, p95 and
   slowest page, errors.

Run: python bench/league.py [--viewers 50] [--pages 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path

from arena.league.accounts import add_user
from arena.league.policy import submit_to_league
from arena.league.scheduler import LeagueSchedule, active_field, config_of, create_league
from arena.records import BotCode
from arena.store import Entry, Store
from arena.tournament.runner import bot_identity

ARENA = str(Path(sys.executable).with_name("arena"))  # the command installed with the package
LEAGUE = """bots = []
games = 2
seed = 1
[openings]
plies = 2
[time]
move_seconds = 1.0
[league]
submissions_per_hour = 1000
"""
SLEEPER = '''import random
import time

from arena.bot import Bot


class Sleeper{i}(Bot):
    """Thinks 0.01 s, then plays a random legal move (version {version})."""

    def choose_move(self, board):
        time.sleep(0.01)
        return random.choice(board.legal_moves())
'''


def sleeper(i: int, version: int = 1) -> bytes:
    return SLEEPER.format(i=i, version=version).encode()


# --- set-up -----------------------------------------------------------------------------------


def build_league(folder: Path, bots: int) -> tuple[Path, dict[str, str]]:
    """A league of ``bots`` submitted sleepers, one account each, every pairing stored
    (synthetic results); the accounts' API tokens by name."""
    (folder / "league.toml").write_text(LEAGUE)
    db = folder / "league.db"
    tokens = {}
    with Store(db) as store:
        league = create_league(store, "class", str(folder / "league.toml"))
        for i in range(bots):
            user, _, tokens[f"author{i:02d}"] = add_user(store, f"author{i:02d}")
            submit_to_league(store, league, user, f"sleeper{i:02d}", sleeper(i))
        entries, code = active_field(store, league)
        fill_pairings(store, league.tournament_id, entries, code, config_of(league.config, league.name).games)
    return db, tokens


def fill_pairings(store: Store, tournament_id: int, entries: list[Entry], code: dict[str, BotCode],
                  games: int) -> None:
    """Every pairing's games, as the league would key them, with random results."""
    rng = random.Random(1)
    ids = {e.spec: store.bots.id_of(bot_identity(e.spec, code)) for e in entries}
    schedule = LeagueSchedule(config_of({"games": games}, "fill"), set())
    rows = []
    for newer in range(1, len(entries)):
        for older in range(newer):
            a, b = entries[older].spec, entries[newer].spec
            for key, game in schedule.keys(a, b):
                first, second = (b, a) if game % 2 else (a, b)
                winner = rng.choice((0, 1, None))
                result = {0: "1-0", 1: "0-1", None: "1/2-1/2"}[winner]
                rows.append((tournament_id, key, f"{a}~{b}", ids[first], ids[second], result, winner,
                             "draw" if winner is None else "win", 20))
    with store.db.conn:
        store.db.conn.executemany(
            "insert into games (tournament_id, key, pairing, first_bot_id, second_bot_id, result, winner, "
            "termination, plies) values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Running:
    """``arena serve`` and ``arena league run`` on ``db``, in their own processes."""

    def __init__(self, db: Path) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = db.with_name("serve.log")
        with open(self.log, "w") as log:  # the server's own account of any error
            self.server = subprocess.Popen([ARENA, "serve", "--db", str(db), "--port", str(port)],
                                           stdout=log, stderr=subprocess.STDOUT)
        self.league = subprocess.Popen([ARENA, "league", "run", "class", "--workers", "2", "--db", str(db)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.idle = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()
        deadline = time.monotonic() + 60
        while True:
            try:
                get(self.base + "/api/leagues")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _watch(self) -> None:
        assert self.league.stderr is not None
        for line in self.league.stderr:
            if "waiting for a new entrant" in line:
                self.idle.set()

    def stop(self) -> None:
        for process in (self.league, self.server):
            process.terminate()
        for process in (self.league, self.server):
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def get(url: str, timeout: float = 30) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def post_bot(base: str, token: str, name: str, source: bytes) -> tuple[int, dict[str, object]]:
    boundary = "bench-" + secrets.token_hex(8)
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}.py"\r\n\r\n').encode()
    body += source + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(base + "/api/bots", data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def new_account(db: Path, name: str) -> str:
    with Store(db) as store:
        return add_user(store, name)[2]


# --- 1. from a submission to the standings ---------------------------------------------------------


def submission_to_standings(db: Path, running: Running, rounds: int) -> list[tuple[float, float]]:
    """(seconds until the API answered, seconds until the first standings row) per newcomer."""
    times = []
    for n in range(rounds):
        if not running.idle.wait(300):
            raise RuntimeError("the league never got through its games")
        running.idle.clear()
        token = new_account(db, f"newcomer{n}")
        started = time.perf_counter()
        status, answer = post_bot(running.base, token, f"newcomer{n}", sleeper(100 + n))
        if status != 201:
            raise RuntimeError(f"submission refused: {status} {answer}")
        answered = time.perf_counter() - started
        spec = answer["spec"]
        while True:
            _, body = get(f"{running.base}/api/leagues/class")
            rows = {row["bot"]: row["games"] for row in json.loads(body)["standings"]}
            if rows.get(spec, 0) >= 1:
                break
            time.sleep(0.05)
        times.append((answered, time.perf_counter() - started))
    return times


# --- 2. scheduling ---------------------------------------------------------------------------------


def scheduling(folder: Path, versions: int, batch: int = 8) -> dict[str, float]:
    config = config_of({"games": 2, "openings": {"plies": 2}}, "bench")
    entries = [Entry(i + 1, 1, f"bot{i:03d}@v1", None, None, "active", "", "", None) for i in range(versions)]
    schedule = LeagueSchedule(config, set())
    for newer in range(1, versions - 1):  # every pairing stored but the newest entrant's
        for older in range(newer):
            schedule.stored.update(key for key, _ in schedule.keys(entries[older].spec, entries[newer].spec))
    stored_before = len(schedule.stored)
    calls, games = [], 0
    while True:
        started = time.perf_counter()
        chosen = schedule.next_games(entries, {}, batch)
        calls.append(time.perf_counter() - started)
        if not chosen:
            break
        games += len(chosen)
        schedule.stored.update(spec.key for spec in chosen)  # played and stored, as the runner records them
    # Reading the active field from the database, as the runner does before each batch.
    db = folder / "schedule.db"
    with Store(db) as store:
        league = create_league(store, "wide", None)
        user = add_user(store, "someone")[0]
        for i in range(versions):
            submission, _ = store.submissions.submit(f"bot{i:03d}", sleeper(i).decode(), "bot", "bot.py", None, user.id)
            store.leagues.add_entry(league.id, submission.spec, "active", submission.id, user.id, "")
        reads = []
        for _ in range(20):
            started = time.perf_counter()
            active_field(store, league)
            reads.append(time.perf_counter() - started)
    return {"stored": stored_before, "games": games, "calls": len(calls), "median": statistics.median(calls),
            "walk": max(calls), "idle": calls[-1], "per_game": sum(calls) / games,
            "field_read": statistics.median(reads)}


# --- 3. the site under load ------------------------------------------------------------------------

PAGES = ["/", "/leagues", "/leagues/class", "/leagues/class?all_versions=true", "/standings?tournament=class",
         "/crosstable?tournament=class", "/colours?tournament=class", "/api/leagues/class", "/api/leagues"]


def under_load(db: Path, running: Running, tokens: dict[str, str], viewers: int,
               pages: int) -> dict[str, object]:
    stop = threading.Event()
    uploads: list[int] = []

    def uploader() -> None:
        version = 2
        while not stop.is_set():
            author = f"author{version % 5:02d}"
            status, _ = post_bot(running.base, tokens[author], f"sleeper{version % 5:02d}",
                                 sleeper(version % 5, version))
            uploads.append(status)
            version += 1
            stop.wait(2.0)

    def viewer(seed: int) -> list[tuple[str, float, int | str]]:
        rng = random.Random(seed)
        seen = []
        for _ in range(pages):
            page = rng.choice(PAGES)
            started = time.perf_counter()
            try:
                status: int | str = get(running.base + page)[0]
            except OSError as exc:
                status = type(exc).__name__
            seen.append((page, time.perf_counter() - started, status))
        return seen

    thread = threading.Thread(target=uploader, daemon=True)
    thread.start()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(viewers) as pool:
        results = [row for rows in pool.map(viewer, range(viewers)) for row in rows]
    took = time.perf_counter() - started
    stop.set()
    thread.join()
    times = sorted(seconds for _, seconds, _ in results)
    errors = [(page, status) for page, _, status in results if status != 200]
    with Store(db, read_only=True) as store:
        league = store.leagues.check("class")
        games = store.games.tournament_count(league.tournament_id)
    return {"requests": len(results), "seconds": took, "median": statistics.median(times),
            "p95": times[int(0.95 * (len(times) - 1))], "max": times[-1], "errors": errors,
            "uploads": uploads, "games": games,
            "by_page": {page: statistics.median(s for p, s, _ in results if p == page) for page in PAGES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="newcomers timed in part 1")
    parser.add_argument("--versions", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-bench-league-"))
    folder.mkdir(parents=True, exist_ok=True)

    print(f"2. scheduling with {args.versions} active versions, batches of 8")
    s = scheduling(folder, args.versions)
    print(f"   {s['stored']:,} games stored; the newcomer's {s['games']} games chosen in {s['calls']} calls: "
          f"median call {s['median'] * 1000:.2f} ms; once, every older pairing walked and found complete: "
          f"{s['walk'] * 1000:.1f} ms; then a look with nothing to play: {s['idle'] * 1000:.1f} ms; "
          f"{s['per_game'] * 1e6:.0f} us per game in all")
    print(f"   reading the active field from the database: {s['field_read'] * 1000:.1f} ms per batch "
          f"({s['field_read'] / 8 * 1000:.2f} ms per game at 8 games a batch)")

    print(f"1. a league of {args.bots} active bots, 0.01 s a move, 2 workers: building it (sandbox checks)...")
    db, tokens = build_league(folder, args.bots)
    running = Running(db)
    try:
        times = submission_to_standings(db, running, args.rounds)
        for n, (answered, shown) in enumerate(times):
            print(f"   newcomer {n}: checks done and entered in {answered:.2f} s; first standings row after "
                  f"{shown:.2f} s")
        print(f"   median: {statistics.median(t for _, t in times):.2f} s from submission to standings")
        print(f"3. {args.viewers} viewers x {args.pages} pages while the league plays and new versions are "
              "uploaded, 2 s apart")
        load = under_load(db, running, tokens, args.viewers, args.pages)
    finally:
        running.stop()
    print(f"   {load['requests']} requests in {load['seconds']:.1f} s: median {load['median'] * 1000:.0f} ms, "
          f"p95 {load['p95'] * 1000:.0f} ms, slowest {load['max'] * 1000:.0f} ms; errors: {len(load['errors'])}"
          + (f" {load['errors'][:5]}" if load["errors"] else ""))
    if load["errors"]:
        print("   the server's log ends:\n" + running.log.read_text()[-3000:])
    uploads = load["uploads"]
    assert isinstance(uploads, list)
    print(f"   uploads meanwhile: {len(uploads)} ({sum(1 for u in uploads if u == 201)} entered); "
          f"league games stored: {load['games']}")
    by_page = load["by_page"]
    assert isinstance(by_page, dict)
    for page, median in by_page.items():
        print(f"     {page:<36} median {median * 1000:.0f} ms")


if __name__ == "__main__":
    main()
