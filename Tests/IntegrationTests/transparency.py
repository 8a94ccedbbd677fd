#!/usr/bin/env python3
"""Transparency tests of `crashwatch run` that need a terminal, signals or timing.

`crashwatch run -- CMD` must behave like `CMD` run directly (DESIGN.md, "Process model", point 2):
stdio, signals, job control, raw terminal mode, inherited attributes, exit statuses, orphans. These
cases are awkward to express with the Swift harness, so TransparencyTests.swift runs each one as

    python3 transparency.py CRASHWATCH FIXTURES CASE

Exit status: 0 pass; 1 fail, after printing what differed; 77 skip, when the machine forbids
something the case needs (no pseudo-terminals, no bash).

Every wait is bounded: output is awaited with select() and a timeout (the fixtures print readiness
lines), processes with a deadline. There are no fixed sleeps: that something did NOT happen (a
duplicate signal) is proved with ordering markers. Python standard library only.

The script first gives itself the signal state of an ordinary shell (nothing blocked, the signals
the cases use not ignored). A blocked mask and ignored signals are inherited through fork and exec,
and crashwatch rightly passes them on; but under `swift test` this script is started from a
libdispatch worker thread, which blocks HUP, INT, QUIT, TERM, USR1, USR2, CONT, TSTP, WINCH and more,
so without the reset every signal case would fail for reasons unrelated to crashwatch.
"""

import ctypes
import fcntl
import os
import re
import resource
import select
import socket
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import common  # noqa: E402  (Tests/harness/common.py: what every Python suite shares)
from common import Fail, Skip, check  # noqa: E402

CRASHWATCH = ""
FIXTURES = ""
TIMEOUT = 5.0  # seconds for any single expected event


# ----------------------------------------------------------------------------------------------
# Helper layer
# ----------------------------------------------------------------------------------------------

_started = common.Started()  # processes this script started (Popen or pid), ended at exit if still running
_track = _started.track


class Output:
    """Reads an fd (pipe or pty master) incrementally; awaits patterns with a timeout.

    Text is decoded and `\\r` removed (a pty turns `\\n` into `\\r\\n`). `expect` searches from where
    the previous match ended, so successive calls consume the output in order.
    """

    def __init__(self, fd, name):
        self.fd = fd
        self.name = name
        self.text = ""
        self.pos = 0
        self.eof = False

    def _read(self, timeout):
        if self.eof:
            return False
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the pty's last slave fd closed
            data = b""
        if not data:
            self.eof = True
            return False
        self.text += data.decode("utf-8", "replace").replace("\r", "")
        return True

    def expect(self, pattern, what, timeout=TIMEOUT, whole_lines=True, anywhere=False):
        """Waits for `pattern` (a multi-line regex) after the previous match; returns the match.

        With `whole_lines`, only complete lines are searched, so `^…$` cannot match half a line.
        With `anywhere`, all the output is searched (for lines whose order is not defined).
        """
        regex = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            start = 0 if anywhere else self.pos
            end = self.text.rfind("\n") + 1 if whole_lines else len(self.text)
            match = regex.search(self.text, start, max(end, start))
            if match:
                self.pos = max(self.pos, match.end())
                return match
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self.eof and not self._read(0)):
                state = "end of output" if self.eof else f"{timeout:g} s"
                raise Fail(f"{self.name}: no {what} (/{pattern}/) before {state}; output so far:\n"
                           f"{self.text!r}")
            self._read(remaining)

    def read_to_eof(self, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while not self.eof:
            remaining = deadline - time.monotonic()
            check(remaining > 0, f"{self.name}: output did not end within {timeout:g} s: {self.text!r}")
            self._read(remaining)
        return self.text

    def since(self, start):
        return self.text[start:self.pos]


def spawn_piped(argv, **kwargs):
    """Starts argv in a new process group (stray group signals cannot reach this script) with its
    stdin a pipe and stdout a pipe; returns (process, Output of stdout)."""
    process = _track(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      process_group=0, **kwargs))
    return process, Output(process.stdout.fileno(), f"stdout of {argv[0]}")


BASH_PROMPT = r"^PROMPT\$ "


def interactive_bash():
    """An interactive bash (no rc files, no line editing, prompt `PROMPT$ `) on a new pty: its history directory
    (keep it alive: the user's ~/.bash_history stays clean), the process, the pty's master and its reader."""
    bash = shutil.which("bash")
    if bash is None:
        raise Skip("bash is not installed")
    history = tempfile.TemporaryDirectory(prefix="cw-bash-")
    env = dict(os.environ, PS1="PROMPT$ ", TERM="dumb", PATH=os.environ.get("PATH", "/usr/bin:/bin"),
               HISTFILE=os.path.join(history.name, "history"))
    env.pop("PROMPT_COMMAND", None)
    process, master, out = spawn_in_pty([bash, "--norc", "--noprofile", "--noediting", "-i"], env=env)
    return history, process, master, out


def spawn_in_pty(argv, env=None):
    """Starts argv as the session leader and foreground job of a new pseudo-terminal whose slave is
    its stdin, stdout and stderr; returns (process, master fd, Output of the master)."""
    try:
        master, slave = os.openpty()
    except OSError as error:
        raise Skip(f"no pseudo-terminal available: {error}")

    def make_controlling_terminal():  # runs in the child after setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = _track(subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                      start_new_session=True, preexec_fn=make_controlling_terminal))
    os.close(slave)
    return process, master, Output(master, f"terminal of {os.path.basename(argv[0])}")


def wait_exit(process, what, timeout=TIMEOUT):
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Fail(f"{what} did not exit within {timeout:g} s")


