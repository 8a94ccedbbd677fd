# crashwatch — build, test, demo and benchmark entry points.
#
#   make demo    install what is missing, build, crash a bundled fixture under crashwatch
#   make test    install what is missing, build, run the whole test suite
#   make unit    the unit-test targets only (Crashwatch*Tests: no IntegrationTests, no network, no root),
#                offline, under a minute once built. One target, suite or test by regular expression:
#                swift build --build-tests && swift test --skip-build --filter 'RunOptionsTests/killDuringWrite'
#   make test-ship  the `crashwatch ship` suites (Tests/shipping: OTLP, then Sentry with Bugsink) against the debug binary
#   make test-deb   the Debian package installed into the real-systemd root (Tests/systemd/test_package.py)
#   make build   release binary at .build/release/crashwatch, the Swift runtime linked in statically
#   make bench   benchmarks (see BENCHMARKS.md)
#   make install copy the binary to $(PREFIX)/bin (PREFIX=/usr by default: the shipped units call /usr/bin/crashwatch)
#   make deb     .build/deb/crashwatch_VERSION_ARCH.deb (dpkg-deb; no Swift needed where it is installed)

SHELL := /bin/bash
SWIFT ?= swift
FIXTURES := .build/fixtures
BIN := .build/release/crashwatch

# Debian packages the build and the tests need (dpkg names).
DEBS := gcc g++ binutils make python3 libunwind-dev liblzma-dev libdw-dev libelf-dev libiberty-dev elfutils gdb libc6-dbg debuginfod clang lld golang-go
# test-systemd: debootstrap builds the Debian 12 root the real systemd boots from (cached in
# .build/systemd-root); libsystemd-dev gives its test programs sd_notify/sd_listen_fds/sd_watchdog_enabled;
# util-linux (unshare, nsenter) and debian-archive-keyring are on every Debian, named to be sure.
DEBS += debootstrap debian-archive-keyring libsystemd-dev util-linux
# aarch64: a fixture cross-built (with PAC return addresses) and run under qemu-user gives the core dump
# the reader and the ARM64 decoder are tested on (Tests/CrashwatchCaptureTests/CoreFileTests.swift).
DEBS += qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross
# elfutils' own aarch64 test core (tests/backtrace.aarch64.core and its executable) from the elfutils
# source Debian 12 ships, fetched once into $(ELFUTILS_CORES) and checked by sha256: `make elfutils-cores`.
# apt-get source fetches it from the archive this machine's apt uses (scripts/debian_mirror.py reads it
# from /etc/apt; the repository names no mirror), through a private apt state in $(ELFUTILS_APT) that
# holds one deb-src entry: the machine's own apt configuration and lists are left alone.
DEBS += bzip2
ELFUTILS_CORES := .build/elfutils-tests
ELFUTILS_VERSION := 0.188
ELFUTILS_APT := .build/elfutils-apt
ELFUTILS_APT_OPTS = -qq -o Dir::Etc::SourceList=$(CURDIR)/$(ELFUTILS_APT)/sources.list -o Dir::Etc::SourceParts=/dev/null \
  -o Dir::State::Lists=$(CURDIR)/$(ELFUTILS_APT)/lists -o Dir::Cache=$(CURDIR)/$(ELFUTILS_APT)/cache \
  -o APT::Sandbox::User=root
# ship: libcurl does the HTTP(S); test-ship makes its certificates with openssl, installs the
# receiver's Python dependency with pip (see pydeps), and Bugsink and sentry-relay in a virtualenv (see
# sentrydeps; Debian's python3 makes one only with python3-venv).
DEBS += libcurl4-openssl-dev openssl python3-pip python3-venv
# deb: dpkg-deb builds the package, dpkg-shlibdeps computes its Depends: (scripts/build_deb.py).
DEBS += dpkg-dev

# Python packages of the test receiver (Tests/shipping/otlp_receiver.py), pinned. When python3 cannot
# import them, pip installs them into $(PYDEPS) (--target: no root, no system site-packages, and no
# clash with Debian's externally-managed Python); the test targets put $(PYDEPS) on PYTHONPATH.
PYDEPS := .build/pydeps
OTLP_PROTO_VERSION := 1.45.2
PYTHON_ENV := PYTHONPATH=$(CURDIR)/$(PYDEPS)$${PYTHONPATH:+:$$PYTHONPATH}

