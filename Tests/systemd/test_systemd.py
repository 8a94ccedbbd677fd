#!/usr/bin/env python3
"""crashwatch under a real systemd (Debian 12's systemd 252 booted by harness.py as a container's PID 1).

One container is booted for the whole run. Each test writes its own unit(s) into /etc/systemd/system of
the container (daemon-reload), uses its own spool directory, and stops its units at the end. The
numbers are the contracts of the brief in Tests/systemd/README.md; each assertion names the field and
the value it wanted.

    python3 Tests/systemd/test_systemd.py -v              # everything (make test-systemd)
    python3 Tests/systemd/test_systemd.py -v -k watchdog  # some
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

REPO = harness.REPO
FIXTURES = harness.FIXTURES
# The crash fixtures the tests copy to /opt/t (with the test programs).
FIXTURE_NAMES = ["null_deref"]
CRASHWATCH = "/usr/bin/crashwatch"
JOURNAL_MESSAGE_ID = "d7e5caf9ec8a4875a8d4176d5e7785c8"

container: harness.Container | None = None
# Timings worth seeing, printed once at the end (not in the middle of unittest's lines).
NOTES: list[str] = []
CONTRACT_6_SECONDS = [0.0]


def setUpModule():
    global container
    why = harness.can_run()
    if why:
        raise unittest.SkipTest(why)
    started = time.monotonic()
    container = harness.Container(fixture_names=FIXTURE_NAMES)
    # A SIGTERM (make's timeout) still stops the container and removes its cgroups.
    signal.signal(signal.SIGTERM, _terminated)
    container.boot()
    harness.log(f"container up in {time.monotonic() - started:.1f} s (root {container.timings['root']:.1f} s, "
                f"boot {container.timings['boot']:.1f} s), host pid of its PID 1: {container.init_pid}")


def tearDownModule():
    if CONTRACT_6_SECONDS[0]:
        NOTES.append(f"contract 6 (test_06a/b/c) took {CONTRACT_6_SECONDS[0]:.1f} s (budget: 90 s)")
    for note in NOTES:
        harness.log(note)
    if container is not None:
        container.stop()


def _terminated(signo, frame):
    harness.log("terminated: stopping the container")
    try:
        if container is not None:
            container.stop()
    finally:
        os._exit(128 + signo)


def fixture_header(name: str, key: str) -> str:
    """The KEY: value of a fixture's header comment (Fixtures/README.md, "Header convention")."""
    text = (REPO / "Fixtures" / f"{name}.c").read_text()
    block = text.split("*/", 1)[0]
    match = re.search(rf"^\s*\*\s*{re.escape(key)}:[ \t]*(.*)$", block, re.MULTILINE)
    if not match:
        raise AssertionError(f"Fixtures/{name}.c has no {key}: in its header")
    return match.group(1).strip()


def parse_time(text) -> datetime.datetime:
    """An RFC 3339 timestamp (with a zone), or AssertionError."""
    if not isinstance(text, str) or not re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", text):
        raise AssertionError(f"not an RFC 3339 timestamp: {text!r}")
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def dig(report: dict, path: str):
    """report["a"]["b"] for "a.b"; a KeyError names the missing key."""
    value = report
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise AssertionError(f"the report has no {path} (stopped at {part!r}); top-level keys: "
                                 f"{sorted(report)}")
        value = value[part]
    return value


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Report:
    """A report file in a spool: its path inside the container, its JSON, its stat."""

    def __init__(self, path: str, data: dict, st: os.stat_result):
        self.path, self.data, self.stat = path, data, st

    def __getitem__(self, key):
        return self.data[key]

    def get(self, path: str):
        return dig(self.data, path)

    @property
    def complete(self) -> bool:
        return (self.data.get("diagnostics") or {}).get("processing") == "complete"

    def summary(self) -> str:
        d = self.data
        signal_name = (d.get("signal") or {}).get("name")
        process = d.get("process") or {}
        return (f"{os.path.basename(self.path)}: kind={d.get('kind')} signal={signal_name} "
                f"pid={process.get('pid')} unit={process.get('systemdUnit')} "
                f"processing={(d.get('diagnostics') or {}).get('processing')}")


class SystemdTestCase(unittest.TestCase):
    maxDiff = None

    # -- container helpers ----------------------------------------------------------------------------

    @property
    def c(self) -> harness.Container:
        return container

    def inside(self, path: str) -> Path:
        return Path(self.c.host_path(path))

    def make_spool(self, name: str) -> str:
        """A fresh, empty spool directory /var/spool/cwt/NAME (root, 0755) for one test."""
        path = f"/var/spool/cwt/{name}"
        host = self.inside(path)
        if host.exists():
            shutil.rmtree(host)
        host.mkdir(parents=True)
        os.chmod(host, 0o755)
        return path

    def install(self, name: str, text: str, reload: bool = True) -> str:
        """Writes the unit NAME, reloads, and stops + resets it when the test ends."""
        self.c.install_unit(name, text, reload=reload)
        self.addCleanup(self._remove_unit, name)
        return name

    def _remove_unit(self, name: str) -> None:
        if self.c.alive():
            self.c.systemctl("stop", name, check=False, timeout=30)
            self.c.systemctl("reset-failed", name, check=False)

    def show(self, unit: str, *properties: str) -> dict[str, str]:
        return self.c.show(unit, *properties)

    def unit_log(self, unit: str, lines: int = 40) -> str:
        result = self.c.run(["journalctl", "--no-pager", "-o", "short-precise", "-n", str(lines), "-u", unit],
                            check=False)
        return f"--- journalctl -u {unit} (last {lines} lines) ---\n{result.stdout.rstrip()}"

    def describe_unit(self, unit: str) -> str:
        props = self.show(unit, "ActiveState", "SubState", "Result", "MainPID", "ExecMainCode",
                          "ExecMainStatus", "NRestarts")
        return " ".join(f"{k}={v}" for k, v in props.items()) + "\n" + self.unit_log(unit)

    def start(self, unit: str, timeout: float = 30) -> None:
        result = self.c.systemctl("start", unit, timeout=timeout, check=False)
        if result.returncode != 0:
            self.fail(f"systemctl start {unit} failed (status {result.returncode}): {result.stderr.strip()}\n"
                      f"{self.describe_unit(unit)}")

    def wait_until(self, probe, timeout: float, what, interval: float = 0.05):
        """Polls PROBE until it returns something truthy (returned); on timeout fails with WHAT()."""
        return harness.common.wait_until(probe, what, timeout, interval, error=self.failureException)

    def wait_inactive(self, unit: str, timeout: float = 30) -> dict[str, str]:
        """Waits until UNIT is no longer active/activating/deactivating (failed or inactive)."""
        def probe():
            props = self.show(unit, "ActiveState", "SubState", "Result", "ExecMainCode", "ExecMainStatus",
                              "NRestarts", "InvocationID")
            return props if props["ActiveState"] in ("failed", "inactive") else None
        return self.wait_until(probe, timeout, lambda: f"{unit} to stop or fail: {self.describe_unit(unit)}",
                               interval=0.1)

    def read_state(self, path: str) -> dict[str, str]:
        """A test program's KEY=VALUE state file (harness writes it atomically), {} while missing."""
        try:
            text = self.inside(path).read_text()
        except FileNotFoundError:
            return {}
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def wait_state(self, path: str, unit: str, timeout: float = 15) -> dict[str, str]:
        return self.wait_until(lambda: self.read_state(path), timeout,
                               lambda: f"{path} (the program's state file): {self.describe_unit(unit)}")

    def pid_alive(self, pid: int) -> bool:
        """Whether PID (in the container's PID namespace) is a live process, not a zombie."""
        status = self.inside(f"/proc/{pid}/status")
        try:
            text = status.read_text()
        except (FileNotFoundError, ProcessLookupError):
            return False
        match = re.search(r"^State:\s+(\S)", text, re.MULTILINE)
        return bool(match) and match.group(1) not in ("Z", "X")

    # -- reports --------------------------------------------------------------------------------------

    def reports(self, spool: str) -> list[Report]:
        host = self.inside(spool)
        found = []
        if not host.is_dir():
            return found
        for entry in sorted(host.iterdir()):
            if entry.name.startswith(".") or not entry.name.endswith(".json") or not entry.is_file():
                continue
            try:
                st = entry.stat()
                data = json.loads(entry.read_text())
            except (OSError, ValueError):
                continue  # being replaced: read it next time
            found.append(Report(f"{spool}/{entry.name}", data, st))
        return found

    def wait_reports(self, spool: str, count: int = 1, timeout: float = 20, where=None,
                     unit: str | None = None, complete_within: float = 20) -> list[Report]:
        """At least COUNT reports (matching WHERE) in SPOOL; then up to COMPLETE_WITHIN more seconds for
        each to become complete (diagnostics.processing), returning whatever they are then."""
        def matching():
            return [r for r in self.reports(spool) if where is None or where(r)]

        def what():
            listed = "\n".join(r.summary() for r in self.reports(spool)) or "(none)"
            return (f"{count} report(s) in {spool}; there: {listed}\n"
                    + (self.describe_unit(unit) if unit else ""))

        self.wait_until(lambda: len(matching()) >= count, timeout, what, interval=0.1)
        deadline = time.monotonic() + complete_within
        found = matching()
        while not all(r.complete for r in found) and time.monotonic() < deadline:
            time.sleep(0.1)
            found = matching()
        return found

    def assertField(self, report: Report, path: str, expected) -> None:
        actual = report.get(path)
        self.assertEqual(actual, expected, f"report {report.path}: {path} is {actual!r}, want {expected!r}")

    def assert_mode_0640(self, report: Report) -> None:
        mode = stat.S_IMODE(report.stat.st_mode)
        self.assertEqual(mode, 0o640, f"report {report.path} has mode {mode:04o}, want 0640")

    def journal_entry(self, timeout: float, what: str, *args: str, where=None) -> dict:
        def probe():
            entries = [e for e in self.c.journal(*args) if where is None or where(e)]
            return entries[-1] if entries else None
        return self.wait_until(probe, timeout, what, interval=0.2)

    def _apply_packaged_users_and_spool(self) -> str:
        """Installs systemd/crashwatch.sysusers and systemd/crashwatch-tmpfiles.conf in the root,
        applies them, and returns the spool directory the tmpfiles entry creates."""
        sysusers, tmpfiles = REPO / "systemd/crashwatch.sysusers", REPO / "systemd/crashwatch-tmpfiles.conf"
        for path in (sysusers, tmpfiles):
            self.assertTrue(path.is_file(), f"{path.relative_to(REPO)} is missing (the packaged entry to test)")
        self.c.write_file("/usr/lib/sysusers.d/crashwatch.conf", sysusers.read_text())
        self.c.write_file("/usr/lib/tmpfiles.d/crashwatch.conf", tmpfiles.read_text())
        self.c.run(["systemd-sysusers", "/usr/lib/sysusers.d/crashwatch.conf"])
        self.c.run(["systemd-tmpfiles", "--create", "/usr/lib/tmpfiles.d/crashwatch.conf"])
        group = self.c.run(["getent", "group", "crashwatch"], check=False)
        self.assertEqual(group.returncode, 0, "systemd-sysusers created the group crashwatch")
        # The spool: the deepest directory it creates, leaving out the spool's own .claims and .quarantine.
        directories = [line.split()[1] for line in tmpfiles.read_text().splitlines()
                       if len(line.split()) > 1 and line.split()[0] in ("d", "D")
                       and not os.path.basename(line.split()[1]).startswith(".")]
        self.assertTrue(directories, "the tmpfiles entry creates directories")
        return max(directories, key=lambda p: p.count("/"))

    def ensure_user(self, user: str, group: str | None = None) -> int:
        """Creates the system user USER (and GROUP) in the root unless it exists; returns its uid."""
        if group and self.c.run(["getent", "group", group], check=False).returncode != 0:
            self.c.run(["groupadd", "--system", group])
        if self.c.run(["getent", "passwd", user], check=False).returncode != 0:
            self.c.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        *(["--gid", group] if group else ["--user-group"]), user])
        return int(self.c.run(["id", "-u", user]).stdout.strip())

    # -- /etc/crashwatch.conf -------------------------------------------------------------------------

    def set_config(self, text: str | None) -> None:
        """Replaces /etc/crashwatch.conf (None: removes it) for this test; the old one comes back after."""
        path = self.inside("/etc/crashwatch.conf")
        old = path.read_bytes() if path.exists() else None

        def restore():
            if not self.c.alive():
                return
            if old is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(old)
        self.addCleanup(restore)
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text)


