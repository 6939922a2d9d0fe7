"""The schema of the arena's database, as named migrations (sqlite-utils').

The migration set's name and every migration's name are recorded in each database
(table ``_sqlite_migrations``): they never change, and a new step is a new
migration at the end.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("arena")
MIGRATION_NAMES: list[str] = []  # ours, in order: sqlite-utils keeps its own list private
#: Names a migration was released under before it got its own: the void games' step
#: was "0006_void_games" on main from fce31e5 until the private seeds' step took 0006
#: (a22c7ca); a database of those releases is upgraded under the name it has now.
FORMER_NAMES = {"0006_void_games": "0007_void_games"}


def current_names(applied: list[str]) -> list[str]:
    """The applied migrations' names, each by the name it has now."""
    return [FORMER_NAMES.get(name, name) for name in applied]


def rename_former(db: Database) -> None:
    """Record each migration applied under a former name by its name now (in a
    database that is to be migrated: the step itself is the same)."""
    if "_sqlite_migrations" not in db.table_names():
        return
    marks = ", ".join("?" * len(FORMER_NAMES))
    if not db.execute(f"select 1 from _sqlite_migrations where migration_set = ? and name in ({marks})",
                      [migrations.name, *FORMER_NAMES]).fetchone():
        return  # nothing to rename: no write, no write lock taken
    with db.atomic():
        for old, new in FORMER_NAMES.items():
            db.execute("update _sqlite_migrations set name = ? where migration_set = ? and name = ?",
                       [new, migrations.name, old])


def _migration(name: str) -> Callable[[Callable[[Database], None]], Callable[[Database], None]]:
    """Register a schema step with sqlite-utils, and its name in our own list."""
    MIGRATION_NAMES.append(name)
    return migrations(name=name)


@_migration("0001_initial")
def _initial(db: Database) -> None:
    db.table("tournaments").create(
        {
            "id": int, "name": str, "format": str, "config": str, "identity": str,
            "rules": str, "seed": int, "status": str, "created_at": str, "finished_at": str,
        },
        pk="id",
        not_null={"name", "status", "created_at"},
    )
    db.table("tournaments").create_index(["name"], unique=True)
    db.table("bots").create(
        {"id": int, "spec": str, "name": str, "options": str, "source": str, "content_hash": str},
        pk="id",
        not_null={"spec", "name", "source", "content_hash"},
    )
    db.table("bots").create_index(["spec", "source", "content_hash"], unique=True)
    db.table("games").create(
        {
            "id": int, "tournament_id": int, "key": str, "pairing": str,
            "first_bot_id": int, "second_bot_id": int, "opening": str, "opening_plies": int,
            "result": str, "winner": int, "termination": str, "reason": str,
            "plies": int, "moves": str, "duration": float, "seed": int, "finished_at": str,
        },
        pk="id",
        foreign_keys=[
            ("tournament_id", "tournaments", "id"),
            ("first_bot_id", "bots", "id"),
            ("second_bot_id", "bots", "id"),
        ],
        not_null={"tournament_id", "key", "first_bot_id", "second_bot_id", "result", "termination"},
    )
    db.table("games").create_index(["tournament_id", "key"], unique=True)
    db.table("games").create_index(["first_bot_id"])
    db.table("games").create_index(["second_bot_id"])
    # WITHOUT ROWID: the (game, ply) key is the table's own order, one B-tree
    # instead of a table and an index; the table that grows fastest by far.
    db.execute(
        """create table moves (
            game_id integer not null references games(id),
            ply integer not null,
            move text not null,
            ms float,
            info text,
            primary key (game_id, ply)
        ) without rowid"""
    )


@_migration("0002_submissions")
def _submissions(db: Database) -> None:
    db.table("submissions").create(
        {
            "id": int, "name": str, "version": int, "kind": str, "source": str,
            "content_hash": str, "file": str, "submitted_at": str,
        },
        pk="id",
        not_null={"name", "version", "kind", "source", "content_hash", "submitted_at"},
    )
    db.table("submissions").create_index(["name", "version"], unique=True)


