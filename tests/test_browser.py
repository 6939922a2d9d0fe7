"""The league site in a real browser: `arena serve` in its own process, Chromium
driven by Selenium. The standings read from the page against the CLI's JSON, a
replay stepped through with the board read back from the page after every step,
and a page that follows a tournament as it runs.

Without Chromium and its driver these tests skip, saying what to install; with
ARENA_BROWSER_TESTS=required (as in CI) they fail instead. docs/screenshots.py
takes the pictures in docs/ with the same code.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Board, parse_moves
from arena.store import Store, rules_of
from tests.site_process import ARENA, chromium, require_browser, serving, wait_for

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "config" / "quick.toml"


# --- the tournament the pages show (docs/screenshots.py uses it too) ------------------------------


def run_tournament(db: str | Path, config: str | Path = QUICK, *args: str) -> None:
    subprocess.run([ARENA, "tournament", "run", str(config), "--db", str(db), "--workers", "2", *args],
                   check=True, capture_output=True, text=True)


def board_stones(driver: Any) -> set[tuple[int, int, int]]:
    """(column, row, player) of every stone the page's board shows."""
    return {tuple(stone) for stone in driver.execute_script(
        "return Array.from(document.querySelectorAll('#board .stone'),"
        " (s) => [Number(s.dataset.col), Number(s.dataset.row), Number(s.dataset.player)]);")}


def standings_shown(driver: Any) -> list[list[str]]:
    """The text of each cell of the standings table, row by row."""
    return driver.execute_script(  # type: ignore[no-any-return]
        "return Array.from(document.querySelectorAll('#standings tbody tr'),"
        " (row) => Array.from(row.cells, (cell) => cell.textContent.trim()));")


def standings_expected(db: str | Path, *selection: str) -> list[list[str]]:
    """What the standings table should show: ``arena standings --format json``, as the page writes it."""
    data = json.loads(subprocess.run([ARENA, "standings", "--db", str(db), "--format", "json", *selection],
                                     check=True, capture_output=True, text=True).stdout)
    rows = []
    for row in data["standings"]:
        elo = {">": f"> {row['elo'] - row['elo_minus']:.0f}", "<": f"< {row['elo'] + row['elo_plus']:.0f}",
               None: f"{row['elo']:.0f}"}[row["bound"]]
        los = "" if row["los_next"] is None else f"{100 * row['los_next']:.0f}%"
        rows.append([str(row["rank"]), row["bot"], *(str(row[k]) for k in ("games", "wins", "draws", "losses")),
                     f"{row['score_pct']:.1f}", elo, f"{row['elo_minus']:.0f}", f"{row['incremental_elo']:.0f}",
                     str(row["forfeits"]), los])
    return rows


