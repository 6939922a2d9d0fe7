"""Uploads in any language: a source file or an archive, built in the sandbox under
its build profile, checked there, stored with its built files and build log, then
playing league games sandboxed like a Python bot."""

from __future__ import annotations

import io
import json
import os
import shlex
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.entry.languages import LANGUAGES, language_of, unavailable
from arena.entry.uploads import UploadError, read_upload
from arena.league.accounts import add_user
from arena.league.policy import Refusal, Refused, submit_to_league
from arena.league.scheduler import create_league, run_league
from arena.records import ProgramFile
from arena.sandbox.system import sandbox_missing
from arena.store import Store

PROGRAMS = Path(__file__).resolve().parent / "data" / "programs"
RUNTIMES = Path(__file__).resolve().parent / "bots" / "programs" / "runtimes"  # the runtimes' trivial bots
LEAGUE = """bots = ["random"]
games = 2
seed = 3
[league]
submissions_per_hour = 50
upload_kb = 64
"""
REQUIRED = os.environ.get("ARENA_EXAMPLES_REQUIRED", "") not in ("", "0")
needs_sandbox = pytest.mark.skipif(sandbox_missing() is not None, reason="needs the sandbox (Linux)")


@pytest.fixture(autouse=True)
def _checks_not_timed_by_the_machines_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a league takes, not how fast a bot answers (a JVM starts slowly on a busy
    machine): each check's move has 30 s here."""
    from arena.entry import checks
    from arena.league import policy

    monkeypatch.setattr(policy, "check_code", lambda code, **kw: checks.check_code(code, **{"seconds": 30.0, **kw}))


def toolchain(key: str) -> None:
    """Skip a test whose language cannot be built here, unless examples are required."""
    why = unavailable(key)
    if why is not None and not REQUIRED:
        pytest.skip(why)


@pytest.fixture
def league_db(tmp_path: Path) -> Path:
    file = tmp_path / "league.toml"
    file.write_text(LEAGUE)
    path = tmp_path / "league.db"
    with Store(path) as store:
        create_league(store, "polyglot", str(file))
        add_user(store, "alice")
        add_user(store, "bob")
    return path


def submit(path: Path, filename: str, data: bytes, name: str = "first", user: str = "alice"):
    with Store(path) as store:
        league = store.leagues.check("polyglot")
        return submit_to_league(store, league, store.accounts.user(user), name, data, filename=filename)


def refusal(path: Path, filename: str, data: bytes) -> Refused:
    with pytest.raises(Refused) as refused:
        submit(path, filename, data)
    with Store(path) as store:
        assert store.submissions.all() == []  # a refusal stores nothing
    return refused.value


