"""Private seeds: a secret the bots never see keys every game's seed and opening.

A bot is told its own seed and sees the game. With a small public seed it can search
the tournament seeds and game keys for the one that gives its seed, and so know its
opponent's (tests/bots/seed_guesser.py does it). With private seeds (``arena
tournament run --private-seeds``, ``private_seeds = true``, ``arena match
--private-seeds``, and every league) the seeds are keyed by 32 random bytes stored
with the tournament, which nothing shows.
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from arena.engine.openings import game_seed, new_seed_secret
from arena.league.accounts import add_user
from arena.league.policy import submit_to_league
from arena.league.scheduler import create_league, run_league
from arena.store import Store
from arena.tournament.match import match_specs, play_match
from arena.web.app import create_app
from tests.conftest import TEST_BOTS

GUESSER = TEST_BOTS / "seed_guesser.py"
GUESSER_SPEC = f"{GUESSER}:SeedGuesser"
#: A tournament of the guesser against the seeded random bot: no random opening, so
#: every ply is a bot's choice and the guesser can replay random's draws.
AGAINST_RANDOM = ["tournament", "run", "--bots", f"random,{GUESSER_SPEC}", "--games", "4", "--openings", "0",
                  "--workers", "1", "--seed", "3"]


def guesser_reports(db: Path, tournament: str) -> dict[str, dict[str, Any]]:
    """The guesser's last move info in each game, by game key."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select g.key, m.info from moves m join games g on g.id = m.game_id join tournaments t "
            "on t.id = g.tournament_id where t.name = ? and m.info is not null order by g.key, m.ply",
            [tournament],
        ).fetchall()
    return {key: json.loads(info) for key, info in rows}  # the last of each game's wins


def stored(db: Path, query: str, *args: Any) -> list[Any]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query, args).fetchall()


def secret_of(db: Path, tournament: str) -> bytes | None:
    return stored(db, "select seed_secret from tournaments where name = ?", tournament)[0][0]


def games_of(db: Path) -> list[tuple[Any, ...]]:
    return stored(db, "select key, seed, opening, moves, result from games order by key")


def only_tournament(db: Path) -> str:
    names = stored(db, "select name from tournaments")
    assert len(names) == 1, names
    return str(names[0][0])


def test_private_seeds_defeat_the_seed_search_that_a_small_public_seed_allows(cli, tmp_path):
    """With a small public seed a bot that searches tournament seeds and game keys
    finds the pair that gives its own seed, and predicts every move of the seeded
    random bot before it is played (the residual of a public seed: reproducible by
    anyone, the bots included). The same tournament with private seeds leaves it
    nothing to find: it guesses no better than chance."""
    public = cli(*AGAINST_RANDOM, "--db", tmp_path / "public.db")
    assert public.exit_code == 0, public.output
    found = guesser_reports(tmp_path / "public.db", only_tournament(tmp_path / "public.db"))
    assert len(found) == 4
    assert all(report["found"] == [3, key] for key, report in found.items()), found
    predicted = sum(report["predicted"] for report in found.values())
    assert predicted >= 10 and sum(report["hits"] for report in found.values()) == predicted

    private = cli(*AGAINST_RANDOM, "--private-seeds", "--db", tmp_path / "private.db")
    assert private.exit_code == 0, private.output
    missed = guesser_reports(tmp_path / "private.db", only_tournament(tmp_path / "private.db"))
    assert len(missed) == 4
    assert all(report["found"] is None for report in missed.values()), missed
    predicted = sum(report["predicted"] for report in missed.values())
    hits = sum(report["hits"] for report in missed.values())
    assert predicted >= 10 and hits < predicted / 2, missed  # chance is about one in six


def test_a_match_with_private_seeds_defeats_the_search_that_its_public_seed_allows(cli):
    """A match's public seed (0 by default) can be searched as a tournament's can;
    with a secret (``arena match --private-seeds`` makes one) it cannot."""
    def reports(secret: bytes | None) -> list[dict[str, Any]]:
        specs = match_specs(GUESSER_SPEC, "random", 4, seed=0, opening_plies=0, secret=secret)
        result = play_match(specs, (GUESSER_SPEC, "random"))
        assert not any(record.reason for record in result.records), [r.reason for r in result.records]
        return [[m.info for m in record.moves if m.info][-1] for record in result.records]

    public = reports(None)
    assert all(report["found"] == [0, f"match-{n:06d}"] for n, report in enumerate(public)), public
    assert all(report["hits"] == report["predicted"] for report in public)
    private = reports(new_seed_secret())
    assert all(report["found"] is None for report in private), private
    assert sum(r["hits"] for r in private) < sum(r["predicted"] for r in private) / 2

    shown = cli("match", "random", "greedy", "--games", "2", "--private-seeds")
    assert shown.exit_code == 0, shown.output
    assert "private seeds" in shown.output.splitlines()[0] and "seed 0" not in shown.output


