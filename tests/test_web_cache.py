"""The site's cached tables while a league plays: a game invalidates only what it
touches (its tournament's tables, its pair's matchup pages, the whole league's), and a
table being computed again is served as it was until the new one is ready."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import Store
from arena.web.app import create_app
from arena.web.cache import TableCache
from tests.test_web_bots import SMALL, copy_of, identities, league  # noqa: F401 (league: a fixture)


def add_game(path: str, tournament: str, first: str, second: str, key: str) -> None:
    """One game stored into a tournament already there, as its runner stores a batch
    (its row and status untouched)."""
    known = identities()
    with Store(path) as store:
        tid = store.tournaments.check(tournament).id
        record = play_game(GameSpec(key=key, rules=SMALL, first="random", second="greedy", pairing=key, seed=7))
        store.games.record(tid, [record], {"random": store.bots.id_of(known[first]),
                                           "greedy": store.bots.id_of(known[second])})


def test_a_game_in_one_tournament_leaves_the_other_tournaments_table_in_place(league, tmp_path):  # noqa: F811
    path = copy_of(league, tmp_path / "copy.db")
    app = create_app(path)
    client = TestClient(app)
    t1 = client.get("/api/standings", params={"tournament": "t1"}).json()
    t2 = client.get("/api/standings", params={"tournament": "t2"}).json()
    assert app.state.cache.computed == 2
    add_game(path, "t2", "random", "mybot.py#bbbbbb", "extra")
    assert client.get("/api/standings", params={"tournament": "t1"}).json() == t1
    assert app.state.cache.computed == 2  # t1's table was found, not computed
    after = client.get("/api/standings", params={"tournament": "t2"}).json()
    assert app.state.cache.computed == 3
    assert after["selection"]["games"] == t2["selection"]["games"] + 1
    assert sum(row["games"] for row in after["standings"]) == sum(row["games"] for row in t2["standings"]) + 2


def test_a_matchup_page_is_kept_until_a_game_of_its_pair_arrives(league, tmp_path):  # noqa: F811
    path = copy_of(league, tmp_path / "copy.db")
    app = create_app(path)
    client = TestClient(app)
    pair = {"a": "random", "b": "guard@v2"}
    first = client.get("/api/matchup", params=pair).json()
    computed = app.state.cache.computed  # the league's bots and the matchup
    add_game(path, "t1", "minimax:depth=2", "mybot.py#aaaaaa", "other pair")
    client.get("/api/bots")  # the league's bots computed again: another pair's game is in them
    assert client.get("/api/matchup", params=pair).json() == first
    assert app.state.cache.computed == computed + 1  # the bots only: the matchup page was found
    add_game(path, "t1", "guard@v2", "random", "this pair")
    after = client.get("/api/matchup", params=pair).json()
    assert after["stored_games"] == first["stored_games"] + 1
    assert after["games"] == first["games"] + 1
    assert after["games_on_page"][0]["colour"] == "second"  # the newest game first: random moved second


def test_a_table_computed_again_is_served_as_it_was_until_the_new_one_is_ready():
    cache = TableCache(patience=0)
    release = threading.Event()

    def slow() -> str:
        release.wait(30)
        return "new"

    assert cache.get("standings", 1, lambda: "old") == "old"
    assert cache.get("standings", 2, slow) == "old"  # being computed: the previous table meanwhile
    assert cache.get("standings", 2, slow) == "old" and cache.stale == 2
    release.set()
    cache.settle()
    assert cache.get("standings", 2, slow) == "new"
    assert cache.computed == 2  # the two requests while it was computed started no second computation


def test_a_table_with_nothing_to_fall_back_on_is_waited_for():
    cache = TableCache(patience=0)
    assert cache.get("bots", 1, lambda: "first") == "first"
    assert cache.stale == 0


def test_a_computation_that_fails_fails_the_request_that_waits_for_it():
    cache = TableCache(patience=None)

    def no_games() -> str:
        raise LookupError("no games yet")

    try:
        cache.get("standings", 1, no_games)
    except LookupError as error:
        assert str(error) == "no games yet"
    else:
        raise AssertionError("the failure was swallowed")
    assert cache.get("standings", 2, lambda: "now some") == "now some"


def _two_computations_take(monkeypatch, cache: TableCache, seconds: float) -> None:
    """Compute the standings twice (versions 0 and 1, "old"), each taking ``seconds``
    by the cache's clock; every later computation takes none."""
    from arena.web import cache as cache_module

    ticks = iter([0.0, seconds, seconds, 2 * seconds])
    monkeypatch.setattr(cache_module, "clock", lambda: next(ticks, 0.0))
    for version in (0, 1):
        assert cache.get("standings", version, lambda: "old") == "old"


