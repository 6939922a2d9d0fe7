"""The incremental Elo carried on from the games read last (arena.ratings.sequence):
after games arrive in steps, wherever their keys sort, it equals a pass over every
game, bit for bit; after a game read before changes, it starts again and still does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.game import Rules
from arena.ratings import sequence as sequence_module
from arena.ratings.fit import incremental_elo
from arena.ratings.selection import select
from arena.ratings.sequence import EloSequence, FollowedElo
from arena.store import BotIdentity, Store

BOTS = 5
NAMES = ("m", "d", "x")  # tournaments created in this order: a later one may sort before an earlier one

Game = tuple[int, int, int, int, int | None]  # (tournament, key number, first, second, winner)


def make_store(path: Path) -> Store:
    store = Store(path)
    for i in range(BOTS):
        store.bots.id_of(BotIdentity(f"bot{i}", f"bot{i}", {}, "test", f"{i:064x}"))
    return store


def add_games(store: Store, games: list[Game]) -> None:
    """Game rows stored in one transaction, as a tournament's batch is (its tournament started if new)."""
    rules = Rules().as_dict()
    known = {t.name: t.id for t in store.tournaments.all()}
    for t, *_ in games:
        if NAMES[t] not in known:
            identity = {"format": "round-robin", "rules": rules, "name": NAMES[t]}
            known[NAMES[t]] = store.tournaments.start(NAMES[t], "round-robin", identity, identity, t)
    ids = {b.spec: b.id for b in store.bots.stored(range(1, 100))}
    with store.db.conn:
        store.db.conn.executemany(
            "insert or ignore into games (tournament_id, key, pairing, first_bot_id, second_bot_id, result, winner, "
            "termination, plies) values (?, ?, ?, ?, ?, ?, ?, ?, 10)",
            [(known[NAMES[t]], f"k{key}", "p", ids[f"bot{a}"], ids[f"bot{b}"],
              {0: "1-0", 1: "0-1", None: "1/2-1/2"}[winner], winner, "draw" if winner is None else "win")
             for t, key, a, b, winner in games])


def full(store: Store, league: bool = True, tournament: str | None = None) -> EloSequence:
    """The sequence read from the first game."""
    with store.snapshot():
        chosen = select(store, tournament, league)
        return FollowedElo(histories=True).update(chosen)


def followed_matches_full(store: Store, followed: FollowedElo, league: bool = True,
                          tournament: str | None = None) -> None:
    with store.snapshot():
        chosen = select(store, tournament, league)
        kept = followed.update(chosen)
        expected = incremental_elo(chosen.in_order())
    again = full(store, league, tournament)
    assert kept.ratings() == expected  # exactly: the same steps in the same order
    assert kept.ratings() == again.ratings()
    if kept.series is None:
        return
    assert again.series is not None
    assert {name: list(values) for name, values in zip(kept.names, kept.series) if values} == {
        name: list(values) for name, values in zip(again.names, again.series) if values}


