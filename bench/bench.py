#!/usr/bin/env python3
"""crashwatch benchmarks (`make bench`).

Measured in one run, on this machine, against references measured in the same run:
  capture   crashwatch crashes of the threads64 fixture (65 threads, ~800 frames): how long the crashed
            process is held stopped (the report's holdDurationMs: stop-all, raw capture, minimal report
            made durable, release) against `eu-stack -p` on a live threads64 process of the same shape
            (`threads64 wait`), target <= 1/10; and the time from the crash line to the "report written"
            line (the full report, processed by the worker, durable) with `--symbolicate full` against
            `eu-stack -s -i -p`, target <= 2/3; gdb as a reference;
  second    a second process's signal stops while a crash is processed: bench/second_process.c under
            one `crashwatch run`; B's worst signal latency after A's hold, until A's full report is
            durable, target <= A's holdDurationMs;
  loop      the supervisor's pass-through cost: a signal storm and 10,000 recovered SIGSEGVs, bare and
            supervised;
  memory    the supervisor's own peak RSS (VmHWM at its exit, bench/peak_rss.c; its worker's memory is
            the worker's) for 10x more signals and threads, and across crashes: it must stay flat;
  spool     `list` and `prune` over 10,000 reports;
  ship      `crashwatch ship --once` of 1,000 reports to the real OTLP receiver of the tests
            (Tests/shipping/otlp_receiver.py, strict opentelemetry-proto decoding) on loopback: reports per
            second; and `ship --follow` idle on an empty spool: its RSS and the CPU it uses in 10 s.
Prints one table; copy the figures into BENCHMARKS.md with the machine they came from.
The C helpers in bench/ are compiled here with gcc into .build/bench/.
"""
import glob
import json
import os
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASHWATCH = os.environ.get("CRASHWATCH_BIN", os.path.join(ROOT, ".build/release/crashwatch"))
FIXTURES = os.path.join(ROOT, ".build/fixtures")
BENCH_BUILD = os.path.join(ROOT, ".build/bench")

HOLD_TARGET = 1 / 10        # holdDurationMs <= this x eu-stack -p
DURABLE_TARGET = 2 / 3      # crash line -> full report durable <= this x eu-stack -s -i -p

problems = []               # anything odd seen while measuring, printed after the table


def fixture(name):
    return os.path.join(FIXTURES, name)


def helper(name):
    return os.path.join(BENCH_BUILD, name)


def build_helpers():
    """Compiles bench/*.c into .build/bench/ (second_process with -O0 -g: the worker gets real DWARF)."""
    os.makedirs(BENCH_BUILD, exist_ok=True)
    flags = {"second_process": ["-O0", "-g"], "peak_rss": ["-O2"]}
    for name, extra in flags.items():
        source = os.path.join(ROOT, "bench", name + ".c")
        subprocess.run(["gcc", "-pthread", "-Wall", "-Wextra", "-Werror"] + extra + ["-o", helper(name), source], check=True)


