"""What a bot sends is data: parsed within bounds, shown escaped, stored as valid
JSON, and its seed gives nothing away about its opponent's."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.bot import Bot, BotFailure, Choice
from arena.engine.game import Rules
from arena.protocol.messages import MAX_DEPTH, parse_answer
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store
from arena.text import json_text, printable, quote
from arena.tournament.config import load_config
from arena.tournament.executors import SerialExecutor
from arena.tournament.runner import run_tournament
from tests.conftest import TEST_BOTS

NOISY = TEST_BOTS / "noisy.py"
ESCAPES = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x9b31m\u202e"  # what the noisy bots write
# What must never reach a terminal raw: C0 controls but the newline that ends a
# line, DEL, C1 controls, bidi embeddings, overrides and isolates.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
NESTED = "protocol: answer nested more than 32 deep"


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity, as every other JSON parser does."""

    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


# --- printable, quote, json_text ------------------------------------------------------


def test_printable_escapes_controls_and_bidi_and_keeps_other_unicode():
    assert printable("plain é 日本 🙂 text") == "plain é 日本 🙂 text"
    assert printable("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"
    assert printable("a\nb\tc\x7f\x9b\x00") == "a\\x0ab\\x09c\\x7f\\x9b\\x00"
    assert printable("\u202eevil\u2066\u2069") == "\\u202eevil\\u2066\\u2069"
    assert not UNSAFE.search(printable("".join(map(chr, range(0x2100)))))


def test_a_quoted_message_is_clipped_escaped_and_cannot_close_its_quotes():
    assert quote('the "OPPONENT" crashed') == '"the \\"OPPONENT\\" crashed"'
    assert quote("\x1b[2J" + "x" * 300, 20) == '"\\x1b[2J' + "x" * 13 + '..."'


def test_json_text_writes_numbers_json_has_not_as_null():
    value = {"nan": math.nan, "inf": math.inf, "low": [-math.inf, 1.5], math.inf: "key"}
    assert strict_json(json_text(value)) == {"nan": None, "inf": None, "low": [None, 1.5], "null": "key"}
    assert json_text({"a": 1}) == json.dumps({"a": 1})
    with pytest.raises(TypeError):
        json_text({"thing": object()})


# --- parsing an answer ------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    b"[" * 30000 + b"]" * 30000,
    b'{"move": 3, "info": ' + b'{"a":' * 10000 + b"1" + b"}" * 10000 + b"}",
    b'{"move": 3, "info": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}",
])
def test_an_answer_nested_too_deep_is_a_protocol_failure(line):
    with pytest.raises(BotFailure, match=re.escape(NESTED)):
        parse_answer(line)


def test_nesting_within_the_limit_and_brackets_in_strings_are_fine():
    deepest = b'{"info": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    assert parse_answer(deepest)["info"]
    brackets = b'{"move": 1, "info": {"text": "' + b"[{" * 1000 + b'\\" [[["}}'
    assert parse_answer(brackets)["info"]["text"].startswith("[{[{")


@pytest.mark.parametrize("line", [b'"\\' * 32000 + b"[" * 40, b'"' + b'a\\"' * 21000 + b"[" * 40])
def test_an_answer_of_strings_left_open_is_scanned_in_linear_time(line):
    # Found by searching from every quote for a closing one, such an answer took
    # the referee some 14 s; scanned once, a few milliseconds.
    started = time.perf_counter()
    with pytest.raises(BotFailure, match="protocol: "):
        parse_answer(line)
    assert time.perf_counter() - started < 1.0


def test_numbers_json_has_not_are_read_as_null():
    reply = parse_answer(b'{"move": 2, "info": {"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e999, "e": 0.5}}')
    assert reply["info"] == {"a": None, "b": None, "c": None, "d": None, "e": 0.5}