# --- the tests -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    require_browser()
    browser = chromium()
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database made by a real tournament: the quick one."""
    path = tmp_path_factory.mktemp("browser") / "league.db"
    run_tournament(path)
    return path


@pytest.fixture(scope="module")
def site(league: Path) -> Iterator[str]:
    with serving(league) as base:
        yield base


def test_the_standings_page_shows_the_numbers_of_arena_standings(driver, site, league):
    driver.get(site + "/standings")
    expected = standings_expected(league)
    assert standings_shown(driver) == expected
    # Sorted by a click on a heading (the script the live pages run again after an update).
    driver.find_element("css selector", "#standings th[data-sort=text]").click()
    assert [row[1] for row in standings_shown(driver)] == sorted(row[1] for row in expected)


def test_a_replay_shows_the_stored_moves_after_every_step(driver, site, league):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    with Store(league, read_only=True) as store:
        game = max(store.games.all(), key=lambda g: g.plies or 0)
        rules = rules_of(game)
        moves = parse_moves(game.moves or "", rules)
    positions = []  # the stones after each number of plies
    board = Board(rules)
    for move in [None, *moves]:
        if move is not None:
            board.play(move)
        positions.append({(c, r, owner) for c in range(rules.width) for r in range(rules.height)
                          if (owner := board.cell(c, r)) is not None})
    plies = len(moves)

    def shows(ply: int) -> None:
        assert board_stones(driver) == positions[ply], f"after {ply} plies"
        assert driver.find_element("id", "board").get_attribute("data-ply") == str(ply)
        assert driver.find_element("id", "board-caption").text.startswith(f"After {ply} of {plies} plies")
        assert driver.find_element("id", "replay-ply").get_attribute("value") == str(ply)
        current = driver.find_elements("css selector", "#moves tr[aria-current=step]")
        assert [row.get_attribute("data-ply") for row in current] == ([str(ply)] if ply else [])

    def button(step: str) -> Any:
        return driver.find_element("css selector", f"[data-step={step}]")

    driver.get(f"{site}/games/{game.id}")
    shows(plies)  # the final position, as the server drew it
    assert not driver.find_element("css selector", "nav.steps").is_displayed()  # its buttons replace the links
    button("first").click()
    shows(0)
    for ply in range(1, plies + 1):  # forward: the button and the right arrow in turn
        if ply % 2:
            button("forward").click()
        else:
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
        shows(ply)
    assert button("forward").get_attribute("disabled") is not None
    for ply in range(plies - 1, plies - 5, -1):  # back: the left arrow and the button
        if ply % 2:
            ActionChains(driver).send_keys(Keys.ARROW_LEFT).perform()
        else:
            button("back").click()
        shows(ply)
    link = driver.find_element("css selector", "#moves a[data-goto='3']")  # a move in the list
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)  # clear of the sticky heading
    link.click()
    shows(3)
    assert driver.current_url.endswith("?ply=3")
    driver.execute_script("const s = document.getElementById('replay-ply');"
                          "s.value = 7; s.dispatchEvent(new Event('input'));")  # the slider
    shows(7)
    driver.execute_script("const s = document.getElementById('replay-ply');"
                          f"s.value = {plies - 2}; s.dispatchEvent(new Event('input'));")
    play = driver.find_element("css selector", "[data-play]")
    play.click()
    assert play.get_attribute("aria-pressed") == "true"
    wait_for(lambda: play.text == "Play", 10, "the replay to play to its end and stop")
    shows(plies)
    driver.get(f"{site}/games/{game.id}?ply=5")  # a position linked to
    shows(5)


@pytest.mark.parametrize(("url", "name"), [("/standings?all=true", "watched-standings"), ("/", "watched-home")])
def test_a_page_follows_a_tournament_running_in_another_process(driver, tmp_path, url, name):
    db = tmp_path / "live.db"
    run_tournament(db)  # a league to start from
    config = tmp_path / "live.toml"
    # Bots that think 0.1 s a move: the tournament runs for seconds, time for the page to poll.
    config.write_text(f'name = "{name}"\nformat = "round-robin"\nbots = ["mcts:seconds=0.1", "greedy", "blocker"]\n'
                      "games = 8\nseed = 3\n")
    with serving(db) as base:
        driver.get(base + url)
        driver.execute_script("window.notReloaded = true;")

        def games_shown() -> int:
            text = driver.execute_script("return document.querySelector('[data-live] p').textContent;")
            return int(text.split("games")[0].split()[-1])

        before = games_shown()
        tournament = subprocess.Popen([ARENA, "tournament", "run", str(config), "--db", str(db), "--workers", "1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while_running = set()
        while tournament.poll() is None:
            while_running.add(games_shown())
            time.sleep(0.1)
        assert tournament.returncode == 0, tournament.stderr.read() if tournament.stderr else ""
        after = before + 24  # 3 pairings, 8 games each
        wait_for(lambda: games_shown() == after, 10, f"the page to show {after} games")
        assert any(before < shown < after for shown in while_running), while_running
        assert driver.execute_script("return window.notReloaded === true;")  # updated in place, never reloaded
        if url.startswith("/standings"):
            expected = standings_expected(db, "--all")
            wait_for(lambda: standings_shown(driver) == expected, 10, "the standings of the whole league")
            # The sorting script was run again over the new table.
            driver.find_element("css selector", "#standings th[data-sort=text]").click()
            assert [row[1] for row in standings_shown(driver)] == sorted(row[1] for row in expected)
        else:
            wait_for(lambda: "finished" in driver.find_element("xpath", f"//tr[th/a[text()='{name}']]").text,
                     10, "the tournament to show as finished")


def swiss_shown(driver: Any) -> list[list[str]]:
    """The text of each cell of the Swiss table, row by row."""
    return driver.execute_script(  # type: ignore[no-any-return]
        "return Array.from(document.querySelectorAll('#swiss tbody tr'),"
        " (row) => Array.from(row.cells, (cell) => cell.textContent.trim()));")


def test_the_swiss_page_shows_each_round_as_it_is_played(driver, tmp_path):
    """The page of a Swiss tournament running in another process shows its rounds as
    they are played, in place, and at the end the table of ``arena standings``."""
    db = tmp_path / "swiss.db"
    config = tmp_path / "swiss.toml"
    # A bot that thinks 0.2 s a move: each round takes seconds, time for the page to poll.
    config.write_text('name = "watched-swiss"\nformat = "swiss"\nrounds = 3\ngames = 2\nseed = 5\n'
                      'bots = ["mcts:seconds=0.2", "greedy", "blocker", "random", "neighbour"]\n')
    tournament = subprocess.Popen([ARENA, "tournament", "run", str(config), "--db", str(db), "--workers", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def started() -> bool:
        try:
            with Store(db, read_only=True) as store:
                return store.tournaments.get("watched-swiss") is not None
        except Exception:  # the database not made yet
            return False

    try:
        wait_for(started, 30, "the tournament to start")
        with serving(db) as base:
            driver.get(f"{base}/swiss?tournament=watched-swiss")
            driver.execute_script("window.notReloaded = true;")

            def rounds_played() -> str:
                return driver.execute_script(  # type: ignore[no-any-return]
                    "return document.getElementById('rounds-played').textContent;")

            while_running = set()
            while tournament.poll() is None:
                while_running.add(rounds_played())
                time.sleep(0.1)
            assert tournament.returncode == 0, tournament.stderr.read() if tournament.stderr else ""
            wait_for(lambda: rounds_played() == "3 of 3 rounds played", 10, "every round played")
            assert while_running & {"1 of 3 rounds played", "2 of 3 rounds played"}, while_running
            assert driver.execute_script("return window.notReloaded === true;")  # updated in place
            data = json.loads(subprocess.run([ARENA, "standings", "--db", str(db), "--format", "json"],
                                             check=True, capture_output=True, text=True).stdout)
            assert [row[:3] for row in swiss_shown(driver)] == [
                [str(row["rank"]), row["bot"], f"{row['points']:g}"] for row in data["swiss"]["table"]]
            byes = driver.execute_script(
                "return Array.from(document.querySelectorAll('.bye a'), (a) => a.textContent);")
            assert byes == list(data["swiss"]["byes"].values())
    finally:
        if tournament.poll() is None:
            tournament.kill()
            tournament.wait()


# --- every page fits a phone and a desktop --------------------------------------------------------

from arena.web.app import create_app  # noqa: E402
from tests.site_process import ADMIN, ADMIN_PASSWORD, AUTHOR, AUTHOR_PASSWORD, whole_site  # noqa: E402

#: Answers of GET routes that are no page to look at: files, JSON, health.
NOT_PAGES = {"/openapi.json", "/games/{game_id}/export", "/healthz"}
WIDTHS = (390, 1280)


def site_routes(db: Path) -> set[str]:
    """The path of every GET route of the site, but those under /api/ and /static."""
    def flat(routes: list[Any]) -> Iterator[Any]:
        for route in routes:  # an included router's routes, as the app matches them
            yield from flat(route.original_router.routes) if hasattr(route, "original_router") else [route]

    return {route.path for route in flat(create_app(str(db)).router.routes)
            if "GET" in (getattr(route, "methods", None) or ()) and not route.path.startswith("/api/")}


def page_urls(db: Path) -> dict[str, str]:
    """A URL of every page of the site, by its route: a bot, a game, a league, a
    submission of the database made by whole_site."""
    with Store(db, read_only=True) as store:
        game = next(g for g in reversed(store.games.all()) if g.termination == "win")
        submission = store.submissions.get("lefty")
    return {
        "/": "/", "/standings": "/standings?all=true", "/crosstable": "/crosstable?all=true",
        "/colours": "/colours?all=true", "/tournaments/{name:path}": "/tournaments/quick",
        "/bots/{name:path}": "/bots/minimax:depth=2", "/matchup": "/matchup?a=greedy&b=lefty%40v2",
        "/games": "/games", "/games/{game_id}": f"/games/{game.id}", "/signin": "/signin",
        "/account": "/account", "/account/new-password": "/account/new-password", "/users": "/users",
        "/leagues": "/leagues", "/leagues/{name}": "/leagues/class?all_versions=true", "/my": "/my",
        "/submissions/{submission_id}/code": f"/submissions/{submission.id}/code", "/upload": "/upload",
        "/admin": "/admin", "/admin/users/{name}/delete": f"/admin/users/{AUTHOR}/delete",
        "/admin/leagues/{name}": "/admin/leagues/class", "/docs": "/docs", "/swiss": "/swiss?tournament=swiss-cup",
        "/bracket": "/bracket?tournament=ko-cup", "/leagues/{name}/gate/{version}": "/leagues/gated/gate/gated@v2",
    }


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    require_browser()
    db = whole_site(tmp_path_factory.mktemp("whole"))
    with serving(db) as base:
        yield db, base


def overflow(driver: Any) -> int:
    """How far the page reaches past the window's width (0 or less: it fits)."""
    return driver.execute_script(  # type: ignore[no-any-return]
        "return document.documentElement.scrollWidth - window.innerWidth;")


