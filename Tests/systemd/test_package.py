#!/usr/bin/env python3
"""The Debian package (`make deb`) installed with apt-get into the real-systemd root (harness.py).

A container of its own (booted from the same cached root as test_systemd.py, a few seconds): the package
replaces the binary and changes users, groups and /etc, which the other suite's tests must not see. The
container gets no crashwatch of its own and no Swift toolchain: only the package's binary.

    python3 Tests/systemd/test_package.py -v          # make test-deb builds the package, then runs this
    CRASHWATCH_DEB=path/to/crashwatch_0.1.0_amd64.deb python3 Tests/systemd/test_package.py -v

The tests run in order (test_1 installs, test_3 purges): install (the README quick start's install
block, as written), a wrapped service's crash into the packaged spool, `crashwatch list` for a member of the readers' group and refused to others, writers that
may add but not read, readers that may read but not write; `man crashwatch` against every command's
`--help`; the quick start's drop-in (taken from the README) on a crashing service; purge leaves no file of
the package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

REPO = harness.REPO
SPOOL = "/var/lib/crashwatch/reports"
# What changes in any root as packages come and go, and is no file of the package: dpkg's and apt's
# state, caches of other tools, logs, the shadow tools' backups and lock.
UNRELATED = re.compile(r"^/(var/lib/(dpkg|apt|systemd|ucf)|var/cache/(apt|man|debconf|ldconfig)|var/log)(/|$)"
                       r"|^/etc/[^/]+-$|^/etc/\.pwd\.lock$|^/etc/ld\.so\.cache$")

container: harness.Container | None = None
PACKAGE: Path | None = None
STATE: dict = {}


def quick_start_blocks() -> list[str]:
    """The README quick start's ```sh blocks marked `<!-- quickstart: package -->`, as QuickStartTests.swift
    finds them (that test runs the others): from `## Quick start` to the next `## ` heading."""
    lines = (REPO / "README.md").read_text().split("\n")
    start = lines.index("## Quick start")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    blocks, i = [], start + 1
    while i < end:
        if lines[i] == "```sh":
            marker = next((line for line in reversed(lines[start:i]) if line), "")
            close = lines.index("```", i + 1)
            if marker == "<!-- quickstart: package -->":
                blocks.append("\n".join(lines[i + 1:close]))
            i = close
        i += 1
    return blocks


def quick_start_block(needle: str) -> str:
    """The one package block of the quick start that holds NEEDLE."""
    found = [block for block in quick_start_blocks() if needle in block]
    if len(found) != 1:
        raise AssertionError(f"README quick start: {len(found)} package blocks hold {needle!r}, expected 1")
    return found[0]


def package_path() -> Path:
    """The .deb under test: $CRASHWATCH_DEB, else the one `make deb` left in .build/deb."""
    if os.environ.get("CRASHWATCH_DEB"):
        return Path(os.environ["CRASHWATCH_DEB"]).resolve()
    found = sorted((REPO / ".build/deb").glob("crashwatch_*.deb"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise harness.HarnessError("no .build/deb/crashwatch_*.deb: build it with make deb (or make test-deb)")
    return found[-1]


def setUpModule():
    global container, PACKAGE
    why = harness.can_run()
    if why:
        raise unittest.SkipTest(why)
    PACKAGE = package_path()
    # The package's own binary boots with the container (the harness copies one in; test_1 removes it
    # before installing): it has no RUNPATH, so no Swift toolchain is mounted.
    unpacked = Path(tempfile.mkdtemp(prefix="cw-deb-x."))
    subprocess.run(["dpkg-deb", "-x", str(PACKAGE), str(unpacked)], check=True, timeout=60)
    container = harness.Container(binary=unpacked / "usr/bin/crashwatch", fixture_names=["null_deref"])
    signal.signal(signal.SIGTERM, _terminated)
    try:
        container.boot()
    finally:
        shutil.rmtree(unpacked)
    harness.log(f"package container up: {PACKAGE.name}")


def tearDownModule():
    if container is not None:
        container.stop()


def _terminated(signo, frame):
    if container is not None:
        container.stop()
    os._exit(128 + signo)


def file_list() -> set[str]:
    """Every path of the container's root file system (not /proc, /sys, /dev, /run, /tmp: other mounts)."""
    out = container.run(["find", "/", "-xdev"], timeout=60).stdout
    return {path for path in out.splitlines() if not UNRELATED.search(path)}


