"""Attacks on the open league's site that once worked, each kept out by a fix: a
signed-out session's cookie used again."""

from __future__ import annotations

from tests import test_web_league as league_site
from tests.test_web_league import Site, form_token

# The league site's fixtures: a league with four accounts and alice's bot, copied for each test.
template = league_site.template
site = league_site.site


def test_a_signed_out_sessions_cookie_signs_no_one_in_again(site: Site) -> None:
    alice = site.signed_in("alice")
    copied = alice.cookies["arena_session"]  # kept by someone who had the browser, or its traffic, meanwhile
    assert alice.post("/signout", data={"csrf": form_token(alice)}).status_code == 303
    replay = site.client()
    replay.cookies.set("arena_session", copied)
    assert replay.get("/my").status_code == 303
    assert replay.post(f"/entries/{site.secrets.entry}/retire", data={"csrf": "x"}).status_code in (401, 403)
    # Signing in again in the same browser starts a new session, which works.
    again = site.signed_in("alice")
    assert again.get("/my").status_code == 200
    assert replay.get("/my").status_code == 303

