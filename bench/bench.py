#!/usr/bin/env python3
"""crashwatch benchmarks (`make bench`).

Measured in one run, on this machine, against references measured in the same run:
  capture   crashwatch crashes of the threads64 fixture (65 threads, ~800 frames): how long the crashed
            process is held stopped (the report's holdDurationMs: from the crash signal's stop, the verdict,
            stop-all, raw capture, minimal report renamed into the spool, release) against `eu-stack -p` on a live threads64 process of the same
            shape (`threads64 wait`), target <= 1/20; and the time from the crash line to the "report written"
            line (the full report, processed by the worker, durable) with `--symbolicate full` against
            `eu-stack -s -i -p`, target <= 1/3; gdb as a reference; `crashwatch snapshot` of the same live
            process: its hold (seize to detach) against `eu-stack -p`, target <= 1/10, and the command's time
            to a durable full report against `eu-stack -s -i -p`, target <= 2/3; and the hold of a crash with
            an annotation table (100 keys, 64 breadcrumbs) against the same program without, target <= 1.05x.
            `bench.py capture` runs it alone (`bench.py annotations` the annotation case alone);
  second    a second process's signal stops while a crash is processed: bench/second_process.c under
            one `crashwatch run`; B's worst signal latency after A's hold, until A's full report is
            durable, target <= A's holdDurationMs;
  loop      the supervisor's pass-through cost: a signal storm and 10,000 recovered SIGSEGVs, bare and
            supervised;
  floor     supervision overhead against the floor: bench/floor_tracer.c, the thinnest ptrace supervisor
            (crashwatch's seize options, one waitpid loop, one ptrace call per stop), each workload bare /
            floor / crashwatch interleaved: signal storm, thread churn, fork churn, a JVM throwing
            NullPointerExceptions (crashwatch's added time <= 1.1x the floor's; these also under the
            floor tracer making the requests crashwatch's crash policy needs, and again bare / floor /
            crashwatch with idle CPUs polling instead of halting — a diagnostic), nginx under wrk and
            PostgreSQL under pgbench (>= 99% of the floor's throughput, >= 97% of bare's), the
            supervisor's idle RSS (<= 10 MiB), its peak over 200k signals and 10k threads (flat), and
            its anonymous memory once a child's crash of threads64 / threads1000 is reported while it lives
            on (back within 1 MiB of idle); a workload whose tool is missing is reported as skipped.
            `bench.py floor` runs it alone;
  memory    the supervisor's own peak RSS (VmHWM at its exit, bench/peak_rss.c; its worker's memory is
            the worker's) for 10x more signals and threads, and across crashes: it must stay flat;
  spool     `list` and `prune` over 10,000 reports;
  annotations  the hold of a crash of bench/annotated_crash.c declaring an annotation table (100 annotations,
            64 breadcrumbs) against the same program without one, interleaved, target <= 1.05x.
            `bench.py annotations` runs it alone;
  groups    `list --group` over 10,000 reports of 50 bugs (the group index read, target <= 200 ms; its counts
            and first/last seen checked), and the one-off rebuild of a missing index from the reports.
            `bench.py groups` runs it alone;
  ship      `crashwatch ship --once` of 1,000 reports to the real OTLP receiver of the tests
            (Tests/shipping/otlp_receiver.py, strict opentelemetry-proto decoding) on loopback: reports per
            second; and `ship --follow` idle on an empty spool: its RSS and the CPU it uses in 10 s.
Prints one table; copy the figures into BENCHMARKS.md with the machine they came from.
The C helpers in bench/ are compiled here with gcc into .build/bench/ (bench/NpeLoop.java with javac).
CRASHWATCH_BIN and CRASHWATCH_FIXTURES point it at another binary and fixtures directory.
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
FIXTURES = os.environ.get("CRASHWATCH_FIXTURES", os.path.join(ROOT, ".build/fixtures"))
BENCH_BUILD = os.path.join(ROOT, ".build/bench")

HOLD_TARGET = 1 / 20        # a crash's holdDurationMs <= this x eu-stack -p
DURABLE_TARGET = 1 / 3      # crash line -> full report durable <= this x eu-stack -s -i -p
SNAPSHOT_HOLD_TARGET = 1 / 10    # a snapshot's holdDurationMs <= this x eu-stack -p
SNAPSHOT_DURABLE_TARGET = 2 / 3  # snapshot command start -> full report durable <= this x eu-stack -s -i -p

problems = []               # anything odd seen while measuring, printed after the table


def fixture(name):
    return os.path.join(FIXTURES, name)


def helper(name):
    return os.path.join(BENCH_BUILD, name)


def build_helpers():
    """Compiles bench/*.c into .build/bench/ (second_process with -O0 -g: the worker gets real DWARF), and
    bench/NpeLoop.java with javac when there is one (without it the JVM workload is skipped)."""
    os.makedirs(BENCH_BUILD, exist_ok=True)
    flags = {"second_process": ["-O0", "-g"], "peak_rss": ["-O2"], "floor_tracer": ["-O2"], "fork_churn": ["-O2"]}
    for name, extra in flags.items():
        source = os.path.join(ROOT, "bench", name + ".c")
        subprocess.run(["gcc", "-pthread", "-Wall", "-Wextra", "-Werror"] + extra + ["-o", helper(name), source], check=True)
    # The annotation benchmark's pair: the same program with a table (annotated_crash) and without (_plain).
    source = os.path.join(ROOT, "bench", "annotated_crash.c")
    for name, extra in {"annotated_crash": ["-DANNOTATED", "-I" + os.path.join(ROOT, "annotations")], "annotated_crash_plain": []}.items():
        subprocess.run(["gcc", "-pthread", "-Wall", "-Wextra", "-Werror", "-O0", "-g"] + extra + ["-o", helper(name), source], check=True)
    if shutil.which("javac"):
        result = subprocess.run(["javac", "-d", BENCH_BUILD, os.path.join(ROOT, "bench", "NpeLoop.java")],
                                capture_output=True, text=True)
        if result.returncode != 0:
            problems.append("javac bench/NpeLoop.java failed: " + result.stderr.strip()[-300:])


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


def annotation_benchmarks(runs=25):
    """The hold of a crash of bench/annotated_crash.c with its table (100 annotations, 100 breadcrumbs into 64
    slots) against the same program without one, interleaved: the median holds and their ratio (target <= 1.05),
    with the table bytes the capture copied."""
    holds = {"annotated_crash": [], "annotated_crash_plain": []}
    copied = None
    for _ in range(runs):
        for name in holds:
            spool = tempfile.mkdtemp(prefix="cw-bench-annotations-")
            subprocess.run([CRASHWATCH, "run", "--spool", spool, "--", helper(name)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            report = only_report(spool)
            shutil.rmtree(spool)
            holds[name].append(report["holdDurationMs"])
            if name == "annotated_crash":
                copied = report["diagnostics"].get("annotationBytes")
                if len(report.get("annotations") or {}) != 100 or len(report.get("breadcrumbs") or []) != 64:
                    problems.append("annotated_crash: %d annotations and %d breadcrumbs, expected 100 and 64"
                                    % (len(report.get("annotations") or {}), len(report.get("breadcrumbs") or [])))
    with_table = statistics.median(holds["annotated_crash"])
    without = statistics.median(holds["annotated_crash_plain"])
    return {"with": with_table, "without": without, "ratio": with_table / without, "bytes": copied, "runs": runs}


def section_main(section):
    """One section alone (`bench.py capture`, `bench.py annotations`): `section(rows, checks)` fills the table."""
    build_helpers()
    rows, checks = [], []
    section(rows, checks)
    print_table(rows, checks)
    return 0


def annotation_rows(rows, checks):
    result = annotation_benchmarks()
    checks.append(("annotations: hold with annotations (100 keys, 64 breadcrumbs) <= 1.05x the hold without", result["ratio"] <= 1.05,
                   "%.2f ms / %.2f ms = %.3f" % (result["with"], result["without"], result["ratio"])))
    rows.append(("annotated_crash: 17 threads, crashes of the same program with and without a table (medians of %d, interleaved)"
                 % result["runs"], "", ""))
    rows.append(("  hold with a table (100 annotations, 64 breadcrumbs; %s bytes copied)" % result["bytes"], "%.2f ms" % result["with"],
                 "%.3f of the hold without (target <= 1.05) %s" % (result["ratio"], verdict(result["ratio"] <= 1.05))))
    rows.append(("  hold without a table", "%.2f ms" % result["without"], ""))


def snapshot_runs(pid, runs):
    """`runs` snapshots (`crashwatch snapshot PID`, full symbols, into a spool) of the live threads64 process.
    Medians of: the report's holdDurationMs (first seize to last detach) and the command's wall time (start to
    exit: the full report written and fsync'd to the spool), after one warm-up run (debug cache filled)."""
    holds, walls = [], []
    for run in range(runs + 1):
        spool = tempfile.mkdtemp(prefix="cw-bench-snap-")
        start = time.perf_counter()
        result = subprocess.run([CRASHWATCH, "snapshot", "--spool", spool, str(pid)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wall = (time.perf_counter() - start) * 1000
        if result.returncode != 0:
            problems.append("snapshot of threads64: exit %d: %s" % (result.returncode, result.stderr.strip()))
            shutil.rmtree(spool)
            continue
        report = only_report(spool)
        shutil.rmtree(spool)
        if report["diagnostics"].get("processing") != "complete":
            problems.append("snapshot of threads64: diagnostics.processing is %r" % report["diagnostics"].get("processing"))
        if run == 0:
            continue
        holds.append(report["holdDurationMs"])
        walls.append(wall)
    return {"hold": statistics.median(holds) if holds else float("nan"),
            "durable": statistics.median(walls) if walls else float("nan")}


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


def groups_benchmarks(count=10000, bugs=50):
    """`list --group` on a spool of `count` reports of `bugs` bugs: the rebuild of the missing index (once), then
    the listing from the index (median of 7, target <= 200 ms); the counts and first/last seen are checked."""
    example = open(os.path.join(ROOT, "Fixtures/example-report.json")).read()
    value = json.loads(example)["fingerprint"]["value"]
    spool = tempfile.mkdtemp(prefix="cw-bench-groups-")
    os.chmod(spool, 0o750)
    expected = {}
    try:
        for index in range(count):
            bug = index % bugs
            report_id = "%08x-0000-4000-8000-%012d" % (index, index)
            seconds, milliseconds = index % 86400, index % 1000
            clock = "%02d%02d%02d.%03d" % (seconds // 3600, seconds // 60 % 60, seconds % 60, milliseconds)
            capture = "2026-11-29T%02d:%02d:%02d.%03dZ" % (seconds // 3600, seconds // 60 % 60, seconds % 60, milliseconds)
            name = "20261129T%sZ-%d-svc%d-%s.json" % (clock, 1000 + index, bug % 7, report_id)
            fingerprint = "%032x" % (bug + 1)
            text = (example.replace("3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", report_id)
                    .replace('"captureTime": "2026-11-30T09:01:57.123Z"', '"captureTime": "%s"' % capture)
                    .replace(value, fingerprint))
            with open(os.path.join(spool, name), "w") as file:
                file.write(text)
            os.chmod(os.path.join(spool, name), 0o640)
            seen = expected.setdefault(fingerprint, [0, capture, capture])
            seen[0] += 1
            seen[1], seen[2] = min(seen[1], capture), max(seen[2], capture)
        argv = [CRASHWATCH, "list", "--group", "--spool", spool]
        rebuild = timed(argv, 1)
        listing = timed(argv, 7)
        pruning = timed([CRASHWATCH, "prune", "--spool", spool, "--max-reports", str(count)], 7)
        groups = json.loads(subprocess.run(argv + ["--json"], capture_output=True, text=True, check=True).stdout)
        found = {group["fingerprint"]: [group["count"], group["firstSeen"], group["lastSeen"]] for group in groups}
        if found != expected:
            raise RuntimeError("list --group: %d groups, expected %d; first difference: %r" % (
                len(found), len(expected), next(((key, found.get(key), want) for key, want in expected.items()
                                                 if found.get(key) != want), None)))
    finally:
        shutil.rmtree(spool)
    return [
        ("spool of %d reports of %d bugs: list --group (index rebuilt from the reports, once)" % (count, bugs),
         "%.0f ms" % rebuild, "no target"),
        ("spool of %d reports of %d bugs: list --group" % (count, bugs), "%.1f ms" % listing,
         "target <= 200 ms: %s; counts and first/last seen right" % verdict(listing <= 200)),
        ("spool of %d reports of %d bugs: prune (nothing to remove; reads the index)" % (count, bugs),
         "%.1f ms" % pruning, "target <= 100 ms (as without groups)"),
    ]


def groups_main():
    """The groups section alone (`python3 bench/bench.py groups`)."""
    print_table(groups_benchmarks(), [])
    return 0


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
            # A burst: 1,000 reports arrive at once; the follower ships them and goes back to sleep.
            burst = make_spool(count, "cw-bench-ship-burst-")
            for name in os.listdir(burst):
                os.rename(os.path.join(burst, name), os.path.join(spool, name))
            shutil.rmtree(burst)
            deadline = time.monotonic() + 120
            while any(name.endswith(".json") for name in os.listdir(spool)) and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1)
            rss_after = rss_kib(follower.pid)
        finally:
            follower.terminate()
            follower.wait(timeout=10)
            shutil.rmtree(spool)
        rows.append(("ship --follow, idle on an empty spool: CPU in 10 s / RSS", "%.2f s / %d KiB" % (used, rss),
                     "target: no CPU while idle %s" % verdict(used <= 0.01)))
        rows.append(("ship --follow, 1 s after shipping a burst of %d reports: RSS" % count, "%d KiB" % rss_after,
                     "%+d KiB over idle (what a burst took goes back before each sleep)" % (rss_after - rss)))
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
        shutil.rmtree(work)
    return rows


# ---------------------------------------------------------------------------------------------------
# floor: supervision overhead against the thinnest ptrace supervisor (issue 13)
#
# Every workload runs bare, under bench/floor_tracer.c (seized with crashwatch's options, one waitpid
# loop, one ptrace call per stop) and under `crashwatch run`, in this one run, the three interleaved and
# their order rotated from round to round (a drift of the machine then falls on all three alike).
# Timed workloads: the time each adds to the bare run, and crashwatch_added / floor_added (target
# <= FLOOR_TARGET); they also run under the floor tracer with crashwatch's per-stop requests (TIMED_MODES). Servers (nginx under wrk, PostgreSQL under pgbench): throughput as a share of the
# floor's and of bare's. A workload whose tool is missing is reported as skipped, with the reason.

FLOOR_TARGET = 1.1                # crashwatch's added time <= this x the floor tracer's added time
SERVER_FLOOR_SHARE = 0.99         # server throughput under crashwatch >= this x under the floor tracer
SERVER_BARE_SHARE = 0.97          # ... and >= this x bare
IDLE_RSS_TARGET_KIB = 10 * 1024   # `crashwatch run -- sleep`: VmRSS after 1 s, <= 10 MiB
FLOOR_MODES = ("bare", "floor", "crashwatch")
# Timed workloads also run under the floor tracer making the requests crashwatch's crash policy needs at
# each stop (FLOOR_TRACER_POLICY=1, bench/floor_tracer.c): what a supervisor that knows what crashwatch
# knows cannot go below. The target is against the plain floor; this column says what the gap is made of.
TIMED_MODES = ("bare", "floor", "policy", "crashwatch")
FLOOR_TIMED_RUNS = int(os.environ.get("CW_BENCH_FLOOR_RUNS", "5"))       # per mode and timed workload (3 for the longest)
NGINX_ROUNDS = int(os.environ.get("CW_BENCH_NGINX_ROUNDS", "3"))         # per mode: wrk runs of 5 s
PGBENCH_ROUNDS = int(os.environ.get("CW_BENCH_PGBENCH_ROUNDS", "2"))     # per mode: server runs of 2 x 10 s
NGINX_WORKERS = 2
WRK_ARGS = ["-t2", "-c32", "-d5s"]
PGBENCH_SCALE = 5
PGBENCH_ARGS = ["-c", "4", "-j", "2", "-T", "10"]
# The postmaster's settings beyond initdb's defaults: a private Unix socket only; no wait for the WAL
# flush at each commit (otherwise TPC-B measures this VM's disk, not the CPU that supervision costs);
# no autovacuum and no timed checkpoint during the section: each pgbench run starts with `-v` (all four
# tables vacuumed) instead, so every run, whichever mode, starts from the same state (without it
# select-only ran ~15% slower after each TPC-B run, on the dead tuples it left).
POSTGRES_SETTINGS = {"listen_addresses": "", "synchronous_commit": "off", "max_connections": "20",
                     "autovacuum": "off", "checkpoint_timeout": "30min", "max_wal_size": "8GB"}
# The load generators (wrk, pgbench) run on the last CPU only, the server and its tracer where the
# scheduler puts them: on this 2-core VM unpinned pgbench -S varied 72-92k tps from run to run, bare,
# pinned 61-68k. CW_BENCH_PIN_LOAD=0 turns it off.
PIN_LOAD = os.environ.get("CW_BENCH_PIN_LOAD", "1") != "0" and (os.cpu_count() or 1) >= 2


def load_generator(argv):
    """argv of a load generator, pinned to the last CPU when PIN_LOAD."""
    if PIN_LOAD and shutil.which("taskset"):
        return ["taskset", "-c", str(os.cpu_count() - 1)] + list(argv)
    return list(argv)


class Skip(Exception):
    """A workload that cannot run here (a tool or file missing): reported, not fatal."""


def supervised(mode, argv, spool):
    """argv as run in `mode`: bare, under the floor tracer, or under `crashwatch run --spool SPOOL`."""
    if mode == "bare":
        return list(argv)
    if mode in ("floor", "policy"):
        return [helper("floor_tracer")] + list(argv)
    return [CRASHWATCH, "run", "--spool", spool, "--"] + list(argv)


def floor_env(mode, stats, env=None):
    """The environment of a run in `mode`: the floor tracer is told where to write its stop counts, and
    under "policy" to make crashwatch's requests."""
    env = dict(os.environ if env is None else env)
    env.pop("FLOOR_TRACER_POLICY", None)
    if mode == "floor":
        env["FLOOR_TRACER_STATS"] = stats
    if mode == "policy":
        env["FLOOR_TRACER_POLICY"] = "1"
    return env


def stop_counts(path):
    """The floor tracer's stop counts (bench/floor_tracer.c, FLOOR_TRACER_STATS) as one short text:
    what one run of the workload costs in ptrace stops."""
    import signal
    try:
        lines = open(path).read().split("\n")
    except OSError:
        return "(no counts written)"
    counts = {}
    for line in lines:
        if line.strip():
            name, value = line.split()
            if name.startswith("signal-"):
                try:
                    name = signal.Signals(int(name[7:])).name
                except ValueError:
                    name = "signal %s" % name[7:]
            counts[name] = int(value)
    stops = sum(value for name, value in counts.items() if name != "ended")
    return "%d stops: " % stops + ", ".join("%s %d" % (name, value) for name, value in
                                           sorted(counts.items(), key=lambda item: -item[1]))


def rotated(round_index, modes=FLOOR_MODES):
    """The order of the modes in round `round_index`: rotated, so none is always first or last."""
    shift = round_index % len(modes)
    return modes[shift:] + modes[:shift]


def check_spool_empty(spool, what):
    """No workload here crashes: a report in crashwatch's spool is a problem worth a note."""
    reports = [name for name in os.listdir(spool) if name.endswith(".json")] if os.path.isdir(spool) else []
    if reports:
        problems.append("floor: %s: crashwatch wrote %d report(s) for a workload that does not crash: %s"
                        % (what, len(reports), reports[:2]))


def timed_workloads():
    """(name, description, runs, argv, why it cannot run or None) of the timed workloads."""
    def need_files(*paths):
        missing = [path for path in paths if not os.path.exists(path)]
        return "missing %s" % ", ".join(missing) if missing else None
    java = shutil.which("java")
    return [
        ("signal storm", "100,000 caught SIGUSR1 (signal_storm 100000)", min(FLOOR_TIMED_RUNS, 3),
         [fixture("signal_storm"), "100000"], need_files(fixture("signal_storm"))),
        ("thread churn", "20,000 threads created and joined (thread_churn 20000)", FLOOR_TIMED_RUNS,
         [fixture("thread_churn"), "20000"], need_files(fixture("thread_churn"))),
        ("fork churn", "3,000 fork + wait of a child that exits at once (bench/fork_churn.c)", FLOOR_TIMED_RUNS,
         [helper("fork_churn"), "3000"], need_files(helper("fork_churn"))),
        ("JVM NPEs", "200,000 NullPointerExceptions thrown and caught (bench/NpeLoop.java)", FLOOR_TIMED_RUNS,
         [java or "java", "-cp", BENCH_BUILD, "NpeLoop", "200000"],
         "no java on PATH" if not java else need_files(os.path.join(BENCH_BUILD, "NpeLoop.class"))),
    ]


class PollingIdle:
    """While entered, idle CPUs poll instead of halting: a PM QoS request of 0 µs wake-up latency
    (/dev/cpu_dma_latency, root only), held by keeping the file open. On this VM an idle vCPU halts at once
    (cpuidle haltpoll, guest_halt_poll_ns 0), and waking it again is what a supervisor pays for every
    microsecond it takes before resuming a stopped thread; with the request, that cost is gone, and what is
    left is each supervisor's own work. Raises Skip when the request cannot be made."""

    def __enter__(self):
        import struct
        try:
            self.fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
            os.write(self.fd, struct.pack("i", 0))
        except OSError as error:
            raise Skip("/dev/cpu_dma_latency: %s" % error.strerror)
        return self

    def __exit__(self, *exception):
        os.close(self.fd)


def run_timed_workload(argv, spool, runs, modes=TIMED_MODES):
    """{mode: [wall ms per run]} of argv run to completion in each mode, interleaved by round; and the
    floor tracer's stop counts of its last run."""
    samples = {mode: [] for mode in modes}
    stats = os.path.join(spool, "floor-stops.txt")
    for round_index in range(runs):
        for mode in rotated(round_index, modes):
            start = time.perf_counter()
            result = subprocess.run(supervised(mode, argv, spool), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True, timeout=300, env=floor_env(mode, stats))
            elapsed = (time.perf_counter() - start) * 1000
            if result.returncode != 0:
                raise RuntimeError("%s: exit status %d under %s: %s" % (" ".join(argv), result.returncode, mode,
                                                                        result.stderr.strip()[-300:]))
            samples[mode].append(elapsed)
    return samples, stop_counts(stats)


def polling_idle_row(argv, spool, runs):
    """The same workload bare / under the floor tracer / under crashwatch with idle CPUs polling
    (PollingIdle): a diagnostic row, not a target — it shows what of the gap is this VM's wake-ups."""
    label = "  the same with idle CPUs polling (cpu_dma_latency 0): bare / floor / crashwatch"
    try:
        with PollingIdle():
            samples, _ = run_timed_workload(argv, spool, runs, modes=FLOOR_MODES)
    except Skip as reason:
        return (label, "skipped", str(reason))
    except Exception as error:
        problems.append("floor: polling idle: %s: %s" % (" ".join(argv), str(error)[:300]))
        return (label, "failed", str(error)[:300])
    check_spool_empty(spool, "polling idle: " + " ".join(argv))
    bare, floor, cw = (statistics.median(samples[mode]) for mode in FLOOR_MODES)
    ratio = (cw - bare) / (floor - bare) if floor > bare else float("inf")
    return (label, "%.0f / %.0f / %.0f ms" % (bare, floor, cw),
            "crashwatch/floor %.2f (a diagnostic: the target is for the machine as it is); runs: %s"
            % (ratio, "; ".join("%s %s" % (mode, " ".join("%.0f" % v for v in samples[mode])) for mode in FLOOR_MODES)))


def spread(values):
    """(max - min) / median: how far apart a mode's runs were."""
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0


def timed_rows(name, description, samples, runs, stops):
    bare, floor, policy, cw = (statistics.median(samples[mode]) for mode in TIMED_MODES)
    floor_added, policy_added, cw_added = floor - bare, policy - bare, cw - bare
    ratio = cw_added / floor_added if floor_added > 0 else float("inf")
    ok = ratio <= FLOOR_TARGET
    rows = [("%s: %s; medians of %d" % (name, description, runs), "", ""),
            ("  bare / floor tracer / floor + crashwatch's requests / crashwatch", "%.0f / %.0f / %.0f / %.0f ms" % (bare, floor, policy, cw),
             "runs: " + "; ".join("%s %s" % (mode, " ".join("%.0f" % v for v in samples[mode])) for mode in TIMED_MODES)),
            ("  added: floor tracer / floor + requests / crashwatch", "%.0f / %.0f / %.0f ms" % (floor_added, policy_added, cw_added),
             "crashwatch/floor %.2f (target <= %.1f) %s; floor + requests/floor %.2f, crashwatch/(floor + requests) %.2f"
             % (ratio, FLOOR_TARGET, verdict(ok), policy_added / floor_added if floor_added > 0 else float("inf"),
                cw_added / policy_added if policy_added > 0 else float("inf"))),
            ("  per run, crashwatch_added / floor_added (same round)", "",
             " ".join("%.2f" % ((c - b) / (f - b)) if f > b else "-" for b, f, c in
                      zip(samples["bare"], samples["floor"], samples["crashwatch"]))),
            ("  one run under the floor tracer", "", stops)]
    for mode in ("floor", "policy", "crashwatch"):
        if spread(samples[mode]) > 0.2:
            problems.append("floor: %s: the %s runs spread %.0f%% around their median (%s ms): noisy"
                            % (name, mode, 100 * spread(samples[mode]), " ".join("%.0f" % v for v in samples[mode])))
    check = ("floor: %s: crashwatch adds <= %.1fx what the floor tracer adds" % (name, FLOOR_TARGET), ok,
             "%.0f ms / %.0f ms = %.2f" % (cw_added, floor_added, ratio))
    return rows, check


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def processes_under(directory):
    """Pids of the processes whose working directory is `directory` or inside it (nginx's master and
    workers started there; PostgreSQL's postmaster and backends work in their data directory)."""
    found = []
    real = os.path.realpath(directory)
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % entry)
        except OSError:
            continue
        if cwd == real or cwd.startswith(real + "/"):
            found.append(int(entry))
    return found


class ServerProcess:
    """A server started in `mode` (bare, floor tracer, crashwatch) in a session of its own, working in
    `workdir`. stop() asks it to end with `stop_signal` (sent to the process started: the server itself,
    or the tracer, which passes it on) and, whatever happens, kills what is left: its process group and
    every process working under `workdir` (PostgreSQL's backends start sessions of their own)."""

    def __init__(self, mode, argv, workdir, spool, log, stop_signal, stats, user=None):
        self.workdir, self.stop_signal = workdir, stop_signal
        kwargs = {"env": floor_env(mode, stats)}
        if user is not None:
            import pwd
            entry = pwd.getpwnam(user)
            kwargs = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": [],
                      "env": floor_env(mode, stats, dict(os.environ, HOME=workdir, USER=user, LOGNAME=user))}
        self.log = open(log, "ab")
        self.process = subprocess.Popen(supervised(mode, argv, spool), cwd=workdir, stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, **kwargs)

    def alive(self):
        return self.process.poll() is None

    def stop(self, timeout=20):
        """Returns the exit status of the process started, or None when it had to be killed."""
        status = None
        try:
            if self.alive():
                self.process.send_signal(self.stop_signal)
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            problems.append("floor: a server did not stop within %d s of signal %d: killed" % (timeout, self.stop_signal))
        finally:
            self.kill_leftovers()
            self.log.close()
        return status

    def kill_leftovers(self):
        import signal
        for _ in range(50):
            left = processes_under(self.workdir)
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            if self.alive():
                self.process.kill()
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if self.alive():
                try:
                    self.process.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    pass
            if not left and not self.alive():
                return
            time.sleep(0.1)
        problems.append("floor: processes still working under %s after SIGKILL: %s" % (self.workdir, processes_under(self.workdir)))


def wait_until(ready, server, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError("%s exited at start (status %s)" % (what, server.process.returncode))
        if ready():
            return
        time.sleep(0.05)
    raise RuntimeError("%s not ready within %d s" % (what, timeout))


def tail(path, size=400):
    try:
        with open(path, "rb") as file:
            file.seek(0, 2)
            file.seek(max(file.tell() - size, 0))
            return file.read().decode(errors="replace").strip()
    except OSError:
        return ""


def nginx_benchmark(rounds):
    """nginx (NGINX_WORKERS workers, a small static file on a loopback port, master in the foreground)
    under wrk, in each mode: requests/s, medians of `rounds` runs."""
    nginx, wrk = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None), shutil.which("wrk")
    if not nginx or not wrk:
        raise Skip("needs nginx and wrk (Debian packages nginx, wrk): missing %s"
                   % " and ".join(name for name, path in (("nginx", nginx), ("wrk", wrk)) if not path))
    work = tempfile.mkdtemp(prefix="cw-bench-nginx-")
    try:
        os.chmod(work, 0o755)   # the workers run as nobody and read the file
        os.makedirs(os.path.join(work, "www"))
        with open(os.path.join(work, "www", "index.html"), "w") as file:
            file.write("<!doctype html><title>crashwatch bench</title><p>" + "hello, nginx under ptrace. " * 20 + "</p>\n")
        os.chmod(os.path.join(work, "www", "index.html"), 0o644)
        spool = os.path.join(work, "spool")
        os.makedirs(spool, mode=0o700)
        samples = {mode: [] for mode in FLOOR_MODES}
        tracer_cpu = {mode: [] for mode in FLOOR_MODES[1:]}
        for round_index in range(rounds):
            for mode in rotated(round_index):
                port = free_port()
                conf = os.path.join(work, "nginx.conf")
                with open(conf, "w") as file:
                    file.write("""daemon off;
master_process on;
worker_processes %d;
pid %s/nginx.pid;
error_log %s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%d;
        root %s/www;
    }
}
""" % (NGINX_WORKERS, work, work, port, work))
                import signal
                server = ServerProcess(mode, [nginx, "-p", work, "-e", os.path.join(work, "error.log"), "-c", conf],
                                       work, spool, os.path.join(work, "server.log"), signal.SIGQUIT,
                                       os.path.join(work, "floor-stops.txt"))
                try:
                    def listening():
                        import socket
                        try:
                            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                            return True
                        except OSError:
                            return False
                    wait_until(listening, server, "nginx (%s)" % mode)
                    wait_until(lambda: len(processes_under(work)) >= NGINX_WORKERS + 1 + (mode != "bare"), server,
                               "nginx's workers (%s)" % mode)
                    result = subprocess.run(load_generator([wrk] + WRK_ARGS + ["http://127.0.0.1:%d/index.html" % port]),
                                            capture_output=True, text=True, timeout=60)
                    import re
                    match = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
                    if result.returncode != 0 or not match:
                        raise RuntimeError("wrk failed (%d): %s %s" % (result.returncode, result.stdout[-300:], result.stderr[-300:]))
                    for bad in ("Non-2xx or 3xx responses", "Socket errors"):
                        if bad in result.stdout:
                            problems.append("floor: nginx (%s): wrk: %s" % (mode, [l for l in result.stdout.splitlines() if bad in l][0].strip()))
                    if not server.alive():
                        raise RuntimeError("nginx (%s) exited during wrk" % mode)
                    samples[mode].append(float(match.group(1)))
                    if mode != "bare":
                        tracer_cpu[mode].append(cpu_seconds(server.process.pid))
                except Exception as error:
                    raise RuntimeError("%s; server log: %s; error.log: %s" % (error, tail(os.path.join(work, "server.log")),
                                                                             tail(os.path.join(work, "error.log"))))
                finally:
                    server.stop()
        check_spool_empty(spool, "nginx")
        return {"": (samples, stop_counts(os.path.join(work, "floor-stops.txt")), tracer_cpu)}
    finally:
        for pid in processes_under(work):
            problems.append("floor: nginx: process %d left running" % pid)
        shutil.rmtree(work, ignore_errors=True)


def postgres_bin():
    """The newest PostgreSQL server's bin directory (Debian: /usr/lib/postgresql/N/bin)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not candidates:
        raise Skip("needs PostgreSQL (Debian package postgresql): no /usr/lib/postgresql/*/bin/postgres")
    directory = os.path.dirname(candidates[-1])
    for tool in ("initdb", "pgbench", "pg_isready"):
        if not os.access(os.path.join(directory, tool), os.X_OK):
            raise Skip("needs %s in %s" % (tool, directory))
    return directory