def proc_stat(pid):
    """(state letter, ppid) of a process from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return fields[0], int(fields[1])


def wait_until(predicate, what, timeout=TIMEOUT):
    """Polls `predicate` (bounded, every 10 ms) until it returns a true value, which is returned."""
    return common.wait_until(predicate, what, timeout, interval=0.01)


def run(argv, **kwargs):
    """Runs argv to completion (bounded) with captured text output."""
    return common.run(argv, TIMEOUT, **kwargs)


def fixture(name):
    return os.path.join(FIXTURES, name)


# A terminal echoes a typed control character as `^C` without a newline, so a line may start with it.
ECHOED_CONTROL = r"(?:\^.)?"


def signal_lines(text):
    return re.findall(rf"^{ECHOED_CONTROL}signal (SIG\w+) code (-?\d+)$", text, re.M)


# ----------------------------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------------------------

def case_stdin_pipe():
    """`echo hi | crashwatch run -- cat` prints `hi`, exit 0."""
    result = run([CRASHWATCH, "run", "--", "cat"], input="hi\n")
    check(result.stdout == "hi\n", f"stdout {result.stdout!r}, expected 'hi\\n' (stderr {result.stderr!r})")
    check(result.returncode == 0, f"exit status {result.returncode}, expected 0 (stderr {result.stderr!r})")


FORWARDED = [signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGWINCH, signal.SIGALRM,
             signal.SIGCONT, signal.SIGINT, signal.SIGQUIT]


def case_forward_signals():
    """Signals sent to crashwatch reach the child once each (SI_USER), stdin still flows, and SIGTERM
    ends both with status 0."""
    process, out = spawn_piped([CRASHWATCH, "run", "--", fixture("sigecho")])
    child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
    check(child != process.pid, f"sigecho's pid {child} is crashwatch's own pid: it was not a child")
    start = out.pos
    for sig in FORWARDED:
        os.kill(process.pid, sig)
        out.expect(rf"^signal {sig.name} code 0$", f"'signal {sig.name} code 0' after kill(crashwatch, {sig.name})")
    process.stdin.write(b"marker\n")
    process.stdin.flush()
    out.expect(r"^marker$", "echo of the stdin line 'marker'")
    got = signal_lines(out.since(start))
    expected = [(sig.name, "0") for sig in FORWARDED]
    check(got == expected, f"signals seen by sigecho {got}, expected each once: {expected}")
    os.kill(process.pid, signal.SIGTERM)
    out.expect(r"^signal SIGTERM code 0$", "'signal SIGTERM code 0'")
    status = wait_exit(process, "crashwatch after SIGTERM")
    check(status == 0, f"crashwatch exit status {status} after sigecho exited 0 on SIGTERM, expected 0")
    rest = out.read_to_eof()[out.pos:]
    check(not signal_lines(rest), f"unexpected output after SIGTERM: {rest!r}")


def case_group_signals_once():
    """A signal sent to the whole process group (`kill -SIG -PGID`, a shell's `fg`, systemd's
    control-group kill) reaches the child directly; crashwatch must not send it a second copy."""
    process, out = spawn_piped([CRASHWATCH, "run", "--", fixture("sigecho")])
    out.expect(r"^ready pid=(\d+)$", "ready line")
    start = out.pos
    rounds = 15
    for index in range(rounds):
        for sig in (signal.SIGUSR2, signal.SIGCONT, signal.SIGHUP):
            os.killpg(process.pid, sig)
            out.expect(rf"^signal {sig.name} code 0$", f"'signal {sig.name}' after killpg round {index}")
        # An ordering marker: sigecho prints pending signal lines before it echoes stdin, so a duplicate
        # forwarded by crashwatch would show up before the marker comes back.
        process.stdin.write(f"marker {index}\n".encode())
        process.stdin.flush()
        out.expect(rf"^marker {index}$", f"echo of marker {index}")
    got = signal_lines(out.since(start))
    for name in ("SIGUSR2", "SIGCONT", "SIGHUP"):
        count = sum(1 for s in got if s[0] == name)
        check(count == rounds, f"sigecho received {name} {count} times for {rounds} group signals")
    os.kill(process.pid, signal.SIGTERM)
    status = wait_exit(process, "crashwatch after SIGTERM")
    check(status == 0, f"crashwatch exit status {status}, expected 0")


def case_ctrl_c_once():
    """Ctrl-C in a terminal reaches the child exactly once (from the kernel, SI_KERNEL = 128)."""
    process, master, out = spawn_in_pty([CRASHWATCH, "run", "--", fixture("sigecho")])
    out.expect(r"^ready pid=(\d+)$", "ready line")
    start = out.pos
    os.write(master, b"\x03")
    out.expect(rf"^{ECHOED_CONTROL}signal SIGINT code 128$", "'signal SIGINT code 128' after typing ^C")
    # Ordering markers. crashwatch got the terminal's SIGINT before this SIGUSR1, and signalfd hands
    # out lower numbers first, so a duplicate SIGINT it forwarded is sent to sigecho no later than the
    # SIGUSR1. Both may then be pending together: the kernel sets up the SIGINT handler frame first,
    # the SIGUSR1 one on top of it, so SIGUSR1's line can come first, but both records are in
    # sigecho's self-pipe before its main loop runs again, and that loop empties the pipe before it
    # reads stdin. A stdin line echoed after the SIGUSR1 line therefore comes after any duplicate.
    os.kill(process.pid, signal.SIGUSR1)
    out.expect(r"^signal SIGUSR1 code 0$", "'signal SIGUSR1 code 0' (ordering marker)")
    os.write(master, b"marker\n")
    out.expect(r"^marker$", "the terminal's echo of 'marker'")
    out.expect(r"^marker$", "sigecho's echo of 'marker' (ordering marker)")
    got = sorted(signal_lines(out.since(start)))
    check(got == [("SIGINT", "128"), ("SIGUSR1", "0")],
          f"signals seen by sigecho {got}, expected one SIGINT (code 128, from the terminal) and the "
          f"SIGUSR1 marker: crashwatch forwarded the terminal's ^C a second time")
    os.write(master, b"\x04")  # EOF at the start of a line
    status = wait_exit(process, "crashwatch after ^D")
    check(status == 0, f"crashwatch exit status {status} after sigecho exited 0 at EOF, expected 0")


def case_job_control():
    """In an interactive bash, ^Z stops crashwatch and its child as one job; `fg` continues both."""
    history, process, master, out = interactive_bash()
    prompt = BASH_PROMPT

    def type_line(text):
        os.write(master, text.encode() + b"\n")

    try:
        out.expect(prompt, "first bash prompt", whole_lines=False)
        type_line(f"{CRASHWATCH} run -- {fixture('sigecho')}")
        child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
        supervisor = wait_until(lambda: next((pid for pid in _children(process.pid)), None),
                                "bash has a child (crashwatch)")
        check(supervisor != child, "sigecho runs as bash's direct child: crashwatch is not in between")

        os.write(master, b"\x1a")  # ^Z
        out.expect(r"Stopped", "bash's report that the job stopped")
        out.expect(prompt, "bash prompt after the job stopped", whole_lines=False)
        cw_state = proc_stat(supervisor)
        check(cw_state is not None and cw_state[0] == "T",
              f"crashwatch (pid {supervisor}) is in state {cw_state and cw_state[0]}, expected T (stopped)")
        app_state = proc_stat(child)
        check(app_state is not None and app_state[0] in "Tt",
              f"sigecho (pid {child}) is in state {app_state and app_state[0]}, expected T or t (stopped)")

        start = out.pos
        type_line("fg")
        out.expect(rf"^{ECHOED_CONTROL}signal SIGCONT code -?\d+$", "'signal SIGCONT' after fg")
        type_line("after")
        # The terminal echoes the typed line; sigecho's own copy is the second one.
        out.expect(r"^after$", "terminal echo of 'after'")
        out.expect(r"^after$", "sigecho's echo of the line 'after' (it reads stdin again after fg)")
        received = signal_lines(out.since(start))
        others = [s for s in received if s[0] != "SIGCONT"]
        check(not others, f"unexpected signals after fg: {others}")
        # bash's fg sends SIGCONT to the whole job: the child gets it once, not again from crashwatch.
        conts = [s for s in received if s[0] == "SIGCONT"]
        check(len(conts) == 1, f"sigecho received SIGCONT {len(conts)} times after fg, expected once: {conts}")

        os.write(master, b"\x04")  # ^D: sigecho reads EOF and exits 0
        out.expect(prompt, "bash prompt after sigecho ended", whole_lines=False)
        type_line("echo status=$?")
        status = out.expect(r"^status=(\d+)$", "'status=N' line").group(1)
        check(status == "0", f"bash reports crashwatch's job ended with status {status}, expected 0")
        type_line("exit")
        wait_exit(process, "bash after 'exit'")
    finally:
        os.close(master)
        history.cleanup()


def case_job_control_stops():
    """In an interactive bash over a pseudo-terminal: ^Z stops crashwatch and the program as one job, `bg`
    continues both until the program writes to the terminal with `tostop` set (SIGTTOU stops the job
    again), `fg` continues both; a SIGSTOP and SIGCONT sent to the program alone leave crashwatch running and the
    job in the foreground (the program runs on after SIGCONT); ^Z while the program is stopped alone stops
    the job, `fg` continues it; and a crash after all that is reported, with the job's status 139."""
    history, process, master, out = interactive_bash()
    prompt = BASH_PROMPT

    def type_line(text):
        os.write(master, text.encode() + b"\n")

    def echoed(marker, what):
        type_line(marker)
        out.expect(rf"^{marker}$", f"terminal echo of '{marker}'")
        out.expect(rf"^{marker}$", f"sigecho's echo of '{marker}' ({what})")

    def job_stopped(what):
        out.expect(r"Stopped", f"bash's report that the job stopped ({what})")
        out.expect(prompt, f"bash prompt after the job stopped ({what})", whole_lines=False)
        check(_state(supervisor) == "T", f"crashwatch is in state {_state(supervisor)} after {what}, expected T")
        check(_state(child) in ("t", "T"), f"sigecho is in state {_state(child)} after {what}, expected t or T")

    try:
        with tempfile.TemporaryDirectory(prefix="cw-jobs-") as cwd:
            out.expect(prompt, "first bash prompt", whole_lines=False)
            type_line(f"cd {cwd} && {CRASHWATCH} run -- {fixture('sigecho')}")
            child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
            supervisor = wait_until(lambda: next((pid for pid in _children(process.pid)), None),
                                    "bash has a child (crashwatch)")

            os.write(master, b"\x1a")  # ^Z
            job_stopped("^Z")
            # In the background the program must not read the terminal while this script types (a race
            # with bash, bare or not): `tostop` makes its first write, SIGCONT's line, stop the job instead
            # (SIGTTOU from the terminal to the whole group, mirrored like ^Z's SIGTSTP).
            type_line("stty tostop")
            out.expect(prompt, "bash prompt after stty", whole_lines=False)
            type_line("set -b")  # bash reports a background job's stop at once, not at its next prompt
            out.expect(prompt, "bash prompt after set -b", whole_lines=False)
            type_line("bg")
            out.expect(r"&$", "bash's bg naming the job")
            out.expect(r"Stopped", "bash's report that the job stopped again (a background write with tostop)")
            check(_state(supervisor) == "T", f"crashwatch is in state {_state(supervisor)} after its background write, expected T")
            check(_state(child) in ("t", "T"), f"sigecho is in state {_state(child)} after its background write, expected t or T")
            type_line("fg")
            _continued(out, "fg")
            echoed("after-fg", "it reads the terminal again after fg")

            os.kill(child, signal.SIGSTOP)  # the program alone
            wait_until(lambda: _state(child) in ("t", "T"), "sigecho stopped by a SIGSTOP of its own")
            os.kill(child, signal.SIGCONT)
            _continued(out, "a SIGCONT to the program alone")
            echoed("after-cont", "the job stayed in the foreground and the program runs on")
            check(_state(supervisor) != "T", "crashwatch stopped along with a stop sent to the program alone")

            os.kill(child, signal.SIGSTOP)
            wait_until(lambda: _state(child) in ("t", "T"), "sigecho stopped by a second SIGSTOP of its own")
            os.write(master, b"\x1a")  # ^Z while the program is stopped alone: now the job stops
            job_stopped("^Z with the program already stopped")
            type_line("fg")
            _continued(out, "fg of a job whose program was stopped alone")
            echoed("after-second-fg", "the job runs again")

            os.kill(child, signal.SIGSEGV)
            out.expect(prompt, "bash prompt after the crash", whole_lines=False)
            type_line("echo status=$?")
            status = out.expect(r"^status=(\d+)$", "'status=N' line").group(1)
            check(status == "139", f"bash reports crashwatch's job ended with status {status}, expected 139 (SIGSEGV)")
            reports = _crash_reports(child)
            check(len(reports) == 1, f"{len(reports)} crash reports for sigecho (pid {child}), expected 1")
            type_line("exit")
            wait_exit(process, "bash after 'exit'")
    finally:
        os.close(master)
        history.cleanup()