# ---------------------------------------------------------------------------------------------------
# Scenarios shared by several tests (run once, the first time a test needs them)

_crash_scenario: dict | None = None
_watchdog_scenario: dict | None = None


class CrashTests(SystemdTestCase):
    """Contract 1 (and 8: the crash's journal entry)."""

    UNIT = "cw-crash.service"

    def crash_once(self) -> dict:
        global _crash_scenario
        if _crash_scenario is None:
            _crash_scenario = {"error": "the crash scenario failed (see test_01_crash_report)"}
            spool = self.make_spool("crash")
            self.c.install_unit(self.UNIT, f"""\
[Unit]
Description=crashwatch test: a crash under a Type=simple unit (contract 1)

[Service]
Type=simple
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/null_deref
""")
            self.start(self.UNIT)
            props = self.wait_inactive(self.UNIT)
            reports = self.wait_reports(spool, 1, unit=self.UNIT)
            _crash_scenario = {"spool": spool, "props": props, "reports": reports}
        if "error" in _crash_scenario:
            self.fail(_crash_scenario["error"])
        return _crash_scenario

    def test_01_crash_report(self):
        scenario = self.crash_once()
        reports, props = scenario["reports"], scenario["props"]
        self.assertEqual(len(reports), 1, "want exactly one report: " + "; ".join(r.summary() for r in reports))
        report = reports[0]
        self.assertField(report, "kind", "crash")
        self.assertField(report, "signal.name", "SIGSEGV")
        self.assertField(report, "process.systemdUnit", self.UNIT)
        self.assertField(report, "process.systemdInvocationID", props["InvocationID"])
        cgroup = report.get("process.cgroup")
        self.assertTrue(isinstance(cgroup, str) and cgroup.endswith("/" + self.UNIT),
                        f"process.cgroup is {cgroup!r}, want a path ending in /{self.UNIT}")
        self.assert_mode_0640(report)
        self.assertEqual(props["Result"], "signal", self.describe_unit(self.UNIT))
        self.assertEqual(props["ExecMainCode"], "2", f"ExecMainCode (2 = killed by a signal): {props}")
        self.assertEqual(props["ExecMainStatus"], "11", f"ExecMainStatus (11 = SIGSEGV): {props}")

    def test_01b_crash_restart(self):
        unit = "cw-crash-restart.service"
        spool = self.make_spool("crash-restart")
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: Restart=on-failure after a crash (contract 1)
StartLimitIntervalSec=0

[Service]
Type=simple
Restart=on-failure
RestartSec=100ms
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/null_deref
""")
        self.start(unit)
        self.wait_until(lambda: int(self.show(unit, "NRestarts")["NRestarts"] or 0) >= 1, 20,
                        lambda: f"NRestarts >= 1 of {unit}: {self.describe_unit(unit)}")
        reports = self.wait_reports(spool, 2, unit=unit, complete_within=0)
        self.c.systemctl("stop", unit)
        for report in reports:
            self.assertField(report, "kind", "crash")
            self.assertField(report, "process.systemdUnit", unit)
        invocations = {r.get("process.systemdInvocationID") for r in reports}
        self.assertGreaterEqual(len(invocations), 2,
                                f"each run has its own invocation id; the reports have {invocations}")

    def test_08_journal_crash_entry(self):
        """Contract 8: the crash of test 1 has a journal entry with MESSAGE_ID=d7e5caf9…"""
        report = self.crash_once()["reports"][0]
        report_id = report["id"]
        entry = self.journal_entry(
            10, f"a journal entry MESSAGE_ID={JOURNAL_MESSAGE_ID} with CRASHWATCH_REPORT_ID={report_id}",
            f"MESSAGE_ID={JOURNAL_MESSAGE_ID}", where=lambda e: e.get("CRASHWATCH_REPORT_ID") == report_id)
        process = report["process"]
        expected = {
            "PRIORITY": "2",
            "CRASHWATCH_REPORT": report.path,
            "CRASHWATCH_REPORT_ID": report_id,
            "CRASHWATCH_KIND": "crash",
            "CRASHWATCH_SIGNAL": "SIGSEGV",
            "CRASHWATCH_PID": str(process["pid"]),
            "CRASHWATCH_EXE": process["executable"],
            "CRASHWATCH_UNIT": self.UNIT,
            "CRASHWATCH_FRAME": fixture_header("null_deref", "CRASH-FUNCTION"),
        }
        for field, value in expected.items():
            self.assertEqual(entry.get(field), value, f"journal field {field} is {entry.get(field)!r}, want "
                             f"{value!r}; the entry: {json.dumps(entry, indent=1)}")
        message = entry.get("MESSAGE")
        self.assertIsInstance(message, str, f"MESSAGE is {message!r}")
        executable = process["executable"]
        self.assertTrue(executable in message or re.search(rf"\b{re.escape(os.path.basename(executable))}\b", message),
                        f"MESSAGE names the executable ({executable}, or its name): {message!r}")
        self.assertIn("SIGSEGV", message, "MESSAGE names the signal")


class EnvironmentTests(SystemdTestCase):
    """Contract 2: LISTEN_PID and WATCHDOG_PID name the program, not crashwatch."""

    def test_02_child_environment(self):
        unit, sock = "cw-env.service", "cw-env.socket"
        spool = self.make_spool("env")
        state = "/run/cw-env.state"
        port = free_port()
        self.install(sock, f"""\
[Unit]
Description=crashwatch test: the socket passed to cw-env.service (contract 2)

