"""The seccomp filter of bot processes: each refused call is refused for real, in a
forked process that installed the filter, and what a bot needs still works there."""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import pickle
import re
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox import seccomp

pytestmark = pytest.mark.skipif(not seccomp.supported(), reason=seccomp.describe())

LIBC = ctypes.CDLL(None, use_errno=True)
MACHINE = os.uname().machine
COLUMN = {"x86_64": 0, "aarch64": 1}.get(MACHINE, 0)
NUMBERS = {name: numbers[COLUMN] for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
AT_FDCWD = -100
CLONE_NEWUSER = 0x10000000


def run_confined(probe: Callable[[], Any], program: seccomp.Filter | None = None) -> tuple[Any, int]:
    """(what ``probe`` returned or raised, the wait status) in a forked child that
    installed ``program`` (this machine's filter unless given) first."""
    program = program if program is not None else seccomp.prepare()
    assert program is not None
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        try:
            os.close(reader)
            if not seccomp.install(program):
                outcome: tuple[str, Any] = ("not installed", os.strerror(ctypes.get_errno()))
            else:
                try:
                    outcome = ("returned", probe())
                except BaseException as exc:
                    outcome = ("raised", f"{type(exc).__name__}: {exc}")
            os.write(writer, pickle.dumps(outcome))
        finally:
            os._exit(0)
    os.close(writer)
    data = b""
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            if select.select([reader], [], [], 1)[0]:
                chunk = os.read(reader, 65536)
                if not chunk:
                    break
                data += chunk
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(reader)
    status = os.waitpid(pid, 0)[1]
    return (pickle.loads(data) if data else None), status


def confined(probe: Callable[[], Any], program: seccomp.Filter | None = None) -> Any:
    """What ``probe`` returns under the filter (the child must return normally)."""
    outcome, status = run_confined(probe, program)
    assert status == 0 and outcome is not None and outcome[0] == "returned", (outcome, status)
    return outcome[1]


def error_of(call: Callable[[], Any]) -> int:
    """The errno ``call`` fails with, 0 where it succeeds."""
    try:
        call()
    except OSError as exc:
        return exc.errno or -1
    return 0


def syscall(name: str, *args: Any) -> int:
    """The errno of a raw system call (0 where it succeeds), by the filter's own
    numbers: test_the_numbers_are_the_kernels checks them against the kernel headers."""
    number = NUMBERS[name]
    assert number is not None
    converted = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = LIBC.syscall(ctypes.c_long(number), *converted)
    return ctypes.get_errno() if result == -1 else 0


# --- each group, tried for real -------------------------------------------------------


def test_new_sockets_of_any_family_are_refused():
    def probe():
        return [error_of(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
                error_of(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
                error_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
                error_of(socket.socketpair)]

    assert confined(probe) == [errno.EPERM] * 4


def test_a_socket_it_has_cannot_be_named_listened_on_or_connected():
    """Bots of every game share one network namespace: an abstract Unix name bound by
    one would be seen taken by another (a channel between games). The sockets a bot
    has (its channel, made before the filter) can be given no name, in either filter."""
    ours, theirs = socket.socketpair()

    def probe():
        return [error_of(lambda: ours.bind(b"\0arena-covert")), error_of(lambda: ours.listen()),
                error_of(lambda: ours.connect(b"\0arena-covert"))]

    try:
        assert confined(probe) == [errno.EPERM] * 3
        programs = seccomp.prepare()
        assert programs is not None and programs.programs is not None
        assert confined(probe, programs.programs) == [errno.EPERM] * 3
    finally:
        ours.close()
        theirs.close()


def test_a_refused_call_raises_permission_error_and_the_process_lives_on():
    def probe():
        try:
            socket.socket()
        except PermissionError:
            return "PermissionError"
        return "allowed"

    assert confined(probe) == "PermissionError"


def test_a_files_mode_owner_and_times_cannot_change(tmp_path):
    path = tmp_path / "mine"
    path.write_text("x")
    os.chmod(path, 0o644)
    os.utime(path, (1_000_000, 1_000_000))
    before = os.stat(path)

    def probe():
        fd = os.open(path, os.O_RDONLY)
        return [error_of(lambda: os.chmod(path, 0o777)), error_of(lambda: os.fchmod(fd, 0o777)),
                error_of(lambda: os.chown(path, before.st_uid, before.st_gid)),
                error_of(lambda: os.chown(path, -1, -1, follow_symlinks=False)),
                error_of(lambda: os.utime(path, (2_000_000, 2_000_000))),
                error_of(lambda: os.utime(fd, None)),
                syscall("fchmodat2", AT_FDCWD, bytes(path), 0o777, 0)]

    assert confined(probe) == [errno.EPERM] * 7
    after = os.stat(path)
    assert (after.st_mode, after.st_mtime) == (before.st_mode, before.st_mtime)


def test_extended_attributes_cannot_be_written(tmp_path):
    path = tmp_path / "mine"
    path.write_text("x")

    def probe():
        return [error_of(lambda: os.setxattr(path, "user.arena", b"note")),
                error_of(lambda: os.removexattr(path, "user.arena")),
                error_of(lambda: os.setxattr(path, "user.arena", b"note", follow_symlinks=False))]

    assert confined(probe) == [errno.EPERM] * 3


def test_another_processes_limits_are_refused_its_own_are_not():
    def probe():
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))  # pid 0: itself
        lowered = resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft - 1
        other = os.fork()  # the opponent, as it were: starving it is the attack
        if other == 0:
            time.sleep(60)
            os._exit(0)
        try:
            return [lowered, error_of(lambda: resource.prlimit(0, resource.RLIMIT_CORE)),
                    error_of(lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE)),
                    error_of(lambda: resource.prlimit(other, resource.RLIMIT_CPU, (0, 0))),
                    # Its own pid is another number than 0: the filter cannot tell it from another's.
                    error_of(lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE))]
        finally:
            os.kill(other, signal.SIGTERM)  # SIGKILL is refused
            os.waitpid(other, 0)

    assert confined(probe) == [True, 0, errno.EPERM, errno.EPERM, errno.EPERM]


