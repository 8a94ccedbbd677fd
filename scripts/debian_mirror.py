#!/usr/bin/env python3
"""The Debian archive this machine's apt already uses, read from its configuration at run time.

The repository names no mirror host: the systemd harness (debootstrap of its container root) and
`make elfutils-cores` (apt-get source of elfutils) take the archive from the `deb` entries of
/etc/apt/sources.list.d/*.sources (deb822 `URIs:`), /etc/apt/sources.list.d/*.list and
/etc/apt/sources.list, in that order. CRASHWATCH_DEBIAN_MIRROR overrides the URI.

    python3 scripts/debian_mirror.py              # the archive URI for this release's suite
    python3 scripts/debian_mirror.py --deb-src    # a one-line deb-src entry for it (sources.list form)
    python3 scripts/debian_mirror.py --suite S    # for suite S instead of VERSION_CODENAME
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

APT_ETC = Path("/etc/apt")


class MirrorError(Exception):
    """No usable `deb` entry for the suite in the apt configuration; the message says where it looked."""


@dataclass(frozen=True)
class AptEntry:
    """One `deb` source of the apt configuration: its URI, suites, components and keyring (if any)."""
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: str | None


def parse_deb822(text: str) -> list[AptEntry]:
    """The `deb` entries of a deb822 `.sources` file (stanzas separated by blank lines; `#` comments)."""
    entries = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes").lower() == "no":
            continue
        signed_by = fields.get("signed-by") or None
        if signed_by and not signed_by.startswith("/"):
            signed_by = None  # an inline key block: apt's default keyrings are the fallback
        for uri in fields.get("uris", "").split():
            entries.append(AptEntry(uri, tuple(fields.get("suites", "").split()),
                                    tuple(fields.get("components", "").split()), signed_by))
    return entries


def parse_one_line(text: str) -> list[AptEntry]:
    """The `deb` entries of a one-line-style `sources.list` (`deb [options] URI SUITE COMPONENT...`)."""
    entries = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("deb") or not line[3:4].isspace():
            continue
        rest = line[3:].strip()
        options: dict[str, str] = {}
        if rest.startswith("["):
            inside, _, rest = rest[1:].partition("]")
            for option in inside.split():
                name, _, value = option.partition("=")
                options[name] = value
        words = rest.split()
        if len(words) < 2:
            continue
        entries.append(AptEntry(words[0], (words[1],), tuple(words[2:]), options.get("signed-by")))
    return entries


def apt_entries(etc: Path = APT_ETC) -> list[AptEntry]:
    """Every `deb` entry of the apt configuration under ETC, `.sources` files first."""
    entries: list[AptEntry] = []
    parts = etc / "sources.list.d"
    for path in sorted(parts.glob("*.sources")) if parts.is_dir() else []:
        entries += parse_deb822(path.read_text(errors="replace"))
    for path in sorted(parts.glob("*.list")) if parts.is_dir() else []:
        entries += parse_one_line(path.read_text(errors="replace"))
    if (etc / "sources.list").is_file():
        entries += parse_one_line((etc / "sources.list").read_text(errors="replace"))
    return entries


def release_suite(os_release: Path = Path("/etc/os-release")) -> str:
    """This machine's Debian codename (VERSION_CODENAME of os-release), e.g. `bookworm`."""
    for line in os_release.read_text().splitlines():
        name, _, value = line.partition("=")
        if name == "VERSION_CODENAME" and value.strip('"'):
            return value.strip('"')
    raise MirrorError(f"{os_release} has no VERSION_CODENAME")


def archive_entry(suite: str, etc: Path = APT_ETC) -> AptEntry:
    """The first `deb` entry of the apt configuration that serves SUITE with the `main` component."""
    entries = apt_entries(etc)
    for entry in entries:
        if suite in entry.suites and "main" in entry.components:
            return entry
    raise MirrorError(f"no `deb` entry for {suite} main in {etc}/sources.list.d/*.sources, "
                      f"*.list or {etc}/sources.list ({len(entries)} deb entries read); "
                      f"set CRASHWATCH_DEBIAN_MIRROR to the Debian archive URI")


def debian_mirror(suite: str, etc: Path = APT_ETC) -> str:
    """The Debian archive URI for SUITE: CRASHWATCH_DEBIAN_MIRROR if set, else apt's configuration."""
    override = os.environ.get("CRASHWATCH_DEBIAN_MIRROR")
    if override:
        return override
    return archive_entry(suite, etc).uri


def deb_src_line(suite: str, etc: Path = APT_ETC) -> str:
    """A one-line `deb-src` entry for SUITE main from the same archive and keyring as its `deb` entry."""
    override = os.environ.get("CRASHWATCH_DEBIAN_MIRROR")
    entry = archive_entry(suite, etc) if not override else AptEntry(override, (suite,), ("main",), None)
    options = f"[signed-by={entry.signed_by}] " if entry.signed_by else ""
    return f"deb-src {options}{entry.uri} {suite} main"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", help="the suite (default: VERSION_CODENAME of /etc/os-release)")
    parser.add_argument("--deb-src", action="store_true", help="print a deb-src entry, not the URI")
    args = parser.parse_args()
    try:
        suite = args.suite or release_suite()
        print(deb_src_line(suite) if args.deb_src else debian_mirror(suite))
    except (MirrorError, OSError) as error:
        print(f"debian_mirror: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
