#!/usr/bin/env python3
"""`crashwatch ship --sentry DSN` against a real Bugsink, sentry-relay's normalizer and a scripted Sentry
receiver: the Sentry part of Tests/shipping/CONTRACT.md.

    python3 Tests/shipping/test_sentry.py             # every case (make test-ship)
    python3 Tests/shipping/test_sentry.py faults_     # the cases whose names contain one of the words
    python3 Tests/shipping/test_sentry.py --list      # the case names

Needs what test_ship.py needs, plus Bugsink and sentry-relay in the virtualenv $CRASHWATCH_SENTRY_VENV
(default .build/sentry-venv; `make sentrydeps` installs the pinned versions there).

- Bugsink (PyPI `bugsink`) is configured from its local template (SQLite, events digested in the server,
  event validation strict), migrated, given a team and a project, and started on 127.0.0.1; real crash
  reports of the fixtures are shipped to it, and what it stored is read through its Django models: the
  issues (one per bug: two runs of one crash are one issue with two events, another crash site another
  issue), their titles, and each event's frames, in-app flags, release, environment and tags (an annotated
  crash's annotations among them, its breadcrumbs in order). It is stopped by pid at the end.
- sentry_receiver.py (a real HTTP server, otlp_receiver.py's with the envelope protocol) takes the field-by-
  field mapping checks and the fault matrix of test_ship.py: down, 5xx, 429 with Retry-After or
  X-Sentry-Rate-Limits, rate limits on a 200, slow, reset, 400 and 413 with a reason, 401/403; each report
  delivered, kept or quarantined as specified, none lost, none acknowledged twice.
- Every event a receiver got is normalized by sentry-relay's StoreNormalizer (the normalizer Sentry's
  ingestion runs) in the last case: no `errors`, and the tags, extra.annotations and breadcrumbs as sent.

Reuses test_ship.py's helpers (spools, outcome lines, the accounting of every report, followers).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_ship as ts  # noqa: E402
from common import Fail, Skip, check  # noqa: E402
from test_ship import check_equal, crashwatch, make_spool, parse_outcomes, spool_reports, wait_until  # noqa: E402

VENV = os.path.abspath(os.environ.get("CRASHWATCH_SENTRY_VENV", os.path.join(ts.common.REPO, ".build/sentry-venv")))
KEY = "0123456789abcdef0123456789abcdef"
PROJECT = "42"
EVENTS = []  # (where, event) of every event a scripted receiver took, for case_relay_normalizer
BUGSINK = {}


# --- the scripted receiver --------------------------------------------------------------------------------

class SentryReceiver(ts.Receiver):
    """sentry_receiver.py with this suite's key and project; `events()` are the events it took."""

    script = "sentry_receiver.py"

    def __init__(self, *args, fault=None, port=0, key=KEY):
        super().__init__("--key", KEY, "--project", PROJECT, *args, fault=fault, port=port)
        self.dsn = f"http://{key}@127.0.0.1:{self.port}/{PROJECT}"

    def events(self):
        """(request entry, event) of every event item received, in order."""
        found = []
        for entry in self.requests():
            for item in (entry.get("decoded") or {}).get("items", []):
                if "event" in item:
                    found.append((entry, item["event"]))
        return found

    def acked_ids(self):
        """Report ids of the events in requests the receiver accepted (a 200 sent whole)."""
        return {event["extra"]["crashwatch_report_id"] for entry, event in self.events()
                if entry.get("status") == 200 and entry.get("outcome") == "answered"}

    def check_clean(self):
        for entry in self.requests():
            check("error" not in entry, lambda: f"the receiver refused request {entry['seq']}: {entry['error']}")
            check_equal(entry["headers"].get("content-type"), "application/x-sentry-envelope", f"request {entry['seq']}'s Content-Type")
        EVENTS.extend((f"receiver request {entry['seq']}", event) for entry, event in self.events())


def ship(spool, dsn, *args, env=None, timeout=ts.TIMEOUT):
    """`crashwatch ship --once --spool SPOOL --sentry DSN ARGS...`."""
    return crashwatch("ship", "--spool", spool, "--sentry", dsn, *args, env=env, timeout=timeout)


def follower(spool, dsn, *args):
    return ts.Follower(spool, None, "--sentry", dsn, *args, name="ship-sentry")


# --- what the report says the event must say --------------------------------------------------------------

def fault_frames(data):
    """The stack the event's exception carries: the original fault's, else the crashed thread's, else (a hang,
    a SIGKILL death) the main thread's — innermost first, as the report has it."""
    original = (data["signal"].get("originalFault") or {}).get("frames") or []
    if original:
        return original
    threads = data["threads"]
    crashed = [t for t in threads if t["crashed"]]
    if crashed:
        return crashed[0]["frames"]
    main = [t for t in threads if t["tid"] == data["process"]["pid"]]
    return main[0]["frames"] if main else []


def image_of(data, frame):
    index = frame.get("imageIndex")
    return data["images"][index] if index is not None and 0 <= index < len(data["images"]) else None


def frame_function(frame):
    return frame.get("function") or frame.get("symbol")


def debug_id(build_id):
    """Sentry's debug id of an ELF build-id (PITFALLS.md): the first 16 bytes as a little-endian GUID."""
    raw = bytes.fromhex(build_id)[:16].ljust(16, b"\0")
    swapped = raw[3::-1] + raw[5:3:-1] + raw[7:5:-1] + raw[8:]
    text = swapped.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def top_in_app_function(data):
    """The function a Sentry server titles a native crash by: the innermost in-app frame with a function."""
    for frame in fault_frames(data):
        image = image_of(data, frame)
        if image and image["inApp"] and frame_function(frame):
            return frame_function(frame)
    return None


