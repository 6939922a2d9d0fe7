"""Attacks on the open league's site that once worked, each kept out by a fix: a
signed-out session's cookie used again, and sandbox checks run without limit by
uploading bots that fail them."""

from __future__ import annotations

import pytest

from arena.league import accounts
from tests import test_web_league as league_site
from tests.test_web_league import CRASHER, Site, bot, dump, form_token

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


def test_uploads_that_fail_their_checks_are_limited_per_hour_too(site: Site, monkeypatch) -> None:
    """Each failing upload runs the sandbox's checks, one upload at a time for the whole
    site: unlimited, one author's failures would keep everyone else's uploads waiting."""
    clock = [5000.0]
    monkeypatch.setattr(accounts.time, "monotonic", lambda: clock[0])
    token = {"Authorization": f"Bearer {site.secrets.tokens['bob']}"}
    client = site.client()

    def crash() -> object:
        return client.post("/api/bots", headers=token, data={"name": "crasher"},
                           files={"file": ("crasher.py", CRASHER)})

    for _ in range(5):  # the league takes 5 submissions per author per hour
        assert crash().status_code == 422
    before = dump(site.db)
    refused = crash()
    assert refused.status_code == 429 and "failed their checks" in refused.json()["error"]
    assert "checks" not in refused.json()  # refused before the sandbox ran it
    assert dump(site.db) == before
    # Another author is not held up.
    other = client.post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"},
                        data={"name": "crasher2"}, files={"file": ("crasher.py", CRASHER)})
    assert other.status_code == 422
    clock[0] += 3601  # an hour on, bob may try again
    assert client.post("/api/bots", headers=token, data={"name": "fine"},
                       files={"file": ("fine.py", bot("Fine"))}).status_code == 201


@pytest.mark.parametrize(("flags", "trusted"), [([], False), (["--behind-proxy"], True)])
def test_x_forwarded_for_is_trusted_only_behind_a_declared_proxy(tmp_path, monkeypatch, flags, trusted):
    """Without --behind-proxy, a visitor connecting from this machine cannot name another
    address in X-Forwarded-For to slip past the sign-in throttle."""
    import uvicorn
    from click.testing import CliRunner

    from arena.cli.main import main
    from arena.store import Store

    Store(tmp_path / "site.db").close()
    seen = {}

    def run(server, sockets=None):
        server.config.load()
        seen["proxy_headers"] = server.config.proxy_headers
        for listener in sockets or ():
            listener.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    result = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "site.db"), "--port", "0", *flags])
    assert result.exit_code == 0, result.output
    assert seen == {"proxy_headers": trusted}