def test_keyrings_are_refused():
    key_spec_session_keyring, keyctl_get_keyring_id = -3, 0

    def probe():
        return [syscall("keyctl", keyctl_get_keyring_id, key_spec_session_keyring, 0),
                syscall("request_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(b"arena-none"), None, 0),
                syscall("add_key", ctypes.c_char_p(b"user"), None, None, 0, 0)]

    assert confined(probe) == [errno.EPERM] * 3


def test_watching_files_is_refused(tmp_path):
    def probe():
        errors = [syscall("inotify_init1", 0), syscall("inotify_add_watch", -1, bytes(tmp_path), 0x2),
                  syscall("fanotify_init", 0, 0)]
        if NUMBERS["inotify_init"] is not None:
            errors.append(syscall("inotify_init"))
        return errors

    assert set(confined(probe)) == {errno.EPERM}


def test_another_process_cannot_be_traced_read_or_named():
    secret = ctypes.create_string_buffer(b"opponent", 8)  # at the same address in every fork

    class Iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def probe():
        other = os.fork()
        if other == 0:
            time.sleep(60)
            os._exit(0)
        try:
            copy = ctypes.create_string_buffer(8)
            local, remote = Iovec(ctypes.addressof(copy), 8), Iovec(ctypes.addressof(secret), 8)
            ptrace_attach = 16
            return [syscall("ptrace", ptrace_attach, other, 0, 0),
                    syscall("process_vm_readv", other, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0),
                    syscall("pidfd_open", other, 0), syscall("kcmp", os.getpid(), other, 0, 0, 0),
                    syscall("migrate_pages", other, 0, None, None),
                    syscall("move_pages", other, 0, None, None, None, 0),
                    copy.raw]
        finally:
            os.kill(other, signal.SIGTERM)  # SIGKILL is refused
            os.waitpid(other, 0)

    assert confined(probe) == [errno.EPERM] * 6 + [b"\0" * 8]


def test_its_own_pages_are_its_own_to_move():
    # move_pages on pid 0 with no pages: a question about itself, answered.
    assert confined(lambda: syscall("move_pages", 0, 0, None, None, None, 0)) == 0


def test_namespaces_and_mounts_are_refused(tmp_path):
    def probe():
        namespace = os.open("/proc/self/ns/uts", os.O_RDONLY)
        clone = LIBC.syscall(ctypes.c_long(NUMBERS["clone"]), ctypes.c_long(CLONE_NEWUSER | signal.SIGCHLD),
                             None, None, None, None)
        if clone == 0:
            os._exit(0)  # a child in a new namespace: the filter let it through
        clone_error = ctypes.get_errno() if clone == -1 else 0
        return [error_of(lambda: os.unshare(CLONE_NEWUSER)) if hasattr(os, "unshare")
                else syscall("unshare", CLONE_NEWUSER),
                clone_error, syscall("setns", namespace, 0),
                syscall("mount", ctypes.c_char_p(b"none"), ctypes.c_char_p(bytes(tmp_path)),
                        ctypes.c_char_p(b"tmpfs"), 0, None),
                syscall("umount2", ctypes.c_char_p(bytes(tmp_path)), 0), syscall("chroot", ctypes.c_char_p(b"/")),
                syscall("fsopen", ctypes.c_char_p(b"tmpfs"), 0),
                syscall("open_tree", AT_FDCWD, ctypes.c_char_p(bytes(tmp_path)), 0)]

    assert confined(probe) == [errno.EPERM] * 8


def test_clone3_answers_enosys_so_threads_and_fork_fall_back_to_clone():
    def probe():
        unavailable = syscall("clone3", None, 0)
        ran = []
        thread = threading.Thread(target=ran.append, args=[1])
        thread.start()
        thread.join()
        child = os.fork()
        if child == 0:
            os._exit(5)
        return unavailable, ran, os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])

    assert confined(probe) == (errno.ENOSYS, [1], 5)


