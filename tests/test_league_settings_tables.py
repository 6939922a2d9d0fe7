"""The tables of a league file ([league], [gate], [pairing]) are checked alike: each
mistake is one line naming the key and the value, and TOML's booleans are no numbers."""

from __future__ import annotations

import pytest

from arena.league.gate import GateError, gate_of
from arena.league.pairing import PairingError, pairing_of
from arena.league.policy import LeagueError, settings_of


@pytest.mark.parametrize(("raw", "message"), [
    ({"league": 3}, "league.toml: league must be a table$"),
    ({"league": {"uploads": 1}}, "unknown key 'league.uploads'; valid keys: league.public_code, league.closed, "),
    ({"league": {"upload_kb": True}}, "league.upload_kb must be int, got True$"),
    ({"league": {"closed": 1}}, "league.closed must be bool, got 1$"),
])  # fmt: skip
def test_the_league_table_is_checked(raw, message):
    with pytest.raises(LeagueError, match=message):
        settings_of(raw, "league.toml")


def test_each_table_says_what_it_should_look_like_when_it_is_not_one():
    with pytest.raises(GateError, match='gate must be a table, as \\[gate\\] with sprt = "elo0=0 elo1=10"$'):
        gate_of({"gate": "sprt"})
    with pytest.raises(PairingError, match='pairing must be a table, as \\[pairing\\] with mode = "learn"$'):
        pairing_of({"pairing": []}, 2)


def test_a_whole_number_is_a_share_but_a_boolean_is_not():
    assert pairing_of({"pairing": {"mode": "learn", "min_share": 1}}, 2).min_share == 1.0
    with pytest.raises(PairingError, match="pairing.min_share must be float, got True$"):
        pairing_of({"pairing": {"mode": "learn", "min_share": True}}, 2)
    with pytest.raises(GateError, match="gate.max_pairs must be int, got False$"):
        gate_of({"gate": {"sprt": "elo0=0 elo1=10", "max_pairs": False}})


def test_tables_left_out_take_their_defaults():
    assert gate_of({}) is None
    assert settings_of({}).upload_kb == 256
    assert pairing_of({}, 2).mode == "newest"