def postgres_user():
    """PostgreSQL refuses to run as root: the server runs as `postgres` (the Debian package's user)."""
    import pwd
    if os.getuid() != 0:
        return None   # already not root: run as ourselves
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Skip("running as root and there is no postgres user to run the server as")
    return "postgres"


def pgbench_benchmark(rounds):
    """PostgreSQL (postmaster in the foreground, backends followed) under pgbench: initialised once
    (`pgbench -i -s PGBENCH_SCALE`), then per mode and round TPC-B and select-only (-S) runs. tps
    (without the initial connection time), medians of `rounds`."""
    import pwd
    import re
    import signal
    bindir = postgres_bin()
    user = postgres_user()
    work = tempfile.mkdtemp(prefix="cw-bench-pg-")
    try:
        data, sock, spool = (os.path.join(work, name) for name in ("data", "sock", "spool"))
        for directory in (sock, spool):
            os.makedirs(directory, mode=0o700)
        if user:
            entry = pwd.getpwnam(user)
            for directory in (work, sock, spool):
                os.chown(directory, entry.pw_uid, entry.pw_gid)
            # floor_tracer and crashwatch must be reachable by that user.
            for path in (helper("floor_tracer"), CRASHWATCH):
                if subprocess.run(["runuser", "-u", user, "--", "test", "-x", path]).returncode != 0:
                    raise Skip("%s cannot execute %s" % (user, path))
        kwargs = {}
        if user:
            entry = pwd.getpwnam(user)
            kwargs = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": [],
                      "env": dict(os.environ, HOME=work, USER=user, LOGNAME=user)}
        result = subprocess.run([os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-locale",
                                 "-E", "UTF8", "--no-sync"], cwd=work, capture_output=True, text=True, timeout=120, **kwargs)
        if result.returncode != 0:
            raise RuntimeError("initdb failed: " + (result.stdout + result.stderr)[-400:])
        port = "5432"   # a Unix socket in our own directory: no clash with another server
        settings = dict(POSTGRES_SETTINGS, unix_socket_directories=sock, port=port)
        argv = [os.path.join(bindir, "postgres"), "-D", data] + [arg for key, value in settings.items() for arg in ("-c", "%s=%s" % (key, value))]
        client = ["-h", sock, "-p", port, "-U", "postgres"]
        log = os.path.join(work, "server.log")

        def start(mode):
            server = ServerProcess(mode, argv, data, spool, log, signal.SIGINT, os.path.join(work, "floor-stops.txt"), user=user)
            try:
                wait_until(lambda: subprocess.run([os.path.join(bindir, "pg_isready")] + client + ["-q"]).returncode == 0,
                           server, "postgres (%s)" % mode, timeout=60)
            except Exception as error:
                server.stop()
                raise RuntimeError("%s; log: %s" % (error, tail(log)))
            return server

        def pgbench(extra, what):
            result = subprocess.run(load_generator([os.path.join(bindir, "pgbench")] + client + extra + ["postgres"]),
                                    capture_output=True, text=True, timeout=300)
            if result.returncode != 0:
                raise RuntimeError("pgbench %s failed (%d): %s" % (what, result.returncode, (result.stdout + result.stderr)[-400:]))
            return result.stdout

        server = start("bare")
        try:
            pgbench(["-i", "-q", "-s", str(PGBENCH_SCALE)], "-i")
        finally:
            server.stop()
        samples = {kind: {mode: [] for mode in FLOOR_MODES} for kind in ("tpcb", "select")}
        tracer_cpu = {mode: [] for mode in FLOOR_MODES[1:]}
        for round_index in range(rounds):
            for mode in rotated(round_index):
                server = start(mode)
                try:
                    for kind, extra in (("tpcb", []), ("select", ["-S"])):
                        output = pgbench(["-v"] + PGBENCH_ARGS + extra, "%s (%s)" % (kind, mode))
                        match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", output)
                        if not match:
                            raise RuntimeError("pgbench %s (%s): no tps in %s" % (kind, mode, output[-300:]))
                        failed = re.search(r"number of failed transactions: (\d+)", output)
                        if failed and int(failed.group(1)):
                            problems.append("floor: pgbench %s (%s): %s failed transactions" % (kind, mode, failed.group(1)))
                        if not server.alive():
                            raise RuntimeError("postgres (%s) exited during pgbench; log: %s" % (mode, tail(log)))
                        samples[kind][mode].append(float(match.group(1)))
                    if mode != "bare":
                        tracer_cpu[mode].append(cpu_seconds(server.process.pid))
                finally:
                    server.stop()
        check_spool_empty(spool, "postgres")
        stops = stop_counts(os.path.join(work, "floor-stops.txt")) + " (the last server run: TPC-B and select-only)"
        return {kind: (samples[kind], stops, tracer_cpu) for kind in samples}
    finally:
        for pid in processes_under(work):
            problems.append("floor: postgres: process %d left running" % pid)
        shutil.rmtree(work, ignore_errors=True)