def test_io_uring_bpf_perf_and_userfaultfd_are_refused():
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed

    def probe():
        return [syscall("io_uring_setup", 1, params), syscall("io_uring_enter", -1, 0, 0, 0, None, 0),
                syscall("io_uring_register", -1, 0, None, 0), syscall("userfaultfd", 0),
                syscall("bpf", 0, None, 0), syscall("perf_event_open", None, 0, -1, -1, 0)]

    assert confined(probe) == [errno.EPERM] * 6


def test_timers_that_signal_are_refused():
    def probe():
        timer = ctypes.c_void_p()
        errors = [error_of(lambda: signal.setitimer(signal.ITIMER_REAL, 10)),
                  error_of(lambda: signal.setitimer(signal.ITIMER_PROF, 10)),
                  syscall("timer_create", time.CLOCK_MONOTONIC, None, ctypes.byref(timer)),
                  syscall("timerfd_create", time.CLOCK_MONOTONIC, 0)]
        if NUMBERS["alarm"] is not None:
            errors.append(syscall("alarm", 10))
        return errors, signal.getitimer(signal.ITIMER_REAL)

    errors, armed = confined(probe)
    assert set(errors) == {errno.EPERM}
    assert armed == (0.0, 0.0)


def test_sigkill_is_refused_by_every_call_that_sends_a_signal_others_go_through():
    """A bot cannot make its own death look like a kill from outside the arena:
    no SIGKILL to itself, its threads or its processes, queued or not, by pidfd,
    at its parent's death, at a child's end or at a message. Unfiltered, the first
    of them would end this process (a fork that is not the first of a PID namespace)."""

    def probe():
        tid = threading.get_native_id()
        queued = ctypes.create_string_buffer(struct.pack("=iii", signal.SIGKILL, 0, -1), 128)  # SI_QUEUE
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        try:
            refused = [error_of(lambda: os.kill(os.getpid(), signal.SIGKILL)),
                       error_of(lambda: os.killpg(os.getpgid(0), signal.SIGKILL)),
                       error_of(lambda: os.kill(child, signal.SIGKILL)),
                       error_of(lambda: signal.pthread_kill(threading.get_ident(), signal.SIGKILL)),
                       syscall("tkill", tid, signal.SIGKILL), syscall("tgkill", os.getpid(), tid, signal.SIGKILL),
                       syscall("rt_sigqueueinfo", os.getpid(), signal.SIGKILL, queued),
                       syscall("rt_tgsigqueueinfo", os.getpid(), tid, signal.SIGKILL, queued),
                       syscall("pidfd_send_signal", -1, signal.SIGKILL, None, 0),  # unfiltered: EBADF
                       syscall("prctl", 1, signal.SIGKILL, 0, 0, 0),  # PR_SET_PDEATHSIG
                       syscall("mq_notify", -1, None)]  # unfiltered: EBADF
            started = LIBC.syscall(ctypes.c_long(NUMBERS["clone"]), ctypes.c_long(signal.SIGKILL), None, None, None,
                                   None)  # a child whose end sends SIGKILL to this process
            if started == 0:
                os._exit(0)
            refused.append(ctypes.get_errno() if started == -1 else 0)
            allowed = [error_of(lambda: os.kill(os.getpid(), 0)),
                       syscall("prctl", 1, signal.SIGTERM, 0, 0, 0), syscall("prctl", 1, 0, 0, 0, 0),
                       error_of(lambda: os.kill(child, signal.SIGTERM))]
            return refused, allowed
        finally:
            os.kill(child, signal.SIGTERM)
            os.waitpid(child, 0)

    refused, allowed = confined(probe)
    assert refused == [errno.EPERM] * 12
    assert allowed == [0] * 4


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_reads_the_signal_where_each_call_has_it(machine):
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    table = {name: numbers[column] for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
    for name, at in {"kill": 1, "tkill": 1, "rt_sigqueueinfo": 1, "pidfd_send_signal": 1, "tgkill": 2,
                     "rt_tgsigqueueinfo": 2}.items():
        for sig, answer in ((signal.SIGKILL, REFUSE), (signal.SIGTERM, ALLOW), (signal.SIGKILL | 1 << 32, REFUSE)):
            arguments = [4321, 4321, 4321]
            arguments[at] = sig  # a signal is an int: the kernel reads the low half
            assert run_program(code, table[name], arch, *arguments) == answer, (name, sig)
    assert run_program(code, table["prctl"], arch, 1, signal.SIGKILL) == REFUSE
    assert run_program(code, table["prctl"], arch, 1, signal.SIGTERM) == ALLOW
    assert run_program(code, table["prctl"], arch, 38, signal.SIGKILL) == ALLOW  # PR_SET_NO_NEW_PRIVS, 1 + 8
    assert run_program(code, table["clone"], arch, 0x01200000 | signal.SIGKILL) == REFUSE
    assert run_program(code, table["clone"], arch, 0x01200000 | signal.SIGCHLD) == ALLOW


def test_the_processor_time_limit_is_locked_once_set():
    """After the lock, RLIMIT_CPU and RLIMIT_RTTIME can be read, not set (a bot
    that lowered its own would die of the kernel's SIGKILL under the arena's
    limit); every other limit is its own to change, as before."""
    lock = seccomp.prepare_lock()
    assert lock is not None
    rttime = 15

    def probe():
        if not seccomp.install(lock):
            return "not installed"
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        lowered = ctypes.byref((ctypes.c_uint64 * 2)(1, 1))
        direct = ctypes.c_long(seccomp._LIMIT_CALLS["setrlimit"][COLUMN])
        return [LIBC.setrlimit(resource.RLIMIT_CPU, lowered) and ctypes.get_errno(),  # the C library's call
                error_of(lambda: resource.prlimit(0, rttime, (1, 1))),
                syscall("prlimit64", 0, resource.RLIMIT_CPU, lowered, None),
                LIBC.syscall(direct, ctypes.c_long(resource.RLIMIT_CPU), lowered) and ctypes.get_errno(),
                error_of(lambda: resource.getrlimit(resource.RLIMIT_CPU)),
                error_of(lambda: resource.prlimit(0, resource.RLIMIT_CPU)),
                error_of(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))),
                resource.getrlimit(resource.RLIMIT_CPU)]

    assert confined(probe) == [errno.EPERM] * 4 + [0, 0, 0, resource.getrlimit(resource.RLIMIT_CPU)]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_lock_refuses_setting_locked_limits_only(machine):
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._lock_program(machine)
    setrlimit, prlimit64 = (seccomp._LIMIT_CALLS[name][column] for name in ("setrlimit", "prlimit64"))
    cpu, rttime, nofile, pointer = 0, 15, 7, 0x7FFC12345678
    assert run_program(code, setrlimit, arch, cpu, pointer) == REFUSE
    assert run_program(code, setrlimit, arch, rttime, pointer) == REFUSE
    assert run_program(code, setrlimit, arch, nofile, pointer) == ALLOW
    assert run_program(code, prlimit64, arch, 0, cpu, pointer, 0) == REFUSE
    assert run_program(code, prlimit64, arch, 0, cpu, 1 << 40, 0) == REFUSE  # a pointer's high half alone
    assert run_program(code, prlimit64, arch, 0, cpu, 0, pointer) == ALLOW  # a question
    assert run_program(code, prlimit64, arch, 0, rttime, pointer, 0) == REFUSE
    assert run_program(code, prlimit64, arch, 0, nofile, pointer, 0) == ALLOW
    assert all(run_program(code, number, arch, cpu, pointer) == ALLOW
               for number in range(512) if number not in (setrlimit, prlimit64))