OWN_TAGS = {"kind", "signal", "signal_code", "executable", "systemd_unit", "app", "fingerprint"}
RESERVED_TAGS = {"release", "dist", "environment", "user", "filename", "function", "level", "logger", "server_name",
                 "transaction", "event.type", "platform"}
LEVELS = {"debug", "info", "warning", "error", "fatal"}


def fits_tag(key, value):
    """Sentry's rules for a tag (README "Shipping to Sentry…"): key ≤ 32 of [A-Za-z0-9_.:-], not crashwatch's own
    nor one Sentry keeps; value 1 to 200 characters, one line, no control character, no space at either end."""
    return (re.fullmatch(r"[A-Za-z0-9_.:-]{1,32}", key) is not None and key not in OWN_TAGS | RESERVED_TAGS
            and not key.startswith("sentry:") and 1 <= len(value) <= 200 and value == value.strip(" ")
            and not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029" for c in value))


def check_app_context(data, event, what):
    """The report's annotations as tags (those that fit) and extra.annotations (the others), its breadcrumbs as
    Sentry breadcrumbs, oldest first (the newest 256)."""
    annotations = sorted((data.get("annotations") or {}).items())[:256]
    tags = {k: v for k, v in event["tags"].items() if k not in OWN_TAGS}
    check_equal(tags, {k: v for k, v in annotations if fits_tag(k, v)}, f"{what}: the annotations as tags")
    check_equal(event["extra"].get("annotations"), {k: v for k, v in annotations if not fits_tag(k, v)} or None,
                f"{what}: extra.annotations")
    expected = [{**({"timestamp": b["time"]} if b["time"] else {}), "type": "default", "category": "crashwatch",
                 "level": b["level"] if b["level"] in LEVELS else "info", "message": b["message"],
                 **({} if b["level"] in LEVELS else {"data": {"level": b["level"]}})}
                for b in (data.get("breadcrumbs") or [])[-256:]]
    check_equal((event.get("breadcrumbs") or {}).get("values", []), expected, f"{what}: breadcrumbs")


def check_event(report, event, environment=None):
    """The event a report maps to (README "Shipping to Sentry, GlitchTip or Bugsink"), field by field."""
    data = report.data
    what = f"the event of {report.name}"
    check_equal(event["event_id"], data["id"].replace("-", ""), f"{what}: event_id")
    check_equal(event["timestamp"], data["captureTime"], f"{what}: timestamp")
    check_equal(event["platform"], "native", f"{what}: platform")
    check_equal(event["level"], {"crash": "fatal", "snapshot": "info"}.get(data["kind"], "error"), f"{what}: level")
    check_equal(event["server_name"], data["host"]["hostname"], f"{what}: server_name")
    check_equal(event.get("environment"), environment, f"{what}: environment")
    app = data["process"].get("app") or {}
    if app.get("version"):
        check_equal(event.get("release"), f"{app['name']}@{app['version']}", f"{what}: release")
    fingerprint = data.get("fingerprint")
    if fingerprint:
        check_equal(event.get("fingerprint"), [f"{fingerprint['algorithm']}:{fingerprint['value']}"], f"{what}: fingerprint")
    tags = event["tags"]
    check_equal(tags.get("executable"), os.path.basename(data["process"]["executable"]), f"{what}: tags.executable")
    check_equal(tags.get("kind"), data["kind"], f"{what}: tags.kind")
    if data["kind"] not in ("hang", "snapshot"):
        check_equal(tags.get("signal"), data["signal"]["name"], f"{what}: tags.signal")
    else:
        check("signal" not in tags, f"{what}: a {data['kind']} has no signal, yet tags.signal is {tags.get('signal')!r}")
    exception = event["exception"]["values"]
    check_equal(len(exception), 1, f"{what}: exceptions")
    exception = exception[0]
    mechanism = exception["mechanism"]
    if data["kind"] == "crash":
        signal = (data["signal"].get("originalFault") if (data["signal"].get("originalFault") or {}).get("frames") else None) \
            or data["signal"]
        check_equal(exception["type"], signal["name"], f"{what}: exception type")
        check_equal((mechanism["type"], mechanism["handled"]), ("signalhandler", False), f"{what}: mechanism")
        check_equal(mechanism["meta"]["signal"], {"number": signal["number"], "code": signal["code"], "name": signal["name"],
                                                  "code_name": signal["codeName"]}, f"{what}: mechanism.meta.signal")
    elif data["kind"] == "hang":
        check_equal((exception["type"], mechanism["type"], mechanism["handled"]), ("Hang", "watchdog", True), f"{what}: hang")
    elif data["kind"] == "snapshot":
        check_equal((exception["type"], mechanism["type"], mechanism["handled"]), ("Snapshot", "crashwatch.snapshot", True),
                    f"{what}: snapshot")
    frames = exception["stacktrace"]["frames"]
    expected = list(reversed(fault_frames(data)))
    check_equal([f["instruction_addr"] for f in frames], [f["address"] for f in expected], f"{what}: frame addresses, oldest first")
    check_equal([f.get("function") for f in frames], [frame_function(f) for f in expected], f"{what}: frame functions")
    check_equal([f["in_app"] for f in frames], [bool(image_of(data, f) and image_of(data, f)["inApp"]) for f in expected],
                f"{what}: in_app flags")
    check_equal([f.get("lineno") for f in frames], [f.get("line") if f.get("file") and f.get("line") else None for f in expected],
                f"{what}: line numbers")
    check_equal([t["id"] for t in event["threads"]["values"]], [t["tid"] for t in data["threads"]], f"{what}: thread ids")
    check_equal([t["crashed"] for t in event["threads"]["values"]], [t["crashed"] for t in data["threads"]], f"{what}: crashed flags")
    images = {i["code_file"]: i for i in event["debug_meta"]["images"]}
    for image in data["images"]:
        if not image.get("buildID"):
            continue
        found = images.get(image["path"])
        check(found is not None, f"{what}: debug_meta.images lacks {image['path']}")
        check_equal((found["type"], found["code_id"], found["debug_id"], found["image_addr"], found["image_size"]),
                    ("elf", image["buildID"], debug_id(image["buildID"]), image["loadAddress"], image["size"]),
                    f"{what}: debug image {image['name']}")
    main = [i for i in data["images"] if i.get("isMainExecutable")]
    if main and main[0].get("buildID") and not main[0].get("deleted"):
        check_equal(main[0]["buildID"], ts.readelf_build_id(main[0]["path"]), f"{what}: the main executable's build-id (readelf -n)")
    check_equal(event["contexts"]["os"]["version"], data["host"]["kernelRelease"], f"{what}: contexts.os.version")
    check_equal(event["extra"]["crashwatch_report_id"], data["id"], f"{what}: extra.crashwatch_report_id")
    check_app_context(data, event, what)


# --- Bugsink ------------------------------------------------------------------------------------------------

class Bugsink:
    """A Bugsink server from its local template (SQLite) on 127.0.0.1, with one team and one project."""

    def __init__(self):
        self.directory = ts.new_dir("bugsink-")
        self.port = ts.free_port()
        binary = os.path.join(VENV, "bin")
        self.manage = os.path.join(binary, "bugsink-manage")
        conf = os.path.join(self.directory, "bugsink_conf.py")
        done = ts.common.run([os.path.join(binary, "bugsink-create-conf"), "--template=local", f"--port={self.port}",
                              "--host=127.0.0.1", "-o", conf], 60, "bugsink-create-conf", cwd=self.directory)
        check(done.returncode == 0, f"bugsink-create-conf: {done.stderr}")
        with open(conf, "a") as handle:
            handle.write(f'\nDATABASES["default"]["NAME"] = {os.path.join(self.directory, "db.sqlite3")!r}\n'
                         f'DATABASES["snappea"]["NAME"] = {os.path.join(self.directory, "snappea.sqlite3")!r}\n'
                         'BUGSINK["VALIDATE_ON_DIGEST"] = "strict"  # an event off Sentry\'s schema is not stored\n')
        self.env = dict(ts.clean_env(DJANGO_SETTINGS_MODULE="bugsink_conf", PYTHONPATH=self.directory))
        done = ts.common.run([self.manage, "migrate", "-v0"], 180, "bugsink-manage migrate", env=self.env, cwd=self.directory)
        check(done.returncode == 0, f"bugsink-manage migrate: {ts.common.tail(done.stderr)}")
        created = self.shell("from teams.models import Team\nfrom projects.models import Project\n"
                             "team = Team.objects.create(name='crashwatch')\n"
                             "print(json.dumps({'dsn': Project.objects.create(name='fixtures', team=team).dsn}))")
        self.dsn = created["dsn"].replace("localhost", "127.0.0.1")
        self.log_path = os.path.join(self.directory, "server.log")
        with open(self.log_path, "w") as log:
            # Not among the processes each case ends: every case may use it; cleanup() stops it by pid.
            self.process = subprocess.Popen([self.manage, "runserver", f"127.0.0.1:{self.port}", "--noreload"],
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, cwd=self.directory)

        def listening():
            check(self.process.poll() is None, lambda: f"Bugsink exited {self.process.returncode}: {self.log()}")
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", self.port)) == 0
        wait_until(listening, "Bugsink listens", 60, interval=0.2)

    def log(self):
        with open(self.log_path, errors="replace") as handle:
            return handle.read()

    def shell(self, code):
        """Runs Python in Bugsink's Django shell; the last line it prints, as JSON."""
        done = ts.common.run([self.manage, "shell", "-c", "import json\n" + code], 60, "bugsink-manage shell",
                             env=self.env, cwd=self.directory)
        check(done.returncode == 0, lambda: f"bugsink-manage shell: {ts.common.tail(done.stderr)}")
        lines = [line for line in done.stdout.splitlines() if line.startswith("{") or line.startswith("[")]
        check(lines, f"bugsink-manage shell printed no JSON: {done.stdout!r}")
        return json.loads(lines[-1])

    def stored(self):
        """Every issue with its title, counts and events (event_id, release, environment, tags, the event data)."""
        return self.shell(
            "from issues.models import Issue\nfrom events.models import Event\n"
            "issues = []\n"
            "for issue in Issue.objects.filter(is_deleted=False).order_by('digest_order'):\n"
            "    events = []\n"
            "    for event in Event.objects.filter(issue=issue).order_by('digest_order'):\n"
            "        events.append({'event_id': event.event_id.hex, 'release': event.release,\n"
            "                       'environment': event.environment, 'level': event.level,\n"
            "                       'tags': {t.value.key.key: t.value.value for t in event.tags.all()},\n"
            "                       'data': event.get_parsed_data()})\n"
            "    issues.append({'title': issue.title(), 'count': issue.digested_event_count, 'events': events})\n"
            "print(json.dumps(issues))")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# --- reports ------------------------------------------------------------------------------------------------

def setup():
    for tool in ("bugsink-manage", "bugsink-create-conf", "python"):
        check(os.access(os.path.join(VENV, "bin", tool), os.X_OK),
              f"{VENV}/bin/{tool} is missing: `make sentrydeps` installs Bugsink and sentry-relay there")
    ts.REPORTS["null_deref"] = ts.run_fixture("null_deref", "--app-name", "demo", "--app-version", "1.2.3")
    ts.REPORTS["null_deref_again"] = ts.run_fixture("null_deref", "--app-name", "demo", "--app-version", "1.2.3")
    ts.REPORTS["abort"] = ts.run_fixture("abort")
    ts.REPORTS["sigfpe"] = ts.run_fixture("sigfpe", "--app-name", "calc")
    ts.REPORTS["threads64"] = ts.run_fixture("threads64")
    ts.REPORTS["abnormal"] = ts.make_abnormal_exit()
    ts.REPORTS["hang"], ts.REPORTS["hang_crash"] = ts.make_hang_and_crash()
    ts.REPORTS["snapshot"] = ts.make_snapshot()
    BUGSINK["server"] = Bugsink()


def R(name):
    return ts.REPORTS[name]


# --- cases: Bugsink -----------------------------------------------------------------------------------------

def case_bugsink_issues():
    """Two runs of null_deref (other pids, other addresses: the same bug) are one Bugsink issue with two events;
    abort and sigfpe are an issue each. Titles, frames, in-app flags, release, environment and tags are the
    reports'; Bugsink validated every event against Sentry's schema (strict)."""
    bugsink = BUGSINK["server"]
    same = [R("null_deref"), R("null_deref_again")]
    check_equal(same[0].data["fingerprint"]["value"], same[1].data["fingerprint"]["value"],
                "the fingerprints of two runs of null_deref (the report's, not the shipper's)")
    reports = same + [R("abort"), R("sigfpe")]
    spool = make_spool(reports)
    check_equal(ship(spool, bugsink.dsn, "--check").returncode, 0, "ship --check against Bugsink's DSN")
    result = ship(spool, bugsink.dsn, "--sentry-environment", "test")
    check(result.returncode == 0, lambda: result.describe())
    check_equal(sorted(s[0] for s in parse_outcomes(result.stdout)["shipped"]), sorted(r.id for r in reports), "shipped lines")
    check(not re.search(r"ValidationError|Traceback", bugsink.log()),
          lambda: f"Bugsink refused an event while digesting it:\n{bugsink.log()[-4000:]}")
    issues = bugsink.stored()
    by_event = {event["event_id"]: (issue, event) for issue in issues for event in issue["events"]}
    for report in reports:
        check(report.id.replace("-", "") in by_event, lambda: f"Bugsink did not store {report.name}; issues: "
                                                              f"{[(i['title'], i['count']) for i in issues]}\n{bugsink.log()[-3000:]}")
    check_equal(len(issues), 3, f"issues ({[(i['title'], i['count']) for i in issues]})")
    issue = by_event[same[0].id.replace("-", "")][0]
    check_equal((issue["count"], sorted(e["event_id"] for e in issue["events"])),
                (2, sorted(r.id.replace("-", "") for r in same)), "the null_deref issue's events")
    for report in reports:
        issue, event = by_event[report.id.replace("-", "")]
        what = f"Bugsink's issue of {report.name}"
        check_equal(issue["title"], top_in_app_function(report.data), f"{what}: title (the top in-app function)")
        check_event(report, event["data"], environment="test")
        check_equal(event["environment"], "test", f"{what}: environment")
        check_equal(event["level"], "fatal", f"{what}: level")
        app = report.data["process"].get("app") or {}
        check_equal(event["release"], f"{app['name']}@{app['version']}" if app.get("version") else "", f"{what}: release")
        for key, value in (("executable", os.path.basename(report.data["process"]["executable"])),
                           ("signal", report.data["signal"]["name"]), ("fingerprint", report.data["fingerprint"]["value"])):
            check_equal(event["tags"].get(key), value, f"{what}: tag {key}")
    check_equal(spool_reports(spool), [], "the spool after shipping to Bugsink")
    ts.NOTES.append("Bugsink issues: " + ", ".join(f"{i['title']!r} ×{i['count']}" for i in issues))


def case_bugsink_issue_page():
    """What a person sees: Bugsink's page of null_deref's issue names the crash site, the signal and the frames
    of the report; headless Chromium (when installed) takes a screenshot of it, kept out of the repository
    ($CRASHWATCH_SENTRY_SCREENSHOT, default .build/bugsink-issue.png)."""
    bugsink = BUGSINK["server"]
    report = R("null_deref")
    if not bugsink.stored():
        case_bugsink_issues()
    html = os.path.join(bugsink.directory, "issue.html")
    # Bugsink wants a logged-in user: the page is rendered by Django's test client inside Bugsink, with a
    # <base> so the stylesheets come from the running server.
    page = bugsink.shell(
        "from django.test import Client\nfrom django.contrib.auth import get_user_model\n"
        "from events.models import Event\n"
        "users = get_user_model().objects\n"
        "user = users.filter(username='admin').first() or users.create_superuser('admin', 'admin@example.org', 'admin')\n"
        f"client = Client(HTTP_HOST='127.0.0.1:{bugsink.port}')\nclient.force_login(user)\n"
        f"event = Event.objects.get(event_id={report.id!r})\n"
        "response = client.get(f'/issues/issue/{event.issue_id}/event/{event.id}/')\n"
        "text = response.content.decode()\n"
        f"text = text.replace('<head>', '<head><base href=\"http://127.0.0.1:{bugsink.port}/\">', 1)\n"
        f"open({html!r}, 'w').write(text)\n"
        "print(json.dumps({'status': response.status_code}))")
    check_equal(page["status"], 200, "the issue page's status")
    with open(html) as handle:
        text = handle.read()
    for word in [top_in_app_function(report.data), "SIGSEGV", "raise SIGSEGV", "demo@1.2.3"] + \
            [frame_function(f) for f in fault_frames(report.data) if frame_function(f)][:4]:
        check(word in text, f"Bugsink's issue page does not show {word!r}")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise Skip("no chromium for the screenshot (Debian package chromium); the page itself was checked")
    png = os.path.abspath(os.environ.get("CRASHWATCH_SENTRY_SCREENSHOT", os.path.join(ts.common.REPO, ".build/bugsink-issue.png")))
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--screenshot={png}",
                           "--window-size=1280,1100", "file://" + html], capture_output=True, text=True, timeout=120)
    check(done.returncode == 0 and os.path.exists(png), f"chromium --screenshot: {ts.common.tail(done.stderr)}")
    with open(png, "rb") as handle:
        check(handle.read(8) == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")
    ts.NOTES.append(f"screenshot of Bugsink's issue page: {png}")


# --- cases: the scripted receiver ---------------------------------------------------------------------------

def case_bugsink_same_bug_variants():
    """The same bug reached another way is the same Bugsink issue: fingerprint_site's site a with another input on
    another thread, and rebuilt at -O2 with another build-id (same file name, another directory), joins site a's
    first crash; site b, the same program, is another issue."""
    bugsink = BUGSINK["server"]
    # Where the processing worker may read it, as the fixtures' own directory: a root crash is processed as the
    # dedicated worker user, who reads no file root keeps private (README "Security model").
    rebuilt_dir = tempfile.mkdtemp(prefix="cw-rebuilt-")
    os.chmod(rebuilt_dir, 0o755)
    try:
        _same_bug_variants(bugsink, rebuilt_dir)
    finally:
        shutil.rmtree(rebuilt_dir, ignore_errors=True)


def _same_bug_variants(bugsink, rebuilt_dir):
    rebuilt = os.path.join(rebuilt_dir, "fingerprint_site")
    source = os.path.join(ts.common.REPO, "Fixtures", "fingerprint_site.c")
    build = subprocess.run(["gcc", "-O2", "-g", "-pthread", "-Wl,--build-id=0x5eed" + "0" * 36, "-o", rebuilt, source],
                           capture_output=True, text=True)
    check(build.returncode == 0, lambda: f"rebuilding fingerprint_site: {build.stderr}")

    def crash(program, *args):
        spool = ts.new_dir("src-site-")
        # A generous deadline: a loaded machine must not leave a report unsymbolized (its frames unnamed).
        result = ts.crashwatch("run", "--spool", spool, "--capture-timeout", "60", "--", program, *args, timeout=120)
        found = [os.path.join(spool, n) for n in spool_reports(spool)]
        check(len(found) == 1, lambda: f"{program} {args}: {len(found)} reports; {result.describe()}")
        return ts.Report(found[0])

    site_a = [crash(ts.fixture("fingerprint_site"), "a", "main", "1"),
              crash(ts.fixture("fingerprint_site"), "a", "thread", "7"),
              crash(rebuilt, "a", "main", "3")]
    site_b = crash(ts.fixture("fingerprint_site"), "b", "main", "1")
    build_ids = {next(i["buildID"] for i in r.data["images"] if i["isMainExecutable"]) for r in (site_a[0], site_a[2])}
    check_equal(len(build_ids), 2, "the rebuilt program's build-id differs")
    check_equal([r.data["diagnostics"]["processing"] for r in site_a + [site_b]], ["complete"] * 4, "the reports' processing")
    check_equal(len({r.data["fingerprint"]["value"] for r in site_a}), 1,
                f"site a's fingerprints ({[r.data['fingerprint'] for r in site_a]})")
    check(site_b.data["fingerprint"]["value"] != site_a[0].data["fingerprint"]["value"], "site b's fingerprint differs")
    spool = make_spool(site_a + [site_b])
    result = ship(spool, bugsink.dsn)
    check(result.returncode == 0, lambda: result.describe())
    issues = bugsink.stored()
    by_event = {event["event_id"]: issue for issue in issues for event in issue["events"]}
    issue_a = {id(by_event.get(r.id.replace("-", ""))) for r in site_a}
    check(None not in [by_event.get(r.id.replace("-", "")) for r in site_a + [site_b]],
          lambda: f"Bugsink did not store every event: {[(i['title'], i['count']) for i in issues]}")
    check_equal(len(issue_a), 1, "Bugsink issues of site a's three crashes")
    a = by_event[site_a[0].id.replace("-", "")]
    check_equal(a["count"], 3, "site a's issue: events")
    check(by_event[site_b.id.replace("-", "")] is not a, "site b is an issue of its own")
    check_equal((a["title"], by_event[site_b.id.replace("-", "")]["title"]), ("store_a", "store_b"), "the issues' titles")


def case_bugsink_app_context():
    """A crash whose app declared annotations and breadcrumbs, in Bugsink: stored (its strict validation took the
    event), the annotations that fit as the event's tags, the others in extra.annotations, the breadcrumbs in
    order with their levels."""
    bugsink = BUGSINK["server"]
    report = ts.variant(R("abort"), ts.annotate)
    spool = make_spool([report])
    result = ship(spool, bugsink.dsn)
    check(result.returncode == 0, lambda: result.describe())
    check(not re.search(r"ValidationError|Traceback", bugsink.log()),
          lambda: f"Bugsink refused an event while digesting it:\n{bugsink.log()[-4000:]}")
    stored = {event["event_id"]: event for issue in bugsink.stored() for event in issue["events"]}
    event = stored.get(report.id.replace("-", ""))
    check(event is not None, lambda: f"Bugsink did not store the annotated crash\n{bugsink.log()[-3000:]}")
    annotations = report.data["annotations"]
    tags = {key: value for key, value in sorted(annotations.items()) if fits_tag(key, value)}
    check_equal({key: event["tags"].get(key) for key in tags}, tags, "Bugsink's tags of the annotations that fit")
    check_equal(event["data"]["extra"].get("annotations"), {k: v for k, v in annotations.items() if not fits_tag(k, v)},
                "Bugsink's extra.annotations")
    check_equal([(b.get("level"), b.get("message")) for b in event["data"]["breadcrumbs"]["values"]],
                [(b["level"] if b["level"] in LEVELS else "info", b["message"]) for b in report.data["breadcrumbs"]],
                "Bugsink's breadcrumbs")
    check_equal(spool_reports(spool), [], "the spool after shipping to Bugsink")


def case_bugsink_snapshot():
    """A snapshot of a running process in Bugsink: stored (its strict validation took the event) at level info, an
    issue titled Snapshot with the threads' states, its exception handled, no signal tag."""
    bugsink = BUGSINK["server"]
    report = R("snapshot")
    spool = make_spool([report])
    result = ship(spool, bugsink.dsn)
    check(result.returncode == 0, lambda: result.describe())
    check(not re.search(r"ValidationError|Traceback", bugsink.log()),
          lambda: f"Bugsink refused an event while digesting it:\n{bugsink.log()[-4000:]}")
    by_event = {event["event_id"]: (issue, event) for issue in bugsink.stored() for event in issue["events"]}
    found = by_event.get(report.id.replace("-", ""))
    check(found is not None, lambda: f"Bugsink did not store the snapshot\n{bugsink.log()[-3000:]}")
    issue, event = found
    check_equal(event["level"], "info", "Bugsink's level of the snapshot")
    check(issue["title"].startswith("Snapshot"), f"the snapshot's issue is titled {issue['title']!r}")
    exception = event["data"]["exception"]["values"][0]
    check_equal((exception["type"], exception["mechanism"]["type"], exception["mechanism"]["handled"]),
                ("Snapshot", "crashwatch.snapshot", True), "Bugsink's exception of the snapshot")
    check("signal" not in event["tags"], f"a snapshot has no signal, yet Bugsink's tags are {event['tags']}")
    check_equal(event["tags"].get("kind"), "snapshot", "Bugsink's kind tag of the snapshot")
    check_equal(spool_reports(spool), [], "the spool after shipping the snapshot to Bugsink")


def case_mapping_every_kind():
    """Every kind of report (crashes, a handled-then-fatal crash, 64 threads, a SIGKILL death, a hang, a snapshot of
    a running process, a crash with the app's annotations and breadcrumbs) as one event in its own envelope, field by field; the envelope
    header names the event and the DSN, the item its length; X-Sentry-Auth carries the key; `export --format
    sentry` prints the same event."""
    reports = [R("null_deref"), R("abort"), R("threads64"), R("abnormal"), R("hang"), R("hang_crash"), R("snapshot"),
               ts.variant(R("null_deref"), ts.annotate)]
    spool = make_spool(reports)
    exported = {}
    for report in reports:
        done = crashwatch("export", "--spool", spool, "--format", "sentry", report.id)
        check(done.returncode == 0, lambda: done.describe())
        exported[report.id] = json.loads(done.stdout)
    receiver = SentryReceiver()
    result = ship(spool, receiver.dsn, "--gzip")
    check(result.returncode == 0, lambda: result.describe())
    receiver.check_clean()
    events = receiver.events()
    check_equal(len(events), len(reports), "events received (one envelope each)")
    by_id = {event["extra"]["crashwatch_report_id"]: (entry, event) for entry, event in events}
    for report in reports:
        entry, event = by_id[report.id]
        check_equal(entry["path"], f"/api/{PROJECT}/envelope/", "the envelope's path")
        check(entry["gzip"], "--gzip: the envelope should be gzip-compressed")
        auth = entry["headers"]["x-sentry-auth"]
        check(re.fullmatch(rf"Sentry sentry_version=7, sentry_client=crashwatch/\S+, sentry_key={KEY}", auth), f"X-Sentry-Auth {auth!r}")
        header = entry["decoded"]["header"]
        check_equal(header, {"event_id": report.id.replace("-", ""), "dsn": receiver.dsn}, "the envelope header")
        check_equal(entry["decoded"]["items"][0]["header"]["type"], "event", "the item type")
        check_event(report, event)
        check(event == exported[report.id], f"`export --format sentry` of {report.name} is not the event ship sent")
    check_equal(len(by_id[R("threads64").id][1]["threads"]["values"]), len(R("threads64").data["threads"]), "threads64's threads")
    ts.account([r.id for r in reports], spool, receiver, [result.stdout])


def case_check_verdicts():
    """--check: an envelope without items; 0 and OK when the server takes it, 69 and a hint when not."""
    receiver = SentryReceiver()
    spool = make_spool([])
    good = ship(spool, receiver.dsn, "--check")
    check(good.returncode == 0 and "OK" in good.stderr, lambda: good.describe())
    check_equal([e.get("decoded", {}).get("items") for e in receiver.requests()], [[]], "the check's envelope items")
    wrong = ship(spool, receiver.dsn.replace(KEY, "feedfeed"), "--check")
    check(wrong.returncode == 69 and "401" in wrong.stderr and "hint" in wrong.stderr, lambda: wrong.describe())
    down = ship(spool, f"http://{KEY}@127.0.0.1:{ts.free_port()}/{PROJECT}", "--check")
    check(down.returncode == 69, lambda: down.describe())
    bad = ship(spool, "https://127.0.0.1/1")
    check(bad.returncode == 64 and "has no key" in bad.stderr, lambda: bad.describe())
    none = crashwatch("ship", "--spool", spool)
    check(none.returncode == 64 and "--sentry DSN" in none.stderr, lambda: none.describe())
    from_env = crashwatch("ship", "--spool", spool, "--check", env=ts.clean_env(SENTRY_DSN=receiver.dsn))
    check(from_env.returncode == 0, lambda: f"SENTRY_DSN: {from_env.describe()}")


def case_faults_down_then_up():
    """Nobody listening: the first report kept (75) with its attempt recorded, the rest given back untried (one
    envelope per report; the shipper pauses at the first failure); delivered once the server is up."""
    reports = [R("null_deref"), R("sigfpe")]
    spool = make_spool(reports)
    port = ts.free_port()
    dsn = f"http://{KEY}@127.0.0.1:{port}/{PROJECT}"
    first = ship(spool, dsn)
    check(first.returncode == 75, lambda: first.describe())
    kept = parse_outcomes(first.stdout)["kept"]
    check_equal((len(kept), kept[0][2]), (1, 1), "kept lines (the first envelope failed; the rest waits untried)")
    check(re.search(r"connect|refused", kept[0][4], re.I), f"the error {kept[0][4]!r} should say the connection failed")
    check_equal(spool_reports(spool), sorted(r.name for r in reports), "the spool after the failure")
    check_equal(sorted(os.listdir(os.path.join(spool, ".attempts"))), [r.name for r in reports if r.id == kept[0][0]],
                "attempt records (only the report tried)")
    receiver = SentryReceiver(port=port)
    time.sleep(max(k[3] for k in kept) + 0.3)
    second = ship(spool, dsn)
    check(second.returncode == 0, lambda: second.describe())
    receiver.check_clean()
    ts.account([r.id for r in reports], spool, receiver, [first.stdout, second.stdout])
    check_equal(spool_reports(spool), [], "the spool")


def case_faults_5xx_slow_reset_follow():
    """--follow through 500, 503, a reset mid-body, a close and a reply slower than --timeout: kept each time
    with a growing attempt number, then delivered, acknowledged once."""
    report = R("abort")
    spool = make_spool([report])
    receiver = SentryReceiver(fault="500,503,reset,close,slow:3,ok")
    ship_process = follower(spool, receiver.dsn, "--timeout", "1s", "--max-backoff", "2s")
    wait_until(lambda: parse_outcomes(ship_process.stdout)["shipped"], lambda: f"delivery: {ship_process.describe()}", 40)
    ship_process.terminate()
    kept = parse_outcomes(ship_process.stdout)["kept"]
    # libcurl itself sends a request again once when a kept-alive connection closes without an answer, so
    # the reset and the close may cost one attempt or two.
    check([k[2] for k in kept] in ([1, 2, 3, 4], [1, 2, 3, 4, 5]), f"attempt numbers {[k[2] for k in kept]}")
    check_equal([k[4].split(":")[0] for k in kept[:2]], ["HTTP 500", "HTTP 503"], "the first errors")
    check(re.search("time", kept[-1][4], re.I), f"the slow reply's error {kept[-1][4]!r} should name the timeout")
    receiver.check_clean()
    ts.account([report.id], spool, receiver, [ship_process.stdout])


def case_faults_rate_limits():
    """429 with X-Sentry-Rate-Limits, 429 with Retry-After, and rate limits on a 200: nothing is sent before the
    time the server named; nothing lost, nothing sent twice."""
    for fault, hold in (("ratelimit:2:error;transaction,ok", 2.0), ("429:retry-after=2,ok", 2.0), ("okratelimit:2:error,ok", 2.0)):
        reports = [R("null_deref"), R("sigfpe")]
        spool = make_spool(reports)
        receiver = SentryReceiver(fault=fault)
        ship_process = follower(spool, receiver.dsn)
        wait_until(lambda: len(parse_outcomes(ship_process.stdout)["shipped"]) == 2, lambda: f"{fault}: {ship_process.describe()}", 15)
        ship_process.terminate()
        first, second = receiver.requests()[:2]
        gap = second["epoch"] - first["finished"]
        check(hold - 0.05 <= gap < hold + 3, f"{fault}: the next envelope came {gap:.2f} s after the answer, expected ≥{hold} s")
        receiver.check_clean()
        ts.account([r.id for r in reports], spool, receiver, [ship_process.stdout])
    # A rate limit for other categories (transactions) does not hold events back.
    spool = make_spool([R("null_deref"), R("sigfpe")])
    receiver = SentryReceiver(fault="okratelimit:30:transaction,ok")
    result = ship(spool, receiver.dsn)
    check(result.returncode == 0 and len(parse_outcomes(result.stdout)["shipped"]) == 2, lambda: result.describe())


def case_faults_refusals():
    """400 and 413 condemn the event: quarantined with the server's reason; 401 and 403 say the DSN is wrong,
    not the report: kept."""
    for fault, reason in (("400:event too odd", "HTTP 400: event too odd"), ("413:too large", "HTTP 413: too large")):
        report = R("sigfpe")
        spool = make_spool([report])
        receiver = SentryReceiver(fault=fault)
        result = ship(spool, receiver.dsn)
        check(result.returncode == 0, lambda: result.describe())
        quarantined = parse_outcomes(result.stdout)["quarantined"]
        check(len(quarantined) == 1 and reason in quarantined[0][2], lambda: f"{fault}: {result.describe()}")
        check(reason in ts.quarantine_reason(spool, report.name), f"{fault}: the .reason file")
        ts.account([report.id], spool, receiver, [result.stdout])
    for fault in ("401:who are you", "403:project disabled"):
        report = R("abort")
        spool = make_spool([report])
        receiver = SentryReceiver(fault=fault)
        result = ship(spool, receiver.dsn)
        check(result.returncode == 75 and parse_outcomes(result.stdout)["kept"], lambda: f"{fault}: {result.describe()}")
        check("check the DSN" in parse_outcomes(result.stdout)["kept"][0][4], lambda: result.describe())
        check_equal(spool_reports(spool), [report.name], f"{fault}: the spool")


def case_both_destinations():
    """One shipper, an OTLP endpoint and a Sentry server failing once: each report reaches each destination
    once; the report is removed when both took it; its delivery to OTLP is recorded meanwhile."""
    reports = [R("null_deref"), R("abort")]
    spool = make_spool(reports)
    otlp = ts.Receiver()
    sentry = SentryReceiver(fault="500,ok")
    first = crashwatch("ship", "--spool", spool, "--endpoint", otlp.url, "--sentry", sentry.dsn)
    check(first.returncode == 75, lambda: first.describe())
    attempts = os.path.join(spool, ".attempts")
    for report in reports:
        with open(os.path.join(attempts, report.name)) as handle:
            check("delivered otlp" in handle.read(), f".attempts/{report.name} should record the OTLP delivery")
    time.sleep(max(k[3] for k in parse_outcomes(first.stdout)["kept"]) + 0.3)
    second = crashwatch("ship", "--spool", spool, "--endpoint", otlp.url, "--sentry", sentry.dsn)
    check(second.returncode == 0, lambda: second.describe())
    otlp.check_clean()
    sentry.check_clean()
    otlp_ids = [r["attrs"]["crashwatch.report.id"] for r in otlp.records()]
    check_equal(sorted(otlp_ids), sorted(r.id for r in reports), "reports the OTLP receiver got (each once)")
    ts.account([r.id for r in reports], spool, sentry, [first.stdout, second.stdout])
    accepted = [e["extra"]["crashwatch_report_id"] for entry, e in sentry.events() if entry["status"] == 200]
    check_equal(sorted(accepted), sorted(r.id for r in reports), "events Sentry accepted (each once)")


def case_two_shippers():
    """Two --follow shippers on one spool of 40 reports: every event accepted exactly once."""
    paths = ts.copies(R("null_deref"), 40)
    spool = ts.new_dir("spool-")
    for path in paths:
        shutil.move(path, spool)
    ids = [ts.id_of_name(os.path.basename(p)) for p in paths]
    receiver = SentryReceiver()
    shippers = [follower(spool, receiver.dsn), follower(spool, receiver.dsn)]
    wait_until(lambda: not spool_reports(spool) and not ts.claims_of(spool), "the spool is empty", 60)
    for ship_process in shippers:
        ship_process.terminate()
    accepted = [e["extra"]["crashwatch_report_id"] for entry, e in receiver.events() if entry["status"] == 200]
    check_equal(sorted(accepted), sorted(ids), "events accepted (each exactly once)")
    ts.account(ids, spool, receiver, [s.stdout for s in shippers])


def case_relay_normalizer():
    """Every event the scripted receivers took, normalized by sentry-relay's StoreNormalizer: no errors, and the
    exception, frames, threads, images, tags (the annotations' among them), extra.annotations and breadcrumbs
    survive normalization."""
    if not EVENTS:
        case_mapping_every_kind()  # run alone: the events of every kind first
    program = ("import json, sys\nfrom sentry_relay.processing import StoreNormalizer\n"
               "normalizer = StoreNormalizer(project_id=42)\n"
               "for line in sys.stdin:\n"
               "    out = normalizer.normalize_event(json.loads(line))\n"
               "    print(json.dumps({'errors': out.get('errors'), 'frames': len(out['exception']['values'][0]['stacktrace']['frames']),\n"
               "                      'threads': len(out['threads']['values']), 'images': len(out['debug_meta']['images']),\n"
               "                      'type': out['exception']['values'][0]['type'], 'tags': dict(out.get('tags') or []),\n"
               "                      'annotations': (out.get('extra') or {}).get('annotations'),\n"
               "                      'breadcrumbs': [(b.get('level'), b.get('category'), b.get('message'))\n"
               "                                      for b in (out.get('breadcrumbs') or {}).get('values', [])]}))\n")
    done = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", program], capture_output=True, text=True, timeout=120,
                          input="".join(json.dumps(event) + "\n" for _, event in EVENTS))
    check(done.returncode == 0, f"StoreNormalizer: {ts.common.tail(done.stderr)}")
    results = [json.loads(line) for line in done.stdout.splitlines()]
    check_equal(len(results), len(EVENTS), "normalized events")
    for (where, event), result in zip(EVENTS, results):
        check(not result["errors"], f"{where}: relay's normalizer found errors: {result['errors']}")
        kept = (len(event["exception"]["values"][0]["stacktrace"]["frames"]), len(event["threads"]["values"]),
                len(event["debug_meta"]["images"]), event["exception"]["values"][0]["type"])
        check_equal((result["frames"], result["threads"], result["images"], result["type"]), kept, f"{where}: after normalization")
        # The app's context survives as sent: every tag (annotations included; relay adds server_name's),
        # extra.annotations, the breadcrumbs.
        check_equal({key: result["tags"].get(key) for key in event["tags"]}, event["tags"], f"{where}: tags after normalization")
        check_equal(result["annotations"], event["extra"].get("annotations"), f"{where}: extra.annotations after normalization")
        check_equal(result["breadcrumbs"], [[b["level"], b["category"], b["message"]] for b in event.get("breadcrumbs", {}).get("values", [])],
                    f"{where}: breadcrumbs after normalization")
    annotated = sum(1 for _, event in EVENTS if event.get("breadcrumbs"))
    check(annotated > 0, "no event with breadcrumbs reached the normalizer (case mapping_every_kind's annotated variant)")
    ts.NOTES.append(f"relay: {len(EVENTS)} events normalized without errors, {annotated} with annotations and breadcrumbs")


CASES = {name[len("case_"):]: value for name, value in list(globals().items()) if name.startswith("case_")}


def main(argv):
    if "--list" in argv:
        print("\n".join(CASES))
        return 0
    words = [a for a in argv if not a.startswith("-")]
    selected = [name for name in CASES if not words or any(w in name for w in words)]
    ts.ROOT = tempfile.mkdtemp(prefix="cw-sentry-test-")
    os.chmod(ts.ROOT, 0o755)

    def set_up():
        setup()
        return f"{len(ts.REPORTS)} real reports and Bugsink"

    return ts.common.run_cases(CASES, selected, set_up, after_each=ts.end_started, cleanup=cleanup, notes=ts.NOTES,
                               label="sentry suite")


def cleanup():
    server = BUGSINK.get("server")
    if server is not None:
        server.stop()
    ts.end_started()
    if ts.KEEP:
        print(f"kept: {ts.ROOT}")
    else:
        shutil.rmtree(ts.ROOT, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