def server_rows(name, short, unit, samples, rounds, stops, tracer_cpu, cpu_what):
    bare, floor, cw = (statistics.median(samples[mode]) for mode in FLOOR_MODES)
    of_floor, of_bare = cw / floor, cw / bare
    ok = of_floor >= SERVER_FLOOR_SHARE and of_bare >= SERVER_BARE_SHARE
    rows = [("%s; medians of %d" % (name, rounds), "", ""),
            ("  bare / floor tracer / crashwatch (%s)" % unit, "%.0f / %.0f / %.0f" % (bare, floor, cw),
             "runs: " + "; ".join("%s %s" % (mode, " ".join("%.0f" % v for v in samples[mode])) for mode in FLOOR_MODES)),
            ("  crashwatch: of the floor tracer / of bare (floor: of bare)", "%.3f / %.3f" % (of_floor, of_bare),
             "floor %.3f of bare; target >= %.2f / >= %.2f %s" % (floor / bare, SERVER_FLOOR_SHARE, SERVER_BARE_SHARE, verdict(ok))),
            ("  per round, crashwatch / floor tracer (same round, adjacent in time)", "",
             " ".join("%.3f" % (c / f) for c, f in zip(samples["crashwatch"], samples["floor"]))),
            ("  one server run under the floor tracer", "", stops),
            ("  the tracer's own CPU per server run (%s): floor / crashwatch" % cpu_what,
             "%.2f / %.2f s" % tuple(statistics.median(tracer_cpu[mode]) for mode in FLOOR_MODES[1:]),
             "utime + stime of the tracer process, medians")]
    for mode in FLOOR_MODES:
        if len(samples[mode]) > 1 and spread(samples[mode]) > 0.05:
            problems.append("floor: %s: the %s runs spread %.0f%% around their median (%s %s): noisy"
                            % (name, mode, 100 * spread(samples[mode]), " ".join("%.0f" % v for v in samples[mode]), unit))
    check = ("floor: %s: crashwatch's throughput >= %.0f%% of the floor tracer's and >= %.0f%% of bare's"
             % (short, 100 * SERVER_FLOOR_SHARE, 100 * SERVER_BARE_SHARE), ok,
             "%.3f of floor, %.3f of bare" % (of_floor, of_bare))
    return rows, check