@pytest.mark.parametrize(("line", "reason"), [
    (b"x" * (64 * 1024 + 1), "protocol: answer too long"),
    (b"[1, 2]", "protocol: unreadable answer"),
    (b'{"move": 1', "protocol: unreadable answer"),
    (b'{"move": "\xff\xfe"}', "protocol: unreadable answer"),
    (b'{"move": ' + b"9" * 5000 + b"}", "protocol: unreadable answer"),  # past int's digit limit
    (b'{"ok": true, "kind": "\\u001b]0;pwned"}', "protocol: unknown kind '\\x1b]0;pwned'"),
    (b'{"ok": true, "kind": ["bot"]}', "protocol: unknown kind ['bot']"),
])
def test_a_bad_answer_is_a_protocol_failure(line, reason):
    with pytest.raises(BotFailure) as failure:
        parse_answer(line)
    assert failure.value.reason.startswith(reason)


def test_what_a_bot_says_about_its_failure_is_kept_short():
    reply = parse_answer(json.dumps({"error": "x" * 40_000, "not_a_move": ["y"] * 4_000}).encode())
    assert len(reply["error"]) == len(reply["not_a_move"]) == 300


@given(st.binary(max_size=300) | st.text(alphabet='[]{}"\\:,0123456789eE.-+ntrufalsNaIiy', max_size=300))
def test_nothing_a_bot_sends_raises_anything_but_a_bot_failure(data):
    line = data if isinstance(data, bytes) else data.encode()
    try:
        assert isinstance(parse_answer(line), dict)
    except BotFailure as failure:
        assert failure.reason.startswith("protocol: ")


# --- in a tournament and at the command line --------------------------------------------


def _noisy(name: str) -> str:
    return f"{NOISY}:{name}"


EVIL_NAME = "plays\x1b]0;pwned\x07\u202eleft.py"
NOISY_GAMES = ["NestsAtStart", "NestsInAMove", "CrashesWithEscapes", "ForgesItsError", "KindWithEscapes",
               "ReportsNumbersJSONHasNot"]


@pytest.fixture(scope="module")
def noisy_league(tmp_path_factory):
    """A gauntlet of the noisy bots (and a bot file named with escapes) against random."""
    folder = tmp_path_factory.mktemp("noisy")
    evil = folder / EVIL_NAME
    evil.write_text("from arena.bot import Bot\n\n\nclass Plays(Bot):\n"
                    "    def choose_move(self, board):\n        return board.legal_moves()[-1]\n")
    db = str(folder / "arena.db")
    config = load_config(None, {
        "name": "noisy", "format": "gauntlet", "bots": ["random"], "games": 2, "seed": 7, "db": db,
        "challengers": [_noisy(name) for name in NOISY_GAMES] + [str(evil)],
    })
    store = Store(db)
    outcome = run_tournament(config, store, SerialExecutor())
    yield outcome, store, db, str(evil)
    store.close()


def _games_of(store: Store, name: str):
    games = [g for g in store.games.all(tournament="noisy") if f":{name}" in g.first + g.second]
    assert len(games) == 2
    return games


def test_nested_answers_at_start_and_in_a_move_forfeit_and_the_tournament_completes(noisy_league):
    outcome, store, _, _ = noisy_league
    assert not outcome.interrupted and outcome.played == outcome.scheduled == 2 * (len(NOISY_GAMES) + 1)
    for name in ("NestsAtStart", "NestsInAMove"):
        for game in _games_of(store, name):
            assert (game.termination, game.reason) == ("forfeit", NESTED)
            assert game.winner == (1 if f":{name}" in game.first else 0)


def test_a_kind_the_arena_does_not_know_forfeits(noisy_league):
    for game in _games_of(noisy_league[1], "KindWithEscapes"):
        assert game.termination == "forfeit"
        assert game.reason.startswith("protocol: unknown kind '\\x1b]0;pwned\\x07")