def test_personality_can_be_asked_not_changed():
    addr_no_randomize = 0x0040000
    personality = LIBC.personality
    personality.argtypes = [ctypes.c_ulong]

    def probe():
        current = personality(0xFFFFFFFF)
        return current, personality(0), syscall("personality", addr_no_randomize), personality(0xFFFFFFFF)

    assert confined(probe) == (0, 0, errno.EPERM, 0)


# Arguments that make each call harmless where a filter let it through: nothing
# real to act on (fd -1, bad paths, invalid flags), never the test's own stdin (fd 0).
SAFE_ARGUMENTS: dict[str, tuple[Any, ...]] = {
    "ptrace": (2, 0, 0, 0),  # PTRACE_PEEKDATA of pid 0: no such process
    "fchmod": (-1, 0), "fchown": (-1, 0, 0), "utimensat": (-1, None, None, 0), "futimesat": (-1, None, None),
    "fsetxattr": (-1, None, None, 0, 0), "fremovexattr": (-1, None), "setns": (-1, 0),
    "finit_module": (-1, None, 0), "kexec_load": (0, 0, None, 0xFFF0), "kexec_file_load": (-1, -1, 0, None, 0xFFF0),
    "acct": (ctypes.c_char_p(b"/nonexistent/arena-acct"),), "sethostname": (None, -1), "setdomainname": (None, -1),
    "quotactl_fd": (-1, 0, 0, None), "pidfd_getfd": (-1, 0, 0), "process_madvise": (-1, None, 0, 0, 0),
    "io_uring_enter": (-1, 0, 0, 0, None, 0), "io_uring_register": (-1, 0, None, 0), "open_by_handle_at": (-1, None, 0),
    "flock": (-1, 0), "fadvise64": (-1, 0, 0, 0), "readahead": (-1, 0, 0), "cachestat": (-1, None, None, 0),
}


