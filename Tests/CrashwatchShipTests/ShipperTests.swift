// ShipperTests.swift — the shipper against a scripted transport and a real spool in a temporary directory:
// every report ends shipped (gone), quarantined (with the reason), or kept (back in the spool with its
// attempt recorded, not sent again before it is due); a batch the endpoint refuses is narrowed down report by
// report. Also the OTLP mapping of the example report.
import CrashwatchModel
import CrashwatchRender
import CrashwatchShip
import CrashwatchSpool
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

/// Answers requests from a script (the last answer repeats) and keeps every body it was sent.
final class ScriptedTransport: ExportTransport {
    var answers: [Result<HTTPResponse, TransportError>]
    private(set) var bodies: [[UInt8]] = []
    let endpoint = "http://collector.test/v1/logs"

    init(_ answers: [Result<HTTPResponse, TransportError>]) { self.answers = answers }

    func send(_ body: [UInt8]) throws(TransportError) -> HTTPResponse {
        bodies.append(body)
        let answer = answers.count > 1 ? answers.removeFirst() : answers[0]
        return try answer.get()
    }

    /// The `crashwatch.report.id` of every record of request `index`.
    func reportIDs(_ index: Int) -> [String] {
        let object = try! JSONSerialization.jsonObject(with: Data(bodies[index])) as! [String: Any]
        return (object["resourceLogs"] as! [[String: Any]]).flatMap { resource in
            ((resource["scopeLogs"] as! [[String: Any]])[0]["logRecords"] as! [[String: Any]]).map { record in
                let attributes = record["attributes"] as! [[String: Any]]
                let id = attributes.first { $0["key"] as? String == "crashwatch.report.id" }!
                return (id["value"] as! [String: String])["stringValue"]!
            }
        }
    }
}

let ok = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 200, body: Array("{}".utf8)))

/// A temporary spool holding copies of the example report with fresh ids.
struct TestSpool {
    let temporary: TemporaryDirectory
    let spool: Spool
    var names: [ReportFileName] = []

    static let example = SampleReport.exampleBytes

    init(reports: Int) throws {
        temporary = try TemporaryDirectory("crashwatch-ship-test", mode: 0o700)
        spool = try Spool(path: temporary.join("spool"))
        let exampleID = try CrashReport.decode(Self.example).id
        for index in 0..<reports {
            let id = UUID()
            let text = String(decoding: Self.example, as: UTF8.self).replacingOccurrences(of: exampleID, with: id.uuidString.lowercased())
            let name = ReportFileName(timeNanoseconds: 1_796_000_000_000_000_000 + Int64(index) * 1_000_000, pid: 4242,
                                      executable: "segv_reraise", id: id)
            _ = try spool.write(bytes: Array(text.utf8), name: name)
            names.append(name)
        }
    }

    func remove() { temporary.remove() }
}

/// A clock the test moves.
final class TestClock {
    var now: Int64 = 1_800_000_000_000_000_000
}

@Suite struct ShipperTests {
    func shipper(_ spool: Spool, _ transport: ScriptedTransport, clock: TestClock, batch: Int = 10,
                 events: @escaping (ShipEvent) -> Void = { _ in }) -> Shipper {
        var options = ShipOptions(scope: OTLPLogs.Scope(version: "test"))
        options.batch = batch
        return Shipper(spool: spool, transport: transport, options: options, now: { clock.now }, random: { 0 }, observe: events)
    }

    @Test func acceptedReportsLeaveTheSpoolInBatches() throws {
        let test = try TestSpool(reports: 5)
        defer { test.remove() }
        let transport = ScriptedTransport([ok])
        var shipped: [ReportFileName] = []
        let totals = try shipper(test.spool, transport, clock: TestClock(), batch: 2) { event in
            if case .shipped(let name) = event { shipped.append(name) }
        }.drain()
        #expect(totals.shipped == 5 && totals.kept == 0 && !totals.paused)
        #expect(transport.bodies.count == 3)
        #expect(shipped == test.names)
        #expect(transport.reportIDs(0) == test.names.prefix(2).map(\.idText))
        #expect(try test.spool.reportNames().isEmpty && test.spool.claims().isEmpty)
    }

