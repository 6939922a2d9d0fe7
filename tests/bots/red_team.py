"""Red-team bots: each one attacks the sandbox in one way, then plays a legal move
and says in its move info what the attack achieved. A call the sandbox refuses
is caught and reported, never raised, so the bot's games stay normal games and
its report reaches the database, where tests/test_red_team.py reads it.

Every bot here attacks during the submission checks too (default options), and
plays legal moves there, so ``arena submit`` accepts it and the attack then runs
again from the league database.
"""

import ctypes
import json
import mmap
import os
import random
import resource
import signal
import socket
import stat
import struct
import time
import zlib

from arena.bot import Bot, Choice, Option

LIBC = ctypes.CDLL(None, use_errno=True)
LAST_PID = 65535
_SYSCALLS = {"x86_64": {"add_key": 248, "keyctl": 250}, "aarch64": {"add_key": 217, "keyctl": 219}}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SEARCH, KEYCTL_READ, KEYCTL_INVALIDATE = 10, 11, 21
IPC_CREAT, IPC_NOWAIT = 0o1000, 0o4000
SEM_GETVAL = 12
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15
MSG_FASTOPEN = 0x20000000
IPPROTO_MPTCP = 262
SHM_SEGMENT_BYTES = 80 * 2**20 + 4096 * 7  # an odd size, so the test can tell these segments apart
SHM_SEGMENTS = 5  # 400 MB in all

LIBC.shmat.restype = ctypes.c_void_p
LIBC.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
LIBC.shmdt.argtypes = [ctypes.c_void_p]
LIBC.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
LIBC.syscall.restype = ctypes.c_long


def outcome(attempt):
    """'done' if the attempt went through, else the name of what stopped it."""
    try:
        attempt()
        return "done"
    except Exception as exc:
        return type(exc).__name__


def first_legal(board):
    return board.legal_moves()[0]


def budget(bot, share=0.4, most=2.0):
    """Seconds an attack may take at this move: a share of the time allowed."""
    allowed = bot.time_allowed if bot.time_allowed is not None else 1.0
    return min(allowed * share, most)


def ipc_key(nonce, salt):
    """A SysV IPC key that only this run (its nonce) uses."""
    return zlib.crc32(f"red-team:{nonce}:{salt}".encode()) & 0x3FFFFFFF | 0x40000000


def checked(result):
    """A libc call's result, or OSError with its errno."""
    if result == -1 or result is None:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


def keyctl(*args):
    numbers = _SYSCALLS[os.uname().machine]
    return checked(LIBC.syscall(numbers["keyctl"], *args))


def add_key(description, payload, keyring=KEY_SPEC_USER_KEYRING):
    numbers = _SYSCALLS[os.uname().machine]
    return checked(LIBC.syscall(numbers["add_key"], b"user", description.encode(), payload,
                                ctypes.c_size_t(len(payload)), ctypes.c_int(keyring)))


def read_key(description, keyring=KEY_SPEC_USER_KEYRING):
    """The payload of the user key ``description`` found from ``keyring``."""
    key = keyctl(KEYCTL_SEARCH, ctypes.c_int(keyring), b"user", description.encode(), 0)
    buffer = ctypes.create_string_buffer(4096)
    size = keyctl(KEYCTL_READ, ctypes.c_long(key), buffer, ctypes.c_size_t(len(buffer)))
    return buffer.raw[:size]


def set_name(name):
    """This process's name (comm), which the tests look for."""
    LIBC.prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)


# --- 1. harm outside its game -----------------------------------------------------------