# The Sentry suite (Tests/shipping/test_sentry.py) runs a real Bugsink and sentry-relay's event normalizer,
# pinned, from a virtualenv of their own (their dependencies, Django among them, stay out of $(PYDEPS)).
SENTRY_VENV := .build/sentry-venv
BUGSINK_VERSION := 2.6.2
SENTRY_RELAY_VERSION := 0.10.1

# make bench: the floor section (bench/bench.py floor_benchmarks) runs nginx under wrk, PostgreSQL under
# pgbench and a JVM (javac builds bench/NpeLoop.java). bench-deps installs what is missing when root;
# otherwise, or when the install fails, those workloads are reported as skipped, not a failed bench.
BENCH_DEBS := nginx wrk postgresql
BENCH_JDK := default-jdk-headless

# test: headless Chromium opens `export --format html` pages (Tests/IntegrationTests/HTMLBrowserTests.swift).
# browser-deps installs it when missing and root; when it cannot, those tests are skipped, saying why.
BROWSER_DEBS := chromium

PREFIX ?= /usr

# The user crashwatch's processing workers run as when crashwatch runs as root (WorkerIdentity.swift).
WORKER_USER := crashwatch-worker

.PHONY: all deps pydeps sentrydeps elfutils-cores bench-deps browser-deps build debug fixtures test unit test-systemd test-ship test-deb demo bench stress-snapshot install deb clean

all: build

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "crashwatch needs these Debian packages: sudo apt-get install$$missing" >&2; exit 1; \
	  fi; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift not found: install the Swift 6.3 toolchain" >&2; exit 1; }
	@# The dedicated user processing workers run as under a root crashwatch (README "Security model";
	@# systemd/crashwatch.sysusers makes it on an installed system). Without it they run as nobody.
	@if [ "$$(id -u)" = 0 ] && ! getent passwd $(WORKER_USER) >/dev/null; then \
	  echo "creating the system user $(WORKER_USER)"; \
	  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group $(WORKER_USER); \
	fi

# --static-swift-stdlib: the Swift runtime and FoundationEssentials are linked in, so the binary needs no
# Swift installation where it runs, and every supervisor maps 4 MB less (peak RSS 15.0 -> 11.3 MB).
build: deps
	$(SWIFT) build -c release --static-swift-stdlib --product crashwatch

debug: deps
	$(SWIFT) build

fixtures: deps
	@Fixtures/build.sh $(FIXTURES)

elfutils-cores: $(ELFUTILS_CORES)/backtrace.aarch64.core

$(ELFUTILS_CORES)/backtrace.aarch64.core: | deps
	@rm -rf $(ELFUTILS_APT) && mkdir -p $(ELFUTILS_APT)/lists/partial $(ELFUTILS_APT)/cache/archives/partial $(ELFUTILS_APT)/src $(ELFUTILS_CORES)
	python3 scripts/debian_mirror.py --deb-src > $(ELFUTILS_APT)/sources.list
	timeout 300 apt-get $(ELFUTILS_APT_OPTS) update
	cd $(ELFUTILS_APT)/src && timeout 300 apt-get $(ELFUTILS_APT_OPTS) source --download-only elfutils
	tar -xjf $(ELFUTILS_APT)/src/elfutils_$(ELFUTILS_VERSION).orig.tar.bz2 -C $(ELFUTILS_CORES) --no-same-owner --strip-components=2 \
	  elfutils-$(ELFUTILS_VERSION)/tests/backtrace.aarch64.core.bz2 elfutils-$(ELFUTILS_VERSION)/tests/backtrace.aarch64.exec.bz2
	bunzip2 -f $(ELFUTILS_CORES)/backtrace.aarch64.core.bz2 $(ELFUTILS_CORES)/backtrace.aarch64.exec.bz2
	@rm -rf $(ELFUTILS_APT)
	@cd $(ELFUTILS_CORES) && sha256sum -c --quiet <<< $$'d424557c15d7dc96d0831c899c2b25955dc2af85551bc2086423e8b7a3f7ada0  backtrace.aarch64.core\n58fa146e241d38d4719c63fe20ac355fd813048de86b4219b9a2e2d3aa84c1a4  backtrace.aarch64.exec' \
	  || { rm -f backtrace.aarch64.core backtrace.aarch64.exec; echo "elfutils-cores: the files do not match their sha256" >&2; exit 1; }