def test_a_resumed_private_seed_tournament_plays_the_games_an_uninterrupted_run_would(cli, tmp_path):
    """Resuming a private-seed tournament reads its secret back: the games still to
    play get the seeds and openings an uninterrupted run gave them. (The games
    removed here are those a run stopped by kill -9 would not have stored.)"""
    run = ["tournament", "run", "--bots", "random,random:stream=1,neighbour", "--games", "4", "--workers", "1",
           "--private-seeds", "--name", "cup"]
    whole, cut = tmp_path / "whole.db", tmp_path / "cut.db"
    assert cli(*run, "--db", whole).exit_code == 0
    shutil.copy(whole, cut)
    with sqlite3.connect(cut) as conn:
        conn.execute("delete from moves where game_id in (select id from games where key like '%-o0001-%')")
        conn.execute("delete from games where key like '%-o0001-%'")
        conn.execute("update tournaments set status = 'interrupted', finished_at = null")
    assert len(games_of(cut)) == 6

    resumed = cli(*run, "--db", cut)
    assert resumed.exit_code == 0, resumed.output
    assert "6 were already stored" in resumed.output
    assert games_of(cut) == games_of(whole) and len(games_of(cut)) == 12
    secret = secret_of(cut, "cup")
    assert secret is not None and len(secret) == 32 and secret == secret_of(whole, "cup")
    for key, seed, *_ in games_of(cut):
        assert seed == game_seed(1, key, secret) != game_seed(1, key)


def test_every_private_seed_tournament_has_its_own_secret(cli, tmp_path):
    """Two tournaments with the same settings and private seeds get different secrets,
    so different seeds and openings: one's games say nothing about the other's, and
    the code and the seed give neither."""
    run = ["tournament", "run", "--bots", "random,greedy", "--games", "4", "--workers", "1", "--private-seeds",
           "--openings", "4"]
    assert cli(*run, "--db", tmp_path / "one.db").exit_code == 0
    assert cli(*run, "--db", tmp_path / "two.db").exit_code == 0
    assert cli(*run[:-3], "--db", tmp_path / "public.db").exit_code == 0
    one, two, public = (games_of(tmp_path / f"{name}.db") for name in ("one", "two", "public"))
    assert [g[0] for g in one] == [g[0] for g in two] == [g[0] for g in public]
    assert {g[1] for g in one}.isdisjoint(g[1] for g in two)
    assert {g[1] for g in one}.isdisjoint(g[1] for g in public)
    assert [g[2] for g in one] != [g[2] for g in two]  # openings of 4 plies: the same by chance 1 in 7**8
    assert secret_of(tmp_path / "one.db", only_tournament(tmp_path / "one.db")) != secret_of(
        tmp_path / "two.db", only_tournament(tmp_path / "two.db"))


def test_a_tournament_keeps_the_kind_of_seeds_it_was_started_with(cli, tmp_path):
    """Private seeds are part of a tournament's identity: one started with them is not
    resumed with a public seed, nor the reverse (its other games would be seeded
    unlike its stored ones): one line, exit 2, nothing changed. Without --name the
    two settings name two tournaments; a tournament file says private_seeds = true."""
    db = tmp_path / "arena.db"
    base = ["tournament", "run", "--bots", "random,greedy", "--games", "2", "--workers", "1", "--db", db]
    assert cli(*base, "--name", "hidden", "--private-seeds").exit_code == 0
    assert cli(*base, "--name", "open").exit_code == 0
    before = games_of(db)
    for name, flags, message in (
        ("hidden", [], "tournament 'hidden' in "),
        ("open", ["--private-seeds"], "tournament 'open' in "),
    ):
        refused = cli(*base, "--name", name, *flags)
        assert refused.exit_code == 2, refused.output
        assert len(refused.output.strip().splitlines()) == 1 and "Traceback" not in refused.output
        assert message in refused.output
    assert "was started with private seeds: resume it with --private-seeds" in cli(*base, "--name", "hidden").output
    assert "was started with a public seed" in cli(*base, "--name", "open", "--private-seeds").output
    assert games_of(db) == before

    plain, private = cli(*base), cli(*base, "--private-seeds")
    assert plain.exit_code == private.exit_code == 0
    assert plain.output.split("'")[1] != private.output.split("'")[1]  # "Tournament 'tournament-...'"

    file = tmp_path / "cup.toml"
    file.write_text('bots = ["random", "greedy"]\ngames = 2\nworkers = 1\nprivate_seeds = true\n')
    assert cli("tournament", "run", file, "--db", db).exit_code == 0
    assert secret_of(db, "cup") is not None
    assert json.loads(stored(db, "select identity from tournaments where name = 'cup'")[0][0])["private_seeds"]
    file.write_text('bots = ["random", "greedy"]\nprivate_seeds = "yes"\n')
    wrong = cli("tournament", "run", file, "--db", db)
    assert wrong.exit_code == 2 and "private_seeds must be bool" in wrong.output