[Socket]
ListenStream=127.0.0.1:{port}
""", reload=False)
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: LISTEN_PID and WATCHDOG_PID seen by the program (contract 2)

[Service]
WatchdogSec=30
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state}
""")
        self.c.systemctl("start", sock)
        self.start(unit)
        values = self.wait_state(state, unit)
        main_pid = self.show(unit, "MainPID")["MainPID"]
        self.assertEqual(values["ppid"], main_pid,
                         f"the program runs under crashwatch (its parent is the MainPID): {values}")
        self.assertNotEqual(values["pid"], main_pid, "the program is not the main process")
        self.assertEqual(values["LISTEN_FDS"], "1", f"systemd passed one socket: {values}")
        self.assertEqual(values["LISTEN_PID"], values["pid"],
                         f"LISTEN_PID names the program (pid {values['pid']}), not crashwatch ({main_pid}): {values}")
        self.assertEqual(values["WATCHDOG_USEC"], "30000000", f"WATCHDOG_USEC: {values}")
        self.assertEqual(values["WATCHDOG_PID"], values["pid"],
                         f"WATCHDOG_PID names the program (pid {values['pid']}), not crashwatch ({main_pid}): {values}")


class NotifyTests(SystemdTestCase):
    """Contract 3: Type=notify with the default NotifyAccess."""

    def test_03_notify_ready_and_status(self):
        unit = "cw-notify.service"
        spool = self.make_spool("notify")
        state = "/run/cw-notify.state"
        status_text = "crashwatch test: notify app serving"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: Type=notify, READY=1 and STATUS= from the program (contract 3)

[Service]
Type=notify
TimeoutStartSec=10
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_notify {state} "{status_text}"
""")
        result = self.c.systemctl("start", unit, timeout=30, check=False)
        props = self.show(unit, "ActiveState", "SubState", "Result", "StatusText", "NotifyAccess")
        self.assertEqual(result.returncode, 0,
                         f"systemctl start {unit} failed (READY=1 did not reach systemd?): {result.stderr.strip()}"
                         f"\nprogram state: {self.read_state(state)}\n{self.describe_unit(unit)}")
        self.assertNotEqual(props["Result"], "timeout", self.describe_unit(unit))
        self.assertEqual(props["ActiveState"], "active", self.describe_unit(unit))
        self.assertEqual(props["SubState"], "running", self.describe_unit(unit))
        self.assertEqual(props["NotifyAccess"], "main", "the default NotifyAccess of Type=notify")
        self.wait_until(lambda: self.show(unit, "StatusText")["StatusText"] == status_text, 5,
                        lambda: f"StatusText={status_text!r}; it is "
                                f"{self.show(unit, 'StatusText')['StatusText']!r}")


class WatchdogTests(SystemdTestCase):
    """Contract 4 (and 8: the hang's journal entry)."""

    UNIT = "cw-watchdog.service"
    STATE = "/run/cw-watchdog.state"

    def watchdog_once(self) -> dict:
        global _watchdog_scenario
        if _watchdog_scenario is None:
            _watchdog_scenario = {"error": "the watchdog scenario failed (see test_04_watchdog)"}
            _watchdog_scenario = self._run_watchdog()
        if "error" in _watchdog_scenario:
            self.fail(_watchdog_scenario["error"])
        return _watchdog_scenario

    def _run_watchdog(self) -> dict:
        unit, state = self.UNIT, self.STATE
        spool = self.make_spool("watchdog")
        self.c.install_unit(unit, f"""\
[Unit]
Description=crashwatch test: WatchdogSec= pings relayed, then a hang and the watchdog's SIGABRT (contract 4)

[Service]
Type=simple
WatchdogSec=2
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_watchdog {state}
""")
        self.start(unit)
        values = self.wait_state(state, unit)
        if values.get("watchdog_enabled", "0") == "0" or values.get("watchdog_enabled", "").startswith("-"):
            time.sleep(0.3)
            self.fail(f"the program's sd_watchdog_enabled() said {values.get('watchdog_enabled')} "
                      f"(it exits 3): {values}\n{self.describe_unit(unit)}")
        app_pid = int(values["pid"])
        # Healthy: pings every 300 ms keep it running for 6 s (3 × WatchdogSec), and no report.
        healthy_until = time.monotonic() + 6
        while time.monotonic() < healthy_until:
            props = self.show(unit, "ActiveState", "Result")
            self.assertEqual(props["ActiveState"], "active",
                             f"{unit} must stay active while the program pings WATCHDOG=1 every 300 ms: "
                             f"{self.describe_unit(unit)}")
            self.assertEqual(self.reports(spool), [], "no report while the program is healthy")
            time.sleep(0.5)
        # The hang: no more pings, the program spins in hang_here().
        self.c.run(["kill", "-USR2", str(app_pid)])
        hang_sent = time.monotonic()
        hang_seen_alive = None

        def hang_report():
            nonlocal hang_seen_alive
            found = [r for r in self.reports(spool) if r.data.get("kind") == "hang"]
            if found and hang_seen_alive is None:
                hang_seen_alive = self.pid_alive(app_pid)
            return found
        hangs = self.wait_until(hang_report, 2 + 1.5,
                                lambda: f"a report with kind \"hang\" in {spool} within ~WatchdogSec (2 s) of the "
                                        f"last ping; there: {[r.summary() for r in self.reports(spool)]}\n"
                                        f"{self.describe_unit(unit)}")
        hang_elapsed = time.monotonic() - hang_sent
        NOTES.append(f"test_04: the hang report appeared {hang_elapsed:.2f} s after SIGUSR2 (pings stopped)")
        props = self.wait_inactive(unit, 20)
        crashes = self.wait_reports(spool, 1, where=lambda r: r.data.get("kind") != "hang", unit=unit)
        hangs = self.wait_reports(spool, 1, where=lambda r: r.data.get("kind") == "hang", unit=unit)
        return {"spool": spool, "props": props, "hangs": hangs, "crashes": crashes, "app_pid": app_pid,
                "hang_seen_alive": hang_seen_alive, "hang_elapsed": hang_elapsed}

    def test_04_watchdog_hang_then_abort(self):
        s = self.watchdog_once()
        self.assertEqual(len(s["hangs"]), 1, f"one hang report: {[r.summary() for r in s['hangs']]}")
        self.assertEqual(len(s["crashes"]), 1, f"one crash report: {[r.summary() for r in s['crashes']]}")
        hang, crash = s["hangs"][0], s["crashes"][0]
        # The hang report, taken while the program still runs.
        self.assertField(hang, "kind", "hang")
        self.assertField(hang, "process.pid", s["app_pid"])
        hang_object = hang.get("hang")
        self.assertIsInstance(hang_object, dict, f"top-level hang is {hang_object!r}, want an object")
        parse_time(hang.get("hang.startTime"))
        duration = hang.get("hang.durationMs")
        self.assertTrue(isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration >= 0,
                        f"hang.durationMs is {duration!r}, want a number >= 0")
        self.assertIs(hang.get("hang.unfinished"), True, "hang.unfinished")
        self.assertField(hang, "hang.source", "watchdog")
        threads = hang.get("threads")
        self.assertTrue(threads and all(t.get("frames") for t in threads),
                        f"every thread of the hang report has frames: {[len(t.get('frames') or []) for t in threads or []]}")
        functions = [f.get("function") for t in threads for f in t["frames"]]
        self.assertIn("hang_here", functions, f"a thread is in hang_here(); functions: {functions}")
        self.assertIsNot(s["hang_seen_alive"], False,
                         "the program was already dead when the hang report appeared (it must be taken while "
                         "the program hangs, before the watchdog kills it)")
        self.assertLess(parse_time(hang["captureTime"]), parse_time(crash["captureTime"]),
                        "the hang report is captured before the watchdog's SIGABRT")
        # Then systemd's watchdog SIGABRT: a crash report linked to the hang.
        self.assertField(crash, "kind", "crash")
        self.assertField(crash, "signal.name", "SIGABRT")
        self.assertField(crash, "process.pid", s["app_pid"])
        self.assertField(crash, "hangReportID", hang["id"])
        props = s["props"]
        self.assertEqual(props["Result"], "watchdog", self.describe_unit(self.UNIT))
        self.assertEqual(props["ExecMainStatus"], "6",
                         f"crashwatch exits as the program did (SIGABRT, 6), not before it: {props}")
        self.assertEqual(props["ExecMainCode"], "2", f"ExecMainCode (2 = killed by a signal): {props}")

    def test_08b_journal_hang_entry(self):
        """Contract 8: the hang report of test 4 has a journal entry with PRIORITY=4, CRASHWATCH_KIND=hang."""
        s = self.watchdog_once()
        self.assertTrue(s["hangs"], "no hang report")
        hang = s["hangs"][0]
        entry = self.journal_entry(
            10, f"a journal entry MESSAGE_ID={JOURNAL_MESSAGE_ID} with CRASHWATCH_REPORT_ID={hang['id']}",
            f"MESSAGE_ID={JOURNAL_MESSAGE_ID}", where=lambda e: e.get("CRASHWATCH_REPORT_ID") == hang["id"])
        self.assertEqual(entry.get("PRIORITY"), "4", f"the hang entry: {json.dumps(entry, indent=1)}")
        self.assertEqual(entry.get("CRASHWATCH_KIND"), "hang", f"the hang entry: {json.dumps(entry, indent=1)}")


class SocketTests(SystemdTestCase):
    """Contract 5: socket activation."""

    def test_05_socket_activation(self):
        unit, sock = "cw-sock.service", "cw-sock.socket"
        spool = self.make_spool("sock")
        state = "/run/cw-sock.state"
        port = free_port()
        self.install(sock, f"""\
[Unit]
Description=crashwatch test: socket activation (contract 5)

[Socket]
ListenStream=127.0.0.1:{port}
""", reload=False)
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: a socket-activated program under crashwatch (contract 5)

[Service]
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_listen {state}
""")
        self.c.systemctl("start", sock)
        lines = []
        for attempt in range(2):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                    connection.settimeout(10)
                    data = b""
                    while not data.endswith(b"\n"):
                        chunk = connection.recv(4096)
                        if not chunk:
                            break
                        data += chunk
            except OSError as error:
                self.fail(f"connection {attempt + 1} to 127.0.0.1:{port}: {error}\nprogram state: "
                          f"{self.read_state(state)}\n{self.describe_unit(unit)}")
            lines.append(data.decode(errors="replace"))
            values = self.read_state(state)
            self.assertRegex(lines[-1], r"^hello from cw_listen \d+\n$",
                             f"connection {attempt + 1}: the program's line (sd_listen_fds(0) must be 1); "
                             f"program state: {values}\n{self.describe_unit(unit)}")
        values = self.read_state(state)
        self.assertEqual(values.get("LISTEN_PID"), values.get("pid"), f"LISTEN_PID names the program: {values}")
        self.assertEqual(lines[0], f"hello from cw_listen {values.get('pid')}\n", "the line names the program's pid")
        props = self.show(sock, "ActiveState", "Result")
        self.assertEqual(props, {"ActiveState": "active", "Result": "success"}, f"{sock} is not failed")
        self.assertEqual(self.show(unit, "ActiveState")["ActiveState"], "active", self.describe_unit(unit))


class SignalTests(SystemdTestCase):
    """Contract 6: signals systemd sends to the cgroup reach the program exactly once."""

    def test_06a_systemctl_kill_usr1_100_times(self):
        unit = "cw-sigcount.service"
        spool = self.make_spool("sigcount")
        count_file = "/run/cw-sigcount.count"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: systemctl kill -s USR1 reaches the program once (contract 6)

[Service]
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sigcount {count_file}
""")
        started = time.monotonic()
        self.start(unit)

        def count():
            text = self.inside(count_file).read_text() if self.inside(count_file).exists() else ""
            match = re.fullmatch(r"pid=(\d+) count=(\d+)\n", text)
            return int(match.group(2)) if match else None
        self.wait_until(lambda: count() == 0, 10, lambda: f"{count_file} with count=0: {self.describe_unit(unit)}")
        for sent in range(1, 101):
            self.c.systemctl("kill", "-s", "USR1", unit)
            # Wait for this one to be counted before the next (two pending SIGUSR1s would merge).
            counted = self.wait_until(lambda: (count() or 0) >= sent and count(), 5,
                                      lambda: f"the program to count SIGUSR1 number {sent} (it counted {count()})")
            self.assertEqual(counted, sent, f"after {sent} × systemctl kill -s USR1 the program counted {counted}: "
                             "a signal reached it twice")
        time.sleep(0.5)
        self.assertEqual(count(), 100, "100 × systemctl kill -s USR1 → exactly 100 SIGUSR1s in the program")
        CONTRACT_6_SECONDS[0] += time.monotonic() - started
        NOTES.append(f"test_06a: 100 kills in {time.monotonic() - started:.1f} s")

    def _stop_start_cycles(self, unit: str, kill_mode: str | None, cycles: int):
        spool = self.make_spool(unit.split(".")[0])
        log, ready = f"/run/{unit}.log", f"/run/{unit}.ready"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: one SIGTERM per stop (contract 6, KillMode={kill_mode or 'control-group'})