def zipped(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def tarred(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return buffer.getvalue()


# --- reading uploads: no sandbox needed ---------------------------------------------------


def test_each_language_is_known_by_its_extension():
    assert {language_of(f"bot{ext}").key for lang in LANGUAGES.values() for ext in lang.extensions} == set(LANGUAGES)
    assert language_of("bot.py") is None and language_of("notes.txt") is None


def test_a_single_file_gets_its_languages_default_build_and_run():
    c = read_upload("bot.c", b"int main(void) { return 0; }")
    assert c.build == ("gcc", "-O2", "-std=gnu11", "-o", "bot", "bot.c", "-lm") and c.run == ("./bot",)
    java = read_upload("Lefty.java", b"class Lefty {}")
    assert java.build is not None and java.build[0] == "javac" and java.build[-1] == "Lefty.java"
    assert java.run[0] == "java" and java.run[-1] == "Lefty" and "-XX:+UseSerialGC" in java.run
    assert read_upload("bot.js", b"").build is None and read_upload("bot.js", b"").run == ("node", "bot.js")
    assert read_upload("bot.exs", b"").run == ("elixir", "bot.exs")
    assert read_upload("bot.go", b"").build == ("go", "build", "-o", "bot", "bot.go")
    assert read_upload("../../etc/evil name.c", b"").files[0].path == "bot.c"  # a name it may not keep


def test_an_archive_with_a_manifest_says_how_it_is_built_and_run():
    manifest = b'name = "lefty"\nlanguage = "c"\nbuild = "gcc -o lefty main.c util.c"\nrun = "./lefty"\n'
    for archive, name in ((zipped, "bot.zip"), (tarred, "bot.tar.gz")):
        upload = read_upload(name, archive({"lefty/bot.toml": manifest, "lefty/main.c": b"", "lefty/util.c": b""}))
        assert upload.build == ("gcc", "-o", "lefty", "main.c", "util.c") and upload.run == ("./lefty",)
        assert [f.path for f in upload.files] == ["bot.toml", "main.c", "util.c"]  # the one folder taken off
        assert upload.language == "c" and upload.name == "lefty"


@pytest.mark.parametrize("archive, name", [(zipped, "bot.zip"), (tarred, "bot.tgz")])
@pytest.mark.parametrize("files, links, message", [
    ({"../bot.c": b""}, None, "outside the bot's folder"),
    ({"/etc/bot.c": b""}, None, "outside the bot's folder"),
    ({"a/../../bot.c": b""}, None, "outside the bot's folder"),
    ({"bot.c": b""}, {"data": "/etc/shadow"}, "a link or a special file"),
    ({"bot.c": b"", "util.c": b""}, None, "not a single source file"),
    ({"notes.txt": b""}, None, "not a single source file"),
    ({"bot.c": b"", "output.txt": b""}, None, "rename it"),
])
def test_archives_that_could_reach_outside_their_folder_are_refused(archive, name, files, links, message):
    with pytest.raises(UploadError, match=message):
        read_upload(name, archive(files, links))


def test_an_archive_is_bounded(monkeypatch):
    from arena.entry import uploads

    monkeypatch.setattr(uploads, "MAX_ENTRIES", 3)
    with pytest.raises(UploadError, match="more than 3 entries"):
        read_upload("bot.zip", zipped({f"f{i}.c": b"" for i in range(5)}))
    monkeypatch.setattr(uploads, "MAX_UNPACKED", 1000)
    with pytest.raises(UploadError, match="unpacks to more than"):
        read_upload("bot.tar.gz", tarred({"bot.c": b"x" * 2000}))
    with pytest.raises(UploadError, match="cannot be read as an archive"):
        read_upload("bot.zip", b"not a zip")


def test_a_language_whose_toolchain_is_missing_is_refused_naming_its_package(league_db, monkeypatch):
    from arena.entry import languages

    monkeypatch.setattr(languages, "TOOL_PATH", "/nonexistent")
    refused = refusal(league_db, "bot.rs", b"fn main() {}")
    assert refused.kind == Refusal.INVALID
    assert "rustc is not installed" in str(refused) and "Debian package rustc" in str(refused)
    assert "default-jdk-headless" in str(refusal(league_db, "Bot.java", b"class Bot {}"))


def test_stored_program_files_round_trip(tmp_path):
    from arena.records import BotCode
    from arena.store.submissions import ProgramVersion

    files = (ProgramFile("bot", b"\x7fELF\x00binary", True), ProgramFile("lib/data.txt", b"data"))
    code = BotCode(label="x", program=("./bot", "--fast"), files=files)
    with Store(tmp_path / "a.db") as store:
        submission, _ = store.submissions.submit("first", "=== bot.c\n", "bot", "bot.c",
                                                 program=ProgramVersion("c", code, "warning: x"))
        again = store.submissions.get("first")
        assert again is not None and again.language == "c" and again.build_log == "warning: x"
        played = store.submissions.code(again)
        assert played.program == ("./bot", "--fast") and played.files == files and played.text is None
        assert store.submissions.code(submission).files == files


def test_a_removed_accounts_program_loses_its_built_files_and_log(league_db):
    from arena.league.removal import remove_user
    from arena.records import BotCode
    from arena.store.submissions import ProgramVersion

    code = BotCode(label="x", program=("./bot",), files=(ProgramFile("bot", b"\x7fELF", True),))
    with Store(league_db) as store:
        alice = store.accounts.user("alice")
        store.submissions.submit("first", "=== bot.c\n", "bot", "bot.c", user_id=alice.id,
                                 program=ProgramVersion("c", code, "log"))
        remove_user(store, "alice")
        (gone,) = store.submissions.all()
        assert gone.source == "" and gone.build_log is None
        assert store.submissions.code(gone).files == ()


# --- builds in the sandbox ------------------------------------------------------------------


@needs_sandbox
@pytest.mark.parametrize("key, filename", [("c", "bot.c"), ("java", "Bot.java"), ("javascript", "bot.js"),
                                          ("csharp", "Bot.cs"), ("elixir", "bot.exs")])
def test_an_upload_is_built_checked_stored_and_plays_league_games_sandboxed(league_db, key, filename):
    toolchain(key)
    source = PROGRAMS / filename if (PROGRAMS / filename).exists() else RUNTIMES / filename
    submitted = submit(league_db, filename, source.read_bytes())
    assert submitted.report.passed
    with Store(league_db) as store:
        stored = store.submissions.get("first")
        assert stored is not None and stored.language == key and stored.is_program
        code = store.submissions.code(stored)
        assert code.program and code.files
        if key == "c":
            assert any(f.path == "bot" and f.executable for f in code.files)  # what the build made
        league = store.leagues.check("polyglot")
        assert run_league(store, league, workers=1, until_complete=True).played == 2
        games = store.games.list_games(league.tournament_id) if hasattr(store.games, "list_games") else None
    assert games is None or len(games) == 2


@needs_sandbox
def test_a_failed_build_is_refused_with_its_log(league_db):
    toolchain("c")
    refused = refusal(league_db, "bot.c", b"int main(void) { return undeclared_name; }\n")
    assert refused.kind == Refusal.INVALID
    assert str(refused).startswith("bot.c was not built: its build failed (exit 1)")
    assert refused.build_log is not None and "undeclared_name" in refused.build_log


def manifest_archive(build: str, extra: dict[str, bytes] | None = None) -> bytes:
    manifest = f'language = "other"\nbuild = {json.dumps(shlex.split(build))}\nrun = "./bot"\n'.encode()
    return zipped({"bot.toml": manifest, **(extra or {})})


@needs_sandbox
@pytest.mark.parametrize("build, reason, logged", [
    # Writing outside its folder: there is nothing else it may write.
    ("sh -c 'echo x > /tmp/escape; echo x > ../escape; echo x > /dev/shm/escape; echo x > /usr/escape; exit 0'",
     "", "cannot create /usr/escape"),  # and /tmp's, which may be no folder here at all
    # The network: no socket may even be made.
    ("python3 -c 'import socket; socket.create_connection((\"10.0.0.1\", 80))'", "its build failed (exit 1)",
     "PermissionError"),
    # Printing without end: its log is bounded, and more is a refusal.
    ("sh -c 'yes hostile | head -c 10000000'", "its build printed more than 1024 KB", "hostile"),
])
def test_a_hostile_build_is_contained_and_refused_with_a_reason(league_db, build, reason, logged):
    refused = refusal(league_db, "bot.zip", manifest_archive(build))
    assert refused.build_log is not None and logged in refused.build_log
    if reason:
        assert reason in str(refused)
    else:  # its own command succeeded, but made no bot: the checks say so
        assert "did not pass the checks" in str(refused) or "not built" in str(refused)
    assert not any(Path(where, "escape").exists() for where in ("/tmp", "/dev/shm", "/usr"))


@needs_sandbox
def test_a_build_that_runs_forever_is_stopped_at_its_wall_clock_limit(monkeypatch):
    from arena.errors import BuildFailed
    from arena.sandbox import build

    with pytest.raises(BuildFailed, match=r"took more than 2 s \(stopped\)"):
        build.build_in_sandbox((), ("sh", "-c", "echo started; while :; do :; done"),
                               build.BuildLimits(wall_seconds=2.0))


@needs_sandbox
def test_a_build_may_chmod_and_lock_its_own_files_which_a_bot_may_not():
    """The build filter is the play filter less what compilers need."""
    from arena.sandbox import build

    script = ("import fcntl, os; open('made', 'w').close(); os.chmod('made', 0o755); "
              "fd = os.open('made', os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('chmod and flock ok')")
    built = build.build_in_sandbox((), ("python3", "-c", script))
    assert "chmod and flock ok" in built.log
    assert [(f.path, f.executable) for f in built.files] == [("made", True)]


# --- what the author sees: the site, the API, arena submit -----------------------------------

#: A C bot whose build prints a warning that is hostile text: the site and the terminal
#: must show it as text.
WARNED = (b'#warning "<script>alert(1)</script> \\x1b[2J"\n' + (PROGRAMS / "bot.c").read_bytes())
BROKEN = b"int main(void) { return <b>undeclared; }\n"


@pytest.fixture
def site(tmp_path: Path, league_db: Path):
    from fastapi.testclient import TestClient

    from arena.league.accounts import set_password
    from arena.web.app import create_app

    with Store(league_db) as store:
        for name in ("alice", "bob"):
            set_password(store, store.accounts.user(name), f"{name}'s own password")
    app = create_app(str(league_db))

    def signed_in(name: str) -> TestClient:
        client = TestClient(app, follow_redirects=False)
        token = csrf(client.get("/signin").text)
        answer = client.post("/signin", data={"name": name, "password": f"{name}'s own password", "csrf": token})
        assert answer.status_code == 303, answer.text
        return client

    return signed_in


def csrf(text: str) -> str:
    import re

    found = re.search(r'name="csrf" value="([^"]+)"', text)
    assert found is not None
    return found.group(1)


def web_upload(client, filename: str, data: bytes, name: str = "first"):
    token = csrf(client.get("/upload").text)
    return client.post("/upload", data={"csrf": token, "league": "polyglot", "name": name},
                       files={"file": (filename, data)})


@needs_sandbox
def test_the_upload_form_takes_a_c_file_and_shows_its_build_log_escaped_to_its_author_only(site, league_db):
    toolchain("c")
    alice, bob = site("alice"), site("bob")
    form = alice.get("/upload").text
    assert 'accept=".py,.c,' in form and ".java" in form and ".zip" in form
    assert web_upload(alice, "bot.c", WARNED).status_code == 303
    outcome = alice.get("/upload").text
    assert "first@v1" in outcome and 'id="build-log"' in outcome
    assert "&lt;script&gt;" in outcome and "<script>alert" not in outcome and "\x1b" not in outcome
    with Store(league_db) as store:
        submission = store.submissions.get("first")
        assert submission is not None and "<script>" in (submission.build_log or "")
        store.leagues.update_settings(store.leagues.check("polyglot").id, {}, True, False)  # public code
    page = f"/submissions/{submission.id}/code"
    own = alice.get(page).text
    assert 'id="build-log"' in own and "&lt;script&gt;" in own and "<script>alert" not in own
    others = bob.get(page)
    assert others.status_code == 200 and "main(void)" in others.text  # the code is public here...
    assert 'id="build-log"' not in others.text and "warning: #warning" not in others.text  # ...its build log not


@needs_sandbox
def test_a_failed_build_through_the_form_and_the_api_answers_with_its_log(site, league_db):
    toolchain("c")
    alice = site("alice")
    refused = web_upload(alice, "bot.c", BROKEN)
    assert refused.status_code == 422
    assert "bot.c was not built: its build failed (exit 1)" in refused.text
    assert 'id="build-log"' in refused.text and "&lt;b&gt;undeclared" in refused.text
    with Store(league_db) as store:
        _, _, token = add_user(store, "carol")
    from fastapi.testclient import TestClient

    from arena.web.app import create_app

    api = TestClient(create_app(str(league_db)))
    answer = api.post("/api/bots", headers={"Authorization": f"Bearer {token}"},
                      data={"name": "broken", "league": "polyglot"}, files={"file": ("bot.c", BROKEN)})
    assert answer.status_code == 422 and "not built" in answer.json()["error"]
    assert "<b>undeclared" in answer.json()["build_log"]  # JSON carries the text as it is
    answer = api.post("/api/bots", headers={"Authorization": f"Bearer {token}"},
                      data={"name": "warned", "league": "polyglot"}, files={"file": ("bot.c", WARNED)})
    assert answer.status_code == 201, answer.text
    assert answer.json()["language"] == "c" and "#warning" in answer.json()["build_log"]


@needs_sandbox
def test_arena_submit_builds_a_program_and_prints_its_build_log_escaped(cli, tmp_path):
    toolchain("c")
    (tmp_path / "bot.c").write_bytes(WARNED)
    (tmp_path / "broken.c").write_bytes(BROKEN)
    done = cli("submit", "bot.c", "--name", "warned", "--db", "a.db")
    assert done.exit_code == 0, done.output
    assert "Submitted warned@v1" in done.output and "build log:" in done.output
    assert "\x1b" not in done.output and "\\x1b[2J" in done.output
    failed = CliRunner().invoke(main, ["submit", str(tmp_path / "broken.c"), "--db", str(tmp_path / "a.db")])
    assert failed.exit_code == 2
    assert "undeclared" in failed.output and "its build failed (exit 1)" in failed.output
    assert "Traceback" not in failed.output
    played = cli("match", "warned", "random", "--games", "2", "--db", "a.db")
    assert played.exit_code == 0, played.output