class PackageTests(unittest.TestCase):
    maxDiff = None

    def run_as(self, user: str, *argv: str, check: bool = False) -> subprocess.CompletedProcess:
        """ARGV as USER with USER's groups (runuser), in the container."""
        return container.run(["runuser", "-u", user, "--", *argv], check=check)

    def wait_until(self, probe, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = probe()
            if value:
                return value
            time.sleep(0.2)
        self.fail(f"within {timeout:.0f} s: {what}")

    def test_1_install_crash_and_read(self):
        c = container
        c.run(["rm", "/usr/bin/crashwatch"])
        self.assertFalse(os.path.exists(c.host_path("/opt/swift")), "no Swift toolchain in the container")
        # The users of the test: a service (a writer), another writer, a reader and an outsider.
        c.run(["useradd", "--system", "--no-create-home", "svc"])
        c.run(["useradd", "--system", "--no-create-home", "svc2"])
        c.run(["useradd", "--system", "--no-create-home", "alice"])
        c.run(["useradd", "--system", "--no-create-home", "bob"])
        STATE["before"] = file_list()

        # The README quick start's install block, as written, in a checkout's place of the package: its
        # `make` lines ran on the host (make test-deb builds the package first), the rest run here as root,
        # answering apt-get's question as a reader would.
        install = quick_start_block("apt-get install")
        steps = "\n".join(line for line in install.splitlines() if not line.startswith("make "))
        c.write_file(f"/tmp/pkg/.build/deb/{PACKAGE.name}", PACKAGE.read_bytes())
        c.write_file("/etc/apt/apt.conf.d/99quickstart-yes", 'APT::Get::Assume-Yes "true";\n')
        installed = c.run(["env", "DEBIAN_FRONTEND=noninteractive", "sh", "-ec", f"cd /tmp/pkg\n{steps}"],
                          timeout=120, check=False)
        c.run(["rm", "/etc/apt/apt.conf.d/99quickstart-yes"])
        self.assertEqual(installed.returncode, 0, f"the README's install block failed:\n{steps}\n"
                                                  f"{installed.stdout}\n{installed.stderr}")
        self.assertEqual(c.run(["crashwatch", "--version"]).stdout.split()[0], "crashwatch", "the packaged binary runs")
        c.run(["rm", "-r", "/tmp/pkg"])
        # The annotation helpers, byte for byte as in the repository (their tree kept: each finds the header).
        header = (REPO / "annotations/crashwatch_annotations.h").read_bytes()
        self.assertEqual(Path(c.host_path("/usr/include/crashwatch/crashwatch_annotations.h")).read_bytes(), header)
        for helper in sorted(p for p in (REPO / "annotations").rglob("*") if p.is_file()):
            installed = Path(c.host_path(f"/usr/share/crashwatch/annotations/{helper.relative_to(REPO / 'annotations')}"))
            self.assertEqual(installed.read_bytes(), helper.read_bytes(), f"{installed} as annotations/ has it")
        for name in ("crashwatch", "crashwatch-writers"):
            self.assertEqual(c.run(["getent", "group", name], check=False).returncode, 0, f"group {name}")
        self.assertEqual(c.run(["getent", "passwd", "crashwatch-worker"], check=False).returncode, 0)
        c.run(["usermod", "-aG", "crashwatch-writers", "svc2"])
        c.run(["usermod", "-aG", "crashwatch", "alice"])
        st = os.stat(c.host_path(SPOOL))
        self.assertEqual(oct(st.st_mode & 0o7777), oct(0o3770), f"{SPOOL} mode (the ACL mask as group bits)")

        # A wrapped service as a plain user in the writers' group; its spool is the conffile's.
        c.install_unit("pkg-crash.service", """\
[Service]
User=svc
SupplementaryGroups=crashwatch-writers
ExecStart=/usr/bin/crashwatch run -- /opt/t/null_deref
""")
        c.systemctl("start", "pkg-crash.service", check=False)
        self.wait_until(lambda: c.show("pkg-crash.service", "Result")["Result"] == "signal", 30,
                        "pkg-crash.service ends with Result=signal")

        def complete_report():
            for name in os.listdir(c.host_path(SPOOL)):
                try:
                    data = json.loads(Path(c.host_path(f"{SPOOL}/{name}")).read_text())
                except (ValueError, OSError):
                    continue
                if (data.get("diagnostics") or {}).get("processing") == "complete":
                    return name, data
            return None
        name, data = self.wait_until(complete_report, 30, f"a complete report in {SPOOL}")
        self.assertEqual((data.get("process") or {}).get("systemdUnit"), "pkg-crash.service")
        report, report_id = f"{SPOOL}/{name}", data["id"]

        # A reader lists it; an outsider is refused.
        listed = self.run_as("alice", "crashwatch", "list", "--json")
        self.assertEqual(listed.returncode, 0, f"crashwatch list as a reader:\n{listed.stderr}")
        self.assertIn(report_id, listed.stdout, "the reader's list names the report")
        refused = self.run_as("bob", "crashwatch", "list")
        self.assertNotEqual(refused.returncode, 0, f"crashwatch list as an outsider:\n{refused.stdout}")
        self.assertNotIn(report_id[:8], refused.stdout)
        self.assertIn("Permission denied", refused.stderr, "the outsider is told why")
        # Readers read but neither add nor remove; another writer adds but cannot read the report.
        self.assertEqual(self.run_as("alice", "cat", report).returncode, 0, "a reader reads the report")
        self.assertNotEqual(self.run_as("alice", "touch", f"{SPOOL}/planted.json").returncode, 0,
                            "a reader cannot add a file to the spool")
        self.assertNotEqual(self.run_as("alice", "rm", "-f", report).returncode, 0, "a reader cannot remove a report")
        self.assertNotEqual(self.run_as("svc2", "cat", report).returncode, 0, "another writer cannot read the report")
        self.assertEqual(self.run_as("svc2", "touch", f"{SPOOL}/.tmp-writer-probe").returncode, 0,
                         "another writer can add a file")
        c.run(["rm", f"{SPOOL}/.tmp-writer-probe"])
        self.assertTrue(os.path.exists(c.host_path(report)), "the report is still there")

    def test_2_manual_shows_every_option_of_help(self):
        c = container
        env = ["env", "MANWIDTH=1000", "MANPAGER=cat", "PAGER=cat"]
        page = c.run([*env, "man", "crashwatch"]).stdout
        overview = c.run(["crashwatch", "--help"]).stdout
        commands = []
        for line in overview.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines():
            words = line.split()
            commands += [words[0]] + ([words[words.index("/") + 1]] if "/" in words else [])
        self.assertIn("doctor", commands)
        # The page's command sections: a heading line "   crashwatch NAME" (man's .SS indent).
        sections = dict(re.findall(r"^ {3}crashwatch (\S+)\n(.*?)(?=^ {3}\S|^\S)", page, re.M | re.S))
        self.assertEqual(sorted(sections), sorted(commands), "one section per command --help lists")
        for command in commands:
            help_text = c.run(["crashwatch", command, "--help"]).stdout
            block = help_text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
            flat = " ".join(sections[command].split())
            # An option's tag starts a line at man's paragraph indent (its help follows on the same line
            # when the tag is shorter than the indent, else below).
            tags = re.findall(r"^ {7}-.*$", sections[command], re.M)
            options = block.splitlines()
            for line in options:
                spelling, help_line = re.match(r"^\s+(\S.*?)\s{2,}(.*)$", line).groups()
                self.assertTrue(any(re.match(rf" {{7}}{re.escape(spelling)}(\s|$)", tag) for tag in tags),
                                f"man crashwatch, section {command}: {spelling} is an option tag")
                self.assertIn(" ".join(f"{spelling} {help_line}".split()), flat,
                              f"man crashwatch, section {command}: {spelling} with its help")
            self.assertEqual(len(tags), len(options), f"man crashwatch, section {command}: the options of --help, "
                                                      f"no others:\n" + "\n".join(tags))
        conf = c.run([*env, "man", "5", "crashwatch.conf"]).stdout
        for key in ("spool", "max-reports", "endpoint", "debuginfod"):
            self.assertRegex(conf, rf"(?m)^ {{7}}{re.escape(key)} = ", f"crashwatch.conf(5) describes {key}")
        completion = c.run(["bash", "-c", "source /usr/share/bash-completion/completions/crashwatch; complete -p crashwatch"])
        self.assertIn("-F _crashwatch crashwatch", completion.stdout)

    def test_2b_quick_start_drop_in(self):
        """The README quick start's drop-in, as written, on a service whose program crashes: systemd sees the
        signal, the report lands in the packaged spool with the unit, a reader lists it."""
        c = container
        c.run(["cp", "/opt/t/null_deref", "/usr/local/bin/myapp"])
        c.install_unit("myapp.service", """\
[Service]
User=svc
ExecStart=/usr/local/bin/myapp --serve
""")
        self.addCleanup(c.run, ["rm", "-rf", "/etc/systemd/system/myapp.service", "/etc/systemd/system/myapp.service.d",
                                "/usr/local/bin/myapp"])
        drop_in = quick_start_block(".service.d/")
        done = c.run(["sh", "-ec", drop_in], timeout=60, check=False)
        self.assertEqual(done.returncode, 0, f"the README's drop-in block failed:\n{drop_in}\n{done.stdout}\n{done.stderr}")
        self.assertIn("/usr/bin/crashwatch run", c.show("myapp.service", "ExecStart")["ExecStart"])
        self.wait_until(lambda: c.show("myapp.service", "Result")["Result"] == "signal", 30,
                        "myapp.service ends with Result=signal")

        def report_of_unit():
            for name in os.listdir(c.host_path(SPOOL)):
                try:
                    data = json.loads(Path(c.host_path(f"{SPOOL}/{name}")).read_text())
                except (ValueError, OSError):
                    continue
                if (data.get("process") or {}).get("systemdUnit") == "myapp.service":
                    return data
            return None
        data = self.wait_until(report_of_unit, 30, f"a report of myapp.service in {SPOOL}")
        self.assertEqual(data["signal"]["name"], "SIGSEGV")
        self.assertEqual(((data.get("process") or {}).get("app") or {}).get("name"), "myapp", "--app-name %N")
        listed = self.run_as("alice", "crashwatch", "list")
        self.assertEqual(listed.returncode, 0, f"crashwatch list as a reader:\n{listed.stderr}")
        self.assertIn(data["id"][:8], listed.stdout, "the reader's list names the service's report")

    def test_3_purge_leaves_nothing(self):
        c = container
        # The test's own unit goes first: it is no file of the package.
        c.run(["rm", "/etc/systemd/system/pkg-crash.service"])
        purged = c.run(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "purge", "-y", "crashwatch"],
                       timeout=120, check=False)
        self.assertEqual(purged.returncode, 0, f"apt-get purge failed:\n{purged.stdout}\n{purged.stderr}")
        after = file_list()
        self.assertEqual(sorted(after - STATE["before"]), [], "files left behind by the package")
        self.assertEqual(sorted(STATE["before"] - after), [], "files the purge removed that were not the package's")
        for name in ("crashwatch", "crashwatch-writers"):
            self.assertNotEqual(c.run(["getent", "group", name], check=False).returncode, 0, f"group {name} removed")
        self.assertNotEqual(c.run(["getent", "passwd", "crashwatch-worker"], check=False).returncode, 0)


if __name__ == "__main__":
    unittest.main()