def _children(pid):
    """Pids whose parent is `pid`."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat and stat[1] == pid:
                children.append(int(entry))
    return children


# --- Job control without deadlock: a stop crashwatch must not mirror, and one it must.

ATTACKER = ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _need_attacker():
    if os.geteuid() != 0:
        raise Skip("needs root to run crashwatch as root and the attacker as nobody")
    if not os.access(ATTACKER[0], os.X_OK):
        raise Skip(f"{ATTACKER[0]} is not installed")


def _as_attacker(shell):
    """Runs a shell command as the unprivileged attacker (nobody); fails the case if it fails."""
    result = run(ATTACKER + ["/bin/sh", "-c", shell])
    check(result.returncode == 0, f"as nobody, `{shell}` failed ({result.returncode}): {result.stderr!r}")


def _state(pid):
    return (proc_stat(pid) or ("gone", 0))[0]


def _crash_reports(pid):
    spool = os.environ["CRASHWATCH_SPOOL"]
    return [r for r in _reports(spool) if r["kind"] == "crash" and r["process"]["pid"] == pid] if os.path.isdir(spool) else []


def _expect_crash_reported(process, child, what):
    """crashwatch ends, bounded, as its child died (SIGSEGV), with the crash's report in the spool."""
    status = wait_exit(process, f"crashwatch after {what}", timeout=30)
    check(status == -signal.SIGSEGV, f"crashwatch ended with {status} after {what}, expected death by SIGSEGV (-11)")
    reports = _crash_reports(child)
    check(len(reports) == 1 and reports[0]["signal"]["name"] == "SIGSEGV",
          f"crash reports for pid {child} after {what}: {[r['signal']['name'] for r in reports]}, expected one SIGSEGV")


def _continued(out, what):
    """The child runs again: its SIGCONT handler's line comes out (after a prompt, in a terminal)."""
    out.expect(r"signal SIGCONT code 0$", f"'signal SIGCONT code 0' after {what}")


def case_stop_cont_app_alone():
    """The attack: an unprivileged user sends SIGSTOP then SIGCONT to a program that a root crashwatch
    supervises (and never to crashwatch, which it may not signal), then makes it crash — twice over, and
    once with the crash signal sent while it is stopped. crashwatch must stay running through the stop
    (stopped, it could not answer the ptrace stop SIGCONT wakes the program into, and nothing would ever
    continue it), the program must run on after SIGCONT, and its crash must be reported with crashwatch
    ending as it did; every wait is bounded."""
    _need_attacker()
    with tempfile.TemporaryDirectory(prefix="cw-stopcont-") as cwd:
        os.chmod(cwd, 0o755)
        for crash_while_stopped in (False, True):
            process, out = spawn_piped([CRASHWATCH, "run", "--"] + ATTACKER + [fixture("sigecho")], cwd=cwd)
            child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
            for round_ in range(3):
                _as_attacker(f"kill -STOP {child}")
                wait_until(lambda: _state(child) in ("t", "T"), f"sigecho (pid {child}) is stopped (round {round_})")
                if crash_while_stopped and round_ == 2:
                    _as_attacker(f"kill -SEGV {child}")
                _as_attacker(f"kill -CONT {child}")
                if crash_while_stopped and round_ == 2:
                    break
                _continued(out, f"the attacker's SIGCONT (round {round_})")
                process.stdin.write(f"marker {round_}\n".encode())
                process.stdin.flush()
                out.expect(rf"^marker {round_}$", f"sigecho's echo of 'marker {round_}': it runs again after SIGCONT")
                check(_state(process.pid) not in ("T", "gone"),
                      f"crashwatch is in state {_state(process.pid)} after the program alone was stopped and continued")
            if not crash_while_stopped:
                _as_attacker(f"kill -SEGV {child}")
            _expect_crash_reported(process, child, "SIGSTOP/SIGCONT to the program alone, then its crash"
                                   + (" (sent while it was stopped)" if crash_while_stopped else ""))


def case_cgroup_stop_cont():
    """`systemctl kill -s STOP` then `-s CONT`: systemd signals the main process (crashwatch) and then
    every other process of the cgroup (the program). Both stop, both continue — crashwatch by the kernel,
    the program through its ptrace stops — whatever order crashwatch sees the stops in; then a crash is
    reported. Several rounds: the order in which the two stops land varies."""
    with tempfile.TemporaryDirectory(prefix="cw-cgroupkill-") as cwd:
        _cgroup_stop_cont_rounds(cwd)


