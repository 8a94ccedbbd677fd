#!/usr/bin/env python3
"""Builds crashwatch_VERSION_ARCH.deb from a built binary with dpkg-deb (what `make deb` runs).

    python3 scripts/build_deb.py BINARY OUTDIR     # prints the path of the .deb it wrote

The package needs no Swift where it is installed: BINARY is the release build with the Swift runtime
linked in (`make build`, --static-swift-stdlib). Its contents:

    /usr/bin/crashwatch                                      the binary
    /lib/systemd/system/crashwatch-{prune,ship}.*            systemd/'s units (enabled by the operator)
    /usr/lib/sysusers.d/crashwatch.conf                      the readers' and writers' groups, the worker's user
    /usr/lib/tmpfiles.d/crashwatch.conf                      the shared spool /var/lib/crashwatch/reports
    /etc/crashwatch.conf                                     the settings file, a conffile
    /usr/share/man/man1/crashwatch.1.gz, man5/crashwatch.conf.5.gz   `crashwatch __manual`, from the option tables
    /usr/share/bash-completion/completions/crashwatch        the same, for bash
    /usr/share/zsh/vendor-completions/_crashwatch            and zsh
    /usr/share/doc/crashwatch/                               README.md, copyright, the example unit and drop-in
    /usr/include/crashwatch/crashwatch_annotations.h         the annotation table's C header (docs/annotations.md)
    /usr/share/crashwatch/annotations/                       annotations/ as in the repository: the C header, the
                                                             Rust module, the Go package, the Swift module map

`Depends:` is what dpkg-shlibdeps computes from the binary's shared libraries (their packages' symbols or
shlibs files), plus systemd, whose systemd-sysusers and systemd-tmpfiles the maintainer scripts run;
libcurl4, which `crashwatch ship` loads with dlopen (so no tool sees it), is `Recommends:`. The files are
root's in the archive (dpkg-deb --root-owner-group), whoever builds it.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYSTEMD = REPO / "systemd"
ANNOTATIONS = REPO / "annotations"
PACKAGE = "crashwatch"
MAINTAINER = "crashwatch developers <crashwatch@localhost>"
UNITS = ["crashwatch-prune.service", "crashwatch-prune.timer", "crashwatch-ship.service", "crashwatch-ship.path"]
EXAMPLES = ["crashwatch-example.service", "crashwatch-wrap.conf"]
RECOMMENDS = "libcurl4"
DESCRIPTION = """\
out-of-process crash reporter
 crashwatch runs a program as its traced child; when the program crashes, a separate, healthy process
 stops every thread, unwinds every stack, names the frames, and writes a versioned JSON report into a
 spool, one journal entry, and exits as the program did. No SDK, no signal handler, no code change.
 Includes systemd units to prune and ship the spool's reports, and `crashwatch doctor`."""

# Maintainer scripts. sysusers before tmpfiles: the spool's groups must exist before it is made.
POSTINST = """\
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    systemd-sysusers crashwatch.conf
    systemd-tmpfiles --create crashwatch.conf
    if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
fi
"""

PRERM = """\
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl stop UNITS >/dev/null 2>&1 || true
fi
""".replace("UNITS", " ".join(UNITS))

# purge removes what the package made beside its files: the spool and its reports, the worker's debug
# cache, the runtime spool, the operator's enablement links of its units, its user and groups.
POSTRM = """\
#!/bin/sh
set -e
if [ "$1" = purge ]; then
    rm -rf /var/lib/crashwatch /var/cache/crashwatch /run/crashwatch
    for unit in UNITS; do
        find /etc/systemd/system -name "$unit" -type l -delete 2>/dev/null || true
    done
    if getent passwd crashwatch-worker >/dev/null; then userdel crashwatch-worker; fi
    for group in crashwatch-writers crashwatch; do
        if getent group "$group" >/dev/null; then groupdel "$group"; fi
    done
fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
""".replace("UNITS", " ".join(UNITS))

COPYRIGHT = """\
crashwatch

Copyright: crashwatch developers
License: see the crashwatch source repository
"""


def run(argv: list[str], **kwargs) -> str:
    """Runs argv, returning its stdout; a failure raises with its stderr."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"build_deb: {' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def put(root: Path, path: str, data: bytes | str, mode: int = 0o644) -> None:
    """Writes DATA to ROOT/PATH (parents made 0755) with MODE."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)
    os.chmod(target, mode)