def batch(t: int, start: int, count: int, step: int = 7) -> list[Game]:
    return [(t, start + step * i, i % BOTS, (i + 1 + i // BOTS) % BOTS, (None, 0, 1)[i % 3]) for i in range(count)]


@pytest.fixture
def small_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sequence_module, "CHECKPOINT_GAMES", 4)


def test_games_appended_in_steps_give_the_full_pass_without_reading_from_the_first(tmp_path, small_checkpoints):
    with make_store(tmp_path / "a.db") as store:
        add_games(store, batch(0, 100, 40))
        followed = FollowedElo(histories=True)
        followed_matches_full(store, followed)
        # Keys after every game read, keys among them ("k1000" sorts before "k200"), a new
        # tournament whose name sorts first, games of a tournament that sorts last.
        for games in (batch(0, 900, 6), batch(0, 1000, 5, step=31), batch(1, 5, 9), batch(2, 1, 3), batch(0, 99, 2)):
            add_games(store, games)
            followed_matches_full(store, followed)
        assert followed.restarts == 1  # only the first update read every game


def test_a_new_game_sorting_last_reads_only_itself(tmp_path, monkeypatch):
    with make_store(tmp_path / "a.db") as store:
        add_games(store, batch(0, 100, 30))
        followed = FollowedElo()
        followed_matches_full(store, followed)
        read: list[tuple[str, str]] = []
        taken = EloSequence.take

        def counting(self: EloSequence, games):  # type: ignore[no-untyped-def]
            def seen():  # type: ignore[no-untyped-def]
                for game in games:
                    read.append(game[:2])
                    yield game
            taken(self, seen())

        monkeypatch.setattr(EloSequence, "take", counting)
        add_games(store, [(2, 1, 0, 1, 0)])  # tournament "x": after every game of "m"
        with store.snapshot():
            followed.update(select(store, league=True))
        assert read == [("x", "k1")]
        followed_matches_full(store, followed)


@pytest.mark.parametrize("change", ["delete", "update", "rename"])
def test_a_game_read_before_that_changes_starts_again_and_still_gives_the_full_pass(tmp_path, small_checkpoints,
                                                                                  change):
    with make_store(tmp_path / "a.db") as store:
        add_games(store, batch(0, 100, 30) + batch(1, 100, 10))
        followed = FollowedElo(histories=True)
        followed_matches_full(store, followed)
        add_games(store, batch(0, 900, 4))
        conn = store.db.conn
        with conn:
            first = conn.execute("select min(id) from games").fetchone()[0]
            if change == "delete":
                conn.execute("delete from games where id = ?", [first])
            elif change == "update":  # a result corrected: the pair counts' trigger counts it as a change
                conn.execute("update games set winner = 1 - coalesce(winner, 0), termination = 'win' where id = ?",
                             [first])
            else:  # a bot renamed (as removing an account renames its bots): its games are another entrant's
                conn.execute("update bots set spec = 'renamed' where spec = 'bot0'")
        followed_matches_full(store, followed)
        assert followed.restarts == 2


def test_one_tournament_is_followed_apart_from_the_others(tmp_path, small_checkpoints):
    with make_store(tmp_path / "a.db") as store:
        add_games(store, batch(0, 100, 20) + batch(1, 100, 20))
        followed = FollowedElo(histories=True)
        followed_matches_full(store, followed, league=False, tournament="m")
        add_games(store, batch(1, 500, 5))  # another tournament's games: nothing to read
        followed_matches_full(store, followed, league=False, tournament="m")
        add_games(store, batch(0, 50, 5))
        followed_matches_full(store, followed, league=False, tournament="m")
        assert followed.restarts == 1


steps = st.lists(st.one_of(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, BOTS - 1), st.integers(1, BOTS - 1),
                       st.sampled_from([0, 1, None])).map(lambda g: (g[0], g[1], g[2], (g[2] + g[3]) % BOTS, g[4])),
             min_size=1, max_size=12),
    st.integers(0, 200)), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps)
def test_any_steps_of_arrivals_and_removals_give_the_full_pass(tmp_path_factory, small_checkpoints, steps):
    with make_store(tmp_path_factory.mktemp("steps") / "a.db") as store:
        add_games(store, [(0, 1000, 0, 1, 0)])
        followed = FollowedElo(histories=True)
        followed_matches_full(store, followed)
        for step in steps:
            if isinstance(step, int):  # a game removed: the step-th stored, counted round
                ids = [row[0] for row in store.db.conn.execute("select id from games order by id")]
                if len(ids) > 1:
                    with store.db.conn:
                        store.db.conn.execute("delete from games where id = ?", [ids[step % len(ids)]])
            else:
                add_games(store, step)
            followed_matches_full(store, followed)


def test_the_latest_tournament_followed_changes_when_a_new_one_starts(tmp_path, small_checkpoints):
    with make_store(tmp_path / "a.db") as store:
        add_games(store, batch(0, 100, 20))
        followed = FollowedElo(histories=True)
        followed_matches_full(store, followed, league=False)  # the latest tournament: "m"
        add_games(store, batch(1, 100, 3))  # "d" starts: the latest now, though its name sorts first
        followed_matches_full(store, followed, league=False)
        assert followed.sequence is not None and followed.sequence.games == 3
        assert followed.restarts == 2