class _Sweeper(Bot):
    """Tries something on every process id, a slice per move, and counts what went through."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.next_pid, self.done = 1, 0

    def choose_move(self, board):
        deadline = time.monotonic() + budget(self)
        me = os.getpid()
        while self.next_pid <= LAST_PID and time.monotonic() < deadline:
            last = min(self.next_pid + 2047, LAST_PID)
            for pid in range(self.next_pid, last + 1):
                if pid != me:
                    try:
                        self.hit(pid)
                        self.done += 1
                    except OSError:
                        pass
            self.next_pid = last + 1
        return Choice(first_legal(board), {"reached": self.next_pid - 1, "done": self.done})


class ClampsEveryone(_Sweeper):
    """Sets every other process's open-file and memory limits to (1, 1)."""

    def hit(self, pid):
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (1, 1))
        resource.prlimit(pid, resource.RLIMIT_AS, (1, 1))


class StopsEveryone(_Sweeper):
    """Sends SIGSTOP to every other process."""

    def hit(self, pid):
        os.kill(pid, signal.SIGSTOP)


class KillsEveryone(_Sweeper):
    """Sends SIGKILL to every other process."""

    def hit(self, pid):
        os.kill(pid, signal.SIGKILL)


# --- 2. network -----------------------------------------------------------------------------


class _Networker(Bot):
    """Tries its attack at its first move and reports the outcome with every move."""

    port = Option(0, "a TCP or UDP port of the test's, on 127.0.0.1 (0: none)")
    path = Option("", "a Unix socket of the test's")
    nonce = Option("check", "what the bot sends, so the test knows it")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.report = None

    def choose_move(self, board):
        if self.report is None:
            self.report = {"attack": outcome(self.attack)}
        return Choice(first_legal(board), dict(self.report))


