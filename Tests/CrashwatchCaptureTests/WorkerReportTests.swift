// WorkerReportTests.swift — what a worker's report is trusted for (WorkerReport.accept): frames and names,
// on the supervisor's own facts. The forged reports here are what a subverted worker — or a user who could
// rewrite its output — would write to have root file a report about someone else.
import CrashwatchCapture
import CrashwatchModel
import CrashwatchSystem
import Foundation
import Testing

@Suite struct WorkerReportTests {
    /// The capture of sampleCapture with two images and a handled fault on the crashed thread.
    private func capture() -> RawCapture {
        var capture = sampleCapture(maps: """
            00400000-00402000 r-xp 00000000 fd:01 1234 /opt/app/bin/app
            7f0000000000-7f0000100000 r-xp 00000000 fd:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6
            7ffc00000000-7ffc00002000 rw-p 00000000 00:00 0 [stack]

            """)
        capture.images = [RawImage(start: 0x40_0000), RawImage(start: 0x7f00_0000_0000)]
        capture.images[0].buildID = "aabbccdd"
        capture.handledFaults = [RawFault(tid: 42, signal: SignalInfo(signo: 11, code: 1, address: 8),
                                          timeNanoseconds: 1_699_999_999_000_000_000, registers: [])]
        return capture
    }

    /// What an honest worker writes: the capture's report with frames and names.
    private func honest(_ capture: RawCapture) -> CrashReport {
        var report = ReportBuilder.minimal(capture, crashwatchVersion: "9.9")
        report.threads[0].frames = [
            FrameRecord(index: 0, address: 0x40_1000, imageIndex: 0, imageOffset: 0x1000, symbol: "crash_here", function: "crash_here",
                        symbolOffset: 0x10, symbolSource: "symtab", file: "app.c", line: 21, column: 8, how: .context),
            FrameRecord(index: 1, address: 0x7f00_0000_2a4a, imageIndex: 1, imageOffset: 0x2a4a, symbol: "__libc_start_main",
                        function: "__libc_start_main", how: .cfi),
        ]
        report.threads[0].unwindStopReason = "end of stack"
        report.images.append(ImageRecord(path: "/usr/lib/x86_64-linux-gnu/libc.so.6", buildID: "1122", loadAddress: 0x7f00_0000_0000,
                                         size: 0x100000, fileOffset: 0, inApp: false, architecture: "x86_64", deleted: false,
                                         isMainExecutable: false, package: nil))
        report.softErrors = [SoftError(stage: "symbols", image: "libc.so.6", message: "no line table")]
        report.diagnostics.processing = .complete
        return report
    }

    private func bytes(_ report: CrashReport) throws -> [UInt8] { try report.encodedJSON() }

    @Test("the worker's annotations and breadcrumbs are taken bounded, under the operator's values, denied keys redacted again")
    func annotations() throws {
        var capture = capture()
        capture.operatorAnnotations = ["region": "eu-west-1"]
        // Without a table copied, nothing of the app's is taken.
        var forged = honest(capture)
        forged.annotations = ["made": "up"]
        forged.breadcrumbs = [BreadcrumbRecord(time: nil, level: "info", message: "made up")]
        let untaken = try WorkerReport.accept(bytes(forged), capture: capture, state: .complete, crashwatchVersion: "1.0")
        #expect(untaken.annotations == ["region": "eu-west-1"] && untaken.breadcrumbs == nil)
        capture.annotationTables = []
        forged = honest(capture)
        var annotations = ["region": "spoofed", "api_token": "leaked", "long": String(repeating: "v", count: 5000)]
        for number in 0..<400 { annotations["k\(number)"] = "v" }
        forged.annotations = annotations
        forged.breadcrumbs = (0..<1000).map { BreadcrumbRecord(time: $0 == 999 ? "yesterday" : nil, level: $0 == 999 ? "shouting" : "info",
                                                              message: String(repeating: "m", count: $0 == 999 ? 9000 : 1)) }
        let report = try WorkerReport.accept(bytes(forged), capture: capture, state: .complete, crashwatchVersion: "1.0")
        let taken = try #require(report.annotations)
        #expect(taken.count == 256)
        #expect(taken["region"] == "eu-west-1")
        #expect(taken["api_token"] == nil || taken["api_token"] == "<redacted>")
        #expect(taken.values.allSatisfy { $0.utf8.count <= 1024 })
        let crumbs = try #require(report.breadcrumbs)
        #expect(crumbs.count == 256)
        #expect(crumbs.last.map { [$0.time == nil, $0.level == "unknown", $0.message.utf8.count == 1024] } == [true, true, true])
    }

    @Test("an honest worker's frames, names and soft errors are kept, placed among the capture's images")
    func honestReport() throws {
        let capture = capture()
        let report = try WorkerReport.accept(bytes(honest(capture)), capture: capture, state: .complete, crashwatchVersion: "1.0")
        let frames = report.threads[0].frames
        #expect(frames.map(\.function) == ["crash_here", "__libc_start_main"])
        #expect(frames.map(\.line) == [21, nil])
        #expect(frames.map(\.imageIndex) == [0, 1])
        #expect(frames[1].imageOffset == Address(0x2a4a))
        #expect(report.images.map(\.path) == ["/opt/app/bin/app", "/usr/lib/x86_64-linux-gnu/libc.so.6"])
        // A build-id the capture lacks comes from the worker (read from the very file); one it has is its own.
        #expect(report.images.map(\.buildID) == ["aabbccdd", "1122"])
        #expect(report.threads[0].unwindStopReason == "end of stack")
        #expect(report.softErrors.map(\.message) == ["no line table"])
        #expect(report.diagnostics.processing == .complete)
        #expect(report.crashwatchVersion == "1.0")
    }