def _cgroup_stop_cont_rounds(cwd):
    process, out = spawn_piped([CRASHWATCH, "run", "--", fixture("sigecho")], cwd=cwd)
    child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
    for round_ in range(12):
        os.kill(process.pid, signal.SIGSTOP)
        os.kill(child, signal.SIGSTOP)
        wait_until(lambda: _state(process.pid) == "T" and _state(child) in ("t", "T"),
                   f"crashwatch and sigecho both stopped (round {round_})")
        os.kill(process.pid, signal.SIGCONT)
        os.kill(child, signal.SIGCONT)
        _continued(out, f"SIGCONT to the cgroup (round {round_})")
        process.stdin.write(f"marker {round_}\n".encode())
        process.stdin.flush()
        out.expect(rf"^marker {round_}$", f"sigecho's echo of 'marker {round_}' after the cgroup's SIGCONT")
    os.kill(child, signal.SIGSEGV)
    _expect_crash_reported(process, child, "the cgroup's STOP/CONT rounds, then a crash")


def _cgroup2_root():
    """Where the cgroup v2 hierarchy is mounted, or None."""
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return fields[1]
    return None


def case_cgroup_freezer():
    """The cgroup v2 freezer on a cgroup holding crashwatch and the program: both freeze and thaw with it.
    A SIGSTOP the program got while frozen (from an unprivileged user) stops it alone once thawed, the
    same user's SIGCONT continues it, and its crash is then reported."""
    _need_attacker()
    root = _cgroup2_root()
    if root is None:
        raise Skip("no cgroup v2 hierarchy is mounted")
    group = os.path.join(root, f"crashwatch-freezer-test-{os.getpid()}")
    try:
        os.mkdir(group)
    except OSError as error:
        raise Skip(f"cannot create a cgroup v2 group under {root}: {error}")
    if not os.path.exists(os.path.join(group, "cgroup.freeze")):
        os.rmdir(group)
        raise Skip(f"{root} has no cgroup.freeze (kernel older than 5.2)")

    def frozen():
        with open(os.path.join(group, "cgroup.events")) as events:
            return "frozen 1" in events.read().split("\n")

    def freeze(value):
        with open(os.path.join(group, "cgroup.freeze"), "w") as control:
            control.write(value)

    process = None
    try:
        with tempfile.TemporaryDirectory(prefix="cw-freezer-") as cwd:
            os.chmod(cwd, 0o755)
            try:
                process, out = spawn_piped(["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', group,
                                            CRASHWATCH, "run", "--"] + ATTACKER + [fixture("sigecho")], cwd=cwd)
                child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
            except Fail:
                raise Skip(f"cannot move a process into {group}")
            freeze("1")
            wait_until(frozen, "the cgroup reports frozen 1")
            _as_attacker(f"kill -STOP {child}")
            freeze("0")
            wait_until(lambda: not frozen(), "the cgroup reports frozen 0")
            wait_until(lambda: _state(child) in ("t", "T"), "sigecho stopped by the SIGSTOP it got while frozen")
            _as_attacker(f"kill -CONT {child}")
            _continued(out, "the SIGCONT after the thaw")
            process.stdin.write(b"thawed\n")
            process.stdin.flush()
            out.expect(r"^thawed$", "sigecho's echo of 'thawed'")
            freeze("1")
            wait_until(frozen, "the cgroup reports frozen 1 again")
            freeze("0")
            _as_attacker(f"kill -SEGV {child}")
            _expect_crash_reported(process, child, "a freeze, a stop while frozen, a thaw and a SIGCONT, then a crash")
    finally:
        try:
            freeze("0")
        except OSError:
            pass
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        kill = os.path.join(group, "cgroup.kill")
        if os.path.exists(kill):
            with open(kill, "w") as control:
                control.write("1")
        wait_until(lambda: not open(os.path.join(group, "cgroup.procs")).read().strip(), "the test cgroup is empty")
        os.rmdir(group)


RAW_SCRIPT = r"""
import os, sys, termios, tty
saved = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"raw-ready\r\n")
key = os.read(0, 1)
termios.tcsetattr(0, termios.TCSADRAIN, saved)
print("key", key.decode(), "fg", os.tcgetpgrp(0) == os.getpgrp(), flush=True)
"""


def case_raw_terminal():
    """A child can put the terminal in raw mode, read one key, and is in the foreground group."""
    process, master, out = spawn_in_pty([CRASHWATCH, "run", "--", sys.executable, "-c", RAW_SCRIPT])
    out.expect(r"^raw-ready$", "'raw-ready' (the child switched the terminal to raw mode)")
    os.write(master, b"q")
    out.expect(r"^key q fg True$", "'key q fg True'")
    status = wait_exit(process, "crashwatch after the child read its key")
    check(status == 0, f"crashwatch exit status {status}, expected 0; output {out.text!r}")
    os.close(master)