StartLimitIntervalSec=0

[Service]
TimeoutStopSec=5
{f'KillMode={kill_mode}' if kill_mode else ''}
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_termlog {log} {ready}
""")
        started = time.monotonic()
        log_path, ready_path = self.inside(log), self.inside(ready)
        for cycle in range(1, cycles + 1):
            ready_path.unlink(missing_ok=True)
            self.start(unit)
            pid = self.wait_until(lambda: ready_path.exists() and ready_path.read_text().strip(), 10,
                                  lambda: f"cycle {cycle}: the program's ready file {ready}: {self.describe_unit(unit)}",
                                  interval=0.005)
            stop = self.c.systemctl("stop", unit, check=False, timeout=20)
            self.assertEqual(stop.returncode, 0, f"cycle {cycle}: systemctl stop: {stop.stderr}")
            lines = log_path.read_text().splitlines() if log_path.exists() else []
            mine = [line for line in lines if line == f"term {pid}"]
            self.assertEqual(len(mine), 1, f"cycle {cycle} (KillMode={kill_mode or 'control-group'}): the program "
                             f"(pid {pid}) got {len(mine)} SIGTERMs, want exactly 1\n{self.describe_unit(unit)}")
            self.assertEqual(len(lines), cycle, f"cycle {cycle}: {len(lines)} lines in {log}, want one per cycle")
            props = self.show(unit, "ActiveState", "Result")
            self.assertEqual(props, {"ActiveState": "inactive", "Result": "success"},
                             f"cycle {cycle}: the program exits 0 on SIGTERM: {self.describe_unit(unit)}")
        CONTRACT_6_SECONDS[0] += time.monotonic() - started
        NOTES.append(f"{unit}: {cycles} stop/start cycles in {time.monotonic() - started:.1f} s")

    def test_06b_stop_start_100_cycles(self):
        self._stop_start_cycles("cw-termlog.service", None, 100)

    def test_06c_stop_start_100_cycles_kill_mode_mixed(self):
        self._stop_start_cycles("cw-termlog-mixed.service", "mixed", 100)


class SeccompTests(SystemdTestCase):
    """Contract 7: SystemCallFilter=@system-service (no ptrace)."""

    def test_07_system_call_filter(self):
        unit = "cw-seccomp.service"
        spool = self.make_spool("seccomp")
        state = "/run/cw-seccomp.state"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: SystemCallFilter=@system-service forbids ptrace (contract 7)

[Service]
SystemCallFilter=@system-service
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state}
""")
        self.start(unit)
        values = self.wait_state(state, unit)
        self.assertTrue(values.get("pid"), f"the program ran and wrote its state file: {values}")
        time.sleep(0.5)
        props = self.show(unit, "ActiveState", "Result", "ExecMainCode", "ExecMainStatus")
        self.assertEqual(props["ActiveState"], "active", f"the service keeps running: {self.describe_unit(unit)}")
        self.assertTrue(self.pid_alive(int(values["pid"])), "the program is still running")

        def crashwatch_line(entry):
            message = entry.get("MESSAGE")
            if not isinstance(message, str):
                return False
            from_crashwatch = entry.get("SYSLOG_IDENTIFIER") == "crashwatch" or message.startswith("crashwatch")
            return from_crashwatch and "ptrace" in message and "SystemCallFilter=" in message
        self.journal_entry(10, f"a crashwatch line naming ptrace and SystemCallFilter= in journalctl -u {unit}:\n"
                           + self.unit_log(unit), "-u", unit, where=crashwatch_line)
        self.assertNotIn("status=31/SYS", self.unit_log(unit, 200), "crashwatch was killed by SIGSYS")


class JournalTests(SystemdTestCase):
    """Contract 8 (the rest: the program's stdout keeps the unit's SyslogIdentifier)."""

    def test_08c_syslog_identifier(self):
        unit = "cw-ident.service"
        spool = self.make_spool("ident")
        state = "/run/cw-ident.state"
        line = f"cw_sleep says hello {os.getpid()}"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: SyslogIdentifier= for the program's stdout (contract 8)

