"""The pictures of the league site in docs/: the standings (docs/standings.png), a
replay with the solver's values and marks (docs/replay.png), and a game won on the
board with its line ringed (and, scrolled down, what the bot wrote beside its moves),
the games list and an author's "My bots", each on a
phone (390 px) and on a desktop (1280 px): docs/game-390.png, docs/game-1280.png,
docs/game-logs-390.png, docs/game-logs-1280.png,
docs/games-390.png, ..., docs/my-bots-1280.png.

They are taken with the browser code of the real-browser tests (tests/test_browser.py):
a league made by the quick tournament, one of its games analysed, and for the rest
the site of tests/site_process.whole_site (that tournament and an open league with an
author's bot), `arena serve` in its own process and headless Chromium. Needs chromium
and chromium-driver.

Run from the repository: .venv/bin/python docs/screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # the tests' browser code, run from anywhere

from arena.ratings.analysis import analyse_stored  # noqa: E402
from arena.store import Store  # noqa: E402
from tests.site_process import AUTHOR, AUTHOR_PASSWORD, chromium, serving, whole_site  # noqa: E402
from tests.test_browser import run_tournament, signed_in_browser  # noqa: E402

ANALYSIS_BUDGET = 2.0  # seconds per position: the solver proves most positions of a quick game
MOST_ANALYSED = 4  # games tried for one with a mark (each takes up to half a minute)
WIDTHS = (390, 1280)  # a phone's, a desktop's


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="arena-screenshots-") as folder:
        db = Path(folder) / "league.db"
        run_tournament(db)
        with Store(db) as store:
            # A game the bot that reports its search (score, depth, nodes) played first,
            # the longest one where the solver marks a move that let a result slip.
            games = sorted((g for g in store.games.all() if g.first.startswith("minimax")),
                           key=lambda g: -(g.plies or 0))
            for game in games[:MOST_ANALYSED]:
                marked = [p.ply for p in analyse_stored(store, game.id, ANALYSIS_BUDGET) if p.mark]
                if marked:
                    break
            shown = marked[0] + 1 if marked else (game.plies or 0) * 2 // 3
        with serving(db) as base:
            driver = chromium(1280, 900)
            try:
                driver.get(base + "/standings")
                driver.save_screenshot(str(DOCS / "standings.png"))
                driver.get(f"{base}/games/{game.id}?ply={shown - 1}")
                driver.find_element("css selector", "[data-step=forward]").click()  # a stone drops in
                time.sleep(1)  # and lands
                driver.save_screenshot(str(DOCS / "replay.png"))
            finally:
                driver.quit()
        written = [DOCS / "standings.png", DOCS / "replay.png", *site_pictures(Path(folder))]
    print("wrote", ", ".join(str(path) for path in written))


def site_pictures(folder: Path) -> list[Path]:
    """The game page (a game won on the board, its line ringed; then, scrolled down,
    what the author's bot wrote beside its moves), the games list and My bots, at each
    of WIDTHS, as the author of the league's bot sees them."""
    db = whole_site(folder)
    with Store(db, read_only=True) as store:
        # The author's bot's longest game won on the board: its log beside many moves.
        game = max((g for g in store.games.all(tournament="class")
                    if g.termination == "win" and "lefty" in (g.first + g.second)),
                   key=lambda g: g.plies or 0)
    written = []
    with serving(db) as base:
        for width in WIDTHS:
            driver = signed_in_browser(base, width, AUTHOR, AUTHOR_PASSWORD)
            try:
                for name, url, scrolled_to in (("game", f"/games/{game.id}", None),
                                               ("game-logs", f"/games/{game.id}", ".bot-log"),
                                               ("games", "/games?tournament=class", None),
                                               ("my-bots", "/my", None)):
                    driver.get(base + url)
                    if scrolled_to:
                        driver.execute_script(f"document.querySelector({scrolled_to!r}).scrollIntoView()")
                    time.sleep(0.5)  # the scripts have run (local times)
                    path = DOCS / f"{name}-{width}.png"
                    driver.save_screenshot(str(path))
                    written.append(path)
            finally:
                driver.quit()
    return written


if __name__ == "__main__":
    main()