def _attributes(exec_argv, cwd):
    """Runs `sh -c 'ulimit -n 777; trap "" USR2; exec ARGV'` as the leader of a new process group
    (this script's session), with SIGPWR blocked and stdin /dev/null; returns (its pid, the
    sigecho --getattr line as a dict)."""
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in exec_argv)
    process = _track(subprocess.Popen(
        ["/bin/sh", "-c", f"ulimit -n 777; trap '' USR2; exec {quoted}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        process_group=0, preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPWR})))
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Fail(f"{exec_argv} did not finish within {TIMEOUT:g} s")
    check(process.returncode == 0, f"{exec_argv}: exit status {process.returncode}, stderr {stderr!r}")
    match = re.search(r"^(pgid=.*)$", stdout.decode(), re.M)
    check(match, f"{exec_argv}: no attributes line in {stdout!r}")
    return process.pid, dict(field.split("=", 1) for field in match.group(1).split(" "))


def case_inherited_attributes():
    """The child gets the same process group, session, cwd, rlimits, signal mask, ignored signals and
    environment as it would without crashwatch."""
    with tempfile.TemporaryDirectory(prefix="cw-attr-") as cwd:
        bare_pid, bare = _attributes([fixture("sigecho"), "--getattr"], cwd)
        cw_pid, supervised = _attributes([CRASHWATCH, "run", "--", fixture("sigecho"), "--getattr"], cwd)
    # Sanity of the bare run: the attributes the launcher set really are visible.
    check(bare["pgid"] == str(bare_pid), f"bare run: pgid {bare['pgid']}, expected {bare_pid}")
    check(bare["nofile"] == "777", f"bare run: nofile {bare['nofile']}, expected 777")
    check(int(bare["sigign"], 16) & (1 << (signal.SIGUSR2 - 1)), f"bare run: SIGUSR2 not ignored: {bare}")
    check(int(bare["sigmask"], 16) & (1 << (signal.SIGPWR - 1)), f"bare run: SIGPWR not blocked: {bare}")

    differences = []
    if supervised["pgid"] != str(cw_pid):
        differences.append(f"pgid {supervised['pgid']}, expected crashwatch's process group {cw_pid}")
    for key in ("sid", "cwd", "nofile", "sigmask", "sigign"):
        if supervised[key] != bare[key]:
            differences.append(f"{key} {supervised[key]}, expected {bare[key]} as in the bare run")
    check(not differences, "under crashwatch: " + "; ".join(differences))

    # The environment passes through untouched, but for what names crashwatch instead of the program:
    # NOTIFY_SOCKET becomes crashwatch's relay (it sends on what arrives), and LISTEN_PID/WATCHDOG_PID
    # naming crashwatch's pid name the program's. Such variables naming another pid stay as they are.
    env = dict(os.environ, NOTIFY_SOCKET="/run/x", LISTEN_FDS="2", LISTEN_PID="1", WATCHDOG_PID="1")
    bare_env = run(["env"], env=env)
    cw_env = run([CRASHWATCH, "run", "--", "env"], env=env)
    check(cw_env.returncode == 0, f"crashwatch run -- env: status {cw_env.returncode}, stderr {cw_env.stderr!r}")
    bare_lines, cw_lines = sorted(bare_env.stdout.splitlines()), sorted(cw_env.stdout.splitlines())
    check("NOTIFY_SOCKET=/run/x" in bare_lines, "bare env lacks NOTIFY_SOCKET")
    relay = [line for line in cw_lines if line.startswith("NOTIFY_SOCKET=")]
    check(len(relay) == 1 and relay[0].startswith("NOTIFY_SOCKET=@crashwatch/notify/"),
          f"NOTIFY_SOCKET under crashwatch is not its relay: {relay}")
    bare_rest = [line for line in bare_lines if not line.startswith("NOTIFY_SOCKET=")]
    cw_rest = [line for line in cw_lines if not line.startswith("NOTIFY_SOCKET=")]
    missing = sorted(set(bare_rest) - set(cw_rest))
    extra = sorted(set(cw_rest) - set(bare_rest))
    check(bare_rest == cw_rest, f"environment differs under crashwatch: missing {missing}, extra {extra}")

    # LISTEN_PID and WATCHDOG_PID that name crashwatch (systemd's main process) name the program.
    script = 'echo "$LISTEN_PID $WATCHDOG_PID $$"'
    named = run(["bash", "-c", f'exec env LISTEN_PID=$$ WATCHDOG_PID=$$ LISTEN_FDS=1 {CRASHWATCH} run -- sh -c \'{script}\''])
    fields = named.stdout.split()
    check(named.returncode == 0 and len(fields) == 3 and fields[0] == fields[2] and fields[1] == fields[2],
          f"LISTEN_PID/WATCHDOG_PID naming crashwatch were not rewritten to the program's pid: {named.stdout!r} {named.stderr!r}")


PR_SET_CHILD_SUBREAPER = 36


def case_supervisor_killed():
    """SIGKILL of crashwatch leaves the app running (not stopped, not killed) with working stdio."""
    # Become a subreaper so the orphaned sigecho is reparented to this script, which can then read
    # its exit status.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise Skip(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    process, out = spawn_piped([CRASHWATCH, "run", "--", fixture("sigecho")])
    child = int(out.expect(r"^ready pid=(\d+)$", "ready line").group(1))
    _track(child)
    os.kill(process.pid, signal.SIGKILL)
    status = wait_exit(process, "crashwatch after SIGKILL")
    check(status == -signal.SIGKILL, f"crashwatch status {status}, expected -9")

    process.stdin.write(b"still here\n")
    process.stdin.flush()
    out.expect(r"^still here$", "sigecho's echo of 'still here' after crashwatch was killed")
    state = proc_stat(child)
    check(state is not None and state[0] not in "TtZX",
          f"sigecho (pid {child}) state {state and state[0]} after its supervisor died: expected running/sleeping")

    process.stdin.close()
    deadline = time.monotonic() + TIMEOUT
    while True:
        waited, raw = os.waitpid(child, os.WNOHANG)
        if waited == child:
            break
        check(time.monotonic() < deadline, f"sigecho (pid {child}) did not exit within {TIMEOUT:g} s of EOF")
        time.sleep(0.01)
    check(os.waitstatus_to_exitcode(raw) == 0,
          f"sigecho exit status {os.waitstatus_to_exitcode(raw)} after EOF, expected 0")


ORPHAN_MAIN = r"""
sh -c '
  sh -c "
    p0=\$1
    while read -r _ _ _ pp _ < /proc/\$\$/stat && [ \"\$pp\" = \"\$p0\" ]; do sleep 0.01; done
    echo orphan pid=\$\$ ppid=\$pp
  " orphan $$ &
  echo middle pid=$$
'
echo main pid=$$
read line
exit 0
"""


def _orphan_case(options):
    process, out = spawn_piped([CRASHWATCH, "run", *options, "--", "/bin/sh", "-c", ORPHAN_MAIN])
    what = f"crashwatch run {' '.join(options)}".rstrip()
    middle = int(out.expect(r"^middle pid=(\d+)$", "middle process's line").group(1))
    orphan, ppid = map(int, out.expect(r"^orphan pid=(\d+) ppid=(\d+)$", "orphan's line").groups())
    check(ppid == process.pid,
          f"{what}: the orphan's parent after its parent {middle} exited is {ppid}, expected crashwatch "
          f"({process.pid}): crashwatch is not the subreaper")

    def reaped():
        state = proc_stat(orphan)
        zombies = [pid for pid in _children(process.pid) if (proc_stat(pid) or ("",))[0] == "Z"]
        return (state is None or state[1] != process.pid) and not zombies

    wait_until(reaped, f"{what}: the orphan {orphan} is reaped and crashwatch ({process.pid}) has no zombie "
                       f"children (children now: {[(p, proc_stat(p)) for p in _children(process.pid)]})")
    out.expect(r"^main pid=\d+$", "main child's line", anywhere=True)
    check(proc_stat(process.pid) is not None, f"{what} exited before its main child")
    process.stdin.write(b"done\n")
    process.stdin.close()
    status = wait_exit(process, what)
    check(status == 0, f"{what}: exit status {status}, expected 0 (the main child's)")


def case_orphans_reaped():
    """crashwatch is a subreaper: orphans of its tree become its children and are reaped, with and
    without fork following."""
    _orphan_case([])
    _orphan_case(["--no-follow-forks"])


def _core_files(directory):
    return sorted(n for n in os.listdir(directory) if n == "core" or n.startswith("core."))


def _core_process(path):
    """(pid, comm) from the NT_PRPSINFO note of a 64-bit little-endian ELF core file."""
    with open(path, "rb") as core:
        data = core.read(1 << 20)
    check(data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path} is not a 64-bit LE ELF file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        offset, end = p_offset, p_offset + p_filesz
        while offset + 12 <= end:
            namesz, descsz, note_type = struct.unpack_from("<III", data, offset)
            desc = offset + 12 + ((namesz + 3) & ~3)
            if note_type == 3:  # NT_PRPSINFO: pr_pid at 24, pr_fname[16] at 40
                pid, = struct.unpack_from("<i", data, desc + 24)
                return pid, data[desc + 40:desc + 56].split(b"\0")[0].decode()
            offset = desc + ((descsz + 3) & ~3)
    raise Fail(f"{path}: no NT_PRPSINFO note")


def case_exit_status_signal():
    """crashwatch ends as its child did: same signal or exit code; it adds no core file of its own."""
    result = run([CRASHWATCH, "run", "--", "sh", "-c", "kill -TERM $$"])
    check(result.returncode == -signal.SIGTERM,
          f"child killed by SIGTERM: crashwatch status {result.returncode}, expected death by SIGTERM (-15); "
          f"stderr {result.stderr!r}")
    result = run([CRASHWATCH, "run", "--", "sh", "-c", "exit 7"])
    check(result.returncode == 7, f"child exited 7: crashwatch status {result.returncode}; stderr {result.stderr!r}")

    with open("/proc/sys/kernel/core_pattern") as pattern_file:
        core_pattern = pattern_file.read().strip()
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    limit = "unlimited" if hard == resource.RLIM_INFINITY else str(hard // 512)  # ulimit -c counts 512 B
    with tempfile.TemporaryDirectory(prefix="cw-core-") as cwd:
        process = _track(subprocess.Popen(
            ["/bin/sh", "-c", f"ulimit -c {limit} && exec '{CRASHWATCH}' run -- '{fixture('null_deref')}'"],
            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0))
        try:
            _, stderr = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Fail(f"crashwatch run -- null_deref did not finish within {TIMEOUT:g} s")
        check(process.returncode == -signal.SIGSEGV,
              f"child died of SIGSEGV: crashwatch status {process.returncode}, expected -11; stderr {stderr!r}")
        cores = _core_files(cwd)
        check(len(cores) <= 1, f"core files {cores}: crashwatch wrote one of its own beside the app's")
        if core_pattern == "core" and limit == "unlimited":
            check(len(cores) == 1, f"core_pattern is 'core' but the crashed app left no core file ({cores})")
        # The kernel replaces an existing `core` file, so a core of crashwatch's own written after the
        # app's would leave one file too: read whose core it is.
        for name in cores:
            pid, comm = _core_process(os.path.join(cwd, name))
            check(pid != process.pid and comm == "null_deref",
                  f"{name} is the core of pid {pid} ({comm}), not of the app: crashwatch (pid {process.pid}) "
                  f"dumped core")


def _declared_run_options():
    """The options `crashwatch run`'s parser is declared with (`OptionSpec("name", short: "c", …)` in
    RunCommand.swift, found from this script's place in the package), or None without the source."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        with open(os.path.join(root, "Sources", "CrashwatchCLI", "RunCommand.swift")) as source:
            specs = re.findall(r'OptionSpec\(\s*"([^"]+)"(?:\s*,\s*short:\s*"(.)")?', source.read())
    except OSError:
        return None
    return [f"--{name}" for name, _ in specs] + [f"-{short}" for _, short in specs if short]


def case_pid1_exit_status():
    """As PID 1 of a PID namespace (a container entrypoint) a process cannot kill itself with its own
    signal: crashwatch then exits with 128+S, so the namespace's parent sees 139 for a SIGSEGV."""
    unshare = shutil.which("unshare")
    if not unshare:
        raise Skip("unshare (util-linux) is not installed")
    probe = run([unshare, "--pid", "--fork", "--mount-proc", "true"])
    if probe.returncode != 0:
        raise Skip(f"cannot create a PID namespace here: {probe.stderr.strip()}")
    with tempfile.TemporaryDirectory() as spool:
        result = run([unshare, "--pid", "--fork", "--mount-proc", CRASHWATCH, "run", "--spool", spool, "--",
                      fixture("null_deref")])
        check(result.returncode == 139,
              f"exit status {result.returncode} (negative: killed by a signal), expected exit code 139; stderr {result.stderr!r}")
        check(" crashed: SIGSEGV (SEGV_MAPERR)" in result.stderr, f"no crash line in {result.stderr!r}")
        check(len([n for n in os.listdir(spool) if n.endswith(".json")]) == 1, "expected one report in the spool")


def case_command_errors():
    """Exit statuses and messages when the command cannot run, usage errors, --help, --version."""
    problems = []

    def expect_status(argv, status):
        result = run([CRASHWATCH, *argv])
        if result.returncode != status:
            problems.append(f"crashwatch {' '.join(argv)}: status {result.returncode}, expected {status} "
                            f"(stderr {result.stderr!r})")
        return result

    result = expect_status(["run", "--", "/nonexistent/x"], 127)
    if result.stderr.count("/nonexistent/x") != 1:
        problems.append(f"crashwatch run -- /nonexistent/x: stderr should name the command once: {result.stderr!r}")
    expect_status(["run", "--", "/etc/passwd"], 126)
    expect_status(["run"], 64)
    result = expect_status(["run", "--bogus", "--", "true"], 64)
    if not re.search(r"^Usage:", result.stderr, re.M):
        problems.append(f"crashwatch run --bogus: no 'Usage:' line on stderr: {result.stderr!r}")
    unknown = next((line for line in result.stderr.splitlines() if "--bogus" in line), None)
    if unknown is None:
        problems.append(f"crashwatch run --bogus: stderr does not name the option: {result.stderr!r}")
    result = expect_status(["--version"], 0)
    if not result.stdout.startswith("crashwatch 0."):
        problems.append(f"crashwatch --version printed {result.stdout!r}, expected 'crashwatch 0.…'")
    result = expect_status(["--help"], 0)
    if "run" not in result.stdout:
        problems.append(f"crashwatch --help does not mention the run command: {result.stdout!r}")
    result = expect_status(["run", "--help"], 0)
    run_help = result.stdout
    declared = _declared_run_options() or []
    for option in sorted(set(declared) | {"--no-follow-forks", "--help"}):
        if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", run_help):
            problems.append(f"crashwatch run --help does not mention {option}, which the parser accepts")
    for status in ("64", "126", "127"):
        if not re.search(rf"^\s*{status}\s", run_help, re.M):
            problems.append(f"crashwatch run --help does not explain exit status {status}")
    # Conversely, every option the help lists is known to the parser (it may want a value: only the
    # "unknown option" complaint given for --bogus counts).
    if unknown is not None:
        for option in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", run_help)) - {"--help"}):
            with tempfile.TemporaryDirectory(prefix="cw-option-") as cwd:  # the value "--" may be a path
                stderr = run([CRASHWATCH, "run", option, "--", "true"], cwd=cwd).stderr
            if unknown.replace("--bogus", option) in stderr:
                problems.append(f"crashwatch run --help lists {option} but the parser rejects it: {stderr!r}")
    check(not problems, "\n".join(problems))


# --- Under a service manager: sd_notify relay, watchdog hangs, SIGKILL deaths, forking daemons,
# refused ptrace (the real-systemd suite in Tests/systemd proves the same under systemd itself).

_reports = common.read_reports


NOTIFY_APP = r"""
import os, socket, struct, sys, time
address = os.environ["NOTIFY_SOCKET"]
print(os.environ.get("LISTEN_PID"), os.environ.get("WATCHDOG_PID"), os.getpid(), address, flush=True)
target = "\0" + address[1:] if address.startswith("@") else address
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"READY=1\nSTATUS=serving\nMAINPID=%d" % os.getpid(), target)
stored, _ = os.pipe()
s.sendmsg([b"FDSTORE=1\nFDNAME=stored"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", stored))], 0, target)
for _ in range(3):
    s.sendto(b"WATCHDOG=1", target)
    time.sleep(0.1)
def hang_here():
    while True:
        pass
hang_here()
"""


def case_notify_relay_and_hang():
    """The program's sd_notify messages reach the service manager's socket from crashwatch itself
    (MAINPID= dropped); LISTEN_PID/WATCHDOG_PID naming crashwatch name the program; when the watchdog
    pings stop for half of WATCHDOG_USEC a hang report is written with the program still running, and
    the SIGABRT that ends it gives a crash report linked to the hang report."""
    spool = tempfile.mkdtemp(prefix="cw-notify-")
    upstream_path = os.path.join(spool, "..", os.path.basename(spool) + ".notify")
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    upstream.bind(upstream_path)
    upstream.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    upstream.settimeout(10)
    env = dict(os.environ, NOTIFY_SOCKET=upstream_path, WATCHDOG_USEC="1000000")
    process = subprocess.Popen(
        ["bash", "-c", f'exec env LISTEN_PID=$$ WATCHDOG_PID=$$ LISTEN_FDS=0 {CRASHWATCH} run --spool {spool} -- python3 -c "$0"', NOTIFY_APP],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        messages = []
        passed = []
        for _ in range(5):
            data, ancillary, _, _ = upstream.recvmsg(4096, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(4))
            sender = None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    sender = struct.unpack("iII", payload[:12])[0]
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    passed.append((data, struct.unpack("i", payload[:4])[0]))
            messages.append((data, sender))
        check(messages[0][0] == b"READY=1\nSTATUS=serving", f"first relayed message: {messages[0][0]!r} (MAINPID= must be dropped)")
        check(messages[1][0] == b"FDSTORE=1\nFDNAME=stored" and len(passed) == 1 and passed[0][0] == messages[1][0]
              and os.readlink(f"/proc/self/fd/{passed[0][1]}").startswith("pipe:"),
              f"FDSTORE message relayed as {messages[1][0]!r} with descriptors {passed}")
        os.close(passed[0][1])
        check(all(data == b"WATCHDOG=1" for data, _ in messages[2:]), f"watchdog pings relayed as {messages[2:]}")
        check(all(sender == process.pid for _, sender in messages), f"senders {[s for _, s in messages]}, expected crashwatch {process.pid}")
        hang = wait_until(lambda: [r for r in _reports(spool) if r["kind"] == "hang"], "there is a hang report", 10)[0]
        check(process.poll() is None, "crashwatch ended before the hang was reported")
        check(hang["signal"]["name"] == "none" and hang["hang"]["source"] == "watchdog" and hang["hang"]["unfinished"] is True,
              f"hang report: signal {hang['signal']}, hang {hang['hang']}")
        check(hang["hang"]["watchdogTimeoutMs"] == 1000 and hang["hang"]["durationMs"] >= 450, f"hang timing: {hang['hang']}")
        check(not any(thread["crashed"] for thread in hang["threads"]), "a hang report marks no thread crashed")
        os.kill(process.pid, signal.SIGABRT)
        _, stderr = process.communicate(timeout=30)
        check(process.returncode == -signal.SIGABRT, f"crashwatch ended with {process.returncode}, expected SIGABRT: {stderr}")
        crash = [r for r in _reports(spool) if r["kind"] == "crash"]
        check(len(crash) == 1 and crash[0]["signal"]["name"] == "SIGABRT" and crash[0]["hangReportID"] == hang["id"],
              f"crash reports {[(r['signal']['name'], r['hangReportID']) for r in crash]}, expected SIGABRT linked to {hang['id']}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        upstream.close()
        os.unlink(upstream_path)
        shutil.rmtree(spool, ignore_errors=True)


RELAY_ATTACK_APP = r"""
import os, socket, struct
address = os.environ["NOTIFY_SOCKET"]
target = "\0" + address[1:] if address.startswith("@") else address
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def send(data, fds=()):
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))] if fds else []
    s.sendmsg([data], rights, 0, target)
init = os.pidfd_open(1)
send(b"MAINPIDFD=1", [init])
send(b"FDSTORE=1\nMAINPIDFD=1", [init])
send(b"READY=1\nMAINPID=1\nMAINPIDFDID=1")
send(b"NOTIFYACCESS=all")
loose, _ = os.pipe()
send(b"STATUS=loose\nX_CRASHWATCH_TEST=1", [loose, init])
stored, _ = os.pipe()
send(b"FDSTORE=1\nFDNAME=stored", [stored])
send(b"STATUS=done")
"""


def case_notify_relay_filter():
    """The relay attack: a program (an unprivileged user's, under a root crashwatch) sends `MAINPIDFD=1` with
    a pidfd of PID 1 — which systemd 256 and later takes as the service's new main process — alone and beside
    FDSTORE=1, plus MAINPID=, a widening NOTIFYACCESS=, and a descriptor with no FDSTORE=1. The service
    manager's socket receives none of those lines and no descriptor but the one FDSTORE=1 stored."""
    spool = tempfile.mkdtemp(prefix="cw-relay-")
    upstream_path = os.path.join(spool, "..", os.path.basename(spool) + ".notify")
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    upstream.bind(upstream_path)
    upstream.settimeout(10)
    unprivileged = ATTACKER if os.geteuid() == 0 and os.access(ATTACKER[0], os.X_OK) else []
    process = subprocess.Popen([CRASHWATCH, "run", "--spool", spool, "--"] + unprivileged + [sys.executable, "-c", RELAY_ATTACK_APP],
                               env=dict(os.environ, NOTIFY_SOCKET=upstream_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        messages = []
        while not messages or messages[-1][0] != b"STATUS=done":
            try:
                data, ancillary, _, _ = upstream.recvmsg(4096, socket.CMSG_SPACE(4 * 8))
            except socket.timeout:
                raise Fail(f"the relay sent {messages} and then nothing for 10 s (expected STATUS=done last)")
            passed = []
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    passed += list(struct.unpack("%di" % (len(payload) // 4), payload[:len(payload) - len(payload) % 4]))
            kinds = [os.readlink(f"/proc/self/fd/{fd}") for fd in passed]
            for fd in passed:
                os.close(fd)
            messages.append((data, kinds))
        leaked = [(data, kinds) for data, kinds in messages if b"MAINPID" in data or any("pidfd" in k for k in kinds)]
        check(not leaked, f"main-PID changes relayed to the service manager: {leaked}")
        expected = [(b"FDSTORE=1", []), (b"READY=1", []), (b"STATUS=loose", []), (b"FDSTORE=1\nFDNAME=stored", ["pipe"]),
                    (b"STATUS=done", [])]
        got = [(data, [k.split(":")[0] for k in kinds]) for data, kinds in messages]
        check(got == expected, f"relayed {got}, expected {expected}")
        _, stderr = process.communicate(timeout=30)
        check(process.returncode == 0, f"crashwatch ended with {process.returncode}: {stderr}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        upstream.close()
        os.unlink(upstream_path)
        shutil.rmtree(spool, ignore_errors=True)


def case_abnormal_exit_report():
    """A program killed by SIGKILL: crashwatch dies the same way and leaves an abnormalExit report."""
    spool = tempfile.mkdtemp(prefix="cw-kill-")
    try:
        process = subprocess.Popen([CRASHWATCH, "run", "--spool", spool, "--", "sh", "-c", "echo $$; exec sleep 30"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        child = int(process.stdout.readline())
        wait_until(lambda: "sleep" in open(f"/proc/{child}/wchan").read(), "the child has exec'ed sleep and sleeps", 10)
        os.kill(child, signal.SIGKILL)
        _, stderr = process.communicate(timeout=30)
        check(process.returncode == -signal.SIGKILL, f"crashwatch ended with {process.returncode}: {stderr}")
        reports = _reports(spool)
        check(len(reports) == 1, f"{len(reports)} reports, expected 1: {stderr}")
        report = reports[0]
        check(report["kind"] == "abnormalExit" and report["signal"]["name"] == "SIGKILL", f"kind {report['kind']}, signal {report['signal']['name']}")
        check(report["exit"] == {"reason": "signal", "source": "inferred", "evidence": None}, f"exit {report['exit']}")
        check(report["process"]["pid"] == child and report["process"]["executable"].endswith("sleep"), f"process {report['process']['pid']} {report['process']['executable']}")
        check(report["signal"]["senderPID"] is None and "not known" in report["signal"]["description"],
              f"a SIGKILL seen at the exit claims no sender: {report['signal']}")
        # The kernel stopped the dying thread at PTRACE_EVENT_EXIT: its stack is in the report.
        threads = report["threads"]
        functions = [frame.get("function") or "" for thread in threads for frame in thread["frames"]]
        check(len(threads) == 1 and threads[0]["tid"] == child and not threads[0]["crashed"] and any("sleep" in f for f in functions),
              f"threads {[(t['tid'], t['crashed'], [f.get('function') for f in t['frames']]) for t in threads]}")
    finally:
        shutil.rmtree(spool, ignore_errors=True)


def case_pid_file_daemon():
    """`run --pid-file`: the foreground crashwatch ends as the daemon's first process did (0), the
    supervisor it leaves writes its pid, follows the daemon, reports its crash and ends as it did."""
    spool = tempfile.mkdtemp(prefix="cw-forkd-")
    pid_file = os.path.join(spool, "..", os.path.basename(spool) + ".pid")
    try:
        # Output to a file: the daemon and its supervisor keep a pipe open after the foreground exits.
        with tempfile.TemporaryFile(mode="w+") as output:
            result = subprocess.run([CRASHWATCH, "run", "--pid-file", pid_file, "--spool", spool, "--", fixture("forkd")],
                                    stdout=output, stderr=subprocess.STDOUT, timeout=TIMEOUT)
            output.seek(0)
            text = output.read()
        check(result.returncode == 0, f"foreground crashwatch ended with {result.returncode}: {text}")
        daemon = int(text.split()[1])
        with open(pid_file) as handle:
            supervisor = int(handle.read())
        with open(f"/proc/{supervisor}/comm") as handle:
            check(handle.read().strip() == "crashwatch", f"pid file names {supervisor}, not a crashwatch")
        check(open(f"/proc/{daemon}/status").read().count(f"TracerPid:\t{supervisor}") == 1, "the daemon is not traced by the supervisor")
        os.kill(daemon, signal.SIGUSR1)
        wait_until(lambda: not os.path.exists(f"/proc/{supervisor}"), "the supervisor has ended after the daemon's crash", 20)
        reports = _reports(spool)
        check(len(reports) == 1 and reports[0]["process"]["pid"] == daemon and reports[0]["signal"]["name"] == "SIGSEGV",
              f"reports {[(r['process']['pid'], r['signal']['name']) for r in reports]}, expected the daemon {daemon}'s SIGSEGV")
    finally:
        if os.path.exists(pid_file):
            os.unlink(pid_file)
        shutil.rmtree(spool, ignore_errors=True)


def case_forking_without_pid_file():
    """A forking daemon run without `--pid-file`: crashwatch ends as its first process did (0), and says on
    stderr that the daemon it left runs on unsupervised, naming its pid and `--pid-file` (and in the journal)."""
    spool = tempfile.mkdtemp(prefix="cw-forkd-")
    daemon = None
    try:
        # Output to a file: the daemon keeps a pipe open after crashwatch exits.
        with tempfile.TemporaryFile(mode="w+") as output:
            result = subprocess.run([CRASHWATCH, "run", "--spool", spool, "--", fixture("forkd")],
                                    stdout=output, stderr=subprocess.STDOUT, timeout=TIMEOUT)
            output.seek(0)
            text = output.read()
        daemon = int(text.split("daemon ")[1].split()[0])
        check(result.returncode == 0, f"crashwatch ended with {result.returncode}: {text}")
        notices = [line for line in text.splitlines() if line.startswith("crashwatch: ") and "unsupervised" in line]
        check(len(notices) == 1 and f"pid {daemon}" in notices[0] and "--pid-file" in notices[0],
              f"expected one line naming the daemon {daemon} and --pid-file: {text!r}")
    finally:
        if daemon:
            try:
                os.kill(daemon, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(spool, ignore_errors=True)


def case_ptrace_refused():
    """Under a seccomp filter that kills on ptrace, crashwatch says so in one line and runs the command
    unsupervised (it replaces itself with it): the command runs and its exit status is crashwatch's."""
    result = run([fixture("seccomp_deny"), "ptrace", CRASHWATCH, "run", "--", "sh", "-c", "echo ran; exit 3"])
    check(result.returncode == 3 and result.stdout == "ran\n", f"status {result.returncode}, stdout {result.stdout!r}, stderr {result.stderr!r}")
    lines = [line for line in result.stderr.splitlines() if line.startswith("crashwatch:")]
    check(len(lines) == 1 and "seccomp filter refuses ptrace" in lines[0] and "SystemCallFilter=" in lines[0] and "unsupervised" in lines[0],
          f"stderr {result.stderr!r}")
    # The command is found and run exactly as under supervision: a file without #! runs through /bin/sh.
    with tempfile.TemporaryDirectory() as directory:
        script = os.path.join(directory, "no-shebang")
        with open(script, "w") as handle:
            handle.write('echo script "$1"\nexit 4\n')
        os.chmod(script, 0o755)
        result = run([fixture("seccomp_deny"), "ptrace", CRASHWATCH, "run", "--", script, "ran"])
        check(result.returncode == 4 and result.stdout == "script ran\n", f"script: status {result.returncode}, stdout {result.stdout!r}, stderr {result.stderr!r}")


def case_mincore_refused():
    """A seccomp filter that refuses only mincore (libunwind's, in the processing worker): crashwatch still
    supervises, says at start-up what will be missing, and each report says why it was not unwound."""
    spool = tempfile.mkdtemp(prefix="cw-mincore-")
    try:
        result = run([fixture("seccomp_deny"), "mincore", CRASHWATCH, "run", "--spool", spool, "--", fixture("null_deref")])
        check(result.returncode == -signal.SIGSEGV, f"status {result.returncode}, stderr {result.stderr!r}")
        first = result.stderr.splitlines()[0] if result.stderr else ""
        check("refuses mincore" in first and "SystemCallFilter=" in first and "not be unwound" in first, f"first line {first!r}")
        reports = _reports(spool)
        check(len(reports) == 1 and reports[0]["diagnostics"]["processing"] == "minimal", f"{len(reports)} reports: {result.stderr}")
        messages = [error["message"] for error in reports[0]["softErrors"]]
        check(any("SIGSYS" in m and "seccomp" in m and "SystemCallFilter=" in m for m in messages), f"soft errors {messages}")
    finally:
        shutil.rmtree(spool, ignore_errors=True)


CASES = {name[len("case_"):]: function for name, function in globals().items() if name.startswith("case_")}


# Signals whose inherited SIG_IGN would change a case's outcome (SIGPIPE and SIGXFSZ are Python's
# own; subprocess restores them for children).
RESET_SIGNALS = [signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                 signal.SIGALRM, signal.SIGTERM, signal.SIGCHLD, signal.SIGCONT, signal.SIGTSTP,
                 signal.SIGTTIN, signal.SIGTTOU, signal.SIGWINCH, signal.SIGSEGV]


def normalize_signal_state():
    """Unblocks every signal and un-ignores the ones the cases use, as in an ordinary shell."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for sig in RESET_SIGNALS:
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)


def main(argv):
    global CRASHWATCH, FIXTURES
    normalize_signal_state()
    if len(argv) != 4 or argv[3] not in CASES:
        print(f"usage: {argv[0]} CRASHWATCH FIXTURES CASE\ncases: {' '.join(CASES)}", file=sys.stderr)
        return 2
    CRASHWATCH, FIXTURES, name = os.path.abspath(argv[1]), os.path.abspath(argv[2]), argv[3]
    for path in (CRASHWATCH, fixture("sigecho"), fixture("null_deref")):
        if not os.access(path, os.X_OK):
            print(f"FAIL {name}: {path} is missing or not executable (build it first)")
            return 1
    # Reports of the crashes the cases cause go to a spool of their own, removed afterwards.
    spool = tempfile.TemporaryDirectory(prefix="cw-transparency-spool-")
    os.environ["CRASHWATCH_SPOOL"] = spool.name
    started = time.monotonic()
    try:
        CASES[name]()
    except Skip as reason:
        print(f"SKIP {name}: {reason}")
        return 77
    except Fail as failure:
        print(f"FAIL {name}: {failure}")
        return 1
    finally:
        _started.end()
        spool.cleanup()
    print(f"PASS {name} ({time.monotonic() - started:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