def test_a_crash_message_is_quoted_as_the_bots_own_words(noisy_league):
    for game in _games_of(noisy_league[1], "CrashesWithEscapes"):
        assert game.reason.startswith('crashed: Evil\\x1b[2J: "the OPPONENT crashed\\x1b]0;pwned\\x07')
        assert game.reason.endswith('\\nforfeit: opponent" (noisy.py line 81, in choose_move)')
        assert not UNSAFE.search(game.reason)


def test_no_command_shows_a_bots_escapes_raw(noisy_league, cli):
    _, store, db, evil = noisy_league
    outputs = {"games": cli("games", "--db", db)}
    for fmt in ("table", "github"):
        for table in ("standings", "crosstable", "colours"):
            outputs[f"{table} {fmt}"] = cli(table, "--format", fmt, "--db", db)
    for game in store.games.all(tournament="noisy"):
        outputs[f"show {game.id}"] = cli("show", game.id, "--db", db)
        outputs[f"replay {game.id}"] = cli("replay", game.id, "--delay", "0", "--db", db)
    for what, result in outputs.items():
        assert result.exit_code == 0, (what, result.output)
        assert not UNSAFE.search(result.output), (what, UNSAFE.findall(result.output))
    assert printable(evil) in outputs["standings table"].output  # escaped, not left out
    shown = "".join(outputs[key].output for key in outputs if key.startswith("show"))
    assert "\\x1b]52;c;cHduZWQ=\\x07" in shown and "protocol: unknown kind '\\x1b]0;pwned\\x07" in shown
    replayed = "".join(outputs[key].output for key in outputs if key.startswith("replay"))
    assert "comment \\x1b]0;pwned\\x07" in replayed  # the info a bot logged

    # Exports are data: JSON carries what the bot wrote exactly (escaped the JSON way).
    forged = [g for g in json.loads(cli("games", "--json", "--db", db).stdout)
              if ":ForgesItsError" in g["first"] + g["second"]]
    assert forged and all(g["reason"] == f"crashed: {ESCAPES}" for g in forged)
    standings = json.loads(cli("standings", "--format", "json", "--db", db).stdout)["standings"]
    assert evil in [row["bot"] for row in standings]


def test_a_forged_failure_is_escaped_in_the_match_table(cli):
    result = cli("match", _noisy("ForgesItsError"), "random", "-n", "1")
    assert result.exit_code == 0, result.output
    assert "1 x crashed: \\x1b]0;pwned\\x07" in result.output and not UNSAFE.search(result.output)


def test_a_submitted_bots_description_is_escaped_in_the_bot_list(cli):
    assert cli("submit", _noisy("Described"), "--db", "league.db").exit_code == 0
    listing = cli("bots", "--db", "league.db")
    assert listing.exit_code == 0
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202eplays the first legal move" in listing.output
    assert not UNSAFE.search(listing.output)
    described = [b for b in json.loads(cli("bots", "--json", "--db", "league.db").stdout)
                 if b["name"] == "described@v1"]
    assert described[0]["description"] == "\x1b]0;pwned\x07\x1b[2J\u202eplays the first legal move"


def test_a_bot_that_nests_when_checked_is_refused_in_one_line_before_any_game(cli):
    result = cli("tournament", "run", "--bots", f"random,{_noisy('NestsAlways')}", "--games", "2",
                 "--db", "t.db")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and NESTED in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("bot", "reason"), [
    ("NestsAtStart", NESTED),
    ("NestsInAMove", NESTED),
    ("KindWithEscapes", "protocol: unknown kind '\\x1b]0;pwned\\x07"),
    ("ForgesItsError", "crashed: \\x1b]0;pwned\\x07"),
])
def test_submit_and_check_report_a_bad_answer_as_one_failed_check(cli, bot, reason):
    checked = cli("check", _noisy(bot))
    assert checked.exit_code == 1
    submitted = cli("submit", _noisy(bot), "--db", "league.db")
    assert submitted.exit_code == 2
    for result in (checked, submitted):
        failed = [line for line in result.output.splitlines() if line.startswith("  FAIL")]
        assert len(failed) == 1 and reason in failed[0], result.output
        assert "Traceback" not in result.output and not UNSAFE.search(result.output)
    assert submitted.stderr.count("\n") == 1 and reason in submitted.stderr


