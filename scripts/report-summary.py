#!/usr/bin/env python3
"""Prints a short human summary of a crashwatch report (used by `make demo`).

Usage: report-summary.py REPORT.json
"""
import json
import sys


def main(path):
    report = json.load(open(path))
    signal, process = report["signal"], report["process"]
    print("report    %s (schema %d, %s)" % (report["id"], report["schemaVersion"], report["kind"]))
    print("process   %s [%d], captured %s in %.1f ms"
          % (process["executable"], process["pid"], report["captureTime"], report["captureDurationMs"]))
    print("signal    %s (%s): %s" % (signal["name"], signal["codeName"], signal["description"]))
    images = report["images"]
    for thread in report["threads"]:
        if not thread["crashed"]:
            continue
        print("thread    %d \"%s\" crashed; unwinding: %s" % (thread["tid"], thread["name"], thread["unwindStopReason"]))
        for frame in thread["frames"]:
            image = images[frame["imageIndex"]] if frame["imageIndex"] is not None else None
            where = "%s:%s" % (frame["file"].rsplit("/", 1)[-1], frame["line"]) if frame["file"] else ""
            print("  #%-3d %s  %-26s %-28s %-12s %-7s%s%s" % (
                frame["index"], frame["address"], frame["function"] or "?", where,
                image["name"] if image else "?", frame["how"], " inlined" if frame["inlined"] else "",
                "  [in app]" if image and image["inApp"] else ""))
    print("threads   %d, images %d, soft errors %d" % (len(report["threads"]), len(images), len(report["softErrors"])))
    for image in images:
        print("  %-20s build-id %s  in-app %s" % (image["name"], image["buildID"], str(image["inApp"]).lower()))


if __name__ == "__main__":
    main(sys.argv[1])
