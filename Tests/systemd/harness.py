#!/usr/bin/env python3
"""Boots a real systemd (Debian 12's systemd 252) as PID 1 of a container for crashwatch's tests.

The container is a guest that leaves the host alone:

- its root is an overlay: the cached debootstrap'd Debian 12 root (`.build/systemd-root`, built once
  per package list and never written to) below, a per-run directory above (`.build/systemd-run/PID`),
  removed at the end. crashwatch (`/usr/bin/crashwatch`), the crash fixtures and the test programs
  (`/opt/t`) are put into that upper layer at boot: nothing of this checkout goes into the cache;
- new PID, mount, UTS, IPC and cgroup namespaces; the host's network namespace is shared (loopback
  ports reach the container). All mounts are made in the private mount namespace; /proc/sys and /sys
  are read-only, /dev is a private tmpfs;
- its own cgroup in every hierarchy of the host (on a hybrid host one in each v1 controller, in
  name=systemd and in the cgroup2 hierarchy; on a pure cgroup2 host one cgroup2 cgroup with the memory
  and pids controllers), which the container's PID 1 joins before it unshares its cgroup namespace,
  so that systemd inside sees it as "/" and really applies MemoryMax= and friends;
- stopping it SIGKILLs its PID 1 (the kernel then kills everything in the PID namespace, and the
  mount namespace goes with it), waits for its cgroups to empty and removes them, and removes the
  run directory.

Used as a module by test_systemd.py, and as a command for people debugging:

    python3 Tests/systemd/harness.py boot    # build the root if needed, boot, leave it running
    python3 Tests/systemd/harness.py shell   # a shell inside (nsenter); or: shell -- COMMAND...
    python3 Tests/systemd/harness.py stop    # stop every container `boot` left running
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "harness"))
import common  # noqa: E402  (Tests/harness/common.py: what every Python suite shares)

REPO = Path(common.REPO)
BUILD = REPO / ".build"
# The cached root; CRASHWATCH_SYSTEMD_ROOT moves it (e.g. to try a cold build beside a warm cache).
CACHE = Path(os.environ.get("CRASHWATCH_SYSTEMD_ROOT", BUILD / "systemd-root"))
RUNS = BUILD / "systemd-run"
PROGRAMS_SRC = HERE / "programs"
PROGRAMS_OUT = BUILD / "systemd-programs"
# The crash fixtures (Fixtures/build.sh output); CRASHWATCH_FIXTURES points elsewhere (e.g. another
# checkout's, from a worktree that has not built its own).
FIXTURES = Path(os.environ.get("CRASHWATCH_FIXTURES", BUILD / "fixtures"))
INIT_SCRIPT = HERE / "container-init.sh"

SUITE = "bookworm"
# The Debian archive debootstrap fetches from is the one this machine's apt uses (read at run time by
# scripts/debian_mirror.py: the repository names no mirror host); CRASHWATCH_DEBIAN_MIRROR overrides it.
sys.path.insert(0, str(REPO / "scripts"))
from debian_mirror import MirrorError, debian_mirror  # noqa: E402

# What debootstrap --variant=minbase installs besides the required packages: systemd itself, what the
# crashwatch binary links to (besides the Swift runtime, bind-mounted from the host), libsystemd0 for
# the test programs, passwd (useradd), procps (ps, for people debugging) and libcurl4 (`crashwatch ship`
# dlopens libcurl.so.4; the ship tests send over plain http to 127.0.0.1, so no ca-certificates), and
# man-db (test_package.py reads the Debian package's manual page with `man`).
PACKAGES = sorted([
    "systemd", "libsystemd0",
    "libunwind8", "libdw1", "libelf1", "liblzma5", "libstdc++6",
    "passwd", "procps", "libcurl4", "man-db",
])

# Units that would touch kernel-global state or do nothing useful in a test container.
MASKED_UNITS = sorted([
    "systemd-sysctl.service", "systemd-modules-load.service", "kmod-static-nodes.service",
    "systemd-binfmt.service", "proc-sys-fs-binfmt_misc.automount", "proc-sys-fs-binfmt_misc.mount",
    "sys-kernel-config.mount", "sys-kernel-debug.mount", "sys-kernel-tracing.mount",
    "sys-fs-fuse-connections.mount", "dev-hugepages.mount",
    "systemd-pstore.service", "systemd-random-seed.service", "systemd-remount-fs.service",
    "systemd-firstboot.service", "systemd-hwdb-update.service", "ldconfig.service",
    "systemd-journald-audit.socket", "systemd-logind.service", "systemd-timesyncd.service",
    "systemd-networkd.service", "systemd-networkd.socket", "systemd-networkd-wait-online.service",
    "getty.target", "getty@.service", "serial-getty@.service", "console-getty.service",
    "container-getty@.service", "getty-static.service",
    "apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "e2scrub_all.timer",
    "e2scrub_reap.service", "fstrim.timer", "systemd-tmpfiles-clean.timer",
])

# Bump when configure_root() changes: the stamp (and so the cache) depends on it.
RECIPE_VERSION = "4"

STAMP_FILE = ".crashwatch-root-stamp"
CGROUP_PREFIX = "crashwatch-systemd-test."
# The environment of every command run inside.
INSIDE_ENV = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0",
              "TERM=dumb", "HOME=/root"]


class HarnessError(Exception):
    """A step of building, booting or stopping the container failed; the message names it."""


def log(message: str) -> None:
    print(f"harness: {message}", file=sys.stderr, flush=True)


_tail = common.tail


def run_host(argv: list[str], timeout: float, what: str, **kwargs) -> subprocess.CompletedProcess:
    """Runs a host command; HarnessError naming WHAT on a non-zero status or a timeout."""
    try:
        result = common.run(argv, timeout, what=f"{what}: {' '.join(argv)}", error=HarnessError, **kwargs)
    except FileNotFoundError:
        raise HarnessError(f"{what}: {argv[0]} not found (the Makefile's DEBS installs it)") from None
    if result.returncode != 0:
        raise HarnessError(f"{what} failed (exit status {result.returncode}): {' '.join(argv)}\n"
                           f"{_tail(result.stdout)}\n{_tail(result.stderr)}")
    return result


def can_run() -> str | None:
    """None when this machine can run the container, else why not (the one-line skip)."""
    if os.geteuid() != 0:
        return "needs root (PID, mount and cgroup namespaces, mounts, cgroups)"
    return None


# ---------------------------------------------------------------------------------------------------
# The cached root


def root_stamp() -> str:
    recipe = json.dumps({"suite": SUITE, "packages": PACKAGES, "masked": MASKED_UNITS,
                         "recipe": RECIPE_VERSION, "init": "debootstrap --variant=minbase"}, sort_keys=True)
    return hashlib.sha256(recipe.encode()).hexdigest()


def _mount_points_under(path: Path) -> list[str]:
    prefix = str(path.resolve()).rstrip("/") + "/"
    found = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            point = line.split()[4].replace("\\040", " ")
            if point == prefix[:-1] or point.startswith(prefix):
                found.append(point)
    return found


def remove_tree(path: Path) -> None:
    """rm -rf PATH, refusing when anything is mounted below it (never delete through a bind mount)."""
    if not os.path.lexists(path):
        return
    mounted = _mount_points_under(path)
    if mounted:
        raise HarnessError(f"not removing {path}: mounted below it: {', '.join(mounted)}")
    run_host(["rm", "-rf", "--one-file-system", str(path)], 300, f"removing {path}")


def _locked(path: Path, timeout: float):
    """An exclusive flock on PATH (a context manager), waiting at most TIMEOUT seconds."""
    class Lock:
        def __enter__(self):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(path, "w")
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return self
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise HarnessError(f"{path} stayed locked for {timeout:.0f} s "
                                           "(another run building the root?)") from None
                    time.sleep(0.5)

        def __exit__(self, *exc):
            self.file.close()
    return Lock()


def configure_root(root: Path) -> None:
    """The container configuration of a fresh debootstrap tree (part of the cache, in the stamp)."""
    system = root / "etc/systemd/system"
    for unit in MASKED_UNITS:
        link = system / unit
        if os.path.lexists(link):
            link.unlink()
        link.symlink_to("/dev/null")
    # Drop the enablement links of masked units (they would only log warnings).
    for wants in system.glob("*.wants"):
        for link in wants.iterdir():
            if link.name in MASKED_UNITS or link.name.startswith("getty@"):
                link.unlink()
    default = system / "default.target"
    if os.path.lexists(default):
        default.unlink()
    default.symlink_to("/lib/systemd/system/multi-user.target")
    (root / "etc/hostname").write_text("cwtest\n")
    journald = root / "etc/systemd/journald.conf.d"
    journald.mkdir(parents=True, exist_ok=True)
    # The journal in /run (the run's upper layer stays small); no rate limit (tests log in bursts).
    (journald / "crashwatch-test.conf").write_text(
        "[Journal]\nStorage=volatile\nRateLimitIntervalSec=0\nRateLimitBurst=0\n")
    manager = root / "etc/systemd/system.conf.d"
    manager.mkdir(parents=True, exist_ok=True)
    # Bounded defaults: nothing waits 90 s for a unit that does not start or stop.
    (manager / "crashwatch-test.conf").write_text(
        "[Manager]\nDefaultTimeoutStartSec=30s\nDefaultTimeoutStopSec=10s\nShowStatus=no\n")
    for deb in (root / "var/cache/apt/archives").glob("*.deb"):
        deb.unlink()
    lists = root / "var/lib/apt/lists"
    if lists.is_dir():
        for entry in lists.iterdir():
            if entry.is_file():
                entry.unlink()


def remove_old_roots(cache: Path) -> None:
    """Removes roots replaced by a rebuild, unless a container is running (it may be using one)."""
    old = list(cache.parent.glob(f"{cache.name}.old.*"))
    if old and not running_containers():
        for stale in old:
            remove_tree(stale)


def ensure_root(cache: Path = CACHE, timeout: float = 420) -> Path:
    """The cached root for the current package list; built (debootstrap) when missing or stale."""
    stamp = root_stamp()
    stamp_path = cache / STAMP_FILE
    if stamp_path.is_file() and stamp_path.read_text().strip() == stamp:
        return cache
    with _locked(cache.parent / f"{cache.name}.lock", timeout):
        if stamp_path.is_file() and stamp_path.read_text().strip() == stamp:
            return cache
        for stale in cache.parent.glob(f"{cache.name}.tmp.*"):
            remove_tree(stale)
        remove_old_roots(cache)
        tmp = cache.parent / f"{cache.name}.tmp.{os.getpid()}"
        why = "missing" if not cache.exists() else "built for another package list"
        try:
            mirror = debian_mirror(SUITE)
        except (MirrorError, OSError) as error:
            raise HarnessError(f"the Debian archive to debootstrap from: {error}") from None
        log(f"building the Debian {SUITE} root in {cache} ({why}): debootstrap from {mirror} "
            f"with {', '.join(PACKAGES)}")
        started = time.monotonic()
        # debootstrap mounts /proc and /sys in the target and runs maintainer scripts: give it its
        # own mount and PID namespaces so nothing it mounts or starts can outlive it.
        argv = ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", "--kill-child", "--",
                "debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(tmp), mirror]
        try:
            run_host(argv, timeout, "debootstrap of the container root",
                     env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                          "DEBIAN_FRONTEND": "noninteractive"})
            configure_root(tmp)
            (tmp / STAMP_FILE).write_text(stamp + "\n")
            if cache.exists():
                # A running container may still have the old root as its overlay's lower layer: it is
                # removed now only if none runs, else by a later build.
                os.rename(cache, cache.parent / f"{cache.name}.old.{os.getpid()}")
            os.rename(tmp, cache)
            remove_old_roots(cache)
        except BaseException:
            try:
                remove_tree(tmp)
            except HarnessError as error:
                log(str(error))
            raise
        log(f"root built in {time.monotonic() - started:.1f} s")
    return cache


# ---------------------------------------------------------------------------------------------------
# Test programs


def build_programs(out: Path = PROGRAMS_OUT) -> dict[str, Path]:
    """Compiles Tests/systemd/programs/*.c (with -lsystemd) into OUT when out of date."""
    out.mkdir(parents=True, exist_ok=True)
    built = {}
    header = PROGRAMS_SRC / "common.h"
    for source in sorted(PROGRAMS_SRC.glob("*.c")):
        target = out / source.stem
        newest = max(source.stat().st_mtime, header.stat().st_mtime if header.exists() else 0)
        if not target.exists() or target.stat().st_mtime < newest:
            tmp = out / f".{source.stem}.tmp.{os.getpid()}"
            run_host(["gcc", "-O0", "-g", "-Wall", "-o", str(tmp), str(source), "-lsystemd"], 120,
                     f"compiling the test program {source.name} (gcc, libsystemd-dev)")
            os.replace(tmp, target)
        built[source.stem] = target
    return built


# ---------------------------------------------------------------------------------------------------
# cgroups


def _parse_mountinfo() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the file system, fstype, super options) of every cgroup mount."""
    mounts = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            fields = line.split()
            separator = fields.index("-")
            fstype, superopts = fields[separator + 1], fields[separator + 3]
            if fstype in ("cgroup", "cgroup2"):
                mounts.append((fields[4], fields[3], fstype, set(superopts.split(","))))
    return mounts


class CgroupPlan:
    """The container's cgroups on this host, and how the container mounts its view of them."""

    def __init__(self, name: str):
        self.name = name
        self.dirs: list[Path] = []          # host directories to create, one per hierarchy
        self.mount_lines: list[str] = []    # CW_CGROUP_MOUNTS for container-init.sh
        self.pure_v2 = False
        mounts = _parse_mountinfo()
        with open("/proc/self/cgroup") as own:
            lines = [line.rstrip("\n").split(":", 2) for line in own if line.strip()]
        v1 = [line for line in lines if line[1]]
        self.pure_v2 = not v1
        if os.environ.get("CRASHWATCH_CGROUP_MODE") == "unified" and not self.pure_v2:
            # For trying the pure-cgroup2 path on a hybrid host: only the cgroup2 hierarchy (systemd
            # then runs in unified mode, with whatever controllers that hierarchy has here).
            lines = [line for line in lines if not line[1]]
            self.pure_v2 = True
        for _, controllers, path in lines:
            if controllers:
                wanted = set(controllers.split(","))
                found = [m for m in mounts if m[2] == "cgroup" and wanted <= m[3]]
                kind = f"cgroup v1 hierarchy {controllers}"
            else:
                found = [m for m in mounts if m[2] == "cgroup2"]
                kind = "cgroup2 hierarchy"
            if not found:
                raise HarnessError(f"the {kind} of /proc/self/cgroup is not mounted on this host "
                                   "(see /proc/self/mountinfo)")
            point, mount_root, _, _ = found[0]
            if self.pure_v2:
                base = Path(point)  # the root: it may enable controllers for its children
            else:
                relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
                base = Path(point) / relative
            self.dirs.append(Path(os.path.normpath(base / name)))
            if controllers:
                if controllers.startswith("name="):
                    target, options = controllers[len("name="):], "none," + controllers
                else:
                    target, options = controllers, controllers
                self.mount_lines.append(f"{target} cgroup {options}")
                if "," in target:
                    for controller in target.split(","):
                        self.mount_lines.append(f"{target} -> {controller}")
            else:
                self.mount_lines.append(f"{'.' if self.pure_v2 else 'unified'} cgroup2 rw")

    def create(self) -> None:
        for directory in self.dirs:
            try:
                directory.mkdir()
            except FileExistsError:
                pass
            except OSError as error:
                raise HarnessError(f"cannot create the container's cgroup {directory}: {error}") from None
            parent = directory.parent
            # cpuset v1: a cgroup without cpus and mems takes no process.
            for knob in ("cpuset.cpus", "cpuset.mems"):
                if (directory / knob).exists() and not (directory / knob).read_text().strip():
                    (directory / knob).write_text((parent / knob).read_text())
            if self.pure_v2:
                available = set((parent / "cgroup.controllers").read_text().split())
                enabled = set((parent / "cgroup.subtree_control").read_text().split())
                for controller in ("memory", "pids", "cpu"):
                    if controller in available and controller not in enabled:
                        try:
                            (parent / "cgroup.subtree_control").write_text(f"+{controller}")
                        except OSError as error:
                            raise HarnessError(f"cannot enable the {controller} controller in "
                                               f"{parent}/cgroup.subtree_control: {error}") from None

    def processes(self) -> list[int]:
        pids = set()
        for directory in self.dirs:
            if not directory.is_dir():
                continue
            for procs in directory.rglob("cgroup.procs"):
                try:
                    pids.update(int(p) for p in procs.read_text().split())
                except OSError:
                    pass
        return sorted(pids)

    def remove(self, timeout: float = 15) -> None:
        """Waits until the cgroups are empty, then removes them, deepest first."""
        deadline = time.monotonic() + timeout
        while self.processes():
            if time.monotonic() > deadline:
                raise HarnessError(f"the container's cgroups still hold processes {self.processes()} "
                                   f"{timeout:.0f} s after its PID 1 was killed: {self.dirs}")
            time.sleep(0.05)
        problems = []
        for directory in self.dirs:
            if not directory.is_dir():
                continue
            for current, subdirs, _ in sorted(os.walk(directory), key=lambda w: -w[0].count("/")):
                for attempt in range(50):
                    try:
                        os.rmdir(current)
                        break
                    except FileNotFoundError:
                        break
                    except OSError as error:
                        if attempt == 49:
                            problems.append(f"{current}: {error}")
                        time.sleep(0.05)
        if problems:
            raise HarnessError("cannot remove the container's cgroups: " + "; ".join(problems))


# ---------------------------------------------------------------------------------------------------
# The container


def _set_pdeathsig() -> None:
    """In the child before exec: SIGKILL when the harness dies (then unshare --kill-child kills PID 1)."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as children:
            return [int(p) for p in children.read().split()]
    except OSError:
        return []


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def crashwatch_binary(timeout: float = 90) -> Path:
    """The crashwatch binary to test ($CRASHWATCH_BIN, else .build/debug/crashwatch), waiting for a rebuild."""
    path = Path(common.crashwatch_path())
    deadline = time.monotonic() + timeout
    announced = False
    while not (path.is_file() and os.access(path, os.X_OK)):
        if time.monotonic() > deadline:
            raise HarnessError(f"the crashwatch binary {path} does not exist (build it: swift build, "
                               "or set CRASHWATCH_BIN)")
        if not announced:
            log(f"waiting up to {timeout:.0f} s for {path} (being rebuilt?)")
            announced = True
        time.sleep(2)
    return path


def _runtime_binds(binary: Path) -> list[str]:
    """Host directories bind-mounted read-only at the same path: where the binary's RUNPATH points
    (the Swift toolchain, e.g. /opt/swift for /opt/swift/usr/lib/swift/linux)."""
    result = run_host(["readelf", "-d", str(binary)], 30, f"reading the dynamic section of {binary}")
    binds = []
    for line in result.stdout.splitlines():
        if "RUNPATH" in line or "RPATH" in line:
            value = line.split("[", 1)[1].rsplit("]", 1)[0]
            for entry in value.split(":"):
                if not entry.startswith("/") or not os.path.isdir(entry):
                    continue
                marker = "/usr/lib/swift/"
                bind = entry.split(marker)[0] if marker in entry else entry
                if bind not in binds and bind not in ("/", "/usr", "/lib", "/usr/lib"):
                    binds.append(bind)
    return binds


class Container:
    """One booted systemd. Use boot(), then run()/systemctl()/journal()/host_path(), then stop()."""

    def __init__(self, fixtures: Path | None = None, binary: Path | None = None, fixture_names=None):
        self.fixtures = fixtures or FIXTURES
        self.binary = binary
        self.fixture_names = fixture_names
        self.init_pid: int | None = None
        self.init_start: str | None = None
        self.unshare: subprocess.Popen | None = None
        self.unshare_pid: int | None = None
        self.cgroups: CgroupPlan | None = None
        self.run_dir: Path | None = None
        self.file_max: str | None = None
        self.timings: dict[str, float] = {}
        self.root = CACHE

    # -- boot -----------------------------------------------------------------------------------------

    def boot(self, timeout: float = 90, detach: bool = False) -> "Container":
        why = can_run()
        if why:
            raise HarnessError(why)
        cleanup_stale()
        started = time.monotonic()
        self.root = ensure_root()
        self.timings["root"] = time.monotonic() - started
        self.binary = self.binary or crashwatch_binary()
        programs = build_programs()

        RUNS.mkdir(parents=True, exist_ok=True)
        self.run_dir = RUNS / str(os.getpid())
        remove_tree(self.run_dir)
        upper, work, merged = self.run_dir / "upper", self.run_dir / "work", self.run_dir / "merged"
        for directory in (upper, work, merged):
            directory.mkdir(parents=True)
        self._populate(upper, programs)

        self.file_max = _read("/proc/sys/fs/file-max").strip()
        self.cgroups = CgroupPlan(f"{CGROUP_PREFIX}{os.getpid()}")
        self.cgroups.create()
        env = {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "CW_LOWER": str(self.root), "CW_UPPER": str(upper), "CW_WORK": str(work), "CW_MERGED": str(merged),
            "CW_CGROUP_DIRS": "\n".join(str(d) for d in self.cgroups.dirs),
            "CW_CGROUP_MOUNTS": "\n".join(self.cgroups.mount_lines),
            "CW_BINDS": "\n".join(_runtime_binds(self.binary)),
            "CW_CONTAINER_NAME": "crashwatch-test",
        }
        boot_log = open(self.run_dir / "boot.log", "wb")
        argv = ["unshare", "--pid", "--mount", "--uts", "--ipc", "--fork", "--propagation", "private",
                "--kill-child", "--", "/bin/bash", str(INIT_SCRIPT), "cgroup"]
        boot_started = time.monotonic()
        self.unshare = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=boot_log,
                                        stderr=subprocess.STDOUT, cwd="/",
                                        preexec_fn=None if detach else _set_pdeathsig,
                                        start_new_session=detach)
        boot_log.close()
        self.unshare_pid = self.unshare.pid
        self._write_state(detach)
        try:
            self._wait_for_systemd(boot_started + timeout)
        except BaseException:
            try:
                self.stop()
            except HarnessError as error:
                log(f"while cleaning up after the failed boot: {error}")
            raise
        self._write_state(detach)
        self.timings["boot"] = time.monotonic() - boot_started
        return self

    def _populate(self, upper: Path, programs: dict[str, Path]) -> None:
        """crashwatch, the fixtures and the test programs, into the run's upper layer before boot."""
        (upper / "usr/bin").mkdir(parents=True)
        shutil.copy2(self.binary, upper / "usr/bin/crashwatch")
        os.chmod(upper / "usr/bin/crashwatch", 0o755)
        target = upper / "opt/t"
        target.mkdir(parents=True)
        names = self.fixture_names
        if names is None:
            names = [p.name for p in self.fixtures.iterdir() if p.is_file() and os.access(p, os.X_OK)]
        for name in names:
            source = self.fixtures / name
            if not source.is_file():
                raise HarnessError(f"fixture {source} missing (make fixtures builds it)")
            shutil.copy2(source, target / name)
        for name, path in programs.items():
            shutil.copy2(path, target / name)
        for entry in target.iterdir():
            os.chmod(entry, 0o755)

    def _wait_for_systemd(self, deadline: float) -> None:
        # The unshare's child is the container's PID 1; it becomes systemd after the mounts.
        while True:
            if self.unshare.poll() is not None:
                raise HarnessError(f"the container exited (status {self.unshare.returncode}) before "
                                   f"systemd started; its output:\n{self.boot_log()}")
            children = _children(self.unshare_pid)
            if children and _read(f"/proc/{children[0]}/comm").strip() == "systemd":
                self.init_pid = children[0]
                self.init_start = _start_time(self.init_pid)
                break
            if time.monotonic() > deadline:
                raise HarnessError(f"systemd did not start as the container's PID 1 in time; output:\n"
                                   f"{self.boot_log()}")
            time.sleep(0.02)
        private = Path(self.host_path("/run/systemd/private"))
        while not private.exists():
            if self.unshare.poll() is not None:
                raise HarnessError(f"systemd exited (status {self.unshare.returncode}) while booting; "
                                   f"output:\n{self.boot_log()}")
            if time.monotonic() > deadline:
                raise HarnessError(f"systemd did not open /run/systemd/private in time; output:\n"
                                   f"{self.boot_log()}")
            time.sleep(0.02)
        remaining = max(1.0, deadline - time.monotonic())
        result = self.run(["systemctl", "is-system-running", "--wait"], timeout=remaining, check=False)
        state = result.stdout.strip()
        if state not in ("running", "degraded"):
            raise HarnessError(f"systemd did not finish booting: is-system-running says {state!r} "
                               f"({result.stderr.strip()}); jobs:\n{self.run(['systemctl', 'list-jobs'], check=False).stdout}"
                               f"\noutput:\n{self.boot_log()}")
        if state == "degraded":
            failed = self.run(["systemctl", "--failed", "--no-legend", "--plain"], check=False).stdout.strip()
            log(f"systemd booted degraded; failed units: {failed}")
        check = self.run(["/usr/bin/crashwatch", "--help"], check=False)
        if check.returncode != 0:
            raise HarnessError(f"/usr/bin/crashwatch --help fails inside the container (status "
                               f"{check.returncode}): {check.stderr.strip()[:2000]}")
        now = _read("/proc/sys/fs/file-max").strip()
        if self.file_max and now != self.file_max:
            log(f"warning: fs.file-max changed from {self.file_max} to {now} during the boot")

    def boot_log(self) -> str:
        if not self.run_dir:
            return ""
        return _tail(_read(str(self.run_dir / "boot.log")), 60)

    def _write_state(self, detach: bool) -> None:
        state = {"harness_pid": os.getpid(), "detached": detach, "unshare_pid": self.unshare_pid,
                 "init_pid": self.init_pid, "init_start": self.init_start,
                 "cgroups": [str(d) for d in self.cgroups.dirs], "run_dir": str(self.run_dir),
                 "file_max": self.file_max}
        tmp = self.run_dir / "state.json.tmp"
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, self.run_dir / "state.json")

    # -- inside ---------------------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.init_pid is not None and _start_time(self.init_pid) == self.init_start

    def host_path(self, path: str) -> str:
        """PATH inside the container, as the host reaches it (through /proc/PID/root)."""
        if not path.startswith("/"):
            raise ValueError(f"not an absolute path: {path}")
        return f"/proc/{self.init_pid}/root{path}"

    def nsenter_argv(self, argv: list[str]) -> list[str]:
        return ["nsenter", f"--target={self.init_pid}", "--mount", "--pid", "--uts", "--ipc", "--cgroup",
                "--root", "--wd", "--", "/usr/bin/env", "-i", *INSIDE_ENV, *argv]

    def run(self, argv: list[str], timeout: float = 30, check: bool = True, input: str | None = None
            ) -> subprocess.CompletedProcess:
        """Runs ARGV inside the container (all its namespaces, its root)."""
        if not self.alive():
            raise HarnessError(f"the container is not running (PID 1 {self.init_pid} is gone); "
                               f"its output:\n{self.boot_log()}")
        try:
            result = subprocess.run(self.nsenter_argv(argv), capture_output=True, text=True,
                                    timeout=timeout, input=input, stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired as error:
            raise HarnessError(f"inside the container, `{' '.join(argv)}` did not finish in {timeout:.0f} s"
                               f"\n{_tail(error.stdout)}\n{_tail(error.stderr)}") from None
        if check and result.returncode != 0:
            raise HarnessError(f"inside the container, `{' '.join(argv)}` failed (exit status "
                               f"{result.returncode}):\n{_tail(result.stdout)}\n{_tail(result.stderr)}")
        return result

    def systemctl(self, *args: str, timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(["systemctl", *args], timeout=timeout, check=check)

    def show(self, unit: str, *properties: str) -> dict[str, str]:
        args = ["show", unit]
        for name in properties:
            args += ["-p", name]
        values = {}
        for line in self.systemctl(*args).stdout.splitlines():
            if "=" in line:
                key, value = line.split("=", 1)
                values[key] = value
        return values

    def journal(self, *args: str, timeout: float = 30) -> list[dict]:
        """journalctl -o json ARGS, parsed (one dict per entry)."""
        result = self.run(["journalctl", "--no-pager", "-o", "json", *args], timeout=timeout, check=False)
        entries = []
        for line in result.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    entries.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        return entries

    def write_file(self, path: str, text: str | bytes, mode: int = 0o644) -> None:
        host = Path(self.host_path(path))
        host.parent.mkdir(parents=True, exist_ok=True)
        tmp = host.with_name(f".{host.name}.tmp")
        tmp.write_bytes(text.encode() if isinstance(text, str) else text)
        os.chmod(tmp, mode)
        os.replace(tmp, host)

    def install_unit(self, name: str, text: str, reload: bool = True) -> None:
        self.write_file(f"/etc/systemd/system/{name}", text)
        if reload:
            self.daemon_reload()

    def daemon_reload(self) -> None:
        self.systemctl("daemon-reload", timeout=60)

    # -- stop -----------------------------------------------------------------------------------------

    def stop(self, keep_run_dir: bool = False) -> None:
        """Kills the container (SIGKILL to its PID 1), removes its cgroups and the run directory."""
        errors = []
        if self.init_pid is None and self.unshare_pid is not None:
            children = _children(self.unshare_pid)
            if children:
                self.init_pid, self.init_start = children[0], _start_time(children[0])
        if self.init_pid is not None and self.alive():
            try:
                os.kill(self.init_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif self.unshare_pid is not None and _start_time(self.unshare_pid) is not None and self.unshare is None:
            os.kill(self.unshare_pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        if self.unshare is not None:
            try:
                self.unshare.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.unshare.kill()
                errors.append(f"unshare (pid {self.unshare_pid}) did not exit 15 s after its child was killed")
        while self.init_pid is not None and _start_time(self.init_pid) == self.init_start and \
                self.init_start is not None:
            if time.monotonic() > deadline:
                errors.append(f"the container's PID 1 ({self.init_pid}) is still there 15 s after SIGKILL")
                break
            time.sleep(0.05)
        if self.cgroups is not None:
            try:
                self.cgroups.remove()
            except HarnessError as error:
                errors.append(str(error))
        if self.file_max:
            now = _read("/proc/sys/fs/file-max").strip()
            if now and now != self.file_max:
                Path("/proc/sys/fs/file-max").write_text(self.file_max)
                log(f"fs.file-max was changed to {now}; restored {self.file_max}")
        if self.run_dir is not None and not keep_run_dir and not errors:
            try:
                remove_tree(self.run_dir)
            except HarnessError as error:
                errors.append(str(error))
        self.init_pid = None
        if errors:
            raise HarnessError("stopping the container: " + "; ".join(errors))

    @classmethod
    def from_state(cls, state_file: Path) -> "Container":
        state = json.loads(state_file.read_text())
        container = cls()
        container.unshare_pid = state["unshare_pid"]
        container.init_pid = state["init_pid"]
        container.init_start = state["init_start"]
        container.run_dir = Path(state["run_dir"])
        container.file_max = state.get("file_max")
        plan = CgroupPlan.__new__(CgroupPlan)
        plan.dirs = [Path(d) for d in state["cgroups"]]
        plan.pure_v2 = False
        container.cgroups = plan
        container.detached = state.get("detached", False)
        container.harness_pid = state.get("harness_pid")
        return container


def cleanup_stale() -> None:
    """Stops containers of test runs whose harness died (not those `boot` left running on purpose)."""
    if not RUNS.is_dir():
        return
    for state_file in RUNS.glob("*/state.json"):
        try:
            container = Container.from_state(state_file)
        except (OSError, ValueError, KeyError):
            continue
        if container.detached or (container.harness_pid and _start_time(container.harness_pid) is not None
                                   and container.harness_pid != os.getpid()):
            continue
        log(f"stopping a container left by an earlier run ({state_file.parent})")
        try:
            container.stop()
        except HarnessError as error:
            log(str(error))


