// SentryTests.swift — the Sentry destination: DSNs (the forms servers hand out, and a clear error for each
// mistake), the event of the sample report field by field (Sentry's native-event protocol), the envelope
// around it, what a Sentry server's answers mean (rate limits included), and a shipper with an OTLP endpoint
// and a Sentry server acknowledging a report once both accepted it, never sending it twice to either.
import CrashwatchModel
import CrashwatchRender
import CrashwatchShip
import CrashwatchSpool
import CrashwatchSystem
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct SentryDSNTests {
    @Test func theFormsServersHandOut() throws {
        let plain = try SentryDSN(parsing: "https://0123abcd@o42.ingest.sentry.io/4505")
        #expect(plain.envelopeURL == "https://o42.ingest.sentry.io/api/4505/envelope/")
        #expect(plain.publicKey == "0123abcd" && plain.secretKey == nil && plain.projectID == "4505")
        #expect(plain.authHeader(client: "crashwatch/1.0") == "Sentry sentry_version=7, sentry_client=crashwatch/1.0, sentry_key=0123abcd")
        let bugsink = try SentryDSN(parsing: "http://b42a779d@127.0.0.1:8123/1")
        #expect(bugsink.envelopeURL == "http://127.0.0.1:8123/api/1/envelope/")
        #expect(bugsink.publicText == "http://b42a779d@127.0.0.1:8123/1")
        let prefixed = try SentryDSN(parsing: "HTTPS://key:secret@errors.example.com/glitchtip/sub/7")
        #expect(prefixed.envelopeURL == "https://errors.example.com/glitchtip/sub/api/7/envelope/")
        #expect(prefixed.secretKey == "secret" && prefixed.publicText == "https://key@errors.example.com/glitchtip/sub/7")
        #expect(prefixed.authHeader(client: "c").hasSuffix(", sentry_key=key, sentry_secret=secret"))
        #expect(try SentryDSN(parsing: "http://k@[::1]:9000/3").envelopeURL == "http://[::1]:9000/api/3/envelope/")
    }

    @Test func eachMistakeIsNamedWithoutTheKey() {
        let cases: [(String, String)] = [
            ("ftp://k@host/1", "must start with https:// or http://"),
            ("https://host/1", "has no key"),
            ("https://@host/1", "key (before '@') is empty"),
            ("https://k@/1", "has no host"),
            ("https://k@host:99999/1", "port '99999'"),
            ("https://k@host", "has no project id"),
            ("https://k@host/", "has no project id"),
            ("https://k@host/abc", "project id 'abc' is not a number"),
            ("https://k@host/1?x=1", "query or fragment"),
            ("https://k@host/1 ", "spaces or control characters"),
        ]
        for (text, words) in cases {
            do {
                _ = try SentryDSN(parsing: text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.message.contains(words), "\(text): \(error.message)")
                #expect(!error.message.contains("secretkey"))
            }
        }
    }
}

@Suite struct SentryEventTests {
    let report = SampleReport.report

    func event(_ report: CrashReport, environment: String? = "staging") throws -> [String: Any] {
        let bytes = SentryEvent.event(for: report, settings: SentryEvent.Settings(environment: environment, version: "9.9"))
        #expect(JSONSyntax.isWellFormed(bytes))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func identityLevelReleaseAndTags() throws {
        let event = try event(report)
        #expect(event["event_id"] as? String == "3f2b8c1e9a4d4c7e8b215d0f6a7e9c13")
        #expect(event["timestamp"] as? String == report.captureTime)
        #expect(event["platform"] as? String == "native" && event["level"] as? String == "fatal")
        #expect(event["release"] as? String == "demo@2.4.1" && event["environment"] as? String == "staging")
        #expect(event["server_name"] as? String == "build-01")
        #expect(event["sdk"] as? [String: String] == ["name": "crashwatch", "version": "9.9"])
        let tags = try #require(event["tags"] as? [String: String])
        #expect(tags["systemd_unit"] == "demo.service" && tags["executable"] == "segv_reraise" && tags["signal"] == "SIGSEGV")
        let fingerprint = try #require(report.fingerprint)
        #expect(event["fingerprint"] as? [String] == ["\(fingerprint.algorithm):\(fingerprint.value)"])
        #expect(tags["fingerprint"] == fingerprint.value)
    }