def signed_in_browser(base: str, width: int, name: str | None, password: str = "") -> Any:
    browser = chromium(width, 844)
    if name is not None:
        browser.get(base + "/signin")
        browser.find_element("id", "name").send_keys(name)
        browser.find_element("id", "password").send_keys(password)
        browser.find_element("css selector", "form.stacked button[type=submit]").click()
        wait_for(lambda: browser.current_url == base + "/my", what=f"{name} signed in")
    return browser


def test_every_page_fits_a_phone_and_a_desktop_signed_in_or_not(whole):
    """No page scrolls sideways at 390 px or 1280 px, for a visitor, an author and an
    admin: every page the site's routes serve (a new route must be added here), the
    page that asks before retiring, and the plots' text at least 11 px on a phone."""
    db, base = whole
    urls = page_urls(db)
    assert set(urls) == site_routes(db) - NOT_PAGES
    for width in WIDTHS:
        for name, password in ((None, ""), (AUTHOR, AUTHOR_PASSWORD), (ADMIN, ADMIN_PASSWORD)):
            browser = signed_in_browser(base, width, name, password)
            try:
                for url in urls.values():
                    browser.get(base + url)
                    assert overflow(browser) <= 0, (width, name, url, overflow(browser))
                    smallest = browser.execute_script(
                        "const shown = Array.from(document.querySelectorAll('svg.plot text'))"
                        "  .filter((t) => t.getBoundingClientRect().width > 0);"
                        "return shown.length ? Math.min(...shown.map((t) =>"
                        "  parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)) : null;")
                    assert smallest is None or smallest >= 11, (width, url, smallest)
                if name == AUTHOR:  # retiring asks first: without the script's dialog, on a page of its own
                    browser.get(base + "/my")
                    browser.execute_script("const form = document.querySelector('form[data-confirm]');"
                                           "form.removeAttribute('data-confirm'); form.submit();")
                    wait_for(lambda b=browser: b.find_elements("css selector", ".confirm-form"), what="the question")
                    assert overflow(browser) <= 0, (width, "the retire question")
                    browser.find_element("link text", "Cancel").click()
                    wait_for(lambda b=browser: b.current_url == base + "/my", what="back at my bots")
            finally:
                browser.quit()


def test_the_replay_rings_the_winning_line_at_the_end(whole):
    db, base = whole
    with Store(db, read_only=True) as store:
        game = next(g for g in reversed(store.games.all()) if g.termination == "win")
        rules = rules_of(game)
        lines = Board.from_moves(parse_moves(game.moves or "", rules), rules).winning_lines()
    assert lines
    browser = chromium()
    try:
        browser.get(f"{base}/games/{game.id}")
        ring = browser.find_element("css selector", "#board .win-line")

        def ringed() -> bool:
            return ring.get_attribute("visibility") is None and ring.is_displayed()

        assert ringed()
        assert len(ring.find_elements("css selector", "circle")) == sum(len(line) for line in lines)
        browser.find_element("css selector", "[data-step=back]").click()
        assert ring.get_attribute("visibility") == "hidden"
        browser.find_element("css selector", "[data-step=forward]").click()  # the last stone drops, then the ring
        wait_for(ringed, 5, "the ring once the last stone landed")
        browser.find_element("css selector", "[data-step=first]").click()
        assert ring.get_attribute("visibility") == "hidden"
    finally:
        browser.quit()
