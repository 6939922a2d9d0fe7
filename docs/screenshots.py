"""The pictures of the league site in docs/: the standings (docs/standings.png) and a
replay with the solver's values and marks (docs/replay.png).

They are taken with the browser code of the real-browser tests (tests/test_browser.py):
a league made by the quick tournament, one of its games analysed, `arena serve` in
its own process and headless Chromium. Needs chromium and chromium-driver.

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
from tests.site_process import chromium, serving  # noqa: E402
from tests.test_browser import run_tournament  # noqa: E402

ANALYSIS_BUDGET = 2.0  # seconds per position: the solver proves most positions of a quick game
MOST_ANALYSED = 4  # games tried for one with a mark (each takes up to half a minute)


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
    print(f"wrote {DOCS / 'standings.png'} and {DOCS / 'replay.png'}")


if __name__ == "__main__":
    main()