def timed(argv, runs, **kwargs):
    """Median wall time in milliseconds of running argv to completion `runs` times."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def only_report(spool):
    reports = glob.glob(os.path.join(spool, "*.json"))
    if len(reports) != 1:
        raise RuntimeError("expected one report in %s, found %d" % (spool, len(reports)))
    return json.load(open(reports[0]))


def crash_runs(runs, mode="full"):
    """`runs` crashes of threads64 under crashwatch. Medians of: the report's holdDurationMs (the crashed
    process held stopped), its captureDurationMs, and the time from the crash line on stderr (printed
    when every thread is stopped) to the "report written" line (printed once, after the full report
    from the worker is durable)."""
    holds, captures, handled = [], [], []
    # A debug cache of its own: the first crash finds it empty (cold: glibc's compressed DWARF is inflated
    # on the crash path) and fills it; the others find glibc's debug file inflated (warm).
    cache = tempfile.mkdtemp(prefix="cw-bench-cache-")
    os.chmod(cache, 0o700)
    cold = None
    for run in range(runs + 1):
        spool = tempfile.mkdtemp(prefix="cw-bench-")
        process = subprocess.Popen([CRASHWATCH, "run", "--spool", spool, "--symbolicate", mode, "--debug-cache", cache,
                                    "--", fixture("threads64")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seen, written = None, 0
        for line in process.stderr:
            if " crashed: " in line:
                seen = time.perf_counter()
            elif "report written to" in line and seen is not None:
                written += 1
                if written == 1:
                    handled.append((time.perf_counter() - seen) * 1000)
        process.wait()
        if written != 1:
            problems.append("threads64 (%s): %d \"report written\" lines for one crash" % (mode, written))
        report = only_report(spool)
        if report["diagnostics"].get("processing") != "complete":
            problems.append("threads64 (%s): diagnostics.processing is %r" % (mode, report["diagnostics"].get("processing")))
        frames = sum(len(t["frames"]) for t in report["threads"])
        threads = len(report["threads"])
        shutil.rmtree(spool)
        if run == 0:
            cold = handled.pop()
            # The worker inflates into the cache after its report, in a process of its own: let it finish.
            deadline = time.time() + 5
            while mode == "full" and not any(name.endswith(".debug") for name in os.listdir(cache)) and time.time() < deadline:
                time.sleep(0.05)
            continue
        holds.append(report["holdDurationMs"])
        captures.append(report["captureDurationMs"])
    shutil.rmtree(cache)
    return {"hold": statistics.median(holds), "capture": statistics.median(captures),
            "handled": statistics.median(handled), "cold": cold, "threads": threads, "frames": frames}


def live_process():
    """Starts `threads64 wait` and returns it once all its threads are parked."""
    process = subprocess.Popen([fixture("threads64"), "wait"], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[int((len(ordered) - 1) * fraction)] if ordered else float("nan")


def find_worker(supervisor, timeout_s=2.0):
    """The pid of `supervisor`'s processing worker (`crashwatch __process`), polled from the
    /proc/PID/task/TID/children lists every millisecond (no faster: the poll must not slow the hold
    down); None if none appears in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            tasks = os.listdir("/proc/%d/task" % supervisor)
        except OSError:
            return None
        for task in tasks:
            try:
                children = open("/proc/%d/task/%s/children" % (supervisor, task)).read().split()
            except OSError:
                continue
            for child in children:
                try:
                    if b"__process" in open("/proc/%s/cmdline" % child, "rb").read():
                        return int(child)
                except OSError:
                    continue
        time.sleep(0.001)
    return None