[Service]
SyslogIdentifier=exampleapp
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state} "{line}"
""")
        self.start(unit)
        self.wait_state(state, unit)
        entry = self.journal_entry(10, f"the line {line!r} in journalctl -u {unit}", "-u", unit,
                                   where=lambda e: e.get("MESSAGE") == line)
        self.assertEqual(entry.get("SYSLOG_IDENTIFIER"), "exampleapp", f"the entry: {json.dumps(entry, indent=1)}")


class ExitTests(SystemdTestCase):
    """Contract 9: deaths by SIGKILL are abnormal exits; MemoryMax= kills are reason "memory"."""

    def test_09a_memory_max_oom(self):
        unit = "cw-oom.service"
        spool = self.make_spool("oom")
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: MemoryMax= kills the program (contract 9)

[Service]
MemoryMax=64M
MemorySwapMax=0
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_oom
""")
        self.start(unit)
        props = self.wait_inactive(unit, 60)
        log = self.unit_log(unit, 200)
        self.assertNotIn("no memory limit", log, "MemoryMax=64M did not limit the program (harness cgroup setup)")
        reports = self.wait_reports(spool, 1, unit=unit)
        self.assertEqual(len(reports), 1, f"one report: {[r.summary() for r in reports]}")
        report = reports[0]
        self.assertField(report, "kind", "abnormalExit")
        exit_object = report.get("exit")
        self.assertIsInstance(exit_object, dict, f"top-level exit is {exit_object!r}, want an object")
        self.assertField(report, "exit.reason", "memory")
        self.assertField(report, "signal.name", "SIGKILL")
        self.assertEqual(report.get("threads"), [], "after an OOM kill nothing more is read: no threads captured")
        self.assertIn(props["Result"], ("oom-kill", "signal"), self.describe_unit(unit))
        self.assertEqual(props["ExecMainStatus"], "9", f"crashwatch exits by SIGKILL too: {props}")
        self.assertEqual(props["ExecMainCode"], "2", f"ExecMainCode (2 = killed by a signal): {props}")

    def test_09b_kill_9(self):
        unit = "cw-kill9.service"
        spool = self.make_spool("kill9")
        state = "/run/cw-kill9.state"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: kill -9 of the program (contract 9)

[Service]
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state}
""")
        self.start(unit)
        pid = self.wait_state(state, unit)["pid"]
        self.c.run(["kill", "-9", pid])
        props = self.wait_inactive(unit)
        reports = self.wait_reports(spool, 1, unit=unit)
        self.assertEqual(len(reports), 1, f"one report: {[r.summary() for r in reports]}")
        report = reports[0]
        self.assertField(report, "kind", "abnormalExit")
        self.assertField(report, "process.pid", int(pid))
        exit_object = report.get("exit")
        self.assertIsInstance(exit_object, dict, f"top-level exit is {exit_object!r}, want an object")
        self.assertField(report, "exit.reason", "signal")
        self.assertField(report, "signal.name", "SIGKILL")
        threads = report.get("threads") or []
        self.assertTrue(threads and all(t.get("frames") for t in threads) and not any(t.get("crashed") for t in threads),
                        f"the killed threads' stacks, captured at their exit stops, none crashed: "
                        f"{[(t.get('tid'), t.get('crashed'), len(t.get('frames') or [])) for t in threads]}")
        self.assertEqual(props["ExecMainStatus"], "9", f"crashwatch exits by SIGKILL as the program did: {props}")


class ForkingTests(SystemdTestCase):
    """Contract 10: Type=forking with crashwatch run --pid-file."""

    def test_10_type_forking(self):
        unit = "cw-forkd.service"
        spool = self.make_spool("forkd")
        daemon_pid_file = "/run/forkd.daemon.pid"
        self.inside(daemon_pid_file).unlink(missing_ok=True)
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: a Type=forking daemon under crashwatch --pid-file (contract 10)

[Service]
Type=forking
PIDFile=/run/forkd.pid
TimeoutStartSec=10
ExecStart={CRASHWATCH} run --pid-file /run/forkd.pid --spool {spool} -- /opt/t/cw_forkd {daemon_pid_file}
""")
        self.start(unit)
        props = self.show(unit, "ActiveState", "SubState", "MainPID")
        self.assertEqual(props["ActiveState"], "active", self.describe_unit(unit))
        main_pid = props["MainPID"]
        self.assertNotEqual(main_pid, "0", f"a MainPID: {self.describe_unit(unit)}")
        comm = self.inside(f"/proc/{main_pid}/comm").read_text().strip()
        self.assertEqual(comm, "crashwatch", f"the MainPID {main_pid} is a crashwatch process")
        pid_file = self.inside("/run/forkd.pid").read_text().strip()
        self.assertEqual(pid_file, main_pid, "the PID file names the MainPID")
        daemon = self.wait_until(lambda: self.inside(daemon_pid_file).exists()
                                 and self.inside(daemon_pid_file).read_text().strip(), 5, daemon_pid_file)
        status = self.inside(f"/proc/{daemon}/status").read_text()
        tracer = re.search(r"^TracerPid:\s+(\d+)", status, re.MULTILINE).group(1)
        self.assertEqual(tracer, main_pid, f"the daemon {daemon} is supervised (traced) by the MainPID {main_pid}")
        self.c.run(["kill", "-USR1", daemon])
        reports = self.wait_reports(spool, 1, unit=unit)
        self.assertEqual(len(reports), 1, f"one report: {[r.summary() for r in reports]}")
        report = reports[0]
        self.assertField(report, "process.pid", int(daemon))
        self.assertField(report, "kind", "crash")
        self.assertField(report, "signal.name", "SIGSEGV")
        props = self.wait_inactive(unit)
        self.assertEqual(props["Result"], "signal", self.describe_unit(unit))


class SpoolTests(SystemdTestCase):
    """Contract 11: where reports go under systemd."""

    def test_11a_dynamic_user_state_directory(self):
        unit = "cw-dyn.service"
        self.set_config(None)
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: DynamicUser= with the spool in its StateDirectory= (contract 11)

[Service]
DynamicUser=yes
StateDirectory=cwdyn
Environment=CRASHWATCH_SPOOL=/var/lib/cwdyn
ExecStart={CRASHWATCH} run -- /opt/t/null_deref
""")
        self.start(unit)
        self.wait_inactive(unit)
        link = self.inside("/var/lib/cwdyn")
        self.assertTrue(link.is_symlink(), "/var/lib/cwdyn is systemd's link to private/cwdyn")
        self.assertEqual(os.readlink(link), "private/cwdyn")
        reports = self.wait_reports("/var/lib/private/cwdyn", 1, unit=unit)
        self.assertEqual(len(reports), 1, f"one report: {[r.summary() for r in reports]}")
        self.assertField(reports[0], "kind", "crash")
        self.assertField(reports[0], "process.systemdUnit", unit)

    def test_11b_environment_beats_config_file(self):
        unit = "cw-envspool.service"
        env_spool, conf_spool = self.make_spool("env-spool"), self.make_spool("conf-spool")
        self.set_config(f"spool = {conf_spool}\n")
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: CRASHWATCH_SPOOL= beats spool = in /etc/crashwatch.conf (contract 11)

[Service]
Environment=CRASHWATCH_SPOOL={env_spool}
ExecStart={CRASHWATCH} run -- /opt/t/null_deref
""")
        self.start(unit)
        self.wait_inactive(unit)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (self.reports(env_spool) or self.reports(conf_spool)):
            time.sleep(0.1)
        in_conf = self.reports(conf_spool)
        self.assertEqual([r.summary() for r in in_conf], [],
                         f"no report in the config file's spool {conf_spool}: the environment wins")
        reports = self.wait_reports(env_spool, 1, unit=unit, timeout=2)
        self.assertField(reports[0], "process.systemdUnit", unit)

    def test_11c_user_with_supplementary_group(self):
        unit = "cw-user.service"
        spool = self._apply_packaged_users_and_spool()
        user = "cwtestuser"
        uid = self.ensure_user(user)
        before = {r.path for r in self.reports(spool)}
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: User= with SupplementaryGroups=crashwatch-writers writes into the packaged spool (contract 11)