def idle_rss(crashing=None):
    """`crashwatch run -- sleep 30`: the supervisor's VmRSS (and VmHWM, RssAnon, RssFile) after 1 s, in KiB.
    With `crashing` (a fixture), the command first runs that fixture, which crashes, and then sleeps: the
    figures are read 1 s after its full report is in the spool (the supervisor, living on, has sent its
    journal entry and given back what the crash took)."""
    spool = tempfile.mkdtemp(prefix="cw-bench-idle-")
    command = ["sleep", "30"] if crashing is None else ["sh", "-c", '"$0"; exec sleep 30', fixture(crashing)]
    process = subprocess.Popen([CRASHWATCH, "run", "--spool", spool, "--"] + command,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if crashing is not None:
            deadline = time.monotonic() + 30
            while not any(name.endswith(".json") and '"processing": "complete"' in open(os.path.join(spool, name)).read()
                          for name in os.listdir(spool)):
                if time.monotonic() > deadline:
                    raise RuntimeError("%s: no complete report within 30 s" % crashing)
                time.sleep(0.05)
        time.sleep(1)
        values = {}
        for line in open("/proc/%d/status" % process.pid):
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                values[key] = int(line.split()[1])
        return values
    finally:
        import signal
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.wait()
        shutil.rmtree(spool, ignore_errors=True)


def exit_on_sigterm(signo, frame):
    """A SIGTERM to the bench raises SystemExit, so the `finally` blocks that stop nginx and PostgreSQL
    still run; a second one is ignored, so it cannot cut that cleanup short."""
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(128 + signo)


def floor_benchmarks():
    """The floor section: (rows, checks). Each workload that fails or cannot run becomes a row saying
    so (and a failed check when it failed), never the end of the whole bench."""
    import signal
    rows, checks = [], []
    previous = signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        rows.append(("floor: bare / bench/floor_tracer.c / crashwatch run, interleaved in this run", "",
                     "load generators on CPU %d only" % (os.cpu_count() - 1) if PIN_LOAD else "load generators not pinned"))
        try:
            info = os.stat(CRASHWATCH)
            version = subprocess.run([CRASHWATCH, "--version"], capture_output=True, text=True).stdout.strip()
            rows.append(("  crashwatch binary", "%.1f MB" % (info.st_size / 1e6), "%s, %s, built %s" % (
                CRASHWATCH, version, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.st_mtime)))))
        except OSError as error:
            rows.append(("  crashwatch binary", "missing", str(error)))
        for name, description, runs, argv, missing in timed_workloads():
            if missing:
                rows.append(("%s: %s" % (name, description), "skipped", missing))
                continue
            spool = tempfile.mkdtemp(prefix="cw-bench-floor-")
            try:
                samples, stops = run_timed_workload(argv, spool, runs)
                check_spool_empty(spool, name)
                more_rows, check = timed_rows(name, description, samples, runs, stops)
                rows.extend(more_rows)
                checks.append(check)
                rows.append(polling_idle_row(argv, spool, runs))
            except Exception as error:
                rows.append(("%s: %s" % (name, description), "failed", str(error)[:300]))
                checks.append(("floor: %s" % name, False, "failed: %s" % str(error)[:200]))
            finally:
                shutil.rmtree(spool, ignore_errors=True)

        for name, unit, rounds, run in (("nginx (%d workers, a small static file) under wrk %s" % (NGINX_WORKERS, " ".join(WRK_ARGS)),
                                 "requests/s", NGINX_ROUNDS, lambda: nginx_benchmark(NGINX_ROUNDS)),
                                ("PostgreSQL under pgbench %s (scale %d, synchronous_commit off)"
                                 % (" ".join(PGBENCH_ARGS), PGBENCH_SCALE), "tps", PGBENCH_ROUNDS, lambda: pgbench_benchmark(PGBENCH_ROUNDS))):
            try:
                results = run()
            except Skip as reason:
                rows.append((name, "skipped", str(reason)))
                continue
            except Exception as error:
                rows.append((name, "failed", str(error)[:300]))
                checks.append(("floor: %s" % name.split(" (")[0], False, "failed: %s" % str(error)[:200]))
                continue
            for kind, (samples, stops, tracer_cpu) in results.items():
                label = {"": name, "tpcb": name.replace("under pgbench", "TPC-B under pgbench"),
                         "select": name.replace("under pgbench", "select-only under pgbench -S")}[kind]
                cpu_what = "wrk's run" if not kind else "TPC-B and select-only runs"
                short = {"": "nginx under wrk", "tpcb": "PostgreSQL TPC-B", "select": "PostgreSQL select-only"}[kind]
                more_rows, check = server_rows(label, short, unit, samples, rounds, stops, tracer_cpu, cpu_what)
                rows.extend(more_rows)
                checks.append(check)

        try:
            idle = idle_rss()
            base, _ = peak_rss_kib([CRASHWATCH, "run", "--", "true"])
            signals, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("signal_storm"), "200000"])
            threads, _ = peak_rss_kib([CRASHWATCH, "run", "--", fixture("thread_churn"), "10000"])
            flat_ok = max(signals, threads) <= base * 1.1 + 512
            rows.append(("supervisor idle (crashwatch run -- sleep, after 1 s): VmRSS / VmHWM", "%d / %d KiB" % (idle["VmRSS"], idle["VmHWM"]),
                         "RssAnon %d, RssFile %d KiB; target VmRSS <= %d KiB %s" % (idle.get("RssAnon", 0), idle.get("RssFile", 0),
                                                                                   IDLE_RSS_TARGET_KIB, verdict(idle["VmRSS"] <= IDLE_RSS_TARGET_KIB))))
            rows.append(("supervisor peak RSS: run -- true / 200k signals / 10k threads", "%d / %d / %d KiB" % (base, signals, threads),
                         "flat (<= 1.1x + 512 KiB of run -- true) %s" % verdict(flat_ok)))
            after = [idle_rss(crashing=name) for name in ("threads64", "threads1000")]
            back_ok = all(values.get("RssAnon", 0) <= idle.get("RssAnon", 0) + 1024 for values in after)
            rows.append(("supervisor after a crash, living on (a child crashed): threads64 / threads1000, VmRSS",
                         "%d / %d KiB" % tuple(values["VmRSS"] for values in after),
                         "RssAnon %d / %d KiB (idle %d), VmHWM %d / %d KiB; anonymous memory back within 1 MiB of idle %s"
                         % (after[0].get("RssAnon", 0), after[1].get("RssAnon", 0), idle.get("RssAnon", 0),
                            after[0]["VmHWM"], after[1]["VmHWM"], verdict(back_ok))))
            checks.append(("floor: after a crash the supervisor gives its memory back (RssAnon within 1 MiB of idle)", back_ok,
                           "%d / %d KiB vs idle %d KiB" % (after[0].get("RssAnon", 0), after[1].get("RssAnon", 0), idle.get("RssAnon", 0))))
            checks.append(("floor: idle RSS <= %d KiB" % IDLE_RSS_TARGET_KIB, idle["VmRSS"] <= IDLE_RSS_TARGET_KIB, "%d KiB" % idle["VmRSS"]))
            checks.append(("floor: peak RSS flat over 200k signals and 10k threads", flat_ok,
                           "%d / %d KiB vs %d KiB for run -- true" % (signals, threads, base)))
        except Exception as error:
            rows.append(("supervisor idle / peak RSS", "failed", str(error)[:300]))
            checks.append(("floor: RSS", False, "failed: %s" % str(error)[:200]))
    finally:
        signal.signal(signal.SIGTERM, previous)
    return rows, checks