def _asked_in_a_thread(cache: TableCache, version: int, compute) -> tuple[threading.Thread, list[str]]:
    answers: list[str] = []
    request = threading.Thread(target=lambda: answers.append(cache.get("standings", version, compute)), daemon=True)
    request.start()
    return request, answers


def _until_asked(cache: TableCache, requests: int) -> None:
    """Wait until ``requests`` requests found their table missing or out of date (the
    two of _two_computations_take, then the one in a thread): that one's computation
    is running, so a request after it finds it running."""
    while cache.waited < requests:
        threading.Event().wait(0.01)


def test_a_table_whose_last_computation_took_several_times_the_patience_is_not_waited_for(monkeypatch):
    """Waiting for a computation that will most likely take longer than the patience
    only adds the patience to the page's time: the previous table is taken at once."""
    cache = TableCache(patience=3600)  # a request that waited would wait an hour
    _two_computations_take(monkeypatch, cache, 5 * 3600)
    release = threading.Event()

    def slow() -> str:
        release.wait(30)
        return "new"

    request, answers = _asked_in_a_thread(cache, 2, slow)
    request.join(10)  # returns at once, or after the hour of patience
    finished = not request.is_alive()
    release.set()
    cache.settle()
    assert finished and answers == ["old"] and cache.stale == 1
    assert cache.get("standings", 2, slow) == "new"


def test_a_slow_table_is_not_waited_for_while_an_older_computation_runs(monkeypatch):
    """A request that needs the computation after the one running takes the previous
    table at once where the key is slower than the patience."""
    cache = TableCache(patience=3600)
    _two_computations_take(monkeypatch, cache, 2 * 3600)
    release = threading.Event()

    def version_2() -> str:
        release.wait(30)
        return "v2"

    first, first_answers = _asked_in_a_thread(cache, 2, version_2)  # starts the computation of version 2, waits
    _until_asked(cache, 3)
    second, second_answers = _asked_in_a_thread(cache, 3, lambda: "v3")
    second.join(10)
    finished = not second.is_alive()
    release.set()
    first.join(10)
    cache.settle()
    assert finished and second_answers == ["old"]
    assert first_answers in (["v2"], ["v3"])  # the first request waited: its own table, or the one after it
    assert cache.get("standings", 3, lambda: "v3") == "v3"


def test_a_quick_table_is_waited_for_even_behind_an_older_computation(monkeypatch):
    """A page read after a change shows it where the table is quick to compute: the
    request waits for the computation after the one running."""
    cache = TableCache(patience=3600)
    _two_computations_take(monkeypatch, cache, 1.0)
    release = threading.Event()

    def version_2() -> str:
        release.wait(30)
        return "v2"

    first, _ = _asked_in_a_thread(cache, 2, version_2)
    _until_asked(cache, 3)
    second, second_answers = _asked_in_a_thread(cache, 3, lambda: "v3")
    release.set()
    first.join(10)
    second.join(10)
    cache.settle()
    assert second_answers == ["v3"] and cache.stale == 0


def test_a_table_computed_within_the_patience_is_waited_for():
    """A computation as quick as the last one was is worth the wait: the request gets
    the new table, not the one it replaces."""
    cache = TableCache(patience=3600)
    assert cache.get("standings", 1, lambda: "old") == "old"
    assert cache.get("standings", 2, lambda: "new") == "new" and cache.stale == 0


def test_one_slow_computation_alone_does_not_stop_the_wait(monkeypatch):
    """A key's first computation (modules loaded, every game read) or one slowed by a
    busy moment says little of the next: a page read after a change still shows it."""
    from arena.web import cache as cache_module

    ticks = iter([0.0, 5 * 3600])
    monkeypatch.setattr(cache_module, "clock", lambda: next(ticks, 0.0))
    cache = TableCache(patience=3600)
    assert cache.get("standings", 1, lambda: "old") == "old"  # took five hours by the clock
    assert cache.get("standings", 2, lambda: "new") == "new" and cache.stale == 0