[Service]
User={user}
SupplementaryGroups=crashwatch-writers
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/null_deref
""")
        self.start(unit)
        self.wait_inactive(unit)
        reports = self.wait_reports(spool, 1, unit=unit,
                                    where=lambda r: r.path not in before
                                    and (r.data.get("process") or {}).get("systemdUnit") == unit)
        report = reports[0]
        self.assertField(report, "kind", "crash")
        self.assertEqual(report.stat.st_uid, uid, f"the report is owned by {user} (uid {uid})")
        self.assert_mode_0640(report)
        readers = self.c.run(["getent", "group", "crashwatch"]).stdout.split(":")[2]
        self.assertEqual(report.stat.st_gid, int(readers),
                         "the report takes the readers' group crashwatch (the set-group-ID spool's), not the writer's")


class ExampleUnitTests(SystemdTestCase):
    """Contract 12: the packaged, hardened systemd/crashwatch-example.service."""

    UNIT = "crashwatch-example.service"

    def test_12_hardened_example_unit(self):
        text = (REPO / "systemd" / self.UNIT).read_text()
        # Its program: a crashing fixture as /usr/local/bin/example-server.
        server = self.inside("/usr/local/bin/example-server")
        server.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(FIXTURES / "null_deref", server)
        os.chmod(server, 0o755)
        self.set_config((REPO / "systemd/crashwatch.conf").read_text())
        if (REPO / "systemd/crashwatch.sysusers").is_file():
            self._apply_packaged_users_and_spool()
        else:
            tmpfiles = REPO / "systemd/crashwatch-tmpfiles.conf"
            self.c.write_file("/usr/lib/tmpfiles.d/crashwatch.conf", tmpfiles.read_text())
            self.c.run(["systemd-tmpfiles", "--create", "/usr/lib/tmpfiles.d/crashwatch.conf"])
        # Where its reports go: --spool, CRASHWATCH_SPOOL=, the config file, crashwatch's default as root,
        # and StateDirectory= (DynamicUser= puts it under /var/lib/private).
        candidates = re.findall(r"--spool[= ](\S+)", text) + re.findall(r"CRASHWATCH_SPOOL=(\S+)", text)
        candidates += re.findall(r"^\s*spool\s*=\s*(\S+)", (REPO / "systemd/crashwatch.conf").read_text(), re.M)
        candidates.append("/var/lib/crashwatch/reports")
        for directory in re.findall(r"^StateDirectory=(.+)$", text, re.M):
            for name in directory.split():
                candidates += [f"/var/lib/{name.split(':')[0]}", f"/var/lib/private/{name.split(':')[0]}"]
        candidates = [c.strip("\"'") for c in dict.fromkeys(candidates)]
        # The service's own user and group (User=, Group=): the deployer's to create, as here.
        users = re.findall(r"^User=(\S+)", text, re.M)
        groups = re.findall(r"^Group=(\S+)", text, re.M)
        if users:
            self.ensure_user(users[-1], groups[-1] if groups else None)
        self.install(self.UNIT, text)

        def mine():
            return [(spool, r) for spool in candidates for r in self.reports(spool)
                    if (r.data.get("process") or {}).get("systemdUnit") == self.UNIT]
        self.c.systemctl("start", self.UNIT, check=False, timeout=30)
        found = self.wait_until(mine, 30, lambda: f"a report of {self.UNIT} in one of {candidates}: "
                                                  f"{self.describe_unit(self.UNIT)}", interval=0.2)
        spool, report = found[0]
        self.assertField(report, "kind", "crash")
        self.assertField(report, "signal.name", "SIGSEGV")
        self.wait_until(lambda: self.show(self.UNIT, "Result")["Result"] == "signal", 10,
                        lambda: f"Result=signal: {self.describe_unit(self.UNIT)}")


class StopTests(SystemdTestCase):
    """systemctl stop of a crashwatch-wrapped unit is quick and complete."""

    def test_13_stop_is_quick_and_complete(self):
        unit = "cw-stop.service"
        spool = self.make_spool("stop")
        state = "/run/cw-stop.state"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: systemctl stop of a running crashwatch-wrapped unit

[Service]
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state}
""")
        self.start(unit)
        app_pid = int(self.wait_state(state, unit)["pid"])
        props = self.show(unit, "MainPID", "ControlGroup")
        main_pid = int(props["MainPID"])
        started = time.monotonic()
        self.c.systemctl("stop", unit, timeout=20)
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 2.0, f"systemctl stop {unit} took {elapsed:.2f} s\n{self.unit_log(unit)}")
        for pid, what in ((app_pid, "the program"), (main_pid, "crashwatch")):
            self.assertFalse(self.pid_alive(pid), f"{what} (pid {pid}) is still running after the stop")
        procs = self.inside(f"/sys/fs/cgroup/systemd{props['ControlGroup']}/cgroup.procs")
        left = procs.read_text().split() if procs.exists() else []
        self.assertEqual(left, [], f"processes left in {props['ControlGroup']}")
        self.assertEqual(self.show(unit, "ActiveState")["ActiveState"], "inactive", self.describe_unit(unit))
        self.assertEqual(self.reports(spool), [], "a stop is not a crash: no report")


class SnapshotUnitTests(SystemdTestCase):
    """`crashwatch snapshot --unit NAME` on a running service whose ExecStart is `crashwatch run -- …`."""

    def test_15_snapshot_unit(self):
        unit = "cw-snapshot.service"
        spool = self.make_spool("snapshot")
        state = "/run/cw-snapshot.state"
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: snapshot --unit of a crashwatch-wrapped unit

