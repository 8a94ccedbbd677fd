"""The helpers every Python test suite of crashwatch writes, once: the transparency cases
(Tests/IntegrationTests/transparency.py), the shipping suite (Tests/shipping/test_ship.py) and the real-systemd
suite (Tests/systemd). A suite imports it by path:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
    import common

What is here: a case's verdicts (Fail, Skip, check), running a process with a time limit, waiting (bounded)
for a condition, the processes a suite started and ends, temporary directories, the crashwatch binary and
fixture paths, and reading the reports in a spool.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
import traceback

# The package root: this file is Tests/harness/common.py.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Fail(Exception):
    """The case failed: the message says what differed."""


class Skip(Exception):
    """The machine lacks or forbids something the case needs: the message says what."""


def check(condition, message):
    """Fails the case with `message` (a string, or a callable that makes one) unless `condition` holds."""
    if not condition:
        raise Fail(message() if callable(message) else message)


# --- running cases --------------------------------------------------------------------------------

def run_cases(cases, selected, setup, *, after_each, cleanup, notes=(), label="suite"):
    """Runs `setup` (it returns what it set up, for the log), then each of `selected` (names in `cases`), one
    line each — PASS, FAIL with the reason, or skip — calling `after_each` after every case and `cleanup` at
    the end; a failure in `setup` fails every case. Prints `notes`, the time and the plain 'N passed, N failed'
    summary last; returns the exit status (1 when a case failed)."""
    passed, failed, skipped = [], [], []
    suite_started = time.monotonic()
    try:
        started = time.monotonic()
        what = setup()
        print(f"setup: {what} in {time.monotonic() - started:.1f} s", flush=True)
    except Exception as error:  # noqa: BLE001 — any setup failure fails every case, with its reason
        message = str(error) if isinstance(error, Fail) else traceback.format_exc()
        for name in selected:
            print(f"FAIL {name}: setup: {message}")
        cleanup()
        print(f"0 passed, {len(selected)} failed")
        return 1
    for name in selected:
        started = time.monotonic()
        try:
            cases[name]()
        except Skip as skip:
            skipped.append(name)
            print(f"skip {name}: {skip}", flush=True)
        except Fail as failure:
            failed.append(name)
            print(f"FAIL {name} ({time.monotonic() - started:.1f} s): {failure}", flush=True)
        except Exception:  # noqa: BLE001 — a bug in a case is its failure, and the next cases still run
            failed.append(name)
            print(f"FAIL {name} ({time.monotonic() - started:.1f} s): {traceback.format_exc()}", flush=True)
        else:
            passed.append(name)
            print(f"PASS {name} ({time.monotonic() - started:.1f} s)", flush=True)
        finally:
            after_each()
    cleanup()
    for note in notes:
        print(f"note: {note}")
    print(f"{label}: {time.monotonic() - suite_started:.1f} s")
    print(f"{len(passed)} passed, {len(failed)} failed" + (f", {len(skipped)} skipped" if skipped else ""))
    return 1 if failed else 0


# --- paths ----------------------------------------------------------------------------------------

def crashwatch_path() -> str:
    """The crashwatch binary under test: $CRASHWATCH_BIN, else the debug build, as an absolute path."""
    return os.path.abspath(os.environ.get("CRASHWATCH_BIN", os.path.join(REPO, ".build/debug/crashwatch")))


def fixtures_path() -> str:
    """The built fixtures (Fixtures/build.sh output): $CRASHWATCH_FIXTURES, else .build/fixtures."""
    return os.path.abspath(os.environ.get("CRASHWATCH_FIXTURES", os.path.join(REPO, ".build/fixtures")))


def new_dir(prefix: str, root: str | None = None) -> str:
    """A fresh private (0700) directory named PREFIX… under `root` (else the system's temporary directory)."""
    return tempfile.mkdtemp(prefix=prefix, dir=root)


# --- processes ------------------------------------------------------------------------------------

def tail(text, lines: int = 25) -> str:
    """The last `lines` lines of a process's output (bytes or text; None is empty)."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run(argv, timeout: float, what: str | None = None, error=Fail, **kwargs) -> subprocess.CompletedProcess:
    """Runs argv to completion with captured text output; `error` (Fail by default), naming `what`, when it
    does not finish within `timeout` seconds (it is killed)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as expired:
        raise error(f"{what or argv} did not finish within {timeout:g} s\n"
                    f"{tail(expired.stdout)}\n{tail(expired.stderr)}".rstrip()) from None


def _parent_of(pid: int) -> int | None:
    """The parent pid of a process from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


class Started:
    """The processes a suite started (Popen objects or child pids), ended by pid when it is done with them."""

    def __init__(self):
        self._items = []

    def track(self, process):
        """Remembers `process` (a Popen or a pid) and returns it."""
        self._items.append(process)
        return process

    def end(self, wait: float = 2):
        """Kills whatever of them still runs, newest first: a pid only while it is still this process's child."""
        while self._items:
            item = self._items.pop()
            if isinstance(item, subprocess.Popen):
                if item.poll() is None:
                    try:
                        item.kill()
                        item.wait(timeout=wait)
                    except (OSError, subprocess.TimeoutExpired):
                        pass
            elif _parent_of(item) == os.getpid():
                try:
                    os.kill(item, signal.SIGKILL)
                    os.waitpid(item, 0)
                except OSError:
                    pass


def wait_until(predicate, what, timeout: float, interval: float = 0.05, error=Fail):
    """Polls `predicate` (bounded) until it returns a true value, which is returned; `error` (Fail by
    default) saying `what` (a string or a callable) when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise error(f"timed out after {timeout:g} s waiting until {what() if callable(what) else what}")
        time.sleep(interval)


# --- reports --------------------------------------------------------------------------------------

def report_names(spool: str) -> list[str]:
    """The names of the report files in a spool, sorted (not its hidden temporary files)."""
    return sorted(name for name in os.listdir(spool) if name.endswith(".json") and not name.startswith("."))


def read_reports(spool: str) -> list[dict]:
    """The parsed JSON of every report in a spool, in name order."""
    found = []
    for name in report_names(spool):
        with open(os.path.join(spool, name)) as handle:
            found.append(json.load(handle))
    return found