pydeps: deps
	@$(PYTHON_ENV) python3 -c 'import opentelemetry.proto.collector.logs.v1.logs_service_pb2' 2>/dev/null || { \
	  echo "installing opentelemetry-proto==$(OTLP_PROTO_VERSION) into $(PYDEPS)"; \
	  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target $(PYDEPS) opentelemetry-proto==$(OTLP_PROTO_VERSION) && \
	  $(PYTHON_ENV) python3 -c 'import opentelemetry.proto.collector.logs.v1.logs_service_pb2'; }

sentrydeps: deps
	@$(SENTRY_VENV)/bin/python -c 'import sentry_relay, bugsink' 2>/dev/null && \
	  $(SENTRY_VENV)/bin/pip show bugsink 2>/dev/null | grep -qx 'Version: $(BUGSINK_VERSION)' || { \
	  echo "installing bugsink==$(BUGSINK_VERSION) and sentry-relay==$(SENTRY_RELAY_VERSION) into $(SENTRY_VENV)"; \
	  python3 -m venv $(SENTRY_VENV) && \
	  $(SENTRY_VENV)/bin/pip install --quiet --disable-pip-version-check bugsink==$(BUGSINK_VERSION) sentry-relay==$(SENTRY_RELAY_VERSION); }

# The Swift suites, then the systemd suite (Tests/systemd) and the ship suite (Tests/shipping) against
# the debug binary just built, then the Debian package's suite (test-deb: the release build, packaged). Each suite runs even when an earlier one failed; any failing fails `make test`.
test: deps fixtures pydeps elfutils-cores browser-deps
	$(SWIFT) build
	@$(SWIFT) test 2>&1 | tee .build/test.log; swift_status=$${PIPESTATUS[0]}; \
	$(MAKE) --no-print-directory test-systemd; systemd_status=$$?; \
	$(MAKE) --no-print-directory test-ship; ship_status=$$?; \
	$(MAKE) --no-print-directory test-deb; deb_status=$$?; \
	if [ $$swift_status -ne 0 ]; then echo "make test: swift test failed (exit status $$swift_status)" >&2; fi; \
	if [ $$systemd_status -ne 0 ]; then echo "make test: test-systemd failed (exit status $$systemd_status)" >&2; fi; \
	if [ $$ship_status -ne 0 ]; then echo "make test: test-ship failed (exit status $$ship_status)" >&2; fi; \
	if [ $$deb_status -ne 0 ]; then echo "make test: test-deb failed (exit status $$deb_status)" >&2; fi; \
	if [ $$swift_status -ne 0 ]; then exit $$swift_status; fi; \
	if [ $$systemd_status -ne 0 ]; then exit $$systemd_status; fi; \
	if [ $$ship_status -ne 0 ]; then exit $$ship_status; fi; \
	exit $$deb_status

# The unit-test targets alone: offline (no deps, no apt, no pip), no root. The one fixture a unit test
# reads (LinkMapTests: null_deref) comes from Fixtures/build.sh, which only compiles. UNIT_SKIP leaves out
# the one slow unit test, 300 mutated real cores through the core reader (~21 of the targets' ~27 s idle):
# `make test` runs it, and so does: swift test --skip-build --filter 'CoreFuzzTests/mutatedCores'
UNIT_FILTER := ^Crashwatch[A-Za-z]*Tests\.
UNIT_SKIP := CoreFuzzTests/mutatedCores
unit:
	@Fixtures/build.sh $(FIXTURES) >/dev/null
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter '$(UNIT_FILTER)' --skip '$(UNIT_SKIP)'

# crashwatch under a real systemd 252 booted as a container's PID 1 (Tests/systemd/README.md). Needs
# root; the binary is $(SYSTEMD_TEST_BIN) (make test builds it). Bounded: 10 minutes at most.
SYSTEMD_TEST_BIN ?= .build/debug/crashwatch
test-systemd: deps fixtures pydeps
	@test -x $(SYSTEMD_TEST_BIN) || { echo "test-systemd: $(SYSTEMD_TEST_BIN) is missing: build it first (swift build, or make test)" >&2; exit 1; }
	CRASHWATCH_BIN=$(SYSTEMD_TEST_BIN) timeout --kill-after=30 600 python3 Tests/systemd/test_systemd.py