def running_containers() -> list[tuple[Path, "Container"]]:
    found = []
    if RUNS.is_dir():
        for state_file in sorted(RUNS.glob("*/state.json")):
            try:
                container = Container.from_state(state_file)
            except (OSError, ValueError, KeyError):
                continue
            if container.alive():
                found.append((state_file, container))
    return found


def main(argv: list[str]) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="harness.py", description="The systemd test container, by hand.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("boot", help="build the root if needed, boot a container and leave it running")
    shell = sub.add_parser("shell", help="a shell (or COMMAND) inside the running container")
    shell.add_argument("cmd", nargs=argparse.REMAINDER)
    sub.add_parser("stop", help="stop every container `boot` left running")
    args = parser.parse_args(argv)
    try:
        if args.command == "boot":
            container = Container().boot(detach=True)
            print(f"booted: PID 1 is host pid {container.init_pid} ({container.timings['boot']:.1f} s); "
                  f"root {container.root} + {container.run_dir}/upper")
            print("inside:  python3 Tests/systemd/harness.py shell   (or: shell -- systemctl status)")
            print("stop:    python3 Tests/systemd/harness.py stop")
            return 0
        if args.command == "shell":
            running = running_containers()
            if not running:
                print("harness: no container is running (python3 Tests/systemd/harness.py boot)", file=sys.stderr)
                return 1
            detached = [c for _, c in running if c.detached]
            container = (detached or [c for _, c in running])[-1]
            cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
            argv = container.nsenter_argv(cmd or ["/bin/bash", "-l"])
            argv[argv.index("TERM=dumb")] = f"TERM={os.environ.get('TERM', 'xterm')}"
            os.execvp(argv[0], argv)
        if args.command == "stop":
            # Only what `boot` left running and what dead runs left: never the container of a test run
            # in progress (someone else's make test).
            stopped = 0
            if RUNS.is_dir():
                for state_file in sorted(RUNS.glob("*/state.json")):
                    container = Container.from_state(state_file)
                    if not container.detached and container.harness_pid and \
                            _start_time(container.harness_pid) is not None:
                        print(f"leaving {state_file.parent} alone: test run {container.harness_pid} is using it")
                        continue
                    container.stop()
                    print(f"stopped {state_file.parent}")
                    stopped += 1
            if not stopped:
                print("no container was left running by boot")
            return 0
    except HarnessError as error:
        print(f"harness: {error}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