def test_every_refused_call_is_refused():
    partly = set(seccomp.ONLY_WHEN) | {"clone3"}  # tried on their own above
    names = [name for name, number in NUMBERS.items() if number is not None and name not in partly]

    def probe():
        return {name: syscall(name, *SAFE_ARGUMENTS.get(name, (0, 0, 0, 0, 0, 0))) for name in names}

    answers = confined(probe)
    assert {name: answer for name, answer in answers.items() if answer != errno.EPERM} == {}
    assert len(answers) > 70


def test_denied_lists_each_call_once():
    names = [name for calls in seccomp.DENIED.values() for name in calls]
    assert len(names) == len(set(names)) == len(NUMBERS)
    assert set(seccomp.ONLY_WHEN) <= set(names)


# --- what a bot needs still works ------------------------------------------------------


def test_what_a_bot_needs_still_works(tmp_path):
    (tmp_path / "data.json").write_text(json.dumps({"moves": [3, 3, 4]}))
    ours, theirs = socket.socketpair()

    def probe():
        done = {}
        with open(tmp_path / "data.json") as file:
            done["read"] = json.load(file)["moves"]
        child = os.fork()
        if child == 0:
            os._exit(3)
        done["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        results = []
        threads = [threading.Thread(target=results.append, args=[i]) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        done["threads"] = sorted(results)
        start = time.monotonic()
        time.sleep(0.01)
        done["time"] = time.monotonic() - start >= 0.01 and time.time() > 1e9
        with mmap.mmap(-1, 1 << 20) as memory:
            memory[:5] = b"arena"
            done["mmap"] = memory[:5]
        done["urandom"] = len(os.urandom(16))
        got = []
        signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
        # Not os.kill(os.getpid(), ...): where getpid failed, that would signal every process.
        signal.raise_signal(signal.SIGUSR1)
        done["signal"] = got
        done["subprocess"] = subprocess.run(["true"]).returncode
        theirs.sendall(b"move 3\n")
        return done

    try:
        assert confined(probe) == {"read": [3, 3, 4], "fork": 3, "threads": [0, 1, 2, 3], "time": True,
                                   "mmap": b"arena", "urandom": 16, "signal": [1], "subprocess": 0}
        assert ours.recv(100) == b"move 3\n"
    finally:
        ours.close()
        theirs.close()


def test_install_uses_only_what_prepare_built(monkeypatch):
    program = seccomp.prepare()
    # The forked child inherits a module that can build nothing: install must not need to.
    for name in ("ctypes", "struct", "landlock", "os"):
        monkeypatch.setattr(seccomp, name, None)
    assert run_confined(lambda: "installed", program) == (("returned", "installed"), 0)


# --- architectures --------------------------------------------------------------------


def test_another_architectures_calls_kill_the_process():
    # A filter for the other architecture sees every call of this one as foreign.
    program = seccomp._build("aarch64" if MACHINE == "x86_64" else "x86_64")
    assert program is not None
    outcome, status = run_confined(os.getpid, program)
    assert outcome is None
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS


@pytest.mark.skipif(MACHINE != "x86_64", reason="the x32 ABI is x86_64's")
def test_x32_calls_kill_the_process():
    getpid = 39

    def probe():
        LIBC.syscall(ctypes.c_long(0x40000000 | getpid))
        return "survived"

    outcome, status = run_confined(probe)
    assert outcome is None
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS


def test_without_a_table_there_is_no_filter(monkeypatch):
    real = os.uname()
    riscv = os.uname_result((real.sysname, real.nodename, real.release, real.version, "riscv64"))
    monkeypatch.setattr(os, "uname", lambda: riscv)
    assert seccomp.prepare() is None
    assert not seccomp.supported()
    assert seccomp.describe() == "seccomp: not used (no system call table for riscv64)"


# --- the program, instruction by instruction ---------------------------------------------

ALLOW, REFUSE, NOT_IMPLEMENTED, KILL = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS, 0x80000000


def run_program(code: bytes, number: int, arch: int, *arguments: int) -> int:
    """What classic BPF ``code`` answers for one call with ``arguments`` (the rest
    0), as the kernel would run it."""
    data = struct.pack("=iIQ6Q", number, arch, 0, *arguments, *[0] * (6 - len(arguments)))
    ops = [struct.unpack_from("=HBBI", code, at) for at in range(0, len(code), 8)]
    at = accumulator = 0
    while True:
        op, if_true, if_false, k = ops[at]
        if op == 0x06:  # return
            return k
        if op == 0x20:  # load a word of the call's data
            accumulator = struct.unpack_from("=I", data, k)[0]
            at += 1
            continue
        if op == 0x54:  # and a constant
            accumulator &= k
            at += 1
            continue
        taken = {0x15: accumulator == k, 0x25: accumulator > k, 0x35: accumulator >= k, 0x45: accumulator & k}[op]
        at += 1 + (if_true if taken else if_false)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_refuses_the_table_and_nothing_else(machine):
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    table = {numbers[column]: name for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
    answers = {number: run_program(code, number, arch) for number in range(1024)}
    # With a first argument of 0 (the caller itself, no flags, Linux) the calls refused in part pass.
    expected = {number: ALLOW if table.get(number) in (None, *seccomp.ONLY_WHEN) else REFUSE
                for number in range(1024)}
    expected[table_number(table, "clone3")] = NOT_IMPLEMENTED
    assert {n: a for n, a in answers.items() if a != expected[n]} == {}


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_reads_the_first_argument_where_it_must(machine):
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    table = {name: numbers[column] for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
    for name in ("prlimit64", "migrate_pages", "move_pages"):
        assert run_program(code, table[name], arch, 1234) == REFUSE
        assert run_program(code, table[name], arch, 1 << 32) == ALLOW  # a pid is an int: the kernel reads 0
    assert run_program(code, table["clone"], arch, 0x01200011) == ALLOW  # fork's flags
    assert run_program(code, table["clone"], arch, 0x003D0F00) == ALLOW  # a thread's
    assert run_program(code, table["clone"], arch, CLONE_NEWUSER | signal.SIGCHLD) == REFUSE
    assert run_program(code, table["clone"], arch, 0x00020000) == REFUSE  # CLONE_NEWNS
    assert run_program(code, table["personality"], arch, 0xFFFFFFFF) == ALLOW
    assert run_program(code, table["personality"], arch, 0x0040000) == REFUSE


F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_GETLK, F_SETLK, F_SETLKW, F_SETOWN, F_GETOWN = range(10)
F_SETSIG, F_SETOWN_EX, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 10, 15, 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY, F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS = (
    1024, 1025, 1026, 1030, 1031, 1032, 1033, 1034)
F_SET_RW_HINT = 1036
FCNTL_ALLOWED = {F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ,
                 F_ADD_SEALS, F_GET_SEALS}
MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT, MADV_COLLAPSE = 4, 8, 20, 21, 25


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_allows_only_fcntl_commands_on_the_descriptor_itself(machine):
    """fcntl is an allow-list: the commands that act on the descriptor (and the
    process's own pipes and memfds) pass; locks, leases, notices, owners, hints,
    and every number no kernel has yet, are refused. The command is the second
    argument; the first (the descriptor) changes nothing."""
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    fcntl = seccomp._FILE_LOCKS["fcntl"][column]
    assert fcntl is not None
    answers = {command: run_program(code, fcntl, arch, 3, command) for command in [*range(2048), 1 << 31, 0xFFFFFFFF]}
    assert {command for command, answer in answers.items() if answer == ALLOW} == FCNTL_ALLOWED
    assert {answer for command, answer in answers.items() if command not in FCNTL_ALLOWED} == {REFUSE}
    for named in (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE,
                  F_NOTIFY, F_SETOWN, F_GETOWN, F_SETSIG, F_SETOWN_EX, F_SET_RW_HINT):
        assert answers[named] == REFUSE, named
    # The kernel reads an int: the high half of the register is not the command.
    assert run_program(code, fcntl, arch, 3, (1 << 32) | F_SETLK) == REFUSE
    assert run_program(code, fcntl, arch, 3, (1 << 32) | F_GETFL) == ALLOW


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_refuses_only_madvise_advice_that_touches_shared_pages(machine):
    """madvise is refused COLD, PAGEOUT and COLLAPSE (advice on the page cache
    other processes share), read in the third argument; every other advice passes."""
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    madvise = seccomp._PAGE_CACHE["madvise"][column]
    assert madvise is not None
    refused = {advice for advice in range(256) if run_program(code, madvise, arch, 4096, 4096, advice) != ALLOW}
    assert refused == {MADV_COLD, MADV_PAGEOUT, MADV_COLLAPSE}
    assert run_program(code, madvise, arch, 4096, MADV_PAGEOUT, MADV_DONTNEED) == ALLOW  # the length is not advice
    assert run_program(code, madvise, arch, 4096, 4096, MADV_PAGEOUT) == REFUSE


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_refuses_reads_that_fail_rather_than_wait(machine):
    """preadv2 is refused RWF_NOWAIT (read in the sixth argument: the offset
    takes two), which fails where a page is not cached, a probe of the page
    cache; its other flags pass."""
    arch, column, _ = seccomp._ARCHES[machine]
    code = seccomp._program(machine)
    preadv2 = seccomp._PAGE_CACHE["preadv2"][column]
    assert preadv2 is not None
    rwf_hipri, rwf_nowait = 0x1, 0x8
    assert run_program(code, preadv2, arch, 3, 0, 1, 0, 0, 0) == ALLOW
    assert run_program(code, preadv2, arch, 3, 0, 1, 0, 0, rwf_hipri) == ALLOW
    assert run_program(code, preadv2, arch, 3, 0, 1, 0, 0, rwf_nowait) == REFUSE
    assert run_program(code, preadv2, arch, 3, 0, 1, 0, 0, rwf_nowait | rwf_hipri) == REFUSE
    assert run_program(code, preadv2, arch, 3, 0, 1, rwf_nowait, rwf_nowait, 0) == ALLOW  # an offset, not flags


def test_the_program_kills_calls_of_other_abis():
    code = seccomp._program("x86_64")
    x86_64, i386 = 0xC000003E, 0x40000003
    assert run_program(code, 39, i386) == KILL
    assert run_program(code, 0x40000000 | 39, x86_64) == KILL  # x32's getpid
    assert run_program(code, 39, x86_64) == ALLOW
    arm = 0x40000028
    assert run_program(seccomp._program("aarch64"), 172, arm) == KILL


def table_number(table: dict[int | None, str], name: str) -> int:
    return next(number for number, named in table.items() if named == name and number is not None)


# --- the guarantee tests bite ----------------------------------------------------------


def test_a_call_left_out_of_the_table_goes_through(monkeypatch):
    monkeypatch.delitem(seccomp._SOCKETS, "socket")
    program = seccomp._build(MACHINE)
    assert program is not None

    def probe():
        socket.socket().close()
        return error_of(socket.socketpair)

    assert confined(probe, program) == errno.EPERM  # socketpair is still in it


# --- the table ------------------------------------------------------------------------

HEADERS = {"x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "aarch64": "/usr/include/asm-generic/unistd.h"}


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_numbers_are_the_kernels(machine):
    header = Path(HEADERS[machine])
    if not header.exists():
        pytest.skip(f"no kernel headers for {machine} here")
    text = header.read_text()
    # asm-generic names some calls through their 32/64-bit alias (__NR_fcntl is __NR3264_fcntl).
    aliases = {match[0]: int(match[1]) for match in re.findall(r"#define (__NR3264_\w+)\s+(\d+)", text)}
    kernel = {match[0]: int(match[1]) if match[1].isdigit() else aliases[match[1]]
              for match in re.findall(r"#define __NR_(\w+)\s+(\d+|__NR3264_\w+)\b", text)
              if match[1].isdigit() or match[1] in aliases}
    column = 0 if machine == "x86_64" else 1
    ours = {name: numbers[column] for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
    # Calls newer than these headers (Linux 6.6 and later) are left out; a call this
    # architecture lacks must be missing from its header too.
    wrong = {name: (number, kernel.get(name)) for name, number in ours.items()
             if (name in kernel or number is None) and kernel.get(name) != number}
    assert wrong == {}
    assert sum(name in kernel for name in ours) > 70


def test_the_spawner_loads_nothing_more_for_it():
    # Every module the spawner loads is copied into every bot process: the filter may add only itself.
    root = Path(seccomp.__file__).resolve().parents[2]

    def loaded(module: str) -> set[str]:
        probe = f"import sys, {module}; print(' '.join(sys.modules))"
        return set(subprocess.run([sys.executable, "-S", "-P", "-c", probe], capture_output=True, text=True,
                                  check=True, env={"PYTHONPATH": str(root)}).stdout.split())

    # (typing: the spawner loads it anyway)
    assert loaded("arena.sandbox.seccomp") - loaded("arena.sandbox.landlock, typing") == {"arena.sandbox.seccomp"}
    assert "arena.sandbox.seccomp" in loaded("arena.sandbox.spawner_process")


def test_the_documentation_lists_every_refused_call():
    text = (Path(__file__).resolve().parents[1] / "docs" / "seccomp.md").read_text()
    missing = [name for calls in seccomp.DENIED.values() for name in calls if f"`{name}`" not in text]
    assert missing == []


# --- program bots: what their runtimes need -------------------------------------------


def test_program_bots_get_a_connected_pair_of_unix_stream_sockets_and_timer_descriptors():
    """The BEAM does not start without them (seccomp.PROGRAM_ALLOWANCES); a Python
    bot's filter still refuses both, and a program's every other socket."""
    def probe():
        pairs = [error_of(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)),
                 error_of(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC
                                                    | socket.SOCK_NONBLOCK))]
        others = [error_of(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)),
                  error_of(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)),
                  error_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
                  error_of(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))]
        return pairs, others, syscall("timerfd_create", time.CLOCK_MONOTONIC, 0)

    strict = seccomp.prepare()
    assert strict is not None and strict.programs is not None
    assert confined(probe, strict.programs) == ([0, 0], [errno.EPERM] * 4, 0)
    pairs, _, timer = confined(probe, strict)
    assert pairs == [errno.EPERM] * 2 and timer == errno.EPERM


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_bots_filter_differs_only_by_its_allowances(machine):
    arch, column, _ = seccomp._ARCHES[machine]
    strict, loose = seccomp._program(machine), seccomp._programs_program(machine)
    table = {numbers[column]: name for calls in seccomp._GROUPS.values() for name, numbers in calls.items()}
    arguments = [(), (1, 1), (1, 2), (2, 1), (0, 0, 0, 0, 0, 8), (9, 9, 9)]
    differ = {table.get(number, number) for number in range(1024) for args in arguments
              if run_program(strict, number, arch, *args) != run_program(loose, number, arch, *args)}
    assert differ == set(seccomp.PROGRAM_ALLOWANCES)