    @Test("a forged report naming another process, user, unit, signal, executable and images gets the capture's facts")
    func forgedFacts() throws {
        let capture = capture()
        var forged = honest(capture)
        forged.process = ProcessRecord(pid: 1, ppid: 0, executable: "/usr/sbin/sshd", commandLine: ["/usr/sbin/sshd", "-D"],
                                       uid: 0, gid: 0, comm: "sshd", cgroup: "/system.slice/sshd.service", systemdUnit: "sshd.service")
        forged.kind = .hang
        forged.captureTime = "2020-01-01T00:00:00.000Z"
        forged.signal.number = 6
        forged.signal.name = "SIGABRT"
        forged.host.hostname = "elsewhere"
        forged.threads[0].tid = 42
        forged.threads[0].name = "sshd"
        forged.threads[0].registers = [RegisterValue("rip", 0xdead)]
        forged.threads.append(ThreadRecord(tid: 7, name: "ghost", crashed: false, registers: [], frames: [], unwindStopReason: nil))
        forged.images[0] = ImageRecord(path: "/usr/sbin/sshd", buildID: "ffff", loadAddress: 0x40_0000, size: 1, fileOffset: 0,
                                       inApp: true, architecture: "x86_64", deleted: false, isMainExecutable: true, package: nil)
        forged.diagnostics.ptraceScope = 0
        let report = try WorkerReport.accept(bytes(forged), capture: capture, state: .complete, crashwatchVersion: "1.0")
        let expected = ReportBuilder.minimal(capture, crashwatchVersion: "1.0")
        #expect(report.process == expected.process)
        #expect(report.kind == .crash)
        #expect(report.captureTime == expected.captureTime)
        #expect(report.signal.name == "SIGSEGV" && report.signal.number == 11)
        #expect(report.host == expected.host)
        #expect(report.threads.map(\.tid) == [42], "a thread the capture does not have was added")
        #expect(report.threads[0].name == "main" && report.threads[0].registers == expected.threads[0].registers)
        #expect(report.images[0].path == "/opt/app/bin/app" && report.images[0].buildID == "aabbccdd" && report.images[0].isMainExecutable)
        #expect(report.diagnostics.ptraceScope == 1)
        // What the worker found stays: its frames.
        #expect(report.threads[0].frames.first?.function == "crash_here")
    }

    @Test("a worker's fingerprint is never taken: the written report's is computed from the accepted frames")
    func fingerprintNotTaken() throws {
        let capture = capture()
        var forged = honest(capture)
        forged.fingerprint = FingerprintRecord(algorithm: "crashwatch-1", value: String(repeating: "0", count: 32), kind: "crash",
                                               signal: "SIGSEGV", program: "sshd", frames: ["someone_elses_bug"])
        let report = try WorkerReport.accept(bytes(forged), capture: capture, state: .complete, crashwatchVersion: "1.0")
        #expect(report.fingerprint == nil)
        let written = try CrashReport.decode(ReportSizeLimit.encode(report, limit: 1 << 20))
        let fingerprint = try #require(written.fingerprint)
        #expect(fingerprint.frames == ["crash_here"] && fingerprint.program == "app")
        #expect(fingerprint == Fingerprint.of(report))
    }

    @Test("a report that is not this crash's, not JSON, or names a handled fault the supervisor did not see is refused")
    func refused() throws {
        let capture = capture()
        var other = honest(capture)
        other.id = CrashReport.newID()
        #expect(throws: WorkerReportError.self) { try WorkerReport.accept(bytes(other), capture: capture, state: .complete, crashwatchVersion: "1") }
        #expect(throws: WorkerReportError.self) { try WorkerReport.accept(Array("{\"schemaVersion\": 1".utf8), capture: capture, state: .complete, crashwatchVersion: "1") }
        var invented = honest(capture)
        invented.signal.activeFaults = [OriginalFault(SignalInfo(signo: 7, code: 2, address: 0), tid: 42, time: "2023-11-14T22:13:19.000Z", registers: [])]
        #expect(throws: WorkerReportError.self) { try WorkerReport.accept(bytes(invented), capture: capture, state: .complete, crashwatchVersion: "1") }
    }

    @Test("an active fault the supervisor saw is taken as it saw it; frames are bounded, names capped, lines checked")
    func boundedFrames() throws {
        var capture = capture()
        capture.options.maxFrames = 2
        let fault = capture.handledFaults[0]
        var report = honest(capture)
        report.signal.activeFaults = [OriginalFault(SignalInfo(signo: 11, code: 1, address: 8), tid: 42,
                                                    time: RFC3339.format(nanosecondsSinceEpoch: fault.timeNanoseconds), registers: [RegisterValue("rip", 1)])]
        let long = String(repeating: "n", count: 10_000)
        report.threads[0].frames = (0..<100).map { index in
            FrameRecord(index: 0, address: Address(0x40_1000 + UInt64(index)), function: long, line: -5, how: FrameTrust(rawValue: String(repeating: "h", count: 500)))
        }
        let accepted = try WorkerReport.accept(bytes(report), capture: capture, state: .unwound, crashwatchVersion: "1")
        #expect(accepted.signal.activeFaults.count == 1)
        #expect(accepted.signal.activeFaults.first?.registers.isEmpty == true, "the worker's registers were taken for the fault")
        #expect(accepted.threads[0].frames.count == 2 * 16)
        #expect(accepted.threads[0].frames.map(\.index) == Array(0..<32))
        #expect(accepted.threads[0].frames.allSatisfy { ($0.function?.utf8.count ?? 0) <= maximumNameBytes && $0.line == nil })
        #expect(accepted.threads[0].frames.allSatisfy { $0.how.rawValue.utf8.count <= 64 })
        #expect(accepted.diagnostics.processing == .unwound)
    }
}
