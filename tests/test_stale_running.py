"""A tournament whose runner was killed outright (kill -9) is shown as interrupted,
not "(running)": running means a process holds it now, which the kernel knows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.store import Store

REPO = Path(__file__).resolve().parent.parent

HOLDS = """
import sys, time
from arena.store import Store
store = Store(sys.argv[1])
with store.tournaments.running("cup"):
    store.tournaments.start("cup", "round-robin", {"rules": {}}, {}, 1)
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_tournament_is_running_only_while_a_process_holds_it(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    holder = subprocess.Popen([sys.executable, "-c", HOLDS, str(db)], stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with Store(db, read_only=True) as store:
            assert store.tournaments.check("cup").status == "running"
        holder.send_signal(signal.SIGKILL)  # no chance to say it stopped
        holder.wait(10)
        with Store(db, read_only=True) as store:
            assert [t.status for t in store.tournaments.all()] == ["interrupted"]
        stored = subprocess.run([sys.executable, "-m", "arena", "tournaments", "--db", str(db)],
                                capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert "running" not in stored.stdout and "interrupted" in stored.stdout, stored.stdout + stored.stderr
        standings = subprocess.run([sys.executable, "-m", "arena", "standings", "--db", str(db)],
                                   capture_output=True, text=True, cwd=tmp_path, timeout=60)
        said = standings.stdout + standings.stderr
        assert "'cup' (interrupted)" in said and "(running)" not in said, said
        from fastapi.testclient import TestClient

        from arena.web.app import create_app
        site = TestClient(create_app(str(db)))
        assert [t["status"] for t in site.get("/api/tournaments").json()] == ["interrupted"]
        assert "data-running" not in site.get("/").text
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_looking_at_a_tournament_creates_no_lock_file(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        store.tournaments.start("cup", "round-robin", {"rules": {}}, {}, 1)
    before = sorted(p.name for p in tmp_path.iterdir())
    with Store(db, read_only=True) as store:
        assert store.tournaments.check("cup").status == "interrupted"  # no lock file: nobody holds it
    time.sleep(0.01)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