def second_process_run(duration_ms=800, delay_ms=150, interval_us=100):
    """One run of bench/second_process under `crashwatch run`: A crashes, B measures its own signal
    latency. B's samples (CLOCK_MONOTONIC, like time.monotonic_ns) are split into: baseline (sent before
    A started its threads); the hold (samples overlapping [A's fault, A's fault + holdDurationMs]: B's
    stop waits for the capture to end); processing (sent after the last hold sample was answered and
    before crashwatch printed "report written"), itself split at the worker's exit (seen through a
    pidfd, a little late on a busy machine): samples answered before it (the worker running) and
    the others (the supervisor taking the worker's report and making it durable).
    Latencies in ms."""
    spool = tempfile.mkdtemp(prefix="cw-bench-second-")
    out = os.path.join(spool, "samples.txt")
    os.makedirs(os.path.join(spool, "reports"))
    process = subprocess.Popen([CRASHWATCH, "run", "--spool", os.path.join(spool, "reports"), "--",
                                helper("second_process"), out, str(duration_ms), str(delay_ms), str(interval_us)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    written_ns, worker_exit_ns, written, b_lines = None, None, 0, []
    for line in process.stderr:
        if " crashed: " in line and worker_exit_ns is None:
            worker = find_worker(process.pid)
            try:
                pidfd = os.pidfd_open(worker) if worker else None
            except OSError:
                pidfd = None  # already gone
            if pidfd is not None:
                select.select([pidfd], [], [], 30)
                worker_exit_ns = time.monotonic_ns()
                os.close(pidfd)
        elif "report written to" in line:
            written += 1
            if written_ns is None:
                written_ns = time.monotonic_ns()
        elif line.startswith("second_process:"):
            b_lines.append(line.strip())
    status = process.wait()
    if status != 0 or written != 1 or written_ns is None:
        raise RuntimeError("second_process run failed: status %d, %d \"report written\" lines; %s" % (status, written, b_lines))
    report = only_report(os.path.join(spool, "reports"))
    lines = open(out).read().split("\n")
    shutil.rmtree(spool)
    a_start, a_fault = map(int, lines[0].split())
    samples = [tuple(map(int, line.split())) for line in lines[1:] if line]
    hold_ns = int(report["holdDurationMs"] * 1e6)
    if worker_exit_ns is None:
        problems.append("second_process: the worker's exit was not seen; its window is not split")
        worker_exit_ns = written_ns

    baseline = [latency for sent, latency in samples if sent < a_start]
    held = [(sent, latency) for sent, latency in samples if sent < a_fault + hold_ns and sent + latency > a_fault]
    processing_from = max((sent + latency for sent, latency in held), default=a_fault + hold_ns)
    processing = [(sent, latency) for sent, latency in samples if processing_from <= sent < written_ns]
    # A stop answered before the worker's exit waited entirely while the worker ran.
    worker_alive = [latency for sent, latency in processing if sent + latency < worker_exit_ns]
    after_worker = [latency for sent, latency in processing if sent + latency >= worker_exit_ns]
    if not samples or samples[-1][0] < written_ns:
        problems.append("second_process: B stopped measuring before A's report was written")
    if not processing:
        raise RuntimeError("second_process: no samples while A was processed")
    worst = max(processing, key=lambda sample: sample[1])
    return {
        "hold": report["holdDurationMs"], "processing_state": report["diagnostics"].get("processing"),
        "frames": sum(len(t["frames"]) for t in report["threads"]), "threads": len(report["threads"]),
        "baseline_max": max(baseline) / 1e6, "baseline_p99": percentile(baseline, 0.99) / 1e6,
        "held_max": max((latency for _, latency in held), default=0) / 1e6,
        "processing_ms": (written_ns - processing_from) / 1e6, "processing_n": len(processing),
        "processing_max": worst[1] / 1e6, "processing_p99": percentile([l for _, l in processing], 0.99) / 1e6,
        "worker_ms": (worker_exit_ns - processing_from) / 1e6, "worker_max": max(worker_alive, default=0) / 1e6,
        "after_worker_ms": (written_ns - worker_exit_ns) / 1e6, "after_worker_max": max(after_worker, default=0) / 1e6,
        "worst_sent_after_fault": (worst[0] - a_fault) / 1e6,
        "worst_sent_vs_worker_exit": (worst[0] - worker_exit_ns) / 1e6,
        "worst_answered_vs_written": (worst[0] + worst[1] - written_ns) / 1e6,
        "fault_to_written": (written_ns - a_fault) / 1e6,
    }


def peak_rss_kib(argv):
    """(supervisor's own peak RSS, ru_maxrss of it and every descendant it waited for) in KiB, from
    bench/peak_rss: VmHWM read at the supervisor's PTRACE_EVENT_EXIT stop, before its memory goes.
    (RUSAGE_CHILDREN alone would include the processing worker and the crashed program, which the
    supervisor waits for.)"""
    output = subprocess.run([helper("peak_rss")] + argv, capture_output=True, text=True)
    own, with_children = map(int, output.stdout.split())
    if own <= 0:
        raise RuntimeError("peak_rss could not read VmHWM of %s" % argv)
    return own, with_children


def spool_benchmarks(count=10000):
    """`list --limit 20` and `prune` over a spool of `count` reports (copies of the example report)."""
    spool = make_spool(count, "cw-bench-spool-")
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


def make_spool(count, prefix):
    """A spool (0750) of `count` copies of the example report with distinct ids and names."""
    example = open(os.path.join(ROOT, "Fixtures/example-report.json")).read()
    spool = tempfile.mkdtemp(prefix=prefix)
    os.chmod(spool, 0o750)
    for index in range(count):
        report_id = "%08x-0000-4000-8000-%012d" % (index, index)
        seconds = index % 86400
        name = "20261129T%02d%02d%02d.%03dZ-%d-svc%d-%s.json" % (seconds // 3600, seconds // 60 % 60, seconds % 60,
                                                                 index % 1000, 1000 + index, index % 7, report_id)
        with open(os.path.join(spool, name), "w") as file:
            file.write(example.replace("3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", report_id))
        os.chmod(os.path.join(spool, name), 0o640)
    return spool


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (/proc/PID/stat fields 14 and 15)."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def ship_benchmarks(count=1000):
    """Reports per second shipped to the real receiver on loopback, and the idle follower's RSS and CPU."""
    work = tempfile.mkdtemp(prefix="cw-bench-ship-")
    port_file = os.path.join(work, "port")
    receiver = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/shipping/otlp_receiver.py"), "--port", "0",
                                 "--port-file", port_file, "--log", os.path.join(work, "received.jsonl")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.monotonic() > deadline:
                raise RuntimeError("the OTLP receiver did not start")
            time.sleep(0.05)
        endpoint = "http://127.0.0.1:%s" % open(port_file).read().strip()
        for batch in (10, 100):
            spool = make_spool(count, "cw-bench-ship-spool-")
            try:
                start = time.monotonic()
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                result = subprocess.run([CRASHWATCH, "ship", "--once", "--spool", spool, "--endpoint", endpoint,
                                         "--batch", str(batch)], capture_output=True, text=True)
                elapsed = time.monotonic() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                shipped = result.stdout.count("shipped ")
                left = [name for name in os.listdir(spool) if not name.startswith(".")]
                if result.returncode != 0 or shipped != count or left:
                    problems.append("ship --batch %d: exit %d, %d shipped, left %s: %s"
                                    % (batch, result.returncode, shipped, left[:3], result.stderr[-300:]))
                rows.append(("ship --once of %d reports (%d KB each, with body), --batch %d, to the real receiver"
                             % (count, len(open(os.path.join(ROOT, "Fixtures/example-report.json"), "rb").read()) // 1024, batch),
                             "%.0f reports/s" % (shipped / elapsed),
                             "%.2f s in all; the shipper's own CPU %.2f s (the rest is the receiver's strict decoding)" % (elapsed, cpu)))
            finally:
                shutil.rmtree(spool)
        spool = tempfile.mkdtemp(prefix="cw-bench-ship-idle-")
        follower = subprocess.Popen([CRASHWATCH, "ship", "--follow", "--spool", spool, "--endpoint", endpoint],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)
            before = cpu_seconds(follower.pid)
            time.sleep(10)
            used = cpu_seconds(follower.pid) - before
            rss = rss_kib(follower.pid)
        finally:
            follower.terminate()
            follower.wait(timeout=10)
            shutil.rmtree(spool)
        rows.append(("ship --follow, idle on an empty spool: CPU in 10 s / RSS", "%.2f s / %d KiB" % (used, rss),
                     "target: no CPU while idle %s" % verdict(used <= 0.01)))
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
        shutil.rmtree(work)
    return rows


def verdict(ok):
    return "PASS" if ok else "FAIL"


def main():
    build_helpers()
    rows = []
    checks = []

    names = crash_runs(7, "functions")
    full = crash_runs(7, "full")
    process = live_process()
    try:
        eu = timed(["eu-stack", "-p", str(process.pid)], 7)
        eu_full = timed(["eu-stack", "-s", "-i", "-p", str(process.pid)], 7)
        gdb = timed(["gdb", "-batch", "-p", str(process.pid), "-ex", "thread apply all bt"], 3) if shutil.which("gdb") else None
    finally:
        process.kill()
        process.wait()
    hold_ratio = full["hold"] / eu
    durable_ratio = full["handled"] / eu_full
    checks.append(("1. hold <= 1/10 of eu-stack -p", hold_ratio <= HOLD_TARGET,
                   "%.1f ms / %.1f ms = %.3f" % (full["hold"], eu, hold_ratio)))
    checks.append(("2. crash -> full report durable <= 2/3 of eu-stack -s -i -p", durable_ratio <= DURABLE_TARGET,
                   "%.1f ms / %.1f ms = %.2f" % (full["handled"], eu_full, durable_ratio)))
    rows.append(("threads64: %d threads, %d frames (medians of 7 crashes / 7 eu-stack runs)" % (full["threads"], full["frames"]), "", ""))
    rows.append(("  hold (holdDurationMs: stop-all, raw capture, minimal report fsync'd, release)", "%.1f ms" % full["hold"],
                 "%.3f of eu-stack -p (target <= %.2f) %s" % (hold_ratio, HOLD_TARGET, verdict(hold_ratio <= HOLD_TARGET))))
    rows.append(("  hold with --symbolicate functions", "%.1f ms" % names["hold"], ""))
    rows.append(("  eu-stack -p (names)", "%.1f ms" % eu, "%.1fx the hold" % (eu / full["hold"])))
    rows.append(("  functions: crash line -> report written (worker, durable)", "%.1f ms" % names["handled"],
                 "%.2f of eu-stack -p" % (names["handled"] / eu)))
    rows.append(("  full: crash line -> report written (worker, durable; debug cache warm)", "%.1f ms" % full["handled"],
                 "%.2f of eu-stack -s -i -p (target <= %.2f) %s" % (durable_ratio, DURABLE_TARGET, verdict(durable_ratio <= DURABLE_TARGET))))
    rows.append(("  full, the first crash (debug cache empty: glibc's DWARF inflated on the way)", "%.1f ms" % full["cold"],
                 "%.2f of eu-stack -s -i -p" % (full["cold"] / eu_full)))
    rows.append(("  eu-stack -s -i -p (lines, inlines)", "%.1f ms" % eu_full, ""))
    if gdb:
        rows.append(("  gdb -batch -p, thread apply all bt (3 runs)", "%.1f ms" % gdb, "%.1fx crashwatch's full crash -> durable" % (gdb / full["handled"])))
    rows.append(("  report captureDurationMs, functions / full", "%.1f / %.1f ms" % (names["capture"], full["capture"]), ""))
    if full["capture"] < full["handled"] / 2:
        problems.append("captureDurationMs (full: %.1f ms) is far below crash line -> report written (%.1f ms): "
                        "it does not cover the worker's unwinding and symbols" % (full["capture"], full["handled"]))

    runs = [second_process_run() for _ in range(3)]
    second_ok = all(run["processing_max"] <= run["hold"] for run in runs)
    med = lambda key: statistics.median(run[key] for run in runs)
    worst = max(runs, key=lambda run: run["processing_max"] - run["hold"])
    checks.append(("3. second process: worst signal latency while A is processed <= A's hold", second_ok,
                   "%s ms vs hold %s ms" % (" / ".join("%.2f" % r["processing_max"] for r in runs),
                                            " / ".join("%.2f" % r["hold"] for r in runs))))
    rows.append(("second process B under one crashwatch run with A crashing (%d threads, %d frames); 3 runs"
                 % (runs[0]["threads"], runs[0]["frames"]), "", ""))
    rows.append(("  B baseline (before A started): max / p99 signal latency", "%.3f / %.3f ms" % (med("baseline_max"), med("baseline_p99")), "median of runs"))
    rows.append(("  A's hold (holdDurationMs)", "%.2f ms" % med("hold"), "median of runs"))
    rows.append(("  B's stop that arrived during A's hold waited", "%.2f ms" % med("held_max"), "median of runs (expected: about the hold)"))
    rows.append(("  A's processing (after the hold -> report written)", "%.1f ms" % med("processing_ms"),
                 "median of runs, %d samples" % int(med("processing_n"))))
    rows.append(("    of which the worker process runs / then the supervisor takes its report",
                 "%.1f / %.1f ms" % (med("worker_ms"), med("after_worker_ms")), "median of runs"))
    rows.append(("  B during A's processing: p99 signal latency", "%.3f ms" % med("processing_p99"), "median of runs"))
    rows.append(("  B during A's processing: max signal latency", " / ".join("%.2f" % r["processing_max"] for r in runs) + " ms",
                 "vs hold %s ms: %s" % (" / ".join("%.2f" % r["hold"] for r in runs), verdict(second_ok))))
    rows.append(("    answered while the worker process runs / after it exited", "%.2f / %.2f ms" % (med("worker_max"), med("after_worker_max")),
                 "median of runs"))
    rows.append(("  worst sample sent: after A's fault / after the worker's exit", "%+.1f / %+.1f ms"
                 % (worst["worst_sent_after_fault"], worst["worst_sent_vs_worker_exit"]),
                 "answered %+.1f ms from \"report written\"" % worst["worst_answered_vs_written"]))
    for run in runs:
        if run["processing_state"] != "complete":
            problems.append("second_process: A's report has processing %r" % run["processing_state"])

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

    flat = lambda small, large: "flat" if large <= small * 1.1 + 512 else "GROWS"
    small, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("signal_storm"), "20000"])
    large, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("signal_storm"), "200000"])
    rows.append(("supervisor peak RSS, 20k / 200k signals", "%d / %d KiB" % (small, large), flat(small, large)))
    no_crash = small
    small, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("thread_churn"), "1000"])
    large, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("thread_churn"), "10000"])
    rows.append(("supervisor peak RSS, 1k / 10k threads", "%d / %d KiB" % (small, large), flat(small, large)))
    spool = tempfile.mkdtemp(prefix="cw-bench-rss-")
    try:
        crash64, all64 = peak_rss_kib([CRASHWATCH, "run", "--spool", spool, "--", fixture("threads64")])
        crash1000, all1000 = peak_rss_kib([CRASHWATCH, "run", "--spool", spool, "--", fixture("threads1000")])
    finally:
        shutil.rmtree(spool)
    rows.append(("supervisor peak RSS, no crash (20k signals) / crash of threads64", "%d / %d KiB" % (no_crash, crash64),
                 "%+d KiB, %s" % (crash64 - no_crash, flat(no_crash, crash64))))
    rows.append(("supervisor peak RSS, crash of threads64 / threads1000", "%d / %d KiB" % (crash64, crash1000),
                 "%s with the crash's size" % flat(crash64, crash1000)))
    rows.append(("  with its children (worker, crashed program): threads64 / threads1000", "%d / %d KiB" % (all64, all1000),
                 "ru_maxrss, not the supervisor's"))

    rows.extend(spool_rows)
    rows.extend(ship_benchmarks())
    width = max(len(r[0]) for r in rows)
    print("crashwatch benchmarks: %s, %d cores, %s" % (os.uname().machine, os.cpu_count(), os.uname().release))
    for name, value, note in rows:
        print("  %-*s  %17s  %s" % (width, name, value, note))
    print("checks:")
    for name, ok, detail in checks:
        print("  %s  %s (%s)" % (verdict(ok), name, detail))
    for problem in problems:
        print("  note: " + problem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