    @Test func theExceptionIsTheOriginalFaultWithItsStackOldestFirst() throws {
        let exception = try #require(((try event(report))["exception"] as? [String: Any])?["values"] as? [[String: Any]]).first
        #expect(exception?["type"] as? String == "SIGSEGV")
        #expect(exception?["thread_id"] as? Int == 4242)
        let mechanism = try #require(exception?["mechanism"] as? [String: Any])
        #expect(mechanism["type"] as? String == "signalhandler" && mechanism["handled"] as? Bool == false)
        let signal = (mechanism["meta"] as? [String: Any])?["signal"] as? [String: Any]
        #expect(signal?["number"] as? Int == 11 && signal?["code"] as? Int == 1)
        #expect(signal?["name"] as? String == "SIGSEGV" && signal?["code_name"] as? String == "SEGV_MAPERR")
        let stacktrace = try #require(exception?["stacktrace"] as? [String: Any])
        let frames = try #require(stacktrace["frames"] as? [[String: Any]])
        // The original fault's three frames, outermost first; the inline frame shares its caller's address.
        #expect(frames.map { $0["function"] as? String } == ["main", "crash_here", "store_byte"])
        #expect(frames[2]["instruction_addr"] as? String == frames[1]["instruction_addr"] as? String)
        #expect(frames[1]["filename"] as? String == "/src/demo/segv_reraise.c" && frames[1]["lineno"] as? Int == 38)
        #expect(frames[1]["colno"] as? Int == 5 && frames[1]["in_app"] as? Bool == true)
        #expect(frames[1]["package"] as? String == "/opt/demo/bin/segv_reraise")
        #expect((stacktrace["registers"] as? [String: String])?["rip"] == Address(SampleReport.crashPC).description)
    }

