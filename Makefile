# crashwatch — build, test, demo and benchmark entry points.
#
#   make demo    install what is missing, build, crash a bundled fixture under crashwatch
#   make test    install what is missing, build, run the whole test suite
#   make build   release binary at .build/release/crashwatch
#   make bench   benchmarks (see BENCHMARKS.md)
#   make install copy the binary to $(PREFIX)/bin (PREFIX=/usr/local by default)

SHELL := /bin/bash
SWIFT ?= swift
FIXTURES := .build/fixtures
BIN := .build/release/crashwatch

# Debian packages the build and the tests need (dpkg names).
DEBS := gcc g++ binutils make python3 libunwind-dev liblzma-dev libdw-dev libelf-dev libiberty-dev elfutils gdb libc6-dbg debuginfod clang lld golang-go

PREFIX ?= /usr/local

.PHONY: all deps build debug fixtures test demo bench install clean

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

build: deps
	$(SWIFT) build -c release

debug: deps
	$(SWIFT) build

fixtures: deps
	@Fixtures/build.sh $(FIXTURES)

test: deps fixtures
	$(SWIFT) build
	$(SWIFT) test 2>&1 | tee .build/test.log; exit $${PIPESTATUS[0]}

demo: build fixtures
	@spool=$$(mktemp -d /tmp/crashwatch-demo.XXXXXX); \
	echo "--- running the null_deref fixture under crashwatch (spool $$spool) ---"; \
	$(BIN) run --spool $$spool -- $(FIXTURES)/null_deref; status=$$?; \
	echo "--- crashwatch exited with status $$status, as the fixture does bare (128+SIGSEGV) ---"; \
	python3 scripts/report-summary.py $$spool/*.json

bench: build fixtures
	@python3 bench/bench.py

install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/crashwatch

clean:
	rm -rf .build