def test_the_secret_is_never_shown(cli, tmp_path):
    """The secret is in the database only: no command's output, JSON or export, and no
    page or API answer of the site, holds it in any spelling."""
    db = tmp_path / "arena.db"
    ran = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--workers", "1", "--private-seeds",
              "--name", "cup", "--db", db)
    assert ran.exit_code == 0
    secret = secret_of(db, "cup")
    assert secret is not None
    game = stored(db, "select id from games order by id")[0][0]
    texts = {"tournament run": ran.output}
    for args in (["tournaments"], ["tournaments", "--format", "json"], ["games", "--json"],
                 ["games", "--tournament", "cup", "--json"], ["show", game], ["export", game],
                 ["export", game, "--format", "json"], ["standings", "--tournament", "cup", "--format", "json"]):
        result = cli(*args, "--db", db)
        assert result.exit_code == 0, (args, result.output)
        texts[" ".join(map(str, args))] = result.output
    client = TestClient(create_app(str(db)))
    for url in ("/", "/tournaments/cup", "/api/tournaments", "/api/tournaments/cup", "/api/games",
                f"/api/games/{game}", f"/games/{game}", "/games?tournament=cup", "/standings?tournament=cup",
                "/api/standings?tournament=cup", "/bots/random", "/api/bots/random"):
        response = client.get(url)
        assert response.status_code == 200, url
        texts[url] = response.text
    spellings = [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode(),
                 base64.urlsafe_b64encode(secret).decode(), repr(secret), str(int.from_bytes(secret, "big")),
                 secret.decode("latin-1"), "seed_secret"]
    assert "private_seeds" in texts["/api/tournaments/cup"]  # what is shown: that the seeds are private
    for where, text in texts.items():
        for spelling in spellings:
            assert spelling not in text, where


LEAGUE = """bots = ["random", "greedy"]
games = 4
[openings]
plies = 0
"""


def test_a_league_plays_with_private_seeds_even_against_a_submitted_seed_guesser(cli, tmp_path):
    """A league always plays with private seeds: its games are seeded with its own
    secret, so a submitted bot that searches the league's seed (1, shown on the site)
    and its game keys (it knows the pairings' names) finds nothing. A league file that
    asks for public seeds is refused; a league made before private seeds gets its
    secret when it next runs."""
    file, db = tmp_path / "league.toml", tmp_path / "league.db"
    file.write_text(LEAGUE)
    source = GUESSER.read_text().replace("LEAGUE_PAIRINGS: list[str] = []",
                                         'LEAGUE_PAIRINGS = ["random~guesser@v1", "greedy~guesser@v1"]')
    assert "random~guesser@v1" in source
    with Store(db) as store:
        league = create_league(store, "class", str(file))
        alice, _, _ = add_user(store, "alice")
        entered = submit_to_league(store, league, alice, "guesser", source.encode(), "seed_guesser.py",
                                   class_name="SeedGuesser")
        assert entered.report.passed, entered.report
        assert run_league(store, league, workers=1, until_complete=True).played == 12
    secret = secret_of(db, "class")
    assert secret is not None and len(secret) == 32
    games = stored(db, "select key, seed from games")
    assert len(games) == 12 and all(seed == game_seed(1, key, secret) != game_seed(1, key) for key, seed in games)
    against_random = {key: report for key, report in guesser_reports(db, "class").items()
                      if key.startswith("random~guesser@v1")}
    assert len(against_random) == 4
    assert all(report["found"] is None for report in against_random.values()), against_random
    predicted = sum(report["predicted"] for report in against_random.values())
    assert predicted >= 10 and sum(report["hits"] for report in against_random.values()) < predicted / 2

    with sqlite3.connect(db) as conn:  # as a league created by the previous release left it
        conn.execute("update tournaments set seed_secret = null")
    with Store(db) as store:
        assert run_league(store, store.leagues.check("class"), workers=1, until_complete=True).played == 0
    assert secret_of(db, "class") not in (None, secret)

    file.write_text("private_seeds = false\n" + LEAGUE)
    refused = cli("league", "create", "public", file, "--db", db)
    assert refused.exit_code == 2 and "a league always plays with private seeds" in refused.output


def test_the_previous_releases_database_gets_the_column_and_keeps_its_public_seed(cli, tmp_path):
    """A database of the previous release migrates (a seed_secret column, empty for
    its tournaments, which keep their public seed) and is read as it was."""
    old = tmp_path / "old.db"
    shutil.copy(Path(__file__).parent / "data" / "releases" / "c85f68a-interrupted.db", old)
    assert cli("tournaments", "--db", old).exit_code == 0
    assert "seed_secret" not in [c[1] for c in stored(old, "pragma table_info(tournaments)")]  # read-only: unchanged
    with Store(old) as store:
        tournament = store.tournaments.check("previous")
        assert store.tournaments.seed_secret(tournament.id) is None
    assert "seed_secret" in [c[1] for c in stored(old, "pragma table_info(tournaments)")]
    assert "private_seeds" not in stored(old, "select identity from tournaments")[0][0]
