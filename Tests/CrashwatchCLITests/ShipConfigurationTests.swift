// ShipConfigurationTests.swift — where `ship` sends and how: the command line first, then OpenTelemetry's
// OTEL_EXPORTER_OTLP_* variables (the logs-specific ones before the general ones), then the settings file.
@testable import CrashwatchCLI
import Testing

@Suite struct ShipConfigurationTests {
    func configuration(_ arguments: [String], file: String = "", environment: [String: String] = [:]) throws -> ShipConfiguration {
        let parsed = try parseArguments(arguments, specs: ShipCommand.syntax.specs, operandsEndOptions: false)
        return try ShipConfiguration(parsed, file: ConfigFile(parsing: file, path: "/etc/crashwatch.conf"), environment: environment)
    }

    @Test func endpointPrecedence() throws {
        let environment = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://logs:4318/custom"]
        #expect(try configuration(["--endpoint", "http://cli:4318"], file: "endpoint = http://file:4318", environment: environment).target?.url
                == "http://cli:4318/v1/logs")
        // The signal's own variable is used as it is; the general one gets /v1/logs appended.
        #expect(try configuration([], environment: environment).target?.url == "http://logs:4318/custom")
        #expect(try configuration([], environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318/prefix/"]).target?.url
                == "http://base:4318/prefix/v1/logs")
        #expect(try configuration([], file: "endpoint = https://file").target?.url == "https://file/v1/logs")
        #expect(throws: UsageError.self) { try configuration([]) }
        #expect(throws: UsageError.self) { try configuration([], environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://x"]) }
    }

    @Test func headersLayerByName() throws {
        let target = try configuration(["--endpoint", "http://c", "--header", "Authorization=Bearer cli", "--header", "X-A=1"],
                                       file: "headers = authorization=Bearer file,X-File=f",
                                       environment: ["OTEL_EXPORTER_OTLP_HEADERS": "X-Env=e%20v,x-a=env"]).target!
        #expect(target.headers.map { "\($0.0)=\($0.1)" } == ["X-File=f", "X-Env=e v", "Authorization=Bearer cli", "X-A=1"])
    }

    @Test func timeoutsCompressionAndLimits() throws {
        #expect(try configuration(["--endpoint", "http://c"]).target?.timeoutMilliseconds == 10_000)
        #expect(try configuration(["--endpoint", "http://c", "--timeout", "2.5"]).target?.timeoutMilliseconds == 2_500)
        #expect(try configuration(["--endpoint", "http://c", "--timeout", "500ms"]).target?.timeoutMilliseconds == 500)
        #expect(try configuration(["--endpoint", "http://c"], environment: ["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "1500"])
            .target?.timeoutMilliseconds == 1_500)
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "http://c", "--timeout", "0"]) }
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "http://c", "--timeout", "2h"]) }
        #expect(try configuration(["--endpoint", "http://c"], environment: ["OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"]).target?.gzip == true)
        #expect(try configuration(["--endpoint", "http://c"], file: "gzip = yes").target?.gzip == true)
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "http://c"], file: "gzip = maybe") }
        let options = try configuration(["--endpoint", "http://c", "--batch", "50", "--max-body", "64K", "--max-backoff", "2m"]).options
        #expect(options.batch == 50 && options.maxBodyBytes == 65_536 && options.backoff.maximumMilliseconds == 120_000)
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "http://c", "--batch", "0"]) }
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "http://c", "--once", "--follow"]) }
    }

    @Test func certificateFilesMustBeReadable() throws {
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "https://c", "--ca-file", "/nonexistent/ca.pem"]) }
        #expect(throws: UsageError.self) { try configuration(["--endpoint", "https://c", "--client-key", "/etc/hostname"]) }
        let tls = try configuration(["--endpoint", "https://c"], environment: ["OTEL_EXPORTER_OTLP_CERTIFICATE": "/etc/hostname"]).target!.tls
        #expect(tls.caFile == "/etc/hostname" && tls.clientCertificate == nil)
    }

    @Test func aSentryDSNFromEachSourceAloneOrBesideAnEndpoint() throws {
        let given = try configuration(["--sentry", "https://cli@sentry.example.com/1"],
                                      file: "sentry = https://file@sentry.example.com/3", environment: ["SENTRY_DSN": "https://env@s/2"])
        #expect(given.target == nil && given.sentry?.dsn.publicKey == "cli")
        #expect(given.sentry?.target.url == "https://sentry.example.com/api/1/envelope/")
        #expect(given.sentry?.target.contentType == "application/x-sentry-envelope")
        #expect(given.sentry?.target.headers.first?.0 == "X-Sentry-Auth")
        #expect(try configuration([], file: "sentry = https://file@s/3", environment: ["SENTRY_DSN": "https://env@s/2"]).sentry?.dsn.projectID == "2")
        let both = try configuration(["--endpoint", "http://c"], file: "sentry = https://file@s/3\nsentry-environment = prod")
        #expect(both.target?.url == "http://c/v1/logs" && both.sentry?.dsn.projectID == "3" && both.sentry?.settings.environment == "prod")
        #expect(try configuration(["--sentry", "https://k@s/1", "--sentry-environment", "qa"]).sentry?.settings.environment == "qa")
        #expect(throws: UsageError.self) { try configuration(["--sentry", "https://k@s/1", "--sentry-environment", "a/b"]) }
        #expect(throws: UsageError.self) { try configuration(["--sentry", "https://s/1"]) }
        // A bad DSN in the file is named by its key, never quoted (the file may hold a secret).
        do {
            _ = try configuration([], file: "sentry = https://secretkey@s/abc")
            Issue.record("a bad DSN was accepted")
        } catch let error as UsageError {
            #expect(error.message.contains("'sentry'") && !error.message.contains("secretkey"))
        }
        do {
            _ = try configuration([])
            Issue.record("no destination was accepted")
        } catch let error as UsageError {
            #expect(error.message.contains("--sentry DSN") && error.message.contains("--endpoint URL"))
        }
    }
}
