// ReportSummaryTests.swift — what a list line knows about a report: the fields taken from the fixture, the top
// in-app frame in each of its forms (with source, function only, image+offset, bare address, none), and the
// `list --json` text compared whole, escaping included, and read back with JSONDecoder.
import CrashwatchRender
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// `ReportSummary` extraction and its JSON text.
@Suite struct ReportSummaryTests {
    /// The fixture's summary takes the innermost in-app frame, which here is an inlined one.
    @Test func fieldsFromTheFixture() {
        let summary = ReportSummary(ExportFixture.report)
        var expected = ReportSummary(
            time: "2026-11-30T09:01:57.123Z", pid: 4242, executable: "/opt/shop/bin/checkout", signal: "SIGABRT",
            code: "SI_TKILL", topFrame: "parse_digit (parse.c:12)", id: "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13",
            app: AppRecord(name: "checkout", version: "3.1.0", release: "3.1.0+g1a2b3c"))
        expected.fingerprint = Fingerprint.of(ExportFixture.report).value
        expected.kind = "crash"
        expected.unit = "checkout.service"
        #expect(summary == expected)
        #expect(summary.version == "3.1.0")
        #expect(Fingerprint.of(ExportFixture.report).frames.first == "parse_digit")
        #expect(summary.shortID == "3f2b8c1e")
    }

    /// A crashed thread's report: the fixture without its original fault.
    private var withoutFault: CrashReport {
        var report = ExportFixture.report
        report.signal.originalFault = nil
        return report
    }

    /// With an original fault, its frames name the crash — where the fault happened, not the handler that
    /// re-raised; without one, the crashed thread's.
    @Test func topFrameOfTheOriginalFault() {
        var report = ExportFixture.report
        report.threads[0].frames = [FrameRecord(index: 0, address: Address(ExportFixture.crashPC), imageIndex: 0, function: "handler", how: .context)]
        #expect(ReportSummary(report).topFrame == "parse_digit (parse.c:12)")
        report.signal.originalFault?.frames = []
        #expect(ReportSummary(report).topFrame == "handler")
    }

    /// The top frame skips frames of images that are not in-app, even when they are innermost.
    @Test func topFrameSkipsSystemImages() {
        var report = withoutFault
        report.threads[0].frames = Array(ExportFixture.crashedFrames[4...])
        #expect(ReportSummary(report).topFrame == "_start")
    }

    /// Without source, the function alone; without a function, `image+0xoffset`; without an image, the address.
    @Test func topFrameForms() {
        var report = withoutFault
        let pc = Address(ExportFixture.crashPC)
        report.threads[0].frames = [FrameRecord(index: 0, address: pc, imageIndex: 0, imageOffset: 0x1189, function: "f", how: .context)]
        #expect(ReportSummary(report).topFrame == "f")
        report.threads[0].frames = [FrameRecord(index: 0, address: pc, imageIndex: 0, imageOffset: 0x1189, how: .context)]
        #expect(ReportSummary(report).topFrame == "checkout+0x1189")
        report.threads[0].frames = [FrameRecord(index: 0, address: pc, imageIndex: 0, how: .context)]
        #expect(ReportSummary(report).topFrame == "checkout+0x1189", "the offset is derived from the load address")
        report.threads[0].frames[0].file = "/src/shop/parse.c"
        #expect(ReportSummary(report).topFrame == "checkout+0x1189", "a file without a function does not name the frame")
    }

    /// No in-app image, no frames, or no crashed thread: no top frame.
    @Test func noTopFrame() {
        var noInApp = withoutFault
        noInApp.images = noInApp.images.map { var image = $0; image.inApp = false; return image }
        #expect(ReportSummary(noInApp).topFrame == nil)

        var noFrames = withoutFault
        noFrames.threads[0].frames = []
        #expect(ReportSummary(noFrames).topFrame == nil)

        var noCrashedThread = withoutFault
        noCrashedThread.threads[0].crashed = false
        #expect(ReportSummary(noCrashedThread).topFrame == nil)

        var badIndex = withoutFault
        badIndex.threads[0].frames = [FrameRecord(index: 0, address: 0x10, imageIndex: 7, how: .context)]
        #expect(ReportSummary(badIndex).topFrame == nil, "an image index out of range is no image")
    }

    /// The whole JSON text: keys in a fixed order, `null` written out, one object per line.
    @Test func jsonArray() {
        var older = ReportSummary(ExportFixture.report)
        older.time = "2026-11-29T23:59:59.999Z"
        older.pid = 987
        older.topFrame = nil
        older.app = nil
        older.id = "00aa11bb-0000-4000-8000-000000000001"
        older.shipAttempts = 3
        older.shipError = "HTTP 503"
        let value = Fingerprint.of(ExportFixture.report).value
        // The literal's last line is empty so the text ends in a newline.
        let expected = #"""
        [
          {"time": "2026-11-30T09:01:57.123Z", "pid": 4242, "executable": "/opt/shop/bin/checkout", "signal": "SIGABRT", "code": "SI_TKILL", "topFrame": "parse_digit (parse.c:12)", "id": "3f2b8c1e-9a4d-4c7e-8b21-5d0f6a7e9c13", "app": {"name": "checkout", "version": "3.1.0", "release": "3.1.0+g1a2b3c"}, "shipAttempts": null, "shipError": null, "fingerprint": "\#(value)", "kind": "crash", "unit": "checkout.service"},
          {"time": "2026-11-29T23:59:59.999Z", "pid": 987, "executable": "/opt/shop/bin/checkout", "signal": "SIGABRT", "code": "SI_TKILL", "topFrame": null, "id": "00aa11bb-0000-4000-8000-000000000001", "app": null, "shipAttempts": 3, "shipError": "HTTP 503", "fingerprint": "\#(value)", "kind": "crash", "unit": "checkout.service"}
        ]

        """#
        #expect(ReportSummary.json([ReportSummary(ExportFixture.report), older]) == expected)
        #expect(ReportSummary.json([]) == "[]\n")
    }

    /// Quotes, backslashes and control characters are escaped as in reports; `/` and non-ASCII are not.
    @Test func jsonEscaping() throws {
        let summary = ReportSummary(time: "t", pid: -1, executable: "/opt/a \"b\"\\c\u{1B}\n/é", signal: "SIGSEGV",
                                    code: "SEGV_MAPERR", topFrame: "f\t", id: "x", app: AppRecord(name: "n"))
        let expected = #"{"time": "t", "pid": -1, "executable": "/opt/a \"b\"\\c\u001b\n/é", "signal": "SIGSEGV", "code": "SEGV_MAPERR", "topFrame": "f\t", "id": "x", "app": {"name": "n", "version": null, "release": null}, "shipAttempts": null, "shipError": null, "fingerprint": null, "kind": "crash", "unit": null}"#
        #expect(summary.json() == expected)
        let decoded = try JSONDecoder().decode([ReportSummary].self, from: Data(ReportSummary.json([summary]).utf8))
        #expect(decoded == [summary])
    }

    /// What the JSON writer writes, `JSONDecoder` reads back as the same summaries.
    @Test func jsonRoundTrip() throws {
        let summaries = [ReportSummary(ExportFixture.report), ReportSummary(ExportFixture.olderReport)]
        let decoded = try JSONDecoder().decode([ReportSummary].self, from: Data(ReportSummary.json(summaries).utf8))
        #expect(decoded == summaries)
    }
}
