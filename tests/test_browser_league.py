"""The open league in a real browser: `arena serve` in its own process, Chromium driven
by Selenium. An author signs in, uploads a bot, reads its check results, and finds it
in the league's standings once `arena league run` (another process) has played it; a
bot that fails its checks is shown why; the pages fit a phone's width.

Without Chromium and its driver these tests skip, saying what to install; with
ARENA_BROWSER_TESTS=required (as in CI) they fail instead.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.league.accounts import add_user, set_password
from arena.league.scheduler import create_league
from arena.store import Store
from tests.site_process import ARENA, chromium, require_browser, serving, wait_for

BOT = '''from arena.bot import Bot


class Lefty(Bot):
    """Plays the first legal move."""

    def choose_move(self, board):
        return board.legal_moves()[0]
'''


@pytest.fixture(scope="module")
def browser_here() -> None:
    require_browser()


@pytest.fixture(scope="module")
def driver(browser_here: None) -> Iterator[Any]:
    browser = chromium()
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A league of two installed bots, an author's account (its password) and the
    folder with the author's bot files."""
    folder = tmp_path_factory.mktemp("browser-league")
    (folder / "league.toml").write_text('bots = ["random", "greedy"]\ngames = 2\nseed = 4\n')
    db = folder / "league.db"
    with Store(db) as store:
        create_league(store, "class", str(folder / "league.toml"))
        user = add_user(store, "alice")[0]
        password = "alice's own password"  # in place of the issued one, which would ask for a new one first
        set_password(store, user, password)
    (folder / "lefty.py").write_text(BOT)
    (folder / "broken.py").write_text("this is not python(\n")
    return db, password, folder


@pytest.fixture(scope="module")
def site(league: tuple[Path, str, Path]) -> Iterator[str]:
    with serving(league[0]) as base:
        yield base


def sign_in(driver: Any, site: str, password: str) -> None:
    driver.get(site + "/signin")
    driver.find_element("id", "name").send_keys("alice")
    driver.find_element("id", "password").send_keys(password)
    driver.find_element("css selector", "form.stacked button[type=submit]").click()
    wait_for(lambda: driver.current_url == site + "/my", what="the sign-in to land on my bots")


def upload(driver: Any, site: str, name: str, file: Path) -> None:
    driver.get(site + "/upload")
    driver.find_element("id", "name").send_keys(name)
    driver.find_element("id", "description").send_keys("Takes the leftmost column.")
    driver.find_element("id", "file").send_keys(str(file))  # the browser's own file chooser, filled in
    driver.find_element("css selector", "#upload button[type=submit]").click()
    wait_for(lambda: driver.find_elements("id", "outcome"), what="the outcome of the upload")


def checks_shown(driver: Any) -> list[list[str]]:
    return driver.execute_script(  # type: ignore[no-any-return]
        "return Array.from(document.querySelectorAll('#checks tbody tr'),"
        " (row) => Array.from(row.cells, (cell) => cell.textContent.trim()));")


def test_an_author_signs_in_uploads_sees_the_checks_and_then_the_standings(driver, site, league):
    db, password, folder = league
    sign_in(driver, site, password)
    upload(driver, site, "lefty", folder / "lefty.py")
    assert driver.find_element("css selector", "#outcome h2").text == "lefty@v1 entered in league class"
    checks = checks_shown(driver)
    assert len(checks) == 7 and all(row[0] == "ok" for row in checks), checks
    assert checks[0][1] == "loads and starts a game (7x6 connect 4)"
    assert driver.current_url == site + "/upload"  # redirected after the post: a reload sends nothing again
    driver.refresh()
    assert not driver.find_elements("id", "outcome") and driver.find_element("id", "upload")

    upload(driver, site, "broken", folder / "broken.py")
    assert "did not pass the checks" in driver.find_element("css selector", "#outcome .error").text
    assert checks_shown(driver)[0][0] == "FAIL"
    assert driver.find_element("id", "name").get_attribute("value") == "broken"  # the form kept what was typed

    driver.get(site + "/leagues/class")
    assert not driver.find_elements("id", "league-standings")  # no games yet
    subprocess.run([ARENA, "league", "run", "class", "--until-complete", "--workers", "2", "--db", str(db)],
                   check=True, capture_output=True, timeout=300)
    driver.get(site + "/leagues/class")
    row = driver.find_element("css selector", "#league-standings tr[data-bot='lefty@v1']")
    cells = [cell.text for cell in row.find_elements("css selector", "td, th")]
    assert cells[1:4] == ["lefty@v1", "alice", "4"], cells  # 2 opponents x 2 games
    driver.get(site + "/my")
    assert "4 games:" in driver.find_element("css selector", "#entry-3 .record").text


def test_the_pages_fit_a_phone(browser_here, league, site):
    password = league[1]
    phone = chromium(390, 844)
    try:
        sign_in(phone, site, password)
        for page in ("/my", "/upload", "/leagues", "/leagues/class", "/account"):
            phone.get(site + page)
            overflow = phone.execute_script("return document.documentElement.scrollWidth - window.innerWidth;")
            assert overflow <= 0, (page, overflow)
        phone.find_element("css selector", "header form button").click()  # sign out, from the menu
        wait_for(lambda: phone.find_elements("link text", "Sign in"), what="the signed-out menu")
    finally:
        phone.quit()