# The Debian package (make deb) installed with apt-get into the real-systemd root, in a container of its
# own (Tests/systemd/test_package.py): a wrapped service's crash, the readers' and writers' groups,
# `man crashwatch` against every --help, purge. Needs root. Bounded: 5 minutes (the tests take ~30 s).
test-deb: deb fixtures
	timeout --kill-after=30 300 python3 Tests/systemd/test_package.py -v

# `crashwatch ship` against a real OTLP/HTTP receiver (Tests/shipping/README.md): HTTP, HTTPS, mutual TLS,
# gzip, faults, 1,000 reports with two shippers. The binary is $(SHIP_TEST_BIN) (make test builds it).
# Bounded: 5 minutes at most (the suite itself takes about 2).
SHIP_TEST_BIN ?= .build/debug/crashwatch
test-ship: deps fixtures pydeps sentrydeps
	@test -x $(SHIP_TEST_BIN) || { echo "test-ship: $(SHIP_TEST_BIN) is missing: build it first (swift build, or make test)" >&2; exit 1; }
	@CRASHWATCH_BIN=$(SHIP_TEST_BIN) CRASHWATCH_FIXTURES=$(FIXTURES) $(PYTHON_ENV) timeout --kill-after=30 300 python3 Tests/shipping/test_ship.py; otlp=$$?; \
	CRASHWATCH_BIN=$(SHIP_TEST_BIN) CRASHWATCH_FIXTURES=$(FIXTURES) CRASHWATCH_SENTRY_VENV=$(CURDIR)/$(SENTRY_VENV) $(PYTHON_ENV) \
	  timeout --kill-after=30 300 python3 Tests/shipping/test_sentry.py; sentry=$$?; \
	if [ $$otlp -ne 0 ]; then exit $$otlp; fi; exit $$sentry

demo: build fixtures
	@spool=$$(mktemp -d /tmp/crashwatch-demo.XXXXXX); \
	echo "--- running the null_deref fixture under crashwatch (spool $$spool) ---"; \
	$(BIN) run --spool $$spool -- $(FIXTURES)/null_deref; status=$$?; \
	echo "--- crashwatch exited with status $$status, as the fixture does bare (128+SIGSEGV) ---"; \
	python3 scripts/report-summary.py $$spool/*.json

bench-deps: deps
	@missing=""; for p in $(BENCH_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v javac >/dev/null || missing="$$missing $(BENCH_JDK)"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing for make bench:$$missing"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } || \
	      echo "make bench: could not install$$missing: the workloads that need them are skipped" >&2; \
	  else \
	    echo "make bench: missing$$missing (sudo apt-get install$$missing): the workloads that need them are skipped" >&2; \
	  fi; \
	fi

browser-deps: deps
	@missing=""; for p in $(BROWSER_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing for the browser tests:$$missing"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; } || \
	      echo "make test: could not install$$missing: the headless-browser tests are skipped" >&2; \
	  else \
	    echo "make test: missing$$missing (sudo apt-get install$$missing): the headless-browser tests are skipped" >&2; \
	  fi; \
	fi

bench: build fixtures pydeps bench-deps
	@$(PYTHON_ENV) python3 bench/bench.py

# 1,000 snapshots of a process in a signal storm, thread churn and fork churn (the suite takes 100):
# SnapshotChurnTests with CRASHWATCH_SNAPSHOT_CHURN=1000.
stress-snapshot: build fixtures
	CRASHWATCH_SNAPSHOT_CHURN=1000 swift test --skip-build --filter SnapshotChurnTests

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/crashwatch

# The Debian package of the release binary: the units, sysusers and tmpfiles entries, /etc/crashwatch.conf
# (a conffile), man pages and bash/zsh completion generated from the option tables (crashwatch __manual),
# maintainer scripts (scripts/build_deb.py says what is where). Install: apt-get install ./$(DEB_DIR)/crashwatch_*.deb
DEB_DIR := .build/deb
deb: build
	@rm -f $(DEB_DIR)/crashwatch_*.deb
	python3 scripts/build_deb.py $(BIN) $(DEB_DIR)

clean:
	rm -rf .build