    @Test func everyThreadAndEveryImageWithABuildID() throws {
        let event = try event(report, environment: nil)
        #expect(event["environment"] == nil)
        let threads = try #require((event["threads"] as? [String: Any])?["values"] as? [[String: Any]])
        #expect(threads.map { $0["id"] as? Int } == [4242, 4243])
        #expect(threads[0]["crashed"] as? Bool == true && threads[1]["crashed"] as? Bool == false)
        let worker = try #require((threads[1]["stacktrace"] as? [String: Any])?["frames"] as? [[String: Any]])
        #expect(worker.map { $0["function"] as? String }
                == ["start_thread", "demo::Session::flush()", "pthread_cond_wait", "__futex_abstimed_wait_common"])
        #expect(worker[1]["symbol"] as? String == "_ZN4demo7Session5flushEv" && worker[0]["in_app"] as? Bool == false)
        let images = try #require((event["debug_meta"] as? [String: Any])?["images"] as? [[String: Any]])
        #expect(images.count == 2)
        #expect(images[0]["type"] as? String == "elf" && images[0]["code_file"] as? String == "/opt/demo/bin/segv_reraise")
        #expect(images[0]["code_id"] as? String == "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3")
        #expect(images[0]["debug_id"] as? String == "c2e61b9a-7df0-8c3e-51a4-b2d0e6f7a8b9")
        #expect(images[0]["image_addr"] as? String == Address(SampleReport.exeBase).description)
        let contexts = try #require(event["contexts"] as? [String: [String: Any]])
        #expect(contexts["os"]?["name"] as? String == "Linux" && contexts["os"]?["version"] as? String == "6.1.0-28-amd64")
        #expect(contexts["app"]?["app_version"] as? String == "2.4.1" && contexts["device"]?["arch"] as? String == "x86_64")
        #expect(contexts["process"]?["pid"] as? Int == 4242)
    }

    @Test func debugIDsAsSentryDerivesThem() {
        #expect(SentryEvent.debugID(fromBuildID: "9a1be6c2f07d3e8c51a4b2d0e6f7a8b9c0d1e2f3") == "c2e61b9a-7df0-8c3e-51a4-b2d0e6f7a8b9")
        #expect(SentryEvent.debugID(fromBuildID: "01020304") == "04030201-0000-0000-0000-000000000000")
        #expect(SentryEvent.debugID(fromBuildID: "zz") == nil && SentryEvent.debugID(fromBuildID: "") == nil)
    }

    @Test func hostileStringsStayWithinSentrysRules() throws {
        var report = report
        report.process.app = AppRecord(name: "a/b\nc", version: String(repeating: "9", count: 300), release: nil)
        report.host.hostname = "host\u{7}name"
        report.id = "not-a-uuid"
        let event = try event(report, environment: "prod")
        let release = try #require(event["release"] as? String)
        #expect(release.count == 200 && !release.contains("/") && !release.contains("\n"))
        #expect(event["server_name"] as? String == "host name")
        let id = try #require(event["event_id"] as? String)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit) && id == SentryEvent.eventID(of: report))
    }

    @Test func hangsAndAbnormalExitsAreErrors() throws {
        var hang = report
        hang.kind = .hang
        hang.hang = HangRecord(source: "watchdog", startTime: report.captureTime, durationMs: 5_000, unfinished: true, watchdogTimeoutMs: 2_000)
        let event = try event(hang)
        #expect(event["level"] as? String == "error")
        let exception = (((event["exception"] as? [String: Any])?["values"] as? [[String: Any]])?.first)
        #expect(exception?["type"] as? String == "Hang" && exception?["value"] as? String == "no watchdog ping for 5000 ms")
        #expect((exception?["mechanism"] as? [String: Any])?["handled"] as? Bool == true)
        var killed = report
        killed.kind = .abnormalExit
        #expect(try self.event(killed)["level"] as? String == "error")
    }

    @Test func theEnvelopeFramesTheEvent() throws {
        let dsn = try SentryDSN(parsing: "https://key:secret@sentry.example.com/12")
        let event = SentryEvent.event(for: report, settings: SentryEvent.Settings(version: "1"))
        let envelope = SentryEnvelope.envelope(eventID: SentryEvent.eventID(of: report), dsn: dsn, event: event)
        let lines = envelope.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
        #expect(String(decoding: lines[0], as: UTF8.self)
                == #"{"event_id":"3f2b8c1e9a4d4c7e8b215d0f6a7e9c13","dsn":"https://key@sentry.example.com/12"}"#)
        #expect(String(decoding: lines[1], as: UTF8.self) == #"{"type":"event","content_type":"application/json","length":\#(event.count)}"#)
        #expect(Array(lines[2]) == event + [UInt8(ascii: "\n")])
        #expect(SentryEnvelope.emptyEnvelope(dsn: dsn) == Array(#"{"dsn":"https://key@sentry.example.com/12"}"#.utf8) + [10])
    }
}

@Suite struct SentryAnswerTests {
    func answer(_ status: Int, _ body: String = "", retryAfter: Int64? = nil, limits: String? = nil)
        -> (outcome: ExportOutcome, holdSeconds: Int64?) {
        SentryEnvelope.outcome(of: HTTPResponse(status: status, body: Array(body.utf8), retryAfterSeconds: retryAfter, rateLimits: limits))
    }

    @Test func rateLimitsApplyToEventsOnly() {
        #expect(SentryEnvelope.eventHoldSeconds(rateLimits: "60:error;transaction:key, 2700:default:organization") == 2700)
        #expect(SentryEnvelope.eventHoldSeconds(rateLimits: "60:transaction;session:key") == nil)
        #expect(SentryEnvelope.eventHoldSeconds(rateLimits: "10::organization:quota_exceeded") == 10)
        #expect(SentryEnvelope.eventHoldSeconds(rateLimits: "1.5:error") == 2)
        #expect(SentryEnvelope.eventHoldSeconds(rateLimits: "soon:error, -3:error") == nil)
    }