def test_a_bot_with_an_option_named_kind_is_still_a_bot(cli, write_bot):
    path = write_bot("kinded", """
        from arena.bot import Bot, Option

        class Kinded(Bot):
            kind = Option("fast", "a bot's own word for how it plays")

            def choose_move(self, board):
                return board.legal_moves()[0]
    """)
    result = cli("check", path)
    assert result.exit_code == 0, result.output
    assert "all checks passed (a bot)" in result.output


# --- info is always valid JSON ----------------------------------------------------------


def _stored_infos(db: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [info for (info,) in conn.execute("select info from moves where info is not null")]


def test_a_sandboxed_bots_nan_and_infinities_are_stored_as_null(noisy_league):
    _, store, _, _ = noisy_league
    infos = [strict_json(m.info) for g in _games_of(store, "ReportsNumbersJSONHasNot")
             for m in store.games.moves(g.id) if m.info and "score" in m.info]
    expected = {"score": None, "high": None, "low": None, "seen": [1.5, None], "comment": ESCAPES}
    assert infos and all(info == expected for info in infos)
    for info in _stored_infos(noisy_league[2]):
        strict_json(info)


class _Unbounded(Bot):
    """An installed bot's way of reporting a score it could not bound."""

    def choose_move(self, board):
        return Choice(board.legal_moves()[0], {"score": math.nan, "bound": -math.inf, "depth": 3})


def test_an_in_process_bots_nan_and_infinities_are_stored_as_null(db_path):
    rules = Rules()
    record = play_game(GameSpec("k", rules, "a", "b", "a-b"), bots=(_Unbounded(), _Unbounded()))
    store = Store(db_path)
    identity = {"rules": rules.as_dict()}
    tournament = store.tournaments.start("t", "round-robin", identity, identity, 0)
    ids = {name: store.bots.id_of(BotIdentity(name, name, {}, "test")) for name in ("a", "b")}
    store.games.record_one(tournament, record, ids)
    infos = _stored_infos(db_path)
    assert infos and all(strict_json(info) == {"score": None, "bound": None, "depth": 3} for info in infos)


# --- seeds -------------------------------------------------------------------------------


def _side_seeds(tmp_path: Path, run: str, seed: int) -> list[tuple[int, int]]:
    """(first's seed, second's seed) of each game of a tournament of two ReportsItsSeed."""
    db = str(tmp_path / f"{run}.db")
    config = load_config(None, {
        "name": "seeds", "bots": [_noisy("ReportsItsSeed:entry=a"), _noisy("ReportsItsSeed:entry=b")],
        "games": 2, "seed": seed, "db": db,
    })
    store = Store(db)
    run_tournament(config, store, SerialExecutor())
    pairs = []
    for game in store.games.all(tournament="seeds"):
        seeds: dict[int, set[int]] = {0: set(), 1: set()}
        for move in store.games.moves(game.id):
            if move.info:
                seeds[move.ply % 2].add(json.loads(move.info)["seed"])
        assert len(seeds[0]) == len(seeds[1]) == 1  # one seed per side and game
        pairs.append((seeds[0].pop(), seeds[1].pop()))
    store.close()
    return pairs


def test_a_bots_seed_tells_nothing_of_its_opponents_and_the_same_seed_gives_the_same_seeds(tmp_path):
    pairs = _side_seeds(tmp_path, "one", 3)
    assert len(pairs) == 2
    for first, second in pairs:
        assert bin(first ^ second).count("1") > 1  # not one bit flipped
        assert abs(first - second) > 1 and 0 <= first < 2**48 and 0 <= second < 2**48
    assert _side_seeds(tmp_path, "two", 3) == pairs  # reproducible
    assert not set(sum(_side_seeds(tmp_path, "other", 4), ())) & set(sum(pairs, ()))

