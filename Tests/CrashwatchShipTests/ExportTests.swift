// ExportTests.swift — what an endpoint's answer means for the reports (accepted, refused for good, retried),
// the backoff between retries, and the endpoint and header settings as OpenTelemetry writes them.
import CrashwatchShip
import CrashwatchSystem
import Testing

@Suite struct ExportOutcomeTests {
    static func response(_ status: Int, _ body: String = "", retryAfter: Int64? = nil) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(body.utf8), retryAfterSeconds: retryAfter)
    }

    @Test func acceptedWhenNothingIsRejected() {
        #expect(ExportOutcome.of(Self.response(200, "{}")) == .accepted(warning: nil))
        #expect(ExportOutcome.of(Self.response(200)) == .accepted(warning: nil))
        #expect(ExportOutcome.of(Self.response(202, #"{"partialSuccess":{}}"#)) == .accepted(warning: nil))
        // A message without rejected records is a warning, not a refusal (OTLP's partial success rules).
        #expect(ExportOutcome.of(Self.response(200, #"{"partialSuccess":{"errorMessage":"slow down"}}"#))
                == .accepted(warning: "slow down"))
    }

    @Test func partialSuccessWithRejectedRecordsIsARefusal() {
        // int64 comes as a string in OTLP/JSON; a number is accepted too.
        #expect(ExportOutcome.of(Self.response(200, #"{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"too old"}}"#))
                == .refused("rejected 1 record: too old"))
        #expect(ExportOutcome.of(Self.response(200, #"{"partialSuccess":{"rejectedLogRecords":3}}"#))
                == .refused("rejected 3 records"))
    }

    @Test("a 2xx whose body was cut at the client's limit is no acknowledgement, whatever the part read says")
    func truncatedSuccessIsRetried() {
        // The part read looks like an acceptance (it even parses); what was cut may hold the rejection.
        let cut = HTTPResponse(status: 200, body: Array(#"{"partialSuccess":{"errorMessage":"fine"}}"#.utf8), bodyTruncated: true)
        guard case .retry(let message, nil) = ExportOutcome.of(cut) else {
            Issue.record("a truncated 200 was \(ExportOutcome.of(cut))")
            return
        }
        #expect(message.hasPrefix("HTTP 200 with a response body longer than the 42 bytes crashwatch reads"), "\(message)")
        #expect(message.contains("not read whole"))
        // A 4xx keeps its meaning: the status alone decides a refusal.
        #expect(ExportOutcome.of(HTTPResponse(status: 400, body: Array("bad".utf8), bodyTruncated: true)) == .refused("HTTP 400: bad"))
    }

    @Test func clientErrorsAreRefusalsWithTheServersMessage() {
        #expect(ExportOutcome.of(Self.response(400, #"{"code":3,"message":"bad attribute"}"#)) == .refused("HTTP 400: bad attribute"))
        #expect(ExportOutcome.of(Self.response(413, "too large\r\nfor us")) == .refused("HTTP 413: too large  for us"))
        let long = String(repeating: "x", count: 2000)
        guard case .refused(let message) = ExportOutcome.of(Self.response(400, long)) else {
            Issue.record("not refused")
            return
        }
        #expect(message.utf8.count < 600 && message.hasSuffix("…"))
    }

    @Test func transientAndConfigurationFailuresAreRetried() {
        #expect(ExportOutcome.of(Self.response(503, "", retryAfter: 7)) == .retry("HTTP 503", retryAfterSeconds: 7))
        #expect(ExportOutcome.of(Self.response(429, "", retryAfter: 2)) == .retry("HTTP 429", retryAfterSeconds: 2))
        #expect(ExportOutcome.of(Self.response(408)) == .retry("HTTP 408", retryAfterSeconds: nil))
        // The shipper's own misconfiguration never quarantines reports.
        for status in [401, 403, 404, 405, 407, 415] {
            guard case .retry(let message, _) = ExportOutcome.of(Self.response(status)) else {
                Issue.record("HTTP \(status) not retried")
                continue
            }
            #expect(message.hasPrefix("HTTP \(status)"))
        }
        #expect(ExportOutcome.of(Self.response(301)) == .retry("HTTP 301 (redirects are not followed: give the final URL)", retryAfterSeconds: nil))
        let error = TransportError(kind: .connect, code: 7, message: "Failed to connect")
        #expect(ExportOutcome.of(error) == .retry("Failed to connect", retryAfterSeconds: nil))
    }
}

@Suite struct BackoffTests {
    @Test func doublesFromOneSecondWithJitterInTheUpperHalf() {
        let backoff = Backoff(maximumMilliseconds: 300_000)
        #expect(backoff.delayMilliseconds(failures: 1, retryAfterSeconds: nil, unit: 0) == 500)
        #expect(backoff.delayMilliseconds(failures: 1, retryAfterSeconds: nil, unit: 0.999_999) == 999)
        #expect(backoff.delayMilliseconds(failures: 3, retryAfterSeconds: nil, unit: 0) == 2_000)
        #expect(backoff.delayMilliseconds(failures: 40, retryAfterSeconds: nil, unit: 1) == 300_000)
        #expect(backoff.delayMilliseconds(failures: 40, retryAfterSeconds: nil, unit: 0) == 150_000)
        #expect(backoff.delayMilliseconds(failures: 0, retryAfterSeconds: nil, unit: 0) == 500)
    }

    @Test func retryAfterIsAFloorCappedAtAnHour() {
        let backoff = Backoff()
        #expect(backoff.delayMilliseconds(failures: 1, retryAfterSeconds: 7, unit: 0.5) == 7_000)
        #expect(backoff.delayMilliseconds(failures: 40, retryAfterSeconds: 7, unit: 0) == 150_000)
        #expect(backoff.delayMilliseconds(failures: 1, retryAfterSeconds: 1_000_000, unit: 0) == 3_600_000)
    }

    @Test func maximumIsAtLeastTheFirstStep() {
        #expect(Backoff(maximumMilliseconds: 10).maximumMilliseconds == 1_000)
    }
}

@Suite struct ExportTargetTests {
    @Test(arguments: [
        ("http://collector:4318", "http://collector:4318/v1/logs"),
        ("http://collector:4318/", "http://collector:4318/v1/logs"),
        ("https://user:pw@collector", "https://user:pw@collector/v1/logs"),
        ("HTTPS://Collector/otlp/v1/logs", "HTTPS://Collector/otlp/v1/logs"),
        ("http://[::1]:4318", "http://[::1]:4318/v1/logs"),
        ("http://collector:4318?x=1", "http://collector:4318?x=1"),
    ])
    func endpoints(_ given: String, _ expected: String) throws {
        #expect(try ExportTarget.normalizedURL(given) == expected)
    }

    @Test(arguments: ["collector:4318", "ftp://collector/", "http://", "http://:4318/", "http://a b/", "file:///etc/passwd", "http://x/\n"])
    func badEndpoints(_ given: String) {
        #expect(throws: ExportSetupError.self) { try ExportTarget.normalizedURL(given) }
    }

    @Test func headerListsAsOpenTelemetryWritesThem() throws {
        let headers = try ExportTarget.parseHeaderList("api-key=s3cr%3Dt, X-Scope-OrgID = tenant-1 ,,")
        #expect(headers.map(\.0) == ["api-key", "X-Scope-OrgID"])
        #expect(headers.map(\.1) == ["s3cr=t", "tenant-1"])
        // On the command line a value is taken as it is.
        #expect(try ExportTarget.parseHeader("Authorization=Bearer a%20b") == ("Authorization", "Bearer a%20b"))
    }

    @Test(arguments: ["novalue", "=x", "bad name=x", "a\u{1}=x", "X-Test=a\nb", "Content-Type=text/plain", "host=evil"])
    func badHeaders(_ text: String) {
        #expect(throws: ExportSetupError.self) { try ExportTarget.parseHeader(text) }
    }
}