[Service]
ExecStart={CRASHWATCH} run --spool {spool} -- /opt/t/cw_sleep {state}
""")
        self.start(unit)
        app_pid = int(self.wait_state(state, unit)["pid"])
        main_pid = int(self.show(unit, "MainPID")["MainPID"])
        # The unit's supervisor traces the program: a second tracer (eu-stack, gdb, a plain snapshot) cannot
        # attach, so the snapshot is asked of that supervisor through its control socket.
        result = self.c.run([CRASHWATCH, "snapshot", "--unit", unit], check=False, timeout=60)
        self.assertEqual(result.returncode, 0, f"snapshot --unit {unit}: exit {result.returncode}: "
                                               f"{result.stderr.strip()}\n{self.unit_log(unit)}")
        path = result.stdout.strip()
        self.assertTrue(path.startswith(spool + "/") and path.endswith(".json"),
                        f"snapshot --unit printed {result.stdout!r}, want a report path in {spool}")
        reports = self.wait_reports(spool, 1, unit=unit)
        self.assertEqual([r.path for r in reports], [path], "one report, the one whose path was printed")
        report = reports[0]
        self.assertField(report, "kind", "snapshot")
        self.assertField(report, "process.pid", app_pid)
        self.assertField(report, "process.systemdUnit", unit)
        self.assertField(report, "diagnostics.processing", "complete")
        self.assert_mode_0640(report)
        threads = report.get("threads") or []
        self.assertEqual([t.get("tid") for t in threads], [app_pid], f"threads: {threads}")
        self.assertEqual(threads[0].get("state"), "syscall", f"cw_sleep waits in pause(): {threads[0]}")
        functions = [f.get("function") for f in threads[0].get("frames") or []]
        self.assertIn("main", functions, f"frames of cw_sleep: {functions}")
        # Taken and let go: the program runs on, under the same supervisor, in no stop.
        self.assertTrue(self.pid_alive(app_pid), f"the program (pid {app_pid}) is gone after the snapshot")
        status = self.inside(f"/proc/{app_pid}/status").read_text()
        self.assertRegex(status, r"(?m)^State:\s+S", f"the program's state after the snapshot:\n{status}")
        props = self.show(unit, "ActiveState", "MainPID")
        self.assertEqual((props["ActiveState"], int(props["MainPID"])), ("active", main_pid), self.describe_unit(unit))


# ---------------------------------------------------------------------------------------------------
# Contract 14: shipping (systemd/crashwatch-ship.service and .path) to a real OTLP/HTTP receiver

# The receiver of the ship suite (Tests/shipping/README.md): decodes every request strictly with the
# official OTLP protobuf schema (PyPI opentelemetry-proto: `make pydeps` puts it in .build/pydeps).
OTLP_RECEIVER = REPO / "Tests/shipping/otlp_receiver.py"
PYDEPS = harness.BUILD / "pydeps"
RECEIVER_IMPORT = "import opentelemetry.proto.collector.logs.v1.logs_service_pb2"


def receiver_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYDEPS), os.environ.get("PYTHONPATH", "")) if p)
    return env


def otlp_attributes(pairs) -> dict:
    """OTLP KeyValue list → {key: plain value} (stringValue, intValue as int, arrays as lists…)."""
    def plain(value):
        if not value:
            return None
        kind, inner = next(iter(value.items()))
        if kind == "intValue":
            return int(inner)
        if kind == "arrayValue":
            return [plain(v) for v in inner.get("values", [])]
        if kind == "kvlistValue":
            return otlp_attributes(inner.get("values", []))
        return inner
    return {pair["key"]: plain(pair.get("value")) for pair in pairs or []}


class Receiver:
    """Tests/shipping/otlp_receiver.py on the host's 127.0.0.1 (the container shares the network
    namespace): any free port, one JSON line per request in its log, the answers from a fault file."""

    def __init__(self, directory: Path, fault: str = "ok"):
        self.directory = directory
        self.port_file, self.log_file = directory / "port", directory / "requests.jsonl"
        self.fault_file, self.output = directory / "fault", directory / "receiver.out"
        self.set_fault(fault)
        with open(self.output, "wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, str(OTLP_RECEIVER), "--bind", "127.0.0.1", "--port", "0",
                 "--port-file", str(self.port_file), "--log", str(self.log_file),
                 "--fault-file", str(self.fault_file)],
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=receiver_environment())
        deadline = time.monotonic() + 15
        while not self.port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"{OTLP_RECEIVER.relative_to(REPO)} did not start listening "
                                     f"(status {self.process.returncode}): {self.output.read_text()[-2000:]}")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text().strip())

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_fault(self, script: str) -> None:
        """The answers from now on (the receiver rereads the file before every POST)."""
        tmp = self.fault_file.with_name(".fault.tmp")
        tmp.write_text(script + "\n")
        os.replace(tmp, self.fault_file)

    def requests(self) -> list[dict]:
        entries = []
        if self.log_file.exists():
            for line in self.log_file.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a line being written
                if entry.get("event") == "request":
                    entries.append(entry)
        return entries

    def records(self, status: int | None = None) -> list[dict]:
        """Every log record of the requests (answered STATUS, when given): {status, seq, resource,
        attributes, record}."""
        found = []
        for entry in self.requests():
            if status is not None and entry.get("status") != status:
                continue
            for resource_logs in (entry.get("decoded") or {}).get("resourceLogs", []):
                resource = otlp_attributes((resource_logs.get("resource") or {}).get("attributes"))
                for scope_logs in resource_logs.get("scopeLogs", []):
                    for record in scope_logs.get("logRecords", []):
                        found.append({"status": entry.get("status"), "seq": entry.get("seq"),
                                      "resource": resource, "attributes": otlp_attributes(record.get("attributes")),
                                      "record": record})
        return found

    def describe(self) -> str:
        lines = [f"receiver {self.endpoint} (fault {self.fault_file.read_text().strip()!r}):"]
        for entry in self.requests():
            ids = [r["attributes"].get("app.crash.id") for r in self.records() if r["seq"] == entry.get("seq")]
            lines.append(f"  #{entry.get('seq')} {entry.get('method')} {entry.get('path')} -> {entry.get('status')} "
                         f"{entry.get('outcome')} app.crash.id={ids} error={entry.get('error')} "
                         f"warnings={entry.get('warnings')}")
        return "\n".join(lines) if len(lines) > 1 else lines[0] + " no request"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class ShipTests(SystemdTestCase):
    """Contract 14: systemd/crashwatch-ship.path starts systemd/crashwatch-ship.service (`crashwatch ship
    --follow`, hardened), both as shipped, which sends a wrapped service's crash report to a real OTLP/HTTP
    receiver on the host, keeps it through 503s and delivers it once the receiver recovers."""

    SERVICE, PATH_UNIT = "crashwatch-ship.service", "crashwatch-ship.path"
    USER = "cwship"

    @classmethod
    def setUpClass(cls):
        if not OTLP_RECEIVER.is_file():
            raise AssertionError(f"{OTLP_RECEIVER.relative_to(REPO)} is missing (the ship suite's receiver)")
        probe = subprocess.run([sys.executable, "-c", RECEIVER_IMPORT], capture_output=True, text=True,
                               env=receiver_environment())
        if probe.returncode != 0:
            raise unittest.SkipTest("the OTLP receiver needs opentelemetry-proto (make pydeps installs it "
                                    f"into {PYDEPS.relative_to(REPO)}): {(probe.stderr.strip().splitlines() or ['?'])[-1]}")

    # -- set-up -----------------------------------------------------------------------------------------

    def start_receiver(self, fault: str = "ok") -> Receiver:
        directory = Path(tempfile.mkdtemp(prefix="cw-ship-receiver."))
        self.addCleanup(shutil.rmtree, directory, True)
        receiver = Receiver(directory, fault)
        self.addCleanup(receiver.stop)
        return receiver

    def empty_spool(self, spool: str) -> None:
        """Moves what earlier tests left in the packaged spool (test_11c, test_12) to /var/spool/cwt/
        ship-stash, so that the shipper has only this test's report to send."""
        stash = self.inside("/var/spool/cwt/ship-stash")
        stash.mkdir(parents=True, exist_ok=True)
        host = self.inside(spool)
        for directory in (host, host / ".claims", host / ".attempts"):
            if directory.is_dir():
                for entry in directory.iterdir():
                    if entry.is_file():
                        entry.rename(stash / f"{directory.name}.{entry.name}")

    def ship_setup(self, receiver: Receiver) -> str:
        """The packaged group and spool, /etc/crashwatch.conf as shipped with `endpoint =` the receiver,
        the two ship units as shipped, the path unit enabled and started; returns the spool."""
        spool = self._apply_packaged_users_and_spool()
        self.empty_spool(spool)
        shipped_conf = (REPO / "systemd/crashwatch.conf").read_text()
        endpoint_line = f"endpoint = {receiver.endpoint}"
        conf, replaced = re.subn(r"^#?\s*endpoint\s*=.*$", endpoint_line, shipped_conf, count=1, flags=re.M)
        self.set_config(conf if replaced else shipped_conf.rstrip("\n") + "\n" + endpoint_line + "\n")
        for unit in (self.SERVICE, self.PATH_UNIT):
            self.assertTrue((REPO / "systemd" / unit).is_file(), f"systemd/{unit} is missing (the unit to test)")
        # Cleanups run last-in first-out: the path unit is disabled and stopped before the service stops
        # (else a report left in the spool would start the service again).
        self.install(self.SERVICE, (REPO / "systemd" / self.SERVICE).read_text(), reload=False)
        self.install(self.PATH_UNIT, (REPO / "systemd" / self.PATH_UNIT).read_text())
        result = self.c.systemctl("enable", "--now", self.PATH_UNIT, check=False)
        self.addCleanup(lambda: self.c.alive() and self.c.systemctl("disable", self.PATH_UNIT, check=False))
        self.assertEqual(result.returncode, 0, f"systemctl enable --now {self.PATH_UNIT}: {result.stderr}")
        path = self.show(self.PATH_UNIT, "ActiveState", "SubState")
        self.assertEqual(path["ActiveState"], "active", f"{self.PATH_UNIT}: {path}\n{self.unit_log(self.PATH_UNIT)}")
        # An empty spool triggers nothing: whatever starts the service later is the crash's report.
        time.sleep(0.3)
        state = self.show(self.SERVICE, "ActiveState")["ActiveState"]
        self.assertEqual(state, "inactive", f"{self.SERVICE} before any report (the spool is empty): "
                                            f"{self.describe_unit(self.SERVICE)}")
        self.ensure_user(self.USER)
        return spool

    def crash(self, unit: str) -> tuple[dict, dict]:
        """Runs /opt/t/null_deref under `crashwatch run` (the spool from /etc/crashwatch.conf) in UNIT as a
        member of the writers' group crashwatch-writers; returns the unit's properties and the crash's journal entry, which
        names the report (its id and file: the shipper may have sent and removed it already)."""
        self.install(unit, f"""\
[Unit]
Description=crashwatch test: a crash whose report crashwatch-ship.service sends (contract 14)

[Service]
User={self.USER}
SupplementaryGroups=crashwatch-writers
ExecStart={CRASHWATCH} run -- /opt/t/null_deref
""")
        self.start(unit)
        props = self.wait_inactive(unit)
        self.assertEqual(props["Result"], "signal", self.describe_unit(unit))
        entry = self.journal_entry(
            15, f"the journal entry (MESSAGE_ID={JOURNAL_MESSAGE_ID}) of the crash of {unit}",
            f"MESSAGE_ID={JOURNAL_MESSAGE_ID}", f"CRASHWATCH_UNIT={unit}",
            where=lambda e: e.get("CRASHWATCH_INVOCATION_ID", props["InvocationID"]) == props["InvocationID"])
        for field in ("CRASHWATCH_REPORT_ID", "CRASHWATCH_REPORT"):
            self.assertTrue(entry.get(field), f"the crash's journal entry has no {field}: {entry}")
        return props, entry

    # -- checks ------------------------------------------------------------------------------------------

    def ship_log(self) -> str:
        return self.describe_unit(self.SERVICE)

    def wait_delivered(self, receiver: Receiver, report_id: str, timeout: float) -> dict:
        def delivered():
            return [r for r in receiver.records(200) if r["attributes"].get("app.crash.id") == report_id]
        return self.wait_until(delivered, timeout, lambda: f"a record with app.crash.id={report_id} answered "
                               f"200:\n{receiver.describe()}\n{self.ship_log()}", interval=0.1)[0]

    def assert_record(self, record: dict, unit: str, props: dict, entry: dict) -> None:
        attributes, resource = record["attributes"], record["resource"]
        what = f"the record of report {entry['CRASHWATCH_REPORT_ID']}"
        self.assertEqual(record["record"].get("eventName"), "app.crash", f"{what}: eventName")
        self.assertEqual(attributes.get("app.crash.id"), entry["CRASHWATCH_REPORT_ID"], f"{what}: app.crash.id")
        self.assertEqual(attributes.get("session.id"), props["InvocationID"],
                         f"{what}: session.id is the crashed unit's InvocationID")
        self.assertEqual(resource.get("service.name"), unit.removesuffix(".service"),
                         f"{what}: service.name is the unit's name without .service")
        expected_type = (f"{fixture_header('null_deref', 'CRASH-SIGNAL')} "
                         f"({fixture_header('null_deref', 'CRASH-CODE')})")
        self.assertEqual(attributes.get("exception.type"), expected_type, f"{what}: exception.type")
        body = record["record"].get("body", {}).get("stringValue")
        if body is not None:
            self.assertEqual(json.loads(body).get("id"), entry["CRASHWATCH_REPORT_ID"], f"{what}: the body's id")

    def spool_entries(self, spool: str) -> dict[str, list[str]]:
        """The file names in the spool, its .claims and its .attempts."""
        host = self.inside(spool)
        return {name: sorted(e.name for e in (host / name).iterdir() if e.is_file())
                if (host / name).is_dir() else []
                for name in (".", ".claims", ".attempts")}

    def assert_spool_empty(self, spool: str) -> None:
        self.wait_until(lambda: not any(self.spool_entries(spool).values()), 5,
                        lambda: f"the spool {spool} (its reports, .claims and .attempts) to be empty: "
                                f"{self.spool_entries(spool)}")

    def assert_still_running(self, main_pid: str, invocation: str) -> None:
        time.sleep(1.0)
        props = self.show(self.SERVICE, "ActiveState", "SubState", "MainPID", "NRestarts", "InvocationID")
        self.assertEqual((props["ActiveState"], props["SubState"]), ("active", "running"),
                         f"{self.SERVICE} keeps running (--follow): {self.ship_log()}")
        self.assertEqual((props["MainPID"], props["NRestarts"], props["InvocationID"]), (main_pid, "0", invocation),
                         f"{self.SERVICE} was not restarted (MainPID, NRestarts, InvocationID): {props}")

    def assert_quick_clean_stop(self) -> float:
        started = time.monotonic()
        self.c.systemctl("stop", self.SERVICE, timeout=60)
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 5.0, f"systemctl stop {self.SERVICE} took {elapsed:.2f} s\n{self.ship_log()}")
        props = self.show(self.SERVICE, "ActiveState", "Result", "ExecMainCode", "ExecMainStatus")
        self.assertEqual((props["ActiveState"], props["Result"]), ("inactive", "success"),
                         f"{self.SERVICE} after systemctl stop: {props}\n{self.ship_log()}")
        return elapsed

    def ship_lines(self, main_pid: str) -> list[str]:
        return [str(e.get("MESSAGE")) for e in self.c.journal("-u", self.SERVICE, f"_PID={main_pid}")]

    # -- the cases ---------------------------------------------------------------------------------------

    def test_14a_ship_path_unit_delivers_a_crash(self):
        started = time.monotonic()
        unit = "cw-ship-crash.service"
        receiver = self.start_receiver("ok")
        spool = self.ship_setup(receiver)
        props, entry = self.crash(unit)
        report_id = entry["CRASHWATCH_REPORT_ID"]
        # The path unit (PathExistsGlob= on the spool) starts the service: nothing else here does.
        self.wait_until(lambda: self.show(self.SERVICE, "ActiveState")["ActiveState"] == "active", 15,
                        lambda: f"{self.PATH_UNIT} to start {self.SERVICE}: {self.describe_unit(self.PATH_UNIT)}"
                                f"\n{self.ship_log()}")
        record = self.wait_delivered(receiver, report_id, 20)
        service = self.show(self.SERVICE, "MainPID", "InvocationID", "TriggeredBy")
        self.assertEqual(service["TriggeredBy"], self.PATH_UNIT, f"{self.SERVICE}: TriggeredBy")
        self.assert_record(record, unit, props, entry)
        self.assert_spool_empty(spool)
        self.assert_still_running(service["MainPID"], service["InvocationID"])
        lines = self.ship_lines(service["MainPID"])
        self.assertIn(f"shipped {report_id} {os.path.basename(entry['CRASHWATCH_REPORT'])}", lines,
                      f"the shipper's line on standard output (the journal): {self.ship_log()}")
        stop = self.assert_quick_clean_stop()
        # Exactly this report's record, once, and nothing refused on the way.
        records = receiver.records()
        self.assertEqual([(r["status"], r["attributes"].get("app.crash.id")) for r in records], [(200, report_id)],
                         f"the receiver got exactly one record, this report's:\n{receiver.describe()}")
        self.assertEqual([(e.get("error"), e.get("warnings")) for e in receiver.requests()], [(None, [])],
                         f"the request decodes strictly, without warnings:\n{receiver.describe()}")
        NOTES.append(f"test_14a: {time.monotonic() - started:.1f} s (systemctl stop of {self.SERVICE}: {stop:.2f} s)")

    def test_14b_ship_keeps_a_report_through_503_then_delivers(self):
        started = time.monotonic()
        unit = "cw-ship-retry.service"
        receiver = self.start_receiver("503")
        spool = self.ship_setup(receiver)
        props, entry = self.crash(unit)
        report_id, name = entry["CRASHWATCH_REPORT_ID"], os.path.basename(entry["CRASHWATCH_REPORT"])
        self.wait_until(lambda: self.show(self.SERVICE, "ActiveState")["ActiveState"] == "active", 15,
                        lambda: f"{self.PATH_UNIT} to start {self.SERVICE}: {self.describe_unit(self.PATH_UNIT)}"
                                f"\n{self.ship_log()}")
        service = self.show(self.SERVICE, "MainPID", "InvocationID")

        def attempts():
            try:
                return self.inside(f"{spool}/.attempts/{name}").read_text()
            except FileNotFoundError:
                return None
        line = self.wait_until(attempts, 20, lambda: f"{spool}/.attempts/{name} (a failed attempt recorded):\n"
                               f"{receiver.describe()}\n{self.ship_log()}", interval=0.1)
        count, _, _, error = line.rstrip("\n").split(" ", 3)
        self.assertGreaterEqual(int(count), 1, f".attempts/{name}: {line!r}")
        self.assertIn("503", error, f".attempts/{name} names the last error: {line!r}")
        refused = [r for r in receiver.records(503) if r["attributes"].get("app.crash.id") == report_id]
        self.assertTrue(refused, f"the receiver answered 503 to this report's record:\n{receiver.describe()}")
        self.assert_record(refused[0], unit, props, entry)
        # Kept: back in the spool between attempts (a moment in .claims during each).
        self.wait_until(lambda: name in self.spool_entries(spool)["."], 5,
                        lambda: f"{name} back in the spool: {self.spool_entries(spool)}")
        # (Listed again when the shipper's next attempt held the report in .claims at that moment.)
        listings = []

        def listed():
            listings.append(self.c.run([CRASHWATCH, "list"]).stdout)
            return [r for r in listings[-1].splitlines() if report_id[:8] in r]
        row = self.wait_until(listed, 5, lambda: f"crashwatch list to show the report {report_id[:8]}:\n"
                                                 f"{listings[-1] if listings else ''}", interval=0.2)
        listing = listings[-1]
        self.assertIn("SHIP", listing.splitlines()[0].split(), f"crashwatch list has a SHIP column:\n{listing}")
        self.assertEqual(len(row), 1, f"crashwatch list shows the report {report_id[:8]} once:\n{listing}")
        self.assertRegex(row[0], r"\b\d+ failed\s*$", f"its SHIP column counts the failed attempts:\n{listing}")
        self.assertEqual(self.show(self.SERVICE, "ActiveState", "MainPID", "NRestarts"),
                         {"ActiveState": "active", "MainPID": service["MainPID"], "NRestarts": "0"},
                         f"{self.SERVICE} keeps running through the 503s: {self.ship_log()}")
        self.assertEqual(receiver.records(200), [], f"nothing was accepted yet:\n{receiver.describe()}")
        # The receiver recovers: the next retry (backoff from 1 s, doubling) delivers, no restart needed.
        recovered = time.monotonic()
        receiver.set_fault("ok")
        record = self.wait_delivered(receiver, report_id, 30)
        delivered_after = time.monotonic() - recovered
        self.assert_record(record, unit, props, entry)
        self.assert_spool_empty(spool)
        self.assert_still_running(service["MainPID"], service["InvocationID"])
        lines = self.ship_lines(service["MainPID"])
        self.assertTrue(any(l.startswith(f"kept {report_id} {name} (attempt 1,") for l in lines),
                        f"the shipper said it kept the report: {self.ship_log()}")
        self.assertIn(f"shipped {report_id} {name}", lines, f"then that it shipped it: {self.ship_log()}")
        stop = self.assert_quick_clean_stop()
        accepted = [r["attributes"].get("app.crash.id") for r in receiver.records(200)]
        self.assertEqual(accepted, [report_id], f"delivered exactly once:\n{receiver.describe()}")
        self.assertTrue(all(e.get("error") is None and not e.get("warnings") for e in receiver.requests()),
                        f"every request decodes strictly, without warnings:\n{receiver.describe()}")
        NOTES.append(f"test_14b: {time.monotonic() - started:.1f} s ({len(refused)}+ attempts answered 503; "
                     f"delivered {delivered_after:.1f} s after the receiver recovered; stop {stop:.2f} s)")


def load_tests(loader, standard_tests, pattern):
    """The tests in contract order (test_01…, test_13…), whatever their class."""
    tests = []

    def flatten(suite):
        for test in suite:
            if isinstance(test, unittest.TestSuite):
                flatten(test)
            else:
                tests.append(test)
    flatten(standard_tests)
    tests.sort(key=lambda test: getattr(test, "_testMethodName", ""))
    return unittest.TestSuite(tests)


def main() -> int:
    why = harness.can_run()
    if why:
        print(f"test-systemd: skipped: {why}")
        return 0
    try:
        program = unittest.main(module=__name__, exit=False, verbosity=2)
    finally:
        # Interrupted (Ctrl-C) before tearDownModule: still stop the container.
        if container is not None and container.init_pid is not None:
            container.stop()
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