    @Test func whatEachAnswerMeans() {
        #expect(answer(200, #"{"id":"x"}"#) == (.accepted(warning: nil), nil))
        #expect(answer(200, limits: "30:error:key") == (.accepted(warning: nil), 30))
        #expect(answer(429, limits: "45:error:key", ).outcome == .retry("HTTP 429 (rate limited for 45s)", retryAfterSeconds: 45))
        #expect(answer(429, retryAfter: 7).outcome == .retry("HTTP 429 (rate limited for 7s)", retryAfterSeconds: 7))
        #expect(answer(429).outcome == .retry("HTTP 429 (rate limited for 60s)", retryAfterSeconds: 60))
        #expect(answer(400, #"{"detail":"invalid event"}"#).outcome == .refused("HTTP 400: invalid event"))
        #expect(answer(400, #"{"message":"bad envelope"}"#).outcome == .refused("HTTP 400: bad envelope"))
        #expect(answer(413).outcome == .refused("HTTP 413"))
        #expect(answer(403).outcome == .retry("HTTP 403 (check the DSN: its key, host and project)", retryAfterSeconds: nil))
        #expect(answer(503, retryAfter: 5).outcome == .retry("HTTP 503", retryAfterSeconds: 5))
    }
}

@Suite struct TwoDestinationsTests {
    func destinations(_ otlp: ScriptedTransport, _ sentry: ScriptedTransport) throws -> [ShipDestination] {
        [.otlp(otlp, scope: OTLPLogs.Scope(version: "t")),
         .sentry(sentry, dsn: try SentryDSN(parsing: "http://k@sentry.test/1"), settings: SentryEvent.Settings(version: "t"))]
    }

    @Test func aReportIsAcknowledgedOnceBothAcceptedItAndSentToEachOnce() throws {
        let test = try TestSpool(reports: 2)
        defer { test.remove() }
        let clock = TestClock()
        let otlp = ScriptedTransport([ok])
        let sentry = ScriptedTransport([.success(HTTPResponse(status: 503, body: [])), ok])
        let shipper = Shipper(spool: test.spool, destinations: try destinations(otlp, sentry), options: ShipOptions(scope: .init(version: "t")),
                              now: { clock.now }, random: { 0 }, observe: { _ in })
        let first = try shipper.drain()
        // OTLP took both in one request; Sentry failed on the first envelope, the second was not tried.
        #expect(first.shipped == 0 && first.kept == 1 && first.paused)
        #expect(otlp.bodies.count == 1 && sentry.bodies.count == 1)
        let attempts = test.spool.allAttempts()
        #expect(attempts[test.names[0]]?.delivered == ["otlp"] && attempts[test.names[0]]?.count == 1)
        #expect(attempts[test.names[1]]?.delivered == ["otlp"] && attempts[test.names[1]]?.count == 0)
        #expect(shipper.waitingForRetry() == 1)
        clock.now += 2_000_000_000
        let second = try shipper.drain()
        #expect(second.shipped == 2)
        // Not sent to OTLP again; each report went to Sentry in an envelope of its own.
        #expect(otlp.bodies.count == 1 && sentry.bodies.count == 3)
        #expect(try test.spool.reportNames().isEmpty && test.spool.allAttempts().isEmpty)
    }

    @Test func aRefusalByEitherQuarantinesWithItsReason() throws {
        let test = try TestSpool(reports: 1)
        defer { test.remove() }
        let sentry = ScriptedTransport([.success(HTTPResponse(status: 400, body: Array(#"{"detail":"no"}"#.utf8)))])
        var reasons: [String] = []
        let shipper = Shipper(spool: test.spool, destinations: try destinations(ScriptedTransport([ok]), sentry),
                              options: ShipOptions(scope: .init(version: "t")), observe: { event in
                                  if case .quarantined(_, let reason) = event { reasons.append(reason) }
                              })
        #expect(try shipper.drain().quarantined == 1)
        #expect(reasons == ["sentry: refused by http://collector.test/v1/logs: HTTP 400: no"])
    }
}
