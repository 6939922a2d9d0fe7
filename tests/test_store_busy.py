"""Writers to one database wait for each other instead of failing: every connection
has a busy timeout, and every write transaction takes the write lock first (BEGIN
IMMEDIATE). A write that waits past the timeout is refused as :class:`StoreBusy`,
with nothing of it stored, and the site answers it 503 with Retry-After, never 500."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.league.accounts import add_user
from arena.league.scheduler import create_league
from arena.store import Store, StoreBusy
from arena.store import database as database_module
from arena.web.app import create_app
from tests.test_cli import dump
from tests.test_web_league import LEAGUE, bot


@contextmanager
def write_locked(db: Path) -> Iterator[None]:
    """Another connection holding the database's write lock until the block ends."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("begin immediate")
    try:
        yield
    finally:
        holder.execute("rollback")
        holder.close()


def audit_from_another_connection(db: Path, done: threading.Event, failures: list[BaseException]) -> Callable[[], None]:
    def write() -> None:
        try:
            with Store(db) as store:
                store.accounts.audit("other", "a write from another connection")
        except BaseException as exc:  # reported by the test
            failures.append(exc)
        finally:
            done.set()
    return write


def test_a_transaction_that_reads_then_writes_waits_for_another_writer(tmp_path: Path) -> None:
    """A transaction that read before another connection committed a write cannot
    take the write lock afterwards ("database is locked" at once, whatever the busy
    timeout): one that takes the lock first makes the other writer wait instead."""
    db = tmp_path / "arena.db"
    done, failures = threading.Event(), []
    writer = threading.Thread(target=audit_from_another_connection(db, done, failures))
    with Store(db) as store:
        with store.transaction():
            assert store.accounts.user("nobody") is None  # a read: the transaction has its snapshot
            writer.start()
            done.wait(timeout=3)  # a deferred transaction let the other write commit here at once
            store.accounts.audit("mine", "the write after the read")
        writer.join(timeout=60)
        assert not writer.is_alive() and not failures, failures
        assert sorted(row["action"] for row in store.accounts.audit_log()) == ["mine", "other"]


def test_every_connection_waits_for_the_write_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT", 12.5)
    with Store(db) as writing, Store(db, read_only=True) as reading:
        for store in (writing, reading):
            assert store.db.execute("pragma busy_timeout").fetchone()[0] == 12500


def test_a_write_that_waits_too_long_is_refused_as_busy_and_stores_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        store.accounts.audit("before", "kept")
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT", 0.2)
    before = dump(db)
    with Store(db) as store, write_locked(db):
        busy = pytest.raises(StoreBusy, match=r"database '.*arena\.db' is busy: .* try again in a moment")
        with busy, store.transaction():
            store.accounts.audit("lost", "never stored")
            store.accounts.audit("lost too", "never stored")
        with pytest.raises(StoreBusy):
            store.accounts.audit("alone", "a single write outside a transaction waits and is refused too")
        assert not store.db.conn.in_transaction
    assert dump(db) == before
    with Store(db) as store:  # the lock is free: writing works again
        store.accounts.audit("after", "stored")
        assert [row["action"] for row in store.accounts.audit_log()] == ["before", "after"]


@pytest.fixture
def league_site(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "league.toml").write_text(LEAGUE)
    db = tmp_path / "league.db"
    with Store(db) as store:
        create_league(store, "class", str(tmp_path / "league.toml"))
        _, _, token = add_user(store, "alice")
    return db, token


def test_an_upload_that_finds_the_database_busy_is_503_with_retry_after(
        league_site: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    db, token = league_site
    client = TestClient(create_app(str(db)), follow_redirects=False)
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT", 0.2)
    before = dump(db)
    with write_locked(db):
        answer = client.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, data={"name": "lefty"},
                             files={"file": ("lefty.py", bot())})
    assert answer.status_code == 503, answer.text
    assert answer.headers["Retry-After"].isdigit()
    assert "is busy" in answer.json()["error"] and "try again" in answer.json()["error"]
    assert str(db) not in answer.text and "arena " not in answer.text  # the server's business, not the visitor's
    assert dump(db) == before  # nothing half-stored
    again = client.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, data={"name": "lefty"},
                        files={"file": ("lefty.py", bot())})
    assert again.status_code == 201, again.text


def test_a_page_that_finds_the_database_busy_is_503_with_retry_after(
        league_site: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same refusal as a page, for the browser's upload form."""
    db, _ = league_site
    app = create_app(str(db))

    @app.get("/busy-write-for-test")
    def busy_write() -> None:
        with Store(db) as store:
            store.accounts.audit("lost", "never stored")

    monkeypatch.setattr(database_module, "BUSY_TIMEOUT", 0.2)
    with write_locked(db):
        answer = TestClient(app).get("/busy-write-for-test")
    assert answer.status_code == 503 and answer.headers["Retry-After"].isdigit()
    assert "text/html" in answer.headers["content-type"] and re.search(r"is busy", answer.text)


def test_an_upload_on_a_full_disk_is_503_for_the_visitor_and_the_whole_story_for_the_log(
        league_site: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from arena.store import StoreFull
    from arena.web import leagues

    db, token = league_site
    client = TestClient(create_app(str(db)), follow_redirects=False)

    def full(*args: object, **kwargs: object) -> None:
        raise StoreFull(f"the disk holding {str(db)!r} is full (database or disk is full): free space on it")

    monkeypatch.setattr(leagues, "enter", full)
    answer = client.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, data={"name": "lefty"},
                         files={"file": ("lefty.py", bot())})
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "60"
    assert "nothing of this was stored" in answer.json()["error"] and str(db) not in answer.text
    assert f"the disk holding {str(db)!r} is full" in capsys.readouterr().err