class ConnectsTcp(_Networker):
    """Connects to a TCP port on 127.0.0.1 and sends its nonce."""

    def attack(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
            conn.sendall(self.nonce.encode())


class FastOpens(_Networker):
    """Connects with TCP Fast Open: sendto(MSG_FASTOPEN) connects without connect()."""

    def attack(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as conn:
            conn.settimeout(0.5)
            conn.sendto(self.nonce.encode(), MSG_FASTOPEN, ("127.0.0.1", self.port))


class ConnectsMptcp(_Networker):
    """Connects over multipath TCP, a protocol of its own to the kernel."""

    def attack(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP) as conn:
            conn.settimeout(0.5)
            conn.connect(("127.0.0.1", self.port))
            conn.sendall(self.nonce.encode())


class SendsUdp(_Networker):
    """Sends its nonce in a UDP datagram to 127.0.0.1."""

    def attack(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as conn:
            conn.sendto(self.nonce.encode(), ("127.0.0.1", self.port))


class ConnectsUnixPath(_Networker):
    """Connects to a Unix socket at a path (open to all) and sends its nonce."""

    def attack(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(0.5)
            conn.connect(self.path)
            conn.sendall(self.nonce.encode())


class _Listener(_Networker):
    """Listens, tells the world where (in its output), and accepts whatever comes
    for a while at every move."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.server, self.accepted, self.address = None, 0, None

    def choose_move(self, board):
        if self.report is None:
            self.report = {"listen": outcome(self.listen)}
        if self.server is not None:
            print(f"red-team listening {self.nonce} {self.address}", flush=True)
            self.server.settimeout(0.02)
            deadline = time.monotonic() + budget(self, most=0.05)
            while time.monotonic() < deadline:
                try:
                    conn, _ = self.server.accept()
                    conn.close()
                    self.accepted += 1
                except OSError:
                    pass
        return Choice(first_legal(board), {**self.report, "address": self.address, "accepted": self.accepted})


class ListensUnbound(_Listener):
    """listen() on a TCP socket it never bound: the kernel picks a port."""

    def listen(self):
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.listen()
        self.address = self.server.getsockname()[1]


class ListensAbstract(_Listener):
    """Binds an abstract Unix socket (no file: only a name) and listens on it."""

    def listen(self):
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.address = f"red-team-{self.nonce}"
        self.server.bind("\0" + self.address)
        self.server.listen()


class Whispers(Bot):
    """Two copies of it in one game talk between moves, over UDP on 127.0.0.1 and over
    abstract Unix datagram sockets, and count what they hear from each other."""

    hear = Option(0, "the UDP port it listens on (0: none)")
    tell = Option(0, "the UDP port the other copy listens on")
    me = Option("a", "its name; the other copy is the other letter")
    nonce = Option("check", "names the abstract sockets")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.udp = self.unix = None
        self.heard = {"udp": 0, "unix": 0}
        self.setup = {}

    def choose_move(self, board):
        if not self.setup:
            self.setup = {"udp": outcome(self.open_udp), "unix": outcome(self.open_unix)}
        other = "b" if self.me == "a" else "a"
        for name, conn, address in (("udp", self.udp, ("127.0.0.1", self.tell)),
                                    ("unix", self.unix, f"\0red-team-{self.nonce}-{other}")):
            if conn is None:
                continue
            try:
                conn.sendto(b"psst", address)
            except OSError:
                pass
            deadline = time.monotonic() + 0.05
            while time.monotonic() < deadline:
                try:
                    conn.recv(64)
                    self.heard[name] += 1
                except OSError:
                    time.sleep(0.005)
        return Choice(first_legal(board), {"setup": self.setup, "heard": dict(self.heard)})

    def open_udp(self):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.setblocking(False)
        udp.bind(("127.0.0.1", self.hear))
        self.udp = udp

    def open_unix(self):
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        unix.setblocking(False)
        unix.bind(f"\0red-team-{self.nonce}-{self.me}")
        self.unix = unix


# --- 3. outliving its game ------------------------------------------------------------------


class Hydra(Bot):
    """Starts a chain of processes, each in a session of its own and named after
    the bot, that grow a new head when their parent dies (PR_SET_PDEATHSIG) or a
    child of theirs is killed; some start through a double fork, so they are
    orphans from birth. Each gives up after ``lives`` new heads and ``seconds``,
    so a test that finds them alive can still rely on them leaving."""

    tag = Option("redhydracheck", "the process name of every head (at most 15 characters)")
    lives = Option(3, "new heads each head may grow")
    seconds = Option(30.0, "how long any head lives at most")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.started = False

    def choose_move(self, board):
        if not self.started:
            self.started = True
            deadline = time.monotonic() + self.seconds
            for double in (False, True):
                grow_head(self.tag, self.lives, deadline, chain=2, double=double)
        return Choice(first_legal(board), {"heads": "started"})


def grow_head(tag, lives, deadline, chain=0, double=False):
    """Fork a head (through a double fork if ``double``); returns in the caller."""
    pid = os.fork()
    if pid:
        if double:
            try:
                os.waitpid(pid, 0)  # the middle process, which leaves at once
            except OSError:
                pass
        return
    try:
        if double and os.fork():
            os._exit(0)
        live_as_head(tag, lives, deadline, chain)
    finally:
        os._exit(0)


def live_as_head(tag, lives, deadline, chain):
    os.setsid()
    set_name(tag)
    os.closerange(3, 1024)  # nothing of the game's: its channel must not stay open here
    parent = os.getppid()
    left = [lives]

    def regrow(signum, frame):
        if left[0] > 0 and time.monotonic() < deadline:
            left[0] -= 1
            grow_head(tag, left[0], deadline, double=signum == signal.SIGUSR1)

    for sig in (signal.SIGUSR1, signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, regrow)
    LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGUSR1), 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was armed
        regrow(signal.SIGUSR1, None)
    if chain:
        grow_head(tag, lives, deadline, chain - 1)
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


# --- 4. memory ------------------------------------------------------------------------------


def touch(buffer):
    """Write one byte in every page, so each page is really there."""
    pages = range(0, len(buffer), 4096)
    buffer[::4096] = b"\1" * len(pages)


class _Hoarder(Bot):
    """Hoards a little more at every move, as far as the time allowed goes, keeps
    it all until the game ends, and reports how much it holds at once."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.held_mb, self.error = 0, None

    def choose_move(self, board):
        deadline = time.monotonic() + budget(self, share=0.5)
        if self.error is None:
            try:
                self.hoard(deadline)
            except Exception as exc:
                self.error = type(exc).__name__
        report = {"held_mb": self.held_mb}
        if self.error is not None:
            report["error"] = self.error
        return Choice(first_legal(board), report)


class ForkHoarder(_Hoarder):
    """Three children each allocate and touch 300 MB: a per-process memory limit
    lets each take nearly all of it, so together they hold three times that."""

    children = Option(3, "how many children hoard")
    each_mb = Option(300, "what each child tries to hold")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.pids = []
        self.shared = mmap.mmap(-1, 4096)  # shared with the children: [held MB, finished] per child

    def hoard(self, deadline):
        if not self.pids:
            for index in range(self.children):
                pid = os.fork()
                if pid == 0:
                    self.child(index)
                self.pids.append(pid)
        while True:
            alive = [i for i, pid in enumerate(self.pids) if not self.ended(pid)]
            if all(self.slot(i)[1] for i in alive) or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        self.held_mb = sum(self.slot(i)[0] for i in alive)  # what the live ones hold now, together

    def slot(self, index):
        return struct.unpack_from("qq", self.shared, 16 * index)

    def ended(self, pid):
        try:
            return os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            return True

    def child(self, index):
        try:
            hoard = []
            for _ in range(self.each_mb // 10):
                try:
                    chunk = bytearray(10 * 2**20)
                    touch(chunk)
                except MemoryError:
                    break
                hoard.append(chunk)
                struct.pack_into("q", self.shared, 16 * index, 10 * len(hoard))
            struct.pack_into("q", self.shared, 16 * index + 8, 1)
            time.sleep(600)  # holding it all, until the game's end kills it
        finally:
            os._exit(0)


class MemfdHoarder(_Hoarder):
    """Writes 600 MB into a memory file it never maps: no address space is used."""

    total_mb = Option(600, "what it tries to hold")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.fd = None

    def hoard(self, deadline):
        if self.fd is None:
            self.fd = os.memfd_create("red-team")
        chunk = b"\1" * (10 * 2**20)
        while self.held_mb < self.total_mb and time.monotonic() < deadline:
            os.write(self.fd, chunk)
            self.held_mb += 10


class ShmHoarder(_Hoarder):
    """Fills SysV shared memory segments it never removes, one mapped at a time
    (so its address space stays small): they outlive the process unless removed."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.segments = 0

    def hoard(self, deadline):
        while self.segments < SHM_SEGMENTS and time.monotonic() < deadline:
            shmid = checked(LIBC.shmget(0, SHM_SEGMENT_BYTES, IPC_CREAT | 0o600))  # 0 is IPC_PRIVATE
            self.segments += 1
            address = LIBC.shmat(shmid, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "shmat")
            ctypes.memset(address, 1, SHM_SEGMENT_BYTES)
            LIBC.shmdt(ctypes.c_void_p(address))
            self.held_mb += SHM_SEGMENT_BYTES // 2**20


class ForkBomb(Bot):
    """Forks children that only sleep, as many as it can (up to ``most``), and keeps
    them all until the game ends: a per-process limit counts none of them."""

    most = Option(300, "children to stop at")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.children, self.error = 0, None

    def choose_move(self, board):
        deadline = time.monotonic() + budget(self, share=0.5)
        while self.error is None and self.children < self.most and time.monotonic() < deadline:
            try:
                pid = os.fork()
            except OSError as exc:
                self.error = type(exc).__name__
                break
            if pid == 0:
                try:
                    time.sleep(600)  # held until the game's end kills it
                finally:
                    os._exit(0)
            self.children += 1
        return Choice(first_legal(board), {"children": self.children, "error": self.error})


# --- 5. hanging its referee ---------------------------------------------------------------


class StopsReading(Bot):
    """On a big board, answers a thousand moves ahead at its first move (straight
    into its channel to the referee), then never reads again: the referee's
    requests pile up until its writes block. On small boards (the submission
    checks) it plays like any bot."""

    def choose_move(self, board):
        if board.rules.width < 20:
            return first_legal(board)
        channel = next(fd for fd in range(3, 64) if is_socket(fd))
        # Columns in turn: each gets few stones long before the referee is stuck.
        ahead = b"".join(json.dumps({"move": i % board.rules.width}).encode() + b"\n" for i in range(1, 1500))
        os.write(channel, ahead)
        time.sleep(10**6)


def is_socket(fd):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


# --- 6. state across games ------------------------------------------------------------------


class _Rememberer(Bot):
    """At its first move, reads a counter kept outside its process, adds one and
    reports what it read: a fresh game must read nothing (0)."""

    nonce = Option("check", "names the counter")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.report = None

    def choose_move(self, board):
        if self.report is None:
            self.report = {}
            self.remember()
        return Choice(first_legal(board), dict(self.report))

    def carry(self, name, read, write):
        """report[name] = the counter read (0 if none); the counter is then written back plus one."""
        try:
            seen = read()
        except Exception as exc:
            seen = 0
            self.report[f"{name}_read"] = type(exc).__name__
        self.report[name] = seen
        self.report[f"{name}_write"] = outcome(lambda: write(seen + 1))


class RemembersIpc(_Rememberer):
    """Keeps counters in SysV shared memory, a semaphore and a message queue, under fixed keys."""

    def remember(self):
        self.carry("shm", *self.shm())
        self.carry("sem", *self.sem())
        self.carry("msg", *self.msg())

    def shm(self):
        def attach():
            shmid = checked(LIBC.shmget(ipc_key(self.nonce, "shm"), 4096, IPC_CREAT | 0o600))
            address = LIBC.shmat(shmid, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "shmat")
            return ctypes.c_int64.from_address(address)

        def write(value):
            attach().value = value

        return (lambda: attach().value), write

    def sem(self):
        def semid():
            return checked(LIBC.semget(ipc_key(self.nonce, "sem"), 1, IPC_CREAT | 0o600))

        def write(value):
            # struct sembuf {unsigned short num; short op; short flg;}: add one
            checked(LIBC.semop(semid(), struct.pack("HhH", 0, 1, 0), 1))

        return (lambda: checked(LIBC.semctl(semid(), 0, SEM_GETVAL))), write

    def msg(self):
        def msqid():
            return checked(LIBC.msgget(ipc_key(self.nonce, "msg"), IPC_CREAT | 0o600))

        def read():
            count, buffer = 0, ctypes.create_string_buffer(64)
            while LIBC.msgrcv(msqid(), buffer, 8, 0, IPC_NOWAIT) >= 0:  # drain: one message per game
                count += 1
            return count

        def write(value):
            message = struct.pack("q8s", 1, b"game")
            for _ in range(value):
                checked(LIBC.msgsnd(msqid(), message, 8, IPC_NOWAIT))

        return read, write


class RemembersXattr(_Rememberer):
    """Keeps a counter in an extended attribute of its folder, of the folder its
    folder is in (shared by the games of one spawner) and of its output file."""

    def remember(self):
        name = f"user.red-team-{self.nonce}"
        places = (".", "..", "output.txt")

        def read():
            seen = 0
            for place in places:
                try:
                    seen = max(seen, int(os.getxattr(place, name)))
                except OSError:
                    pass
            return seen

        def write(value):
            done = [outcome(lambda p=place: os.setxattr(p, name, str(value).encode())) for place in places]
            if "done" not in done:
                raise PermissionError(done[0])

        self.carry("xattr", read, write)


class RemembersKeyring(_Rememberer):
    """Keeps a counter in a key of the user's kernel keyring."""

    def remember(self):
        description = f"red-team-counter-{self.nonce}"
        self.carry("key", lambda: int(read_key(description)),
                   lambda value: add_key(description, str(value).encode()))


# --- 7. stealing the opponent's clock -------------------------------------------------------

RING = 16384  # timestamps kept per spinner


class StealsClock(Bot):
    """Spinning children compute while the opponent thinks. Each records when it
    ran (once a millisecond) in memory shared with the bot; at each move the bot
    counts the records that fall outside its own moves: time it stole."""

    spinners = Option(2, "spinning children")
    margin = Option(0.05, "seconds either side of a move that still count as its own")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.ring = None
        self.read = [0] * self.spinners
        self.last = None
        self.stolen = self.recorded = 0

    def choose_move(self, board):
        start = time.monotonic()
        if self.ring is None:
            self.ring = mmap.mmap(-1, self.spinners * (RING + 1) * 8)  # MAP_SHARED: children write, we read
            for index in range(self.spinners):
                if os.fork() == 0:
                    spin(self.ring, index)
        else:
            self.tally(start)
        time.sleep(0.03)  # some time on move, in which the spinners may run
        self.last = (start, time.monotonic())
        return Choice(first_legal(board), {"stolen_ms": self.stolen, "recorded": self.recorded})

    def tally(self, start):
        low, high = self.last[0] - self.margin, self.last[1] + self.margin
        for index in range(self.spinners):
            base = index * (RING + 1) * 8
            written = struct.unpack_from("q", self.ring, base)[0]
            for n in range(max(self.read[index], written - RING), written):
                when = struct.unpack_from("d", self.ring, base + 8 + (n % RING) * 8)[0]
                self.recorded += 1
                if not (low <= when <= high or when >= start - self.margin):
                    self.stolen += 1
            self.read[index] = written


def spin(ring, index):
    try:
        base = index * (RING + 1) * 8
        written, last = 0, 0.0
        while True:
            now = time.monotonic()
            if now - last >= 0.001:
                struct.pack_into("d", ring, base + 8 + (written % RING) * 8, now)
                written += 1
                struct.pack_into("q", ring, base, written)
                last = now
    finally:
        os._exit(0)


# --- 8. root's powers -----------------------------------------------------------------------


class _RootPower(Bot):
    """Uses a power a process of root's user id has without any capability (the
    owner's), once per game, and reports the outcome."""

    path = Option("", "the file it works on")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.report = None

    def choose_move(self, board):
        if self.report is None:
            self.report = {"attack": outcome(self.attack) if self.path else "no path"}
        return Choice(first_legal(board), dict(self.report))


class OpensSecret(_RootPower):
    """chmod 0644 on a root file of mode 0600."""

    def attack(self):
        os.chmod(self.path, 0o644)


class SetsSetuid(_RootPower):
    """Sets the set-user-id bit of a copy of a program."""

    def attack(self):
        os.chmod(self.path, 0o4755)


class Backdates(_RootPower):
    """Sets a file's times to 1970."""

    def attack(self):
        os.utime(self.path, (0, 0))


class OpensDatabaseToAll(_RootPower):
    """chmod 0666 on the league database."""

    def attack(self):
        os.chmod(self.path, 0o666)


class TagsFile(_RootPower):
    """Writes an extended attribute on a file it cannot open."""

    def attack(self):
        os.setxattr(self.path, "user.red-team", b"pwned")


class ReadsRootKeyring(Bot):
    """Searches root's user keyring for a key by name and reads it."""

    secret = Option("arena-secret", "the key's description")

    def choose_move(self, board):
        try:
            found = read_key(self.secret).decode(errors="replace")
        except Exception as exc:
            found = type(exc).__name__
        return Choice(first_legal(board), {"read": found})


class WritesRootShm(Bot):
    """Attaches root's SysV shared memory segment (mode 0600) by its key and overwrites it."""

    key = Option(0, "the segment's IPC key (0: none)")

    def choose_move(self, board):
        def attack():
            shmid = checked(LIBC.shmget(self.key, 0, 0))
            address = LIBC.shmat(shmid, None, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "shmat")
            ctypes.memmove(address, b"pwned", 5)
            LIBC.shmdt(ctypes.c_void_p(address))

        return Choice(first_legal(board), {"attack": outcome(attack) if self.key else "no key"})


# --- 10. seeds ------------------------------------------------------------------------------


class PredictsRandom(Bot):
    """Guesses the opponent's seed from its own (seed ^ 1, seed + 1, seed - 1),
    replays the random bot's choices with each guess and counts the hits. Needs
    games without a random opening: every ply is then a bot's choice."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.guesses = {name: random.Random(guess) for name, guess in
                        (("xor1", seed ^ 1), ("plus1", seed + 1), ("minus1", seed - 1))}
        self.hits = dict.fromkeys(self.guesses, 0)
        self.tries = 0
        self.seen = 0  # plies of the history already replayed

    def choose_move(self, board):
        replay = type(board)(board.rules)
        for ply, move in enumerate(board.history):
            if ply >= self.seen and ply % 2 != self.player:
                self.tries += 1
                legal = replay.legal_moves()
                for name, rng in self.guesses.items():
                    self.hits[name] += rng.choice(legal) == move
            replay.play(move)
        self.seen = len(board.history)
        return Choice(self.rng.choice(board.legal_moves()), {"tries": self.tries, "hits": dict(self.hits)})


# --- 11. side channels ----------------------------------------------------------------------

IN_NONBLOCK = 0o4000
IN_ALL_EVENTS = 0xFFF


class WatchesFolders(Bot):
    """Watches the database's folder and its own spawner's folder with inotify, and
    counts the events: how the others' games go, without reading a byte."""

    folder = Option("", "the database's folder")

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.fd, self.report, self.events = None, None, 0

    def choose_move(self, board):
        if self.report is None:
            self.report = {}
            try:
                self.fd = checked(LIBC.inotify_init1(IN_NONBLOCK))
                self.report["init"] = "done"
            except OSError as exc:
                self.report["init"] = type(exc).__name__
            for name, path in (("database", self.folder), ("bots", "..")):
                self.report[name] = outcome(lambda p=path: checked(LIBC.inotify_add_watch(
                    self.fd if self.fd is not None else -1, p.encode(), IN_ALL_EVENTS)))
        if self.fd is not None:
            try:
                while os.read(self.fd, 65536):
                    self.events += 1
            except OSError:
                pass
        return Choice(first_legal(board), {**self.report, "events": self.events})


class ReadsHostSockets(Bot):
    """Lists the listening TCP ports and the named Unix sockets it can see in
    /proc/self/net: the host's, unless it has a network of its own."""

    def choose_move(self, board):
        ports, unix = set(), []
        for table in ("tcp", "tcp6"):
            try:
                with open(f"/proc/self/net/{table}") as lines:
                    for line in list(lines)[1:]:
                        fields = line.split()
                        if fields[3] == "0A":  # listening
                            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
            except OSError:
                pass
        try:
            with open("/proc/self/net/unix") as lines:
                unix = [line.split()[-1] for line in list(lines)[1:] if len(line.split()) > 7]
        except OSError:
            pass
        return Choice(first_legal(board), {"tcp": sorted(ports)[:500], "unix": [p for p in unix if "red-team" in p]})


class LooksOutside(Bot):
    """Lists /root, reads the database, and stats both."""

    db = Option("", "the league database")

    def choose_move(self, board):
        report = {
            "list_root": outcome(lambda: os.listdir("/root")),
            "read_db": outcome(lambda: open(self.db, "rb").close()) if self.db else "no path",
        }
        for name, path in (("stat_root", "/root"), ("stat_db", self.db)):
            try:
                report[name] = os.stat(path).st_size
            except Exception as exc:
                report[name] = type(exc).__name__
        return Choice(first_legal(board), report)