    @Test func aFailedExportKeepsTheReportsWithTheirAttemptsUntilDue() throws {
        let test = try TestSpool(reports: 2)
        defer { test.remove() }
        let clock = TestClock()
        let transport = ScriptedTransport([.success(HTTPResponse(status: 503, body: [], retryAfterSeconds: 3)), ok])
        var kept: [ShipEvent] = []
        let shipper = shipper(test.spool, transport, clock: clock) { if case .kept = $0 { kept.append($0) } }
        let first = try shipper.drain()
        #expect(first.kept == 2 && first.paused && first.shipped == 0)
        #expect(kept == test.names.map { .kept($0, attempts: 1, retryInMs: 3_000, error: "HTTP 503") })
        // Back in the spool, unclaimed, with the attempt recorded for every shipper to see.
        #expect(try test.spool.reportNames() == test.names && test.spool.claims().isEmpty)
        let attempts = test.spool.allAttempts()
        #expect(attempts[test.names[0]] == DeliveryAttempts(count: 1, lastAttempt: clock.now, nextAttempt: clock.now + 3_000_000_000,
                                                              lastError: "HTTP 503"))
        #expect(shipper.nextWake() == clock.now + 3_000_000_000)
        // Not before Retry-After: nothing is sent.
        clock.now += 2_000_000_000
        #expect(try shipper.drain().paused)
        #expect(transport.bodies.count == 1)
        // Due: sent again, the same records (ids), and the attempt records go with the reports.
        clock.now += 1_000_000_001
        let second = try shipper.drain()
        #expect(second.shipped == 2)
        #expect(transport.reportIDs(1) == transport.reportIDs(0))
        #expect(transport.bodies[1] == transport.bodies[0])
        #expect(try test.spool.allAttempts().isEmpty && test.spool.reportNames().isEmpty)
    }

    @Test func anotherShipperRespectsTheRecordedNextAttempt() throws {
        let test = try TestSpool(reports: 1)
        defer { test.remove() }
        let clock = TestClock()
        _ = try shipper(test.spool, ScriptedTransport([.failure(TransportError(kind: .connect, code: 7, message: "refused"))]),
                        clock: clock).drain()
        let second = ScriptedTransport([ok])
        let other = shipper(test.spool, second, clock: clock)
        #expect(try other.drain() == ShipTotals())
        #expect(second.bodies.isEmpty)
        #expect(other.nextWake() == test.spool.attempts(of: test.names[0])?.nextAttempt)
        clock.now += 1_000_000_000
        #expect(try other.drain().shipped == 1)
    }

    @Test func aDeadShippersClaimIsTakenOverWhenDue() throws {
        let test = try TestSpool(reports: 1)
        defer { test.remove() }
        let clock = TestClock()
        // A shipper that recorded a failed attempt and died holding the claim (no such pid runs).
        let dead = ClaimHolder(pid: 4_000_000, startTicks: 1)
        let claim = try test.spool.claim(limit: 1, holder: dead)[0]
        try test.spool.recordFailedAttempt(claim, error: "HTTP 503", nextAttempt: clock.now + 5_000_000_000, now: clock.now)
        let transport = ScriptedTransport([ok])
        let shipper = shipper(test.spool, transport, clock: clock)
        #expect(try shipper.drain() == ShipTotals())
        #expect(shipper.nextWake() == clock.now + 5_000_000_000)
        clock.now += 5_000_000_000
        #expect(try shipper.drain().shipped == 1)
        #expect(try test.spool.claims().isEmpty)
    }

    @Test func aFarFutureNextAttemptIsNotBelieved() throws {
        let test = try TestSpool(reports: 1)
        defer { test.remove() }
        let clock = TestClock()
        let claim = try test.spool.claim(limit: 1)[0]
        try test.spool.recordFailedAttempt(claim, error: "planted", nextAttempt: Int64.max, now: clock.now)
        try test.spool.release(claim)
        #expect(try shipper(test.spool, ScriptedTransport([ok]), clock: clock).drain().shipped == 1)
    }

    @Test func aRefusedBatchIsNarrowedDownReportByReport() throws {
        let test = try TestSpool(reports: 3)
        defer { test.remove() }
        let refused = Result<HTTPResponse, TransportError>.success(HTTPResponse(status: 400, body: Array(#"{"code":3,"message":"bad record"}"#.utf8)))
        let transport = ScriptedTransport([refused, ok, refused, ok])
        var quarantined: [ReportFileName] = []
        let totals = try shipper(test.spool, transport, clock: TestClock()) { event in
            if case .quarantined(let name, let reason) = event {
                quarantined.append(name)
                #expect(reason == "refused by http://collector.test/v1/logs: HTTP 400: bad record")
            }
        }.drain()
        #expect(totals.shipped == 2 && totals.quarantined == 1)
        #expect(transport.bodies.count == 4)
        #expect(transport.reportIDs(0).count == 3 && transport.reportIDs(2) == [test.names[1].idText])
        #expect(quarantined == [test.names[1]])
        let files = try test.spool.quarantined()
        #expect(files.map(\.name) == [test.names[1].text])
        #expect(files.first?.reason == "refused by http://collector.test/v1/logs: HTTP 400: bad record")
    }

    @Test func aPartialSuccessOfOneRecordQuarantinesIt() throws {
        let test = try TestSpool(reports: 1)
        defer { test.remove() }
        let partial = Result<HTTPResponse, TransportError>.success(HTTPResponse(
            status: 200, body: Array(#"{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"timestamp too old"}}"#.utf8)))
        let totals = try shipper(test.spool, ScriptedTransport([partial]), clock: TestClock()).drain()
        #expect(totals.quarantined == 1)
        #expect(try test.spool.quarantined().first?.reason == "refused by http://collector.test/v1/logs: rejected 1 record: timestamp too old")
    }

    @Test func aFileThatIsNotAReportIsQuarantinedUnsent() throws {
        var test = try TestSpool(reports: 1)
        defer { test.remove() }
        let broken = ReportFileName(timeNanoseconds: 1_700_000_000_000_000_000, pid: 1, executable: "x", id: UUID())
        _ = try test.spool.write(bytes: Array("{\"format\":\"something else\"}".utf8), name: broken)
        test.names.insert(broken, at: 0)
        let transport = ScriptedTransport([ok])
        let totals = try shipper(test.spool, transport, clock: TestClock()).drain()
        #expect(totals.quarantined == 1 && totals.shipped == 1)
        #expect(transport.reportIDs(0) == [test.names[1].idText])
        #expect(try test.spool.quarantined().first?.reason?.hasPrefix("not a crashwatch report") == true)
    }

    @Test func reportsAnotherLiveProcessHoldsAreLeftAlone() throws {
        let test = try TestSpool(reports: 2)
        defer { test.remove() }
        // pid 1 is alive and never this test: its claim must not be taken.
        let holder = try ClaimHolder(process: 1)
        _ = try test.spool.claim(limit: 1, holder: holder)
        let transport = ScriptedTransport([ok])
        #expect(try shipper(test.spool, transport, clock: TestClock()).drain().shipped == 1)
        #expect(transport.reportIDs(0) == [test.names[1].idText])
        #expect(try test.spool.claims().map(\.holder) == [holder])
    }

    @Test func aReportStillBeingProcessedWaitsForItsFullForm() throws {
        let test = try TestSpool(reports: 0)
        defer { test.remove() }
        let clock = TestClock()
        let id = UUID()
        let name = ReportFileName(timeNanoseconds: clock.now - 1_000_000_000, pid: 7, executable: "app", id: id)
        let exampleID = try CrashReport.decode(TestSpool.example).id
        let complete = String(decoding: TestSpool.example, as: UTF8.self).replacingOccurrences(of: exampleID, with: id.uuidString.lowercased())
            .replacingOccurrences(of: #""processing": null"#, with: #""processing": "complete""#)
        let minimal = complete.replacingOccurrences(of: #""processing": "complete""#, with: #""processing": "minimal""#)
        #expect(minimal != complete)
        _ = try test.spool.write(bytes: Array(minimal.utf8), name: name)
        let transport = ScriptedTransport([ok])
        let shipper = shipper(test.spool, transport, clock: clock)
        #expect(try shipper.drain() == ShipTotals())
        #expect(transport.bodies.isEmpty)
        #expect(shipper.nextWake() == name.timeNanoseconds + 30_000_000_000)
        // The worker's full report replaces it under the same name: sent at once, whole.
        _ = try test.spool.write(bytes: Array(complete.utf8), name: name)
        #expect(try shipper.drain().shipped == 1)
        #expect(String(decoding: transport.bodies[0], as: UTF8.self).contains(#"\"processing\": \"complete\""#))
        // A minimal report past the grace (its worker died) is sent as it is.
        let late = ReportFileName(timeNanoseconds: clock.now - 31_000_000_000, pid: 8, executable: "app", id: UUID())
        _ = try test.spool.write(bytes: Array(minimal.utf8), name: late)
        #expect(try shipper.drain().shipped == 1)
    }

    @Test func aCancelledRequestGivesItsReportsBackUntouched() throws {
        let test = try TestSpool(reports: 3)
        defer { test.remove() }
        let transport = ScriptedTransport([.failure(TransportError(kind: .cancelled, code: 42, message: "Callback aborted")), ok])
        let totals = try shipper(test.spool, transport, clock: TestClock(), batch: 2).drain()
        #expect(totals.cancelled && totals.shipped == 0 && totals.kept == 0)
        #expect(transport.bodies.count == 1)
        #expect(try test.spool.reportNames() == test.names && test.spool.claims().isEmpty)
        #expect(test.spool.allAttempts().isEmpty)
    }

    @Test func pruningForgetsTheAttemptsOfRemovedReports() throws {
        let test = try TestSpool(reports: 2)
        defer { test.remove() }
        _ = try shipper(test.spool, ScriptedTransport([.success(HTTPResponse(status: 500, body: []))]), clock: TestClock()).drain()
        #expect(test.spool.allAttempts().count == 2)
        _ = try test.spool.prune(policy: RetentionPolicy(maxReports: 1))
        #expect(Array(test.spool.allAttempts().keys) == [test.names[1]])
    }
}

@Suite struct OTLPMappingTests {
    let report = try! CrashReport.decode(TestSpool.example)

    func record(_ report: CrashReport) throws -> (resource: [String: Any], record: [String: Any], attributes: [String: [String: Any]]) {
        let request = OTLPLogs.request(for: report, reportText: TestSpool.example, scope: OTLPLogs.Scope(version: "9.9"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request)) as? [String: Any])
        let resourceLogs = try #require((object["resourceLogs"] as? [[String: Any]])?.first)
        let scope = try #require((resourceLogs["scopeLogs"] as? [[String: Any]])?.first)
        #expect(scope["scope"] as? [String: String] == ["name": "crashwatch", "version": "9.9"])
        let record = try #require((scope["logRecords"] as? [[String: Any]])?.first)
        var attributes: [String: [String: Any]] = [:]
        for attribute in record["attributes"] as! [[String: Any]] {
            attributes[attribute["key"] as! String] = attribute["value"] as? [String: Any]
        }
        return (resourceLogs["resource"] as! [String: Any], record, attributes)
    }

    @Test func aCrashIsAnAppCrashRecordAtTheCrashTime() throws {
        let (resource, record, attributes) = try record(report)
        #expect(record["eventName"] as? String == "app.crash")
        #expect(record["severityNumber"] as? Int == 21 && record["severityText"] as? String == "FATAL")
        let time = try #require(RFC3339.parse(report.captureTime))
        #expect(record["timeUnixNano"] as? String == String(time))
        #expect(record["observedTimeUnixNano"] as? String == String(time))
        #expect((record["body"] as? [String: String])?["stringValue"] == String(decoding: TestSpool.example, as: UTF8.self))
        #expect(attributes["app.crash.id"]?["stringValue"] as? String == report.id)
        #expect(attributes["exception.type"]?["stringValue"] as? String == "\(report.signal.name) (\(report.signal.codeName))")
        #expect(attributes["app.build_id"]?["stringValue"] as? String == "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3")
        #expect(attributes["service.version"]?["stringValue"] as? String == "2.4.1")
        #expect(attributes["session.id"]?["stringValue"] as? String == "0b6f1c6e2d8a4f0e9e3f5a7c1d2b4e6f")
        #expect(attributes["os.name"]?["stringValue"] as? String == "Debian GNU/Linux")
        let resourceAttributes = Dictionary(uniqueKeysWithValues: (resource["attributes"] as! [[String: Any]]).map {
            ($0["key"] as! String, $0["value"] as! [String: Any])
        })
        #expect(resourceAttributes["service.name"]?["stringValue"] as? String == "demo")
        #expect(resourceAttributes["host.arch"]?["stringValue"] as? String == "amd64")
        #expect(resourceAttributes["process.pid"]?["intValue"] as? String == "4242")
        let arguments = (resourceAttributes["process.command_args"]?["arrayValue"] as? [String: Any])?["values"] as? [[String: String]]
        #expect(arguments?.map { $0["stringValue"]! } == report.process.commandLine)
    }

    @Test func theStacktraceHasOneLinePerFrameOfTheFault() throws {
        let attributes = try record(report).attributes
        let lines = try #require(attributes["exception.stacktrace"]?["stringValue"] as? String).split(separator: "\n")
        let frames = ReportSummary.faultFrames(of: report)
        #expect(lines.count == frames.count)
        for (line, frame) in zip(lines, frames) {
            #expect(line.contains(String(format: "0x%016llx", frame.address.value)))
            if let function = frame.function { #expect(line.contains(function)) }
        }
        let images = try #require(attributes["apsio.crash.images"]?["stringValue"] as? String)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(images.utf8)) as? [[String: Any]])
        #expect(parsed.contains { $0["name"] as? String == "segv_reraise" && $0["in_app"] as? Bool == true
                                  && $0["build_id"] as? String == "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3"
                                  && $0["load_address"] as? String == "0x55812a400000" && $0["architecture"] as? String == "x86_64" })
    }

    @Test func logRecordUIDIsAStableULIDFromTimeAndID() {
        let uid = OTLPLogs.logRecordUID(of: report)
        #expect(uid.count == 26 && uid == OTLPLogs.logRecordUID(of: report))
        #expect(uid.allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains($0) })
        // The first ten characters are the milliseconds of the crash (ULID layout).
        let milliseconds = RFC3339.parse(report.captureTime)! / 1_000_000
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        let decoded = uid.prefix(10).reduce(Int64(0)) { $0 * 32 + Int64(alphabet.firstIndex(of: $1)!) }
        #expect(decoded == milliseconds)
        var other = report
        other.id = "00000000-0000-4000-8000-000000000000"
        #expect(OTLPLogs.logRecordUID(of: other) != uid)
    }

    @Test func hangsAndAbnormalExitsHaveTheirOwnEvents() throws {
        var hang = report
        hang.kind = .hang
        hang.hang = HangRecord(source: "watchdog", startTime: "2026-11-30T09:02:00.000Z", durationMs: 1234.9, watchdogTimeoutMs: 2000)
        let (_, hangRecord, hangAttributes) = try record(hang)
        #expect(hangRecord["eventName"] as? String == "apsio.hang" && hangRecord["severityNumber"] as? Int == 13)
        #expect(hangRecord["timeUnixNano"] as? String == String(RFC3339.parse("2026-11-30T09:02:00.000Z")!))
        #expect(hangAttributes["apsio.hang.duration"]?["intValue"] as? String == "1234")
        #expect(hangAttributes["apsio.hang.source"]?["stringValue"] as? String == "live")
        #expect(hangAttributes["apsio.hang.unfinished"]?["boolValue"] as? Bool == true)
        #expect(hangAttributes["app.crash.id"] == nil && hangAttributes["exception.type"] == nil)
        // A hostile report's duration cannot trap the shipper.
        for bad in [Double.greatestFiniteMagnitude, -5, 1e300] {
            hang.hang?.durationMs = bad
            _ = try record(hang)
        }

        var exit = report
        exit.kind = .abnormalExit
        exit.exit = ExitRecord(reason: "memory", source: "platform", evidence: nil)
        let (_, exitRecord, exitAttributes) = try record(exit)
        #expect(exitRecord["eventName"] as? String == "app.abnormal_exit" && exitRecord["severityNumber"] as? Int == 17)
        #expect(exitAttributes["apsio.exit.reason"]?["stringValue"] as? String == "memory")
        #expect(exitAttributes["apsio.exit.source"]?["stringValue"] as? String == "platform")
        #expect(exitAttributes["apsio.exit.foreground"]?["boolValue"] as? Bool == false)
    }

    @Test func aLargeReportIsNotAttached() throws {
        let request = OTLPLogs.request(for: report, reportText: TestSpool.example, maxBodyBytes: 100, scope: OTLPLogs.Scope(version: "1"))
        #expect(!String(decoding: request, as: UTF8.self).contains(#""body""#))
    }
}