def gzipped(text: str) -> bytes:
    """TEXT gzip-compressed at level 9 without a name or time stamp (reproducible, as dh_installman does)."""
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def depends(binary: Path) -> str:
    """`Depends:` from dpkg-shlibdeps over the binary's shared libraries (it needs a debian/control)."""
    with tempfile.TemporaryDirectory(prefix="cw-shlibdeps.") as work:
        Path(work, "debian").mkdir()
        Path(work, "debian/control").write_text(f"Source: {PACKAGE}\n\nPackage: {PACKAGE}\nArchitecture: any\n")
        out = run(["dpkg-shlibdeps", "-O", f"-e{binary}"], cwd=work)
    computed = out.strip().split("=", 1)[1] if "=" in out else ""
    return ", ".join(part for part in [computed, "systemd"] if part)


def build(binary: Path, outdir: Path) -> Path:
    version = run([str(binary), "--version"]).split()[-1]
    arch = run(["dpkg", "--print-architecture"]).strip()
    manual = {part: run([str(binary), "__manual", part]) for part in ["crashwatch.1", "crashwatch.conf.5", "bash", "zsh"]}
    staging = Path(tempfile.mkdtemp(prefix="cw-deb.", dir=outdir))
    try:
        root = staging / "root"
        put(root, "/usr/bin/crashwatch", binary.read_bytes(), 0o755)
        for unit in UNITS:
            put(root, f"/lib/systemd/system/{unit}", (SYSTEMD / unit).read_text())
        put(root, "/usr/lib/sysusers.d/crashwatch.conf", (SYSTEMD / "crashwatch.sysusers").read_text())
        put(root, "/usr/lib/tmpfiles.d/crashwatch.conf", (SYSTEMD / "crashwatch-tmpfiles.conf").read_text())
        put(root, "/etc/crashwatch.conf", (SYSTEMD / "crashwatch.conf").read_text())
        put(root, "/usr/share/man/man1/crashwatch.1.gz", gzipped(manual["crashwatch.1"]))
        put(root, "/usr/share/man/man5/crashwatch.conf.5.gz", gzipped(manual["crashwatch.conf.5"]))
        put(root, "/usr/share/bash-completion/completions/crashwatch", manual["bash"])
        put(root, "/usr/share/zsh/vendor-completions/_crashwatch", manual["zsh"])
        put(root, "/usr/share/doc/crashwatch/copyright", COPYRIGHT)
        put(root, "/usr/share/doc/crashwatch/README.md", (REPO / "README.md").read_text())
        for example in EXAMPLES:
            put(root, f"/usr/share/doc/crashwatch/examples/{example}", (SYSTEMD / example).read_text())
        # The annotation helpers keep their tree: each finds the C header where the repository has it.
        put(root, "/usr/include/crashwatch/crashwatch_annotations.h", (ANNOTATIONS / "crashwatch_annotations.h").read_text())
        for helper in sorted(p for p in ANNOTATIONS.rglob("*") if p.is_file()):
            put(root, f"/usr/share/crashwatch/annotations/{helper.relative_to(ANNOTATIONS)}", helper.read_text())
        for directory in [root] + [p for p in root.rglob("*") if p.is_dir()]:
            os.chmod(directory, 0o755)
        size_kib = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) // 1024 + 1
        control = (f"Package: {PACKAGE}\nVersion: {version}\nArchitecture: {arch}\nMaintainer: {MAINTAINER}\n"
                   f"Installed-Size: {size_kib}\nDepends: {depends(binary)}\nRecommends: {RECOMMENDS}\n"
                   f"Section: utils\nPriority: optional\nDescription: {DESCRIPTION}\n")
        put(root, "DEBIAN/control", control)
        put(root, "DEBIAN/conffiles", "/etc/crashwatch.conf\n")
        put(root, "DEBIAN/postinst", POSTINST, 0o755)
        put(root, "DEBIAN/prerm", PRERM, 0o755)
        put(root, "DEBIAN/postrm", POSTRM, 0o755)
        deb = outdir / f"{PACKAGE}_{version}_{arch}.deb"
        run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(root), str(deb)])
        return deb
    finally:
        shutil.rmtree(staging)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 64
    outdir = Path(argv[2]).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    print(build(Path(argv[1]).resolve(), outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