@_migration("0003_analyses")
def _analyses(db: Database) -> None:
    db.table("analyses").create(
        {"game_id": int, "ply": int, "value": int, "budget": float, "analysed_at": str},
        pk=("game_id", "ply"),
        foreign_keys=[("game_id", "games", "id")],
        not_null={"budget", "analysed_at"},
    )


@_migration("0004_submission_class")
def _submission_class(db: Database) -> None:
    db.table("submissions").add_column("class_name", str)  # which Bot subclass, for files with several


@_migration("0005_league")
def _league(db: Database) -> None:
    db.table("users").create(
        {"id": int, "name": str, "password_hash": str, "token_hash": str, "admin": int, "disabled": int,
         "created_at": str},
        pk="id", not_null={"name", "password_hash", "admin", "disabled", "created_at"}, defaults={"admin": 0,
                                                                                                  "disabled": 0},
    )
    db.table("users").create_index(["name"], unique=True)
    db.table("users").create_index(["token_hash"])
    db.table("leagues").create(
        {"id": int, "name": str, "config": str, "tournament_id": int, "public_code": int, "closed": int,
         "created_at": str},
        pk="id", not_null={"name", "config", "tournament_id", "public_code", "closed", "created_at"},
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db.table("leagues").create_index(["name"], unique=True)
    db.table("league_members").create(
        {"league_id": int, "user_id": int}, pk=("league_id", "user_id"),
        foreign_keys=[("league_id", "leagues", "id"), ("user_id", "users", "id")],
    )
    # An entrant of a league: an installed bot (spec) or a submitted version. status:
    # "active" plays, "retired" no longer plays (its games stay), "failed" never passed the checks.
    db.table("entries").create(
        {"id": int, "league_id": int, "spec": str, "submission_id": int, "user_id": int, "status": str,
         "checks": str, "joined_at": str, "retired_at": str},
        pk="id", not_null={"league_id", "spec", "status", "joined_at"},
        foreign_keys=[("league_id", "leagues", "id"), ("submission_id", "submissions", "id"),
                      ("user_id", "users", "id")],
    )
    db.table("entries").create_index(["league_id", "status"])
    db.table("submissions").add_column("user_id", int)
    db.table("submissions").add_column("about", str)  # the author's own description
    db.table("audit").create(
        {"id": int, "at": str, "user_id": int, "action": str, "subject": str, "detail": str},
        pk="id", not_null={"at", "action", "subject"},
    )
    db.table("settings").create({"key": str, "value": str}, pk="key")


@_migration("0006_tournament_seed_secret")
def _tournament_seed_secret(db: Database) -> None:
    # The secret private seeds are keyed by (NULL: a public seed). A column of its own,
    # not a key of the stored configuration: the configuration is shown (the site, the
    # JSON of arena tournaments), this column only read by the runners.
    db.table("tournaments").add_column("seed_secret", bytes)


@_migration("0007_void_games")
def _void_games(db: Database) -> None:
    # Games during which the arena failed (its spawner, control groups, a fork): kept
    # apart from the games table, so that no table of results can count them and a
    # key stays unique there (resume plays a void game's key again), with why.
    db.table("void_games").create(
        {"id": int, "tournament_id": int, "key": str, "first_bot_id": int, "second_bot_id": int,
         "reason": str, "plies": int, "moves": str, "finished_at": str},
        pk="id", not_null={"tournament_id", "key", "first_bot_id", "second_bot_id", "reason", "finished_at"},
        foreign_keys=[("tournament_id", "tournaments", "id"), ("first_bot_id", "bots", "id"),
                      ("second_bot_id", "bots", "id")],
    )
    db.table("void_games").create_index(["tournament_id", "key"])


@_migration("0008_account_security")
def _account_security(db: Database) -> None:
    # An issued password (``arena users add`` or ``password``) is one-time: its account
    # must choose its own before it does anything else.
    db.table("users").add_column("must_change_password", int, not_null_default=0)
    # Failed sign-ins per name (existing or not, so that a delay tells no one which
    # names exist): how many in a row, and until when (seconds since the epoch) a
    # further try from an address the account has not signed in from waits.
    db.table("sign_in_failures").create(
        {"name": str, "failures": int, "delayed_until": float, "failed_at": float},
        pk="name", not_null={"failures", "delayed_until", "failed_at"},
    )
    # The addresses each account has signed in from, as keyed hashes (never in clear):
    # a sign-in from one of them is never delayed.
    db.table("known_addresses").create(
        {"user_id": int, "address_hash": str, "first_at": str},
        pk=("user_id", "address_hash"), not_null={"first_at"}, foreign_keys=[("user_id", "users", "id")],
    )


@_migration("0009_bot_logs")
def _bot_logs(db: Database) -> None:
    # What each bot wrote during a game (stdout and stderr, the first 64 KB), with
    # the offset in it where each ply's text begins, and where it crashed: a row
    # only for a side that wrote something or crashed. Written with its game; a
    # league deletes them after its keep time (the games stay).
    db.execute(
        """create table bot_logs (
            game_id integer not null references games(id),
            side integer not null,
            text text not null,
            plies text not null,
            cut integer not null default 0,
            crash text,
            traceback text,
            primary key (game_id, side)
        ) without rowid"""
    )


@_migration("0010_program_bots")
def _program_bots(db: Database) -> None:
    # A submitted program bot (any language): its language, the command it runs (a
    # JSON list of words), its files after its build (a zip archive: paths, bytes,
    # which are executable) and what its build printed. NULL for a Python bot.
    db.table("submissions").add_column("language", str)
    db.table("submissions").add_column("program", str)
    db.table("submissions").add_column("program_files", bytes)
    db.table("submissions").add_column("build_log", str)


#: Each (tournament, first player, second player)'s counts, from the games table:
#: what migration 0011 starts the table from, and what a test recounts to compare.
#: The wins, draws and losses are the first player's in finished games; ``games``
#: counts every stored one.
PAIR_COUNTS_OF_GAMES = """
select tournament_id, first_bot_id, second_bot_id, count(*),
  total(termination != 'unfinished' and winner = 0), total(termination != 'unfinished' and winner is null),
  total(termination != 'unfinished' and winner = 1),
  total(termination = 'forfeit' and winner = 1), total(termination = 'forfeit' and winner = 0),
  min(case when termination != 'unfinished' then id end)
from games group by tournament_id, first_bot_id, second_bot_id
"""


def _pair_change(row: str, sign: str) -> str:
    """The statements of a trigger that add (``sign`` '+') or take away ('-') the game
    ``row`` ('new' or 'old') to or from its pair's counts and its tournament's changes."""
    finished = f"{row}.termination != 'unfinished'"
    where = (f"where tournament_id = {row}.tournament_id and first_bot_id = {row}.first_bot_id "
             f"and second_bot_id = {row}.second_bot_id")
    if sign == "+":
        first_game = (f"case when {finished} and (first_game_id is null or {row}.id < first_game_id) "
                      f"then {row}.id else first_game_id end")
    else:  # the pair's first counted game again, where it is the one that leaves (rare: a casual game saved again)
        first_game = (f"case when first_game_id = {row}.id then (select min(id) from games g where "
                      f"g.tournament_id = {row}.tournament_id and g.first_bot_id = {row}.first_bot_id and "
                      f"g.second_bot_id = {row}.second_bot_id and g.termination != 'unfinished' "
                      f"and g.id != {row}.id) else first_game_id end")
    return f"""
        insert or ignore into pair_counts (tournament_id, first_bot_id, second_bot_id)
            values ({row}.tournament_id, {row}.first_bot_id, {row}.second_bot_id);
        update pair_counts set games = games {sign} 1,
            wins = wins {sign} ({finished} and {row}.winner is 0),
            draws = draws {sign} ({finished} and {row}.winner is null),
            losses = losses {sign} ({finished} and {row}.winner is 1),
            first_forfeits = first_forfeits {sign} ({row}.termination = 'forfeit' and {row}.winner is 1),
            second_forfeits = second_forfeits {sign} ({row}.termination = 'forfeit' and {row}.winner is 0),
            first_game_id = {first_game}, changes = changes + 1 {where};
        update tournaments set game_changes = game_changes + 1 where id = {row}.tournament_id;"""


@_migration("0011_pair_counts")
def _pair_counts(db: Database) -> None:
    # Results per (tournament, first player, second player), kept by triggers in the
    # transaction that stores, removes or changes a game: whoever writes a game (a
    # tournament's batch, a casual game saved again, an import, a removal) keeps them
    # true, a batch rolled back takes its counts with it, and a table is counted from
    # a few thousand rows, not a million games. ``changes`` (per pair) and
    # tournaments.game_changes (per tournament) only grow: they date the site's
    # cached tables, one tournament's apart from another's.
    db.execute(
        """create table pair_counts (
            tournament_id integer not null references tournaments(id),
            first_bot_id integer not null references bots(id),
            second_bot_id integer not null references bots(id),
            games integer not null default 0,
            wins integer not null default 0,
            draws integer not null default 0,
            losses integer not null default 0,
            first_forfeits integer not null default 0,
            second_forfeits integer not null default 0,
            first_game_id integer,
            changes integer not null default 0,
            primary key (tournament_id, first_bot_id, second_bot_id)
        ) without rowid"""
    )
    db.execute("create index pair_counts_pair on pair_counts (first_bot_id, second_bot_id)")
    db.table("tournaments").add_column("game_changes", int, not_null_default=0)
    db.execute(f"insert into pair_counts (tournament_id, first_bot_id, second_bot_id, games, wins, draws, losses, "
               f"first_forfeits, second_forfeits, first_game_id) {PAIR_COUNTS_OF_GAMES}")
    db.execute("update pair_counts set changes = games")
    db.execute("update tournaments set game_changes = "
               "(select coalesce(sum(games), 0) from pair_counts p where p.tournament_id = tournaments.id)")
    db.execute(f"create trigger pair_counts_insert after insert on games begin {_pair_change('new', '+')} end")
    db.execute(f"create trigger pair_counts_delete after delete on games begin {_pair_change('old', '-')} end")
    db.execute("create trigger pair_counts_update after update of tournament_id, first_bot_id, second_bot_id, "
               f"winner, termination on games begin {_pair_change('old', '-')} {_pair_change('new', '+')} end")


@_migration("0012_league_gate")
def _league_gate(db: Database) -> None:
    # A league's sequential test of a new version against its author's previous one
    # (the league file's [gate]): the version waits as an entrant of status "testing"
    # until the test lets it in ("active") or keeps it out ("rejected"). The games
    # are stored under a tournament row of their own (format "gate"), so they never
    # count in the league's standings; the row here says what the test was and how
    # it ended, and the games say how far it got (a killed league resumes from them).
    db.table("gate_tests").create(
        {"entry_id": int, "league_id": int, "previous_entry_id": int, "tournament_id": int, "sprt": str,
         "max_pairs": int, "status": str, "reason": str, "started_at": str, "decided_at": str},
        pk="entry_id", not_null={"league_id", "previous_entry_id", "tournament_id", "sprt", "max_pairs", "status",
                                 "started_at"},
        foreign_keys=[("entry_id", "entries", "id"), ("league_id", "leagues", "id"),
                      ("previous_entry_id", "entries", "id"), ("tournament_id", "tournaments", "id")],
    )
    db.table("gate_tests").create_index(["league_id", "status"])