def cpu_jiffies():
    """(steal, total) clock ticks of all CPUs so far (/proc/stat): time the hypervisor gave this VM's
    CPUs to others, and all of it."""
    fields = [int(value) for value in open("/proc/stat").readline().split()[1:9]]
    return fields[7], sum(fields)


STARTED_JIFFIES = cpu_jiffies()


def print_table(rows, checks):
    width = max(len(r[0]) for r in rows)
    steal, total = (now - then for now, then in zip(cpu_jiffies(), STARTED_JIFFIES))
    print("crashwatch benchmarks: %s, %d cores, %s; host steal during the run %.1f%% of CPU time"
          % (os.uname().machine, os.cpu_count(), os.uname().release, 100.0 * steal / total if total else 0.0))
    for name, value, note in rows:
        print("  %-*s  %17s  %s" % (width, name, value, note))
    print("checks:")
    for name, ok, detail in checks:
        print("  %s  %s (%s)" % (verdict(ok), name, detail))
    for problem in problems:
        print("  note: " + problem)


def verdict(ok):
    return "PASS" if ok else "FAIL"


def capture_rows(rows, checks):
    """Crashes of threads64 (functions, full), eu-stack and gdb on a live threads64, its snapshots, and the
    hold with and without annotations."""
    names = crash_runs(7, "functions")
    full = crash_runs(7, "full")
    process = live_process()
    try:
        eu = timed(["eu-stack", "-p", str(process.pid)], 7)
        eu_full = timed(["eu-stack", "-s", "-i", "-p", str(process.pid)], 7)
        gdb = timed(["gdb", "-batch", "-p", str(process.pid), "-ex", "thread apply all bt"], 3) if shutil.which("gdb") else None
        snap = snapshot_runs(process.pid, 7)
    finally:
        process.kill()
        process.wait()
    hold_ratio = full["hold"] / eu
    durable_ratio = full["handled"] / eu_full
    checks.append(("1. hold <= 1/20 of eu-stack -p", hold_ratio <= HOLD_TARGET,
                   "%.1f ms / %.1f ms = %.3f" % (full["hold"], eu, hold_ratio)))
    checks.append(("2. crash -> full report durable <= 1/3 of eu-stack -s -i -p", durable_ratio <= DURABLE_TARGET,
                   "%.1f ms / %.1f ms = %.2f" % (full["handled"], eu_full, durable_ratio)))
    rows.append(("threads64: %d threads, %d frames (medians of 7 crashes / 7 eu-stack runs)" % (full["threads"], full["frames"]), "", ""))
    rows.append(("  hold (holdDurationMs: crash stop seen, stop-all, raw capture, minimal report in the spool, release)", "%.1f ms" % full["hold"],
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

    annotation_rows(rows, checks)
    snap_hold_ratio = snap["hold"] / eu
    snap_durable_ratio = snap["durable"] / eu_full
    checks.append(("1s. snapshot hold <= 1/10 of eu-stack -p", snap_hold_ratio <= SNAPSHOT_HOLD_TARGET,
                   "%.1f ms / %.1f ms = %.3f" % (snap["hold"], eu, snap_hold_ratio)))
    checks.append(("2s. snapshot -> full report durable <= 2/3 of eu-stack -s -i -p", snap_durable_ratio <= SNAPSHOT_DURABLE_TARGET,
                   "%.1f ms / %.1f ms = %.2f" % (snap["durable"], eu_full, snap_durable_ratio)))
    rows.append(("crashwatch snapshot of the live threads64 (medians of 7)", "", ""))
    rows.append(("  hold (holdDurationMs: seize, interrupt, raw capture, detach)", "%.1f ms" % snap["hold"],
                 "%.3f of eu-stack -p (target <= %.2f) %s" % (snap_hold_ratio, SNAPSHOT_HOLD_TARGET, verdict(snap_hold_ratio <= SNAPSHOT_HOLD_TARGET))))
    rows.append(("  command start -> full report durable in the spool, exit", "%.1f ms" % snap["durable"],
                 "%.2f of eu-stack -s -i -p (target <= %.2f) %s" % (snap_durable_ratio, SNAPSHOT_DURABLE_TARGET, verdict(snap_durable_ratio <= SNAPSHOT_DURABLE_TARGET))))


def main():
    build_helpers()
    rows = []
    checks = []

    capture_rows(rows, checks)

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

    spool_rows = spool_benchmarks() + groups_benchmarks()

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

    floor_rows, floor_checks = floor_benchmarks()
    rows.extend(floor_rows)
    checks.extend(floor_checks)

    rows.extend(spool_rows)
    rows.extend(ship_benchmarks())
    print_table(rows, checks)
    return 0


def floor_main():
    """The floor section alone (`python3 bench/bench.py floor`)."""
    build_helpers()
    rows, checks = floor_benchmarks()
    print_table(rows, checks)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["floor"]:
        sys.exit(floor_main())
    if sys.argv[1:] == ["groups"]:
        sys.exit(groups_main())
    if sys.argv[1:] == ["capture"]:
        sys.exit(section_main(capture_rows))
    if sys.argv[1:] == ["annotations"]:
        sys.exit(section_main(annotation_rows))
    if sys.argv[1:]:
        sys.exit("usage: bench.py [floor|groups|capture|annotations]")
    sys.exit(main())
