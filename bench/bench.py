#!/usr/bin/env python3
"""crashwatch benchmarks (`make bench`).

Measured in one run, on this machine, against references measured in the same run:
  capture   crashwatch's capture of the threads64 fixture (65 threads, ~800 frames) against eu-stack and
            gdb on a live threads64 process of the same shape (`threads64 wait`);
  loop      the supervisor's pass-through cost: a signal storm and 10,000 recovered SIGSEGVs, bare and
            supervised;
  memory    the supervisor's peak RSS for 10x more signals and threads: it must stay flat.
Prints one table; copy the figures into BENCHMARKS.md with the machine they came from.
"""
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASHWATCH = os.environ.get("CRASHWATCH_BIN", os.path.join(ROOT, ".build/release/crashwatch"))
FIXTURES = os.path.join(ROOT, ".build/fixtures")


def fixture(name):
    return os.path.join(FIXTURES, name)


def timed(argv, runs, **kwargs):
    """Median wall time in milliseconds of running argv to completion `runs` times."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def capture_ms(runs, mode="full"):
    """Medians over `runs` crashes of threads64 under crashwatch: the report's captureDurationMs
    (registers, unwinding, images, symbols), and the time from the crash line on stderr (printed when
    the fatal signal is seen) to the "report written" line (stop-all, capture, encoding, fsynced write)."""
    captures, handled = [], []
    for _ in range(runs):
        spool = tempfile.mkdtemp(prefix="cw-bench-")
        process = subprocess.Popen([CRASHWATCH, "run", "--spool", spool, "--symbolicate", mode, "--", fixture("threads64")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seen = None
        for line in process.stderr:
            if " crashed: " in line:
                seen = time.perf_counter()
            elif "report written to" in line and seen is not None:
                handled.append((time.perf_counter() - seen) * 1000)
        process.wait()
        report = json.load(open(glob.glob(os.path.join(spool, "*.json"))[0]))
        captures.append(report["captureDurationMs"])
        frames = sum(len(t["frames"]) for t in report["threads"])
        threads = len(report["threads"])
        shutil.rmtree(spool)
    return statistics.median(captures), statistics.median(handled), threads, frames


def live_process():
    """Starts `threads64 wait` and returns it once all its threads are parked."""
    process = subprocess.Popen([fixture("threads64"), "wait"], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def peak_rss_kib(argv):
    """Peak RSS (KiB) of the supervisor running argv, measured by a fresh wrapper process: the
    supervisor is the wrapper's only child, so RUSAGE_CHILDREN holds its peak (or its app's, if larger)."""
    wrapper = ("import resource, subprocess, sys; "
               "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    output = subprocess.run([sys.executable, "-c", wrapper] + argv, capture_output=True, text=True, check=True)
    return int(output.stdout.strip())


def spool_benchmarks(count=10000):
    """`list --limit 20` and `prune` over a spool of `count` reports (copies of the example report)."""
    example = open(os.path.join(ROOT, "Fixtures/example-report.json")).read()
    spool = tempfile.mkdtemp(prefix="cw-bench-spool-")
    os.chmod(spool, 0o750)
    for index in range(count):
        report_id = "%08x-0000-4000-8000-%012d" % (index, index)
        seconds = index % 86400
        name = "20261129T%02d%02d%02d.%03dZ-%d-svc%d-%s.json" % (seconds // 3600, seconds // 60 % 60, seconds % 60,
                                                                 index % 1000, 1000 + index, index % 7, report_id)
        with open(os.path.join(spool, name), "w") as file:
            file.write(example.replace("3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", report_id))
        os.chmod(os.path.join(spool, name), 0o640)
    try:
        listing = timed([CRASHWATCH, "list", "--spool", spool, "--limit", "20"], 7)
        pruning = timed([CRASHWATCH, "prune", "--spool", spool, "--max-reports", str(count)], 7)
        flood = timed([CRASHWATCH, "prune", "--spool", spool, "--max-per-exe", "1000", "--max-reports", str(count), "--dry-run"], 7)
    finally:
        shutil.rmtree(spool)
    return [
        ("spool of %d reports: list --limit 20" % count, "%.1f ms" % listing, "target <= 100 ms"),
        ("spool of %d reports: prune (nothing to remove)" % count, "%.1f ms" % pruning, "target <= 100 ms"),
        ("spool of %d reports: prune --max-per-exe 1000 --dry-run" % count, "%.1f ms" % flood, "target <= 100 ms"),
    ]


def main():
    rows = []
    names, names_handled, threads, frames = capture_ms(7, "functions")
    full, full_handled, threads, frames = capture_ms(7, "full")
    process = live_process()
    try:
        eu = timed(["eu-stack", "-p", str(process.pid)], 7)
        eu_full = timed(["eu-stack", "-s", "-i", "-p", str(process.pid)], 7)
        gdb = timed(["gdb", "-batch", "-p", str(process.pid), "-ex", "thread apply all bt"], 3) if shutil.which("gdb") else None
    finally:
        process.kill()
        process.wait()
    rows.append(("threads64: %d threads, %d frames" % (threads, frames), "", ""))
    rows.append(("  names: capture (report captureDurationMs)", "%.1f ms" % names, ""))
    rows.append(("  names: crash seen -> report written (stop-all, capture, fsync)", "%.1f ms" % names_handled, ""))
    rows.append(("  eu-stack -p (names)", "%.1f ms" % eu, "%.2fx crashwatch's crash-to-report time" % (eu / names_handled)))
    rows.append(("  full: capture (functions, lines, inline frames)", "%.1f ms" % full, ""))
    rows.append(("  full: crash seen -> report written", "%.1f ms" % full_handled, ""))
    rows.append(("  eu-stack -s -i -p (lines, inlines)", "%.1f ms" % eu_full, "%.2fx crashwatch's full crash-to-report time" % (eu_full / full_handled)))
    if gdb:
        rows.append(("  gdb -batch -p, thread apply all bt", "%.1f ms" % gdb, "%.2fx" % (gdb / full_handled)))

    spool_rows = spool_benchmarks()

    storm = 100000
    bare = timed([fixture("signal_storm"), str(storm)], 3)
    supervised = timed([CRASHWATCH, "run", "--", fixture("signal_storm"), str(storm)], 3)
    rows.append(("%d caught signals, bare" % storm, "%.0f ms" % bare, ""))
    rows.append(("%d caught signals, supervised" % storm, "%.0f ms" % supervised,
                 "%.1f us per signal" % ((supervised - bare) * 1000 / storm)))
    bare = timed([fixture("segv_recover"), "10000"], 3)
    supervised = timed([CRASHWATCH, "run", "--", fixture("segv_recover"), "10000"], 3)
    rows.append(("10000 recovered SIGSEGVs, bare / supervised", "%.0f / %.0f ms" % (bare, supervised),
                 "%.1f us per SIGSEGV" % ((supervised - bare) * 1000 / 10000)))

    small = peak_rss_kib([CRASHWATCH, "run", "--", fixture("signal_storm"), "20000"])
    large = peak_rss_kib([CRASHWATCH, "run", "--", fixture("signal_storm"), "200000"])
    rows.append(("supervisor peak RSS, 20k / 200k signals", "%d / %d KiB" % (small, large), "flat" if large <= small * 1.1 + 512 else "GROWS"))
    small = peak_rss_kib([CRASHWATCH, "run", "--", fixture("thread_churn"), "1000"])
    large = peak_rss_kib([CRASHWATCH, "run", "--", fixture("thread_churn"), "10000"])
    rows.append(("supervisor peak RSS, 1k / 10k threads", "%d / %d KiB" % (small, large), "flat" if large <= small * 1.1 + 512 else "GROWS"))

    rows.extend(spool_rows)
    width = max(len(r[0]) for r in rows)
    print("crashwatch benchmarks: %s, %d cores, %s" % (os.uname().machine, os.cpu_count(), os.uname().release))
    for name, value, note in rows:
        print("  %-*s  %14s  %s" % (width, name, value, note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
