"""The league site in its own process, and a real browser to look at it: what the
real-browser tests, the whole-flow tests over HTTP and docs/screenshots.py share."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

ARENA = str(Path(sys.executable).with_name("arena"))  # the command installed with the package
INSTALL = "apt-get install chromium chromium-driver"
T = TypeVar("T")


def browser_paths() -> tuple[str, str] | None:
    """(browser, driver) where both are installed, else None."""
    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def require_browser() -> None:
    """Skip the calling test where no browser is installed, saying what to install; with
    ARENA_BROWSER_TESTS=required (as in CI) fail instead."""
    if browser_paths() is None:
        message = f"no Chromium and chromedriver to test the site in a browser: {INSTALL}"
        if os.environ.get("ARENA_BROWSER_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)


def chromium(width: int = 1280, height: int = 900) -> Any:
    """Headless Chromium under Selenium, with the driver installed beside it (never one
    fetched from the internet). The caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = browser_paths()
    if found is None:
        raise RuntimeError(f"no Chromium and chromedriver here: {INSTALL}")
    browser, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    # --no-sandbox: Chromium's own sandbox needs user namespaces, which containers
    # (and root) often lack; the pages it opens are this test's own.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(db: str | Path) -> Iterator[str]:
    """`arena serve` on ``db`` in its own process, on a free port: its base URL."""
    port = free_port()
    server = subprocess.Popen([ARENA, "serve", "--db", str(db), "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/api/version", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    raise RuntimeError(f"arena serve did not start: {server.communicate()[0]}") from None
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wait_for(condition: Callable[[], T], seconds: float = 20, what: str = "the page") -> T:
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds} s for {what}")
        time.sleep(0.1)


# --- a site with everything on it: what the browser tests look at, and docs/screenshots.py ---------

LEFTY = '''from arena.bot import Bot


class Lefty(Bot):
    """Plays the {which} legal move."""

    def choose_move(self, board):
        moves = board.legal_moves()
        print(f"{{len(moves)}} legal moves: {{moves}}; playing the {which}")
        return moves[{index}]
'''
AUTHOR = "alice"
AUTHOR_PASSWORD = "alice's own password"
ADMIN = "teacher"
ADMIN_PASSWORD = "the teacher's own password"


def whole_site(folder: Path) -> Path:
    """A database with every kind of page to show: the quick tournament, a Swiss one
    (swiss-cup), a knockout (ko-cup), league "class" (two installed bots and alice's
    lefty, whose second version retired the first, every pairing played), league
    "gated" (alice's second version of gated tested at its gate), the author alice and
    the admin teacher (each with a password of their own: AUTHOR_PASSWORD, ADMIN_PASSWORD)."""
    from arena.league.accounts import add_user, set_password
    from arena.league.policy import submit_to_league
    from arena.league.scheduler import create_league
    from arena.store import Store

    db = folder / "site.db"
    subprocess.run([ARENA, "tournament", "run", str(Path(__file__).parent.parent / "config" / "quick.toml"),
                    "--db", str(db), "--workers", "2"], check=True, capture_output=True, text=True)
    subprocess.run([ARENA, "tournament", "run", "--format", "swiss", "--rounds", "2", "--games", "2", "--bots",
                    "greedy,blocker,random", "--name", "swiss-cup", "--db", str(db), "--workers", "2"],
                   check=True, capture_output=True, text=True)
    subprocess.run([ARENA, "tournament", "run", "--format", "knockout", "--games", "2", "--decider", "coin",
                    "--bots", "greedy,blocker,random", "--name", "ko-cup", "--db", str(db), "--workers", "2"],
                   check=True, capture_output=True, text=True)
    (folder / "league.toml").write_text('bots = ["random", "greedy"]\ngames = 2\nseed = 4\n')
    (folder / "gated.toml").write_text('bots = ["random"]\ngames = 2\nseed = 5\n'
                                       '[gate]\nsprt = "elo0=0 elo1=200 alpha=0.1 beta=0.1"\nmax_pairs = 3\n')
    with Store(db) as store:
        create_league(store, "class", str(folder / "league.toml"))
        create_league(store, "gated", str(folder / "gated.toml"))
        for name, password, admin in ((AUTHOR, AUTHOR_PASSWORD, False), (ADMIN, ADMIN_PASSWORD, True)):
            set_password(store, add_user(store, name, admin=admin)[0], password)
    for version, (which, index) in enumerate((("first", 0), ("last", -1)), start=1):
        with Store(db) as store:
            league = store.leagues.check("class")
            source = LEFTY.format(which=which, index=index).encode()
            submit_to_league(store, league, store.accounts.user(AUTHOR), "lefty", source, about=f"Version {version}.")
        subprocess.run([ARENA, "league", "run", "class", "--until-complete", "--workers", "2", "--db", str(db)],
                       check=True, capture_output=True, timeout=300)
    for version, which in enumerate(("first", "last"), start=1):  # the second is tested at the gate
        with Store(db) as store:
            source = LEFTY.format(which=which, index=0 if which == "first" else -1).encode()
            submit_to_league(store, store.leagues.check("gated"), store.accounts.user(AUTHOR), "gated", source,
                             about=f"Version {version}.")
        subprocess.run([ARENA, "league", "run", "gated", "--until-complete", "--workers", "2", "--db", str(db)],
                       check=True, capture_output=True, timeout=300)
    return db
