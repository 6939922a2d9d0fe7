"""The league site's server time per page on a database of 1,000,000 stored games.

Builds the database as bench/standings.py does (its ``build``: 50 bots, ten
tournaments, rows inserted through SQL), gives every game an opening and a legal
move string (so that the game pages and the matchup's openings have something to
show) and a few games real moves rows (played by the built-in bots and stored
through the store, as a tournament stores them). Then it asks the site for each
page in this process, through the framework's test client: one warm-up request,
then N more, and prints the warm-up's time and the median and 95th percentile of
the others. The target is a median under 100 ms and a 95th percentile under
300 ms on two cores.

What is cached, and why it is never stale: the tables of a selection (standings,
crosstable, colours: one fit and one stream of every game) and the whole league's
bots (results per pair, each bot's rating after each of its games, the forfeits)
take seconds on a million games, so the site keeps them in its TableCache under
what they show, with the value of ``Store.version()`` they were computed at.
Every request reads the version again (a few index lookups: the last game's row,
the casual games' count, the tournaments' statuses) and computes a table again
whenever it differs. A game that arrives raises the last id, a casual game saved
again changes the last row or the casual count, a tournament that finishes
changes its status: the next request after any of them recomputes, so a warm-up
time is also what the first visitor pays after each batch of games. Everything
else a page shows (a bot's latest games, a pair's games and openings, a page of
the games list, one game) is read per request through an index.

The warm-up of a page whose tables another page already computed is fast: the
standings' warm-up pays for the crosstable's and the API's.

Then, for ``--arrivals`` seconds, a batch of games is stored every second (as a
tournament's runner stores them) while the pages are asked for one after another:
each page's median and 95th percentile, the first request after new games included.
A table is dated by its own tournament's games (the pair counts' changes), computed
on a thread of its own, and while it is computed again a request takes it as it was
(after waiting ``arena.web.cache.PATIENCE``). The incremental Elo and the bots' rating
histories are carried on from the games read last (arena.ratings.sequence), from the
last copy of their state before the first new game in the order: the arriving games'
keys (``arriving…``) sort before the last tournament's (``g…``), so each batch reads
that tournament's games again, a tenth of the league.

Run: python bench/site.py [--games 1000000] [--bots 50] [--requests 20] [--arrivals 60] [--patience S] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from standings import build  # bench/standings.py, beside this file

from arena.engine.game import Rules, format_moves
from arena.engine.openings import random_openings
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store

MOVE_STRINGS = 500  # distinct legal games the synthetic rows take their moves from
REAL_GAMES = 5  # games played by the built-in bots, stored with their moves rows
OPENING_PLIES = 2
PLIES = 20  # as bench/standings.py stores them


def add_moves(path: Path, seed: int = 1) -> None:
    """Give every game an opening and a legal move string of PLIES plies; store
    REAL_GAMES games with moves rows in the last tournament."""
    rules = Rules()
    lines = random_openings(rules, PLIES, MOVE_STRINGS, random.Random(seed))
    with Store(path) as store:
        conn = store.db.conn
        with conn:
            conn.execute("create temp table lines (k integer primary key, opening text, moves text)")
            conn.executemany("insert into lines values (?, ?, ?)",
                             [(k, format_moves(line[:OPENING_PLIES], rules), format_moves(line, rules))
                              for k, line in enumerate(lines)])
            conn.execute(
                f"update games set opening = (select opening from lines where k = games.id % {len(lines)}), "
                f"moves = (select moves from lines where k = games.id % {len(lines)}), "
                f"opening_plies = {OPENING_PLIES}")
        last = store.tournaments.all()[-1]
        bot_ids = {spec: store.bots.id_of(BotIdentity(f"bot{i:03d}", f"bot{i:03d}", {}, "bench", f"{i:064x}"))
                   for i, spec in enumerate(("random", "greedy"))}
        records = [play_game(GameSpec(key=f"real{i}", rules=rules, first=("random", "greedy")[i % 2],
                                      second=("greedy", "random")[i % 2], pairing="real", seed=i))
                   for i in range(REAL_GAMES)]
        store.games.record(last.id, records, bot_ids)


def measure(client: Any, url: str, requests: int) -> tuple[int, float, list[float]]:
    """(status, the warm-up's seconds, the seconds of each request after it)."""
    started = time.perf_counter()
    status = client.get(url).status_code
    warm_up = time.perf_counter() - started
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        if response.status_code != status:
            raise SystemExit(f"{url}: {response.status_code} after {status}")
    return status, warm_up, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="requests per page after the warm-up")
    parser.add_argument("--arrivals", type=float, default=60,
                        help="seconds of asking for pages while games arrive every second (0: none)")
    parser.add_argument("--batch", type=int, default=10, help="games stored each second meanwhile")
    parser.add_argument("--patience", type=float,
                        help="seconds a request waits for a table being computed again before it takes the one it "
                             "replaces (default: the site's, arena.web.cache.PATIENCE)")
    parser.add_argument("--keep", type=Path, help="build the database here and keep it (and reuse it next time)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="arena-bench-site-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"site-{args.games}.db"
    if not db.exists():
        started = time.perf_counter()
        build(db, args.games, args.bots)
        add_moves(db)
        print(f"database of {args.games:,} games built in {time.perf_counter() - started:.1f} s "
              f"({db.stat().st_size / 2**20:.0f} MB)")
    with Store(db, read_only=True) as store:
        real = [game.id for game in store.games.all(limit=REAL_GAMES)]
        started = time.perf_counter()
        for _ in range(100):
            store.version()
        print(f"Store.version(): {(time.perf_counter() - started) * 10:.2f} ms")
    try:
        if args.patience is not None:
            import arena.web.cache

            arena.web.cache.PATIENCE = args.patience
        app, client, pages = report(db, args.requests, real)
        if args.arrivals:
            while_games_arrive(db, app, client, pages, args.arrivals, args.batch)
    finally:
        if args.keep is None:
            for file in folder.glob("site-*.db*"):
                file.unlink()
            folder.rmdir()


def report(db: Path, requests: int, real: list[int]) -> tuple[Any, Any, list[tuple[str, str]]]:
    from fastapi.testclient import TestClient  # the web stack: only once the database is there

    from arena.web.app import create_app

    app = create_app(str(db))
    client = TestClient(app)
    pages = [
        ("home", "/"),
        ("standings (whole league)", "/standings?all=true"),
        ("crosstable (whole league)", "/crosstable?all=true"),
        ("API standings (whole league)", "/api/standings?all=true"),
        ("bot page", "/bots/bot007"),
        ("API bot list", "/api/bots"),
        ("standings (last tournament)", "/standings"),
        ("matchup, page 2", "/matchup?a=bot007&b=bot013&page=2"),
        ("games list, page 1", "/games?page=1"),
        ("games list, page 1000", "/games?page=1000"),
        ("game page (moves rows)", f"/games/{real[0]}"),
        ("game page (move string)", "/games/123456"),
    ]
    print(f"{requests} requests per page after one warm-up; milliseconds, in this process (test client)")
    print(f"{'page':<30}{'warm-up':>10}{'median':>9}{'p95':>9}")
    for label, url in pages:
        if not routed(app, url.split("?")[0]):
            print(f"{label:<30}{'not built':>10}")
            continue
        status, warm_up, times = measure(client, url, requests)
        p95 = statistics.quantiles(times, n=20, method="inclusive")[-1] if len(times) > 1 else times[0]
        flag = "" if status == 200 else f"  (status {status})"
        print(f"{label:<30}{warm_up * 1000:>10.0f}{statistics.median(times) * 1000:>9.1f}{p95 * 1000:>9.1f}{flag}")
    print(f"tables computed: {app.state.cache.computed}")
    arrived(db, client)
    return app, client, pages


def while_games_arrive(db: Path, app: Any, client: Any, pages: list[tuple[str, str]], seconds: float,
                       batch: int) -> None:
    """Games stored every second (``batch`` of them, in the last tournament, as its runner
    stores a batch) while the pages are asked for one after another for ``seconds``:
    each page's median and 95th percentile, the first request after new games included
    (a cached table then is served as it was while its new state is computed)."""
    import threading

    stop = threading.Event()
    stored: list[int] = []

    def store_games() -> None:
        with Store(db) as store:
            last = store.tournaments.all()[-1]
            bot_ids = {"random": store.bots.stored([1])[0].id, "greedy": store.bots.stored([2])[0].id}
            number = 0
            while not stop.wait(1.0):
                records = [play_game(GameSpec(key=f"arriving{number + i}", rules=Rules(), first="random",
                                              second="greedy", pairing="x", seed=number + i)) for i in range(batch)]
                number += batch
                store.games.record(last.id, records, bot_ids)
                stored.extend(game.id for game in store.games.all(limit=batch))

    writer = threading.Thread(target=store_games)
    times: dict[str, list[float]] = {label: [] for label, _ in pages}
    stale_before = app.state.cache.stale
    writer.start()
    try:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for label, url in pages:
                if not routed(app, url.split("?")[0]):
                    continue
                started = time.perf_counter()
                client.get(url)
                times[label].append(time.perf_counter() - started)
    finally:
        stop.set()
        writer.join()
    print(f"\nwhile {batch} games arrived every second for {seconds:.0f} s ({len(stored)} games stored):")
    print(f"{'page':<30}{'requests':>10}{'median':>9}{'p95':>9}   target: median < {TARGET_MEDIAN_MS} ms, "
          f"p95 < {TARGET_P95_MS} ms")
    missed = []
    for label, spent in times.items():
        if spent:
            p95 = statistics.quantiles(spent, n=20, method="inclusive")[-1] if len(spent) > 1 else spent[0]
            median = statistics.median(spent)
            met = median * 1000 < TARGET_MEDIAN_MS and p95 * 1000 < TARGET_P95_MS
            if not met:
                missed.append(label)
            print(f"{label:<30}{len(spent):>10}{median * 1000:>9.1f}{p95 * 1000:>9.1f}   {'met' if met else 'MISSED'}")
    print("every page meets the target" if not missed else f"the target is missed by: {', '.join(missed)}")
    print(f"tables computed: {app.state.cache.computed}; requests served a table being computed again: "
          f"{app.state.cache.stale - stale_before}")
    app.state.cache.settle()
    with Store(db) as store, store.transaction():
        for game_id in stored:
            store.games.delete(game_id)


#: The target of the pages while games arrive, milliseconds.
TARGET_MEDIAN_MS = 100
TARGET_P95_MS = 300


def routed(app: Any, path: str) -> bool:
    """Whether a route of the site serves ``path`` (asked of the router: a request
    would compute the tables the warm-up is there to time)."""
    from starlette.routing import Match

    scope = {"type": "http", "path": path, "method": "GET", "root_path": "", "query_string": b"", "headers": []}
    return any(route.matches(scope)[0] == Match.FULL for route in app.router.routes)


def arrived(db: Path, client: Any) -> None:
    """One more game stored, as a tournament stores it: the next request of a cached
    page sees it (and pays for the new tables); the game is removed afterwards."""
    with Store(db) as store:
        last = store.tournaments.all()[-1]
        bot_ids = {"random": store.bots.stored([1])[0].id, "greedy": store.bots.stored([2])[0].id}
        record = play_game(GameSpec(key="arrived", rules=Rules(), first="random", second="greedy", pairing="x"))
        store.games.record(last.id, [record], bot_ids)
        game_id = store.games.all(limit=1)[0].id
    try:
        for label, url, what in (("standings after a game arrived", "/api/standings?all=true", "the tables"),
                                 ("bot page after a game arrived", "/bots/bot000", "the league's bots")):
            started = time.perf_counter()
            client.get(url)
            print(f"{label:<30}{(time.perf_counter() - started) * 1000:>10.0f}   ({what} computed again)")
    finally:
        with Store(db) as store:
            store.games.delete(game_id)


if __name__ == "__main__":
    main()
