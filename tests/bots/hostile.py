"""Hostile bots: each tries one way to break the arena. Every one must lose its own
games (or play them harmlessly) while the tournament completes around it."""

import ctypes
import os
import signal
import sqlite3
import sys
import time

from arena.bot import Bot, Choice, Option


class Raises(Bot):
    def choose_move(self, board):
        raise RuntimeError("hostile raise")


class ReturnsNone(Bot):
    def choose_move(self, board):
        return None


class ReturnsString(Bot):
    def choose_move(self, board):
        return "4"


class ReturnsFloat(Bot):
    def choose_move(self, board):
        return 2.5


class IllegalColumn(Bot):
    def choose_move(self, board):
        return 99


class FullColumn(Bot):
    def choose_move(self, board):
        return 0  # the tournament's opening fills column 1


class SleepsForever(Bot):
    def choose_move(self, board):
        time.sleep(10**6)


class BusyLoops(Bot):
    def choose_move(self, board):
        while True:
            pass


class AllocatesWithoutBound(Bot):
    def choose_move(self, board):
        hoard = []
        while True:
            hoard.append(bytearray(10**7))


class ExitsAbruptly(Bot):
    def choose_move(self, board):
        os._exit(3)


class ForksChildren(Bot):
    """Starts children that would outlive it (one even leaves the process group),
    then plays legally. Its process ids mean nothing outside its PID namespace, so
    the children take a name of their own (the process "comm") for tests to look for."""

    def choose_move(self, board):
        tag = "fc" + os.urandom(6).hex()
        for escape in (False, True):
            pid = os.fork()
            if pid == 0:
                if escape:
                    os.setsid()
                ctypes.CDLL(None).prctl(15, tag.encode(), 0, 0, 0)  # PR_SET_NAME
                time.sleep(10**6)
                os._exit(0)
        return Choice(board.legal_moves()[0], {"children": tag})


class PrintsTooMuch(Bot):
    def choose_move(self, board):
        chunk = "x" * 1_000_000
        for _ in range(100):
            print(chunk)
        return board.legal_moves()[0]


class ClosesStdio(Bot):
    """Closes stdin and stdout and writes junk to fd 1: the protocol must not care."""

    def choose_move(self, board):
        try:
            os.write(1, b"{not json}\n")
        except OSError:
            pass
        sys.stdin.close()
        sys.stdout.close()
        return board.legal_moves()[0]


class MutatesBoard(Bot):
    def choose_move(self, board):
        move = board.legal_moves()[0]
        while not board.is_over():
            board.play(board.legal_moves()[-1])
        return move


class OpensDatabase(Bot):
    """Tries to read and wreck the arena database, then plays legally and reports."""

    options = {"path": Option("", "the database to attack")}

    def choose_move(self, board):
        outcomes = {}
        for name, attack in (("read", self.read), ("write", self.write), ("delete", self.delete)):
            try:
                attack()
                outcomes[name] = "done"
            except Exception as exc:
                outcomes[name] = type(exc).__name__
        return Choice(board.legal_moves()[0], outcomes)

    def read(self):
        with open(self.path, "rb") as handle:
            handle.read(100)

    def write(self):
        conn = sqlite3.connect(self.path)
        conn.execute("delete from moves")
        conn.commit()

    def delete(self):
        os.remove(self.path)


class KillsItsParent(Bot):
    """Tries to kill a process of the arena's (``target``, as the arena sees it: from
    inside its PID namespace the bot cannot even name its parent), then plays legally."""

    target = Option(0)

    def choose_move(self, board):
        outcome = "done"
        try:
            os.kill(self.target or os.getppid(), signal.SIGKILL)
        except Exception as exc:
            outcome = type(exc).__name__
        return Choice(board.legal_moves()[0], {"kill": outcome})


class ReturnsBool(Bot):
    """True is an int subclass, not a move."""

    def choose_move(self, board):
        return True


class Slow(Bot):
    """Legal, but sleeps 0.2 s per move."""

    def choose_move(self, board):
        time.sleep(0.2)
        return board.legal_moves()[0]


class BadInfo(Bot):
    """Logs info that is not JSON."""

    def choose_move(self, board):
        return Choice(board.legal_moves()[0], {"thing": object()})


class FillsItsFolder(Bot):
    """Tries to create files and folders (in its working directory and in /tmp),
    which could fill a disk or memory, then plays legally and reports."""

    def choose_move(self, board):
        outcomes = {}
        attempts = (
            ("file", lambda: open("scratch.bin", "wb").close()),
            ("folder", lambda: os.mkdir("scratch")),
            ("tmp", lambda: open(f"/tmp/arena-hostile-{os.getpid()}", "wb").close()),
        )
        for name, attempt in attempts:
            try:
                attempt()
                outcomes[name] = "done"
            except Exception as exc:
                outcomes[name] = type(exc).__name__
        return Choice(board.legal_moves()[0], outcomes)


GAMES_SEEN = 0  # module state: a process reused between games would count up


class RemembersGames(Bot):
    """Counts the games its process has seen and looks for what an earlier game
    left behind; every game must find a fresh process in a fresh folder."""

    def new_game(self, rules, player, seed):
        global GAMES_SEEN
        super().new_game(rules, player, seed)
        GAMES_SEEN += 1

    def choose_move(self, board):
        leftovers = sorted(name for name in os.listdir(".") if name != "output.txt")
        print(f"game {GAMES_SEEN} was here")  # goes to output.txt, which must start empty
        with open("output.txt") as output:
            earlier = [line for line in output if "was here" in line and f"game {GAMES_SEEN} " not in line]
        return Choice(board.legal_moves()[0], {"games_seen": GAMES_SEEN, "leftovers": leftovers, "earlier": earlier})


class ClaimsRootPowers(Bot):
    """Reports its capabilities and tries to raise its own priority (which needs
    one), then plays legally."""

    def choose_move(self, board):
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status if line.startswith("Cap"))
        try:
            os.setpriority(os.PRIO_PROCESS, 0, -5)
            nice = "done"
        except Exception as exc:
            nice = type(exc).__name__
        powers = {key: int(value, 16) for key, value in fields.items() if key in ("CapEff", "CapPrm")}
        return Choice(board.legal_moves()[0], {**powers, "nice": nice})


class PeeksAtItsParent(Bot):
    """Reads its own /proc entry (allowed) and the environment of a process of the
    arena's (``target``: not allowed), and reports its memory limit and size."""

    target = Option(0)

    def choose_move(self, board):
        import resource

        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        try:
            with open(f"/proc/{self.target or os.getppid()}/environ", "rb") as environ:
                environ.read()
            parent = "done"
        except Exception as exc:
            parent = type(exc).__name__
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        return Choice(board.legal_moves()[0], {"size": size, "limit": limit, "parent": parent})
