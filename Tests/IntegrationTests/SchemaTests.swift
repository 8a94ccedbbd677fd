// SchemaTests.swift — schema/crashwatch-report-v1.schema.json accepts the example report the encoder wrote
// (Fixtures/example-report.json, kept current by CrashwatchModelTests) and rejects deliberately broken copies,
// so drift between the Swift types and the schema fails a test in either direction.
import CrashwatchTestSupport
import Foundation
import Testing

/// A deliberate breakage of the example report and the error path the validator must name.
struct SchemaBreakage: CustomTestStringConvertible, Sendable {
    /// What is broken, for the test name.
    let name: String
    /// The dotted path of the member to replace or remove.
    let member: String
    /// The new value, or nil to remove the member.
    let replacement: JSONValue?
    /// A fragment the validator's messages must contain.
    let expectedError: String

    /// The breakage, as the test lists it.
    var testDescription: String { name }

    /// The breakages every schema change must keep rejecting.
    static let all: [SchemaBreakage] = [
        SchemaBreakage(name: "numeric frame address", member: "threads.0.frames.0.address", replacement: .integer(93_999_999_999),
                       expectedError: "$.threads[0].frames[0].address: expected string, got integer"),
        SchemaBreakage(name: "numeric load address", member: "images.1.loadAddress", replacement: .integer(4096),
                       expectedError: "$.images[1].loadAddress: expected string, got integer"),
        SchemaBreakage(name: "numeric register value", member: "threads.1.registers.16.value", replacement: .integer(1),
                       expectedError: "$.threads[1].registers[16].value: expected string, got integer"),
        SchemaBreakage(name: "upper-case hex address", member: "signal.originalFault.faultAddress", replacement: .string("0xDEAD"),
                       expectedError: "$.signal.originalFault.faultAddress: \"0xDEAD\" does not match"),
        SchemaBreakage(name: "address with a trailing newline", member: "images.0.fileOffset", replacement: .string("0x0\n"),
                       expectedError: "$.images[0].fileOffset:"),
        SchemaBreakage(name: "decimal string address", member: "threads.0.frames.2.imageOffset", replacement: .string("4611"),
                       expectedError: "$.threads[0].frames[2].imageOffset: \"4611\" does not match"),
        SchemaBreakage(name: "unknown top-level field", member: "extra", replacement: .bool(true),
                       expectedError: "$: unexpected property 'extra'"),
        SchemaBreakage(name: "unknown field in a frame", member: "threads.1.frames.0.module", replacement: .string("libc"),
                       expectedError: "$.threads[1].frames[0]: unexpected property 'module'"),
        SchemaBreakage(name: "unknown field in the original fault", member: "signal.originalFault.pid", replacement: .integer(1),
                       expectedError: "$.signal.originalFault: unexpected property 'pid'"),
        SchemaBreakage(name: "missing required top-level field", member: "captureTime", replacement: nil,
                       expectedError: "$: missing required property 'captureTime'"),
        SchemaBreakage(name: "missing nullable field", member: "process.cwd", replacement: nil,
                       expectedError: "$.process: missing required property 'cwd'"),
        SchemaBreakage(name: "missing frame trust", member: "threads.0.frames.3.how", replacement: nil,
                       expectedError: "$.threads[0].frames[3]: missing required property 'how'"),
        SchemaBreakage(name: "unknown frame trust", member: "threads.0.frames.1.how", replacement: .string("guess"),
                       expectedError: "$.threads[0].frames[1].how: \"guess\" is not one of"),
        SchemaBreakage(name: "unknown kind", member: "kind", replacement: .string("oops"),
                       expectedError: "$.kind: \"oops\" is not one of"),
        SchemaBreakage(name: "null where a value is required", member: "signal.name", replacement: .null,
                       expectedError: "$.signal.name: expected string, got null"),
        SchemaBreakage(name: "boolean as a number", member: "diagnostics.captureErrors", replacement: .bool(true),
                       expectedError: "$.diagnostics.captureErrors: expected integer, got boolean"),
        SchemaBreakage(name: "fractional integer", member: "threads.0.tid", replacement: .number(4242.5),
                       expectedError: "$.threads[0].tid: expected integer, got number"),
        SchemaBreakage(name: "negative size", member: "images.0.size", replacement: .integer(-1),
                       expectedError: "$.images[0].size: -1 is less than the minimum 0"),
        SchemaBreakage(name: "other schema version", member: "schemaVersion", replacement: .integer(2),
                       expectedError: "$.schemaVersion: expected the constant 1"),
        SchemaBreakage(name: "other format", member: "format", replacement: .string("minidump"),
                       expectedError: "$.format: expected the constant \"crashwatch.report\""),
        SchemaBreakage(name: "capture time without milliseconds", member: "captureTime", replacement: .string("2026-11-30T09:01:57Z"),
                       expectedError: "$.captureTime: \"2026-11-30T09:01:57Z\" does not match"),
        SchemaBreakage(name: "upper-case report id", member: "id", replacement: .string("3F2B8C1E-9A4D-4C7E-8B21-5D0F6A7E9C13"),
                       expectedError: "$.id:"),
        SchemaBreakage(name: "non-string environment value", member: "process.environment.LANG", replacement: .integer(1),
                       expectedError: "$.process.environment.LANG: expected string, got integer"),
        SchemaBreakage(name: "unknown architecture", member: "host.architecture", replacement: .string("riscv64"),
                       expectedError: "$.host.architecture: \"riscv64\" is not one of"),
        SchemaBreakage(name: "a soft error stage crashwatch never writes", member: "softErrors.0.stage", replacement: .string("memory"),
                       expectedError: "$.softErrors[0].stage: \"memory\" is not one of"),
    ]
}

@Suite struct SchemaTests {
    /// The example report every test starts from.
    static let examplePath = "\(Paths.root)/Fixtures/example-report.json"

    /// The example report, parsed.
    static func example() throws -> JSONValue {
        try JSONValue(json: try Data(contentsOf: URL(fileURLWithPath: examplePath)))
    }

    @Test("Fixtures/example-report.json is valid against the schema")
    func exampleIsValid() throws {
        let validator = try SchemaValidator()
        let errors = validator.validate(reportJSON: try Data(contentsOf: URL(fileURLWithPath: Self.examplePath)))
        #expect(errors.isEmpty, "\(errors.joined(separator: "\n"))")
    }

    @Test("every nullable field may be null and every list empty")
    func nullsAndEmptiesAreValid() throws {
        var report = try Self.example()
        for member in ["signal.originalFault", "signal.faultAddress", "signal.senderPID", "signal.senderUID",
                       "process.cwd", "process.startTime", "process.cgroup", "process.systemdUnit",
                       "process.systemdInvocationID", "process.app", "host.osVersion", "host.bootID",
                       "threads.0.name", "threads.0.unwindStopReason", "threads.0.frames.0.imageIndex",
                       "threads.0.frames.0.imageOffset", "threads.0.frames.0.symbol", "threads.0.frames.0.function",
                       "threads.0.frames.0.symbolOffset", "threads.0.frames.0.file", "threads.0.frames.0.line",
                       "threads.0.frames.0.column", "images.0.buildID", "images.0.architecture",
                       "diagnostics.ptraceScope", "diagnostics.seccompMode", "softErrors.0.tid", "softErrors.0.image"] {
            #expect(report[path: member] != nil, "\(member) should exist in the example")
            report[path: member] = .null
        }
        for member in ["threads.1.frames", "threads.1.registers", "images", "softErrors", "process.commandLine"] {
            report[path: member] = .array([])
        }
        report[path: "process.environment"] = .object([:])
        let errors = try SchemaValidator().validate(report)
        #expect(errors.isEmpty, "\(errors.joined(separator: "\n"))")
    }

    @Test("a broken copy of the example is rejected", arguments: SchemaBreakage.all)
    func brokenCopyIsRejected(_ breakage: SchemaBreakage) throws {
        var report = try Self.example()
        let parent = breakage.member.split(separator: ".").dropLast().joined(separator: ".")
        #expect(parent.isEmpty || report[path: parent] != nil, "the example lacks \(parent)")
        report[path: breakage.member] = breakage.replacement
        let errors = try SchemaValidator().validate(reportJSON: try report.data())
        #expect(errors.contains { $0.contains(breakage.expectedError) },
                "expected an error containing \(breakage.expectedError); got \(errors)")
    }

    @Test("the validator refuses keywords it does not implement")
    func unknownKeywordsAreErrors() throws {
        let directory = try TemporaryDirectory("cw-schema")
        defer { directory.remove() }
        let schemaURL = URL(fileURLWithPath: directory.join("schema.json"))
        try Data(#"{"type": "object", "maxProperties": 1}"#.utf8).write(to: schemaURL)
        let errors = try SchemaValidator(schemaPath: schemaURL.path).validate(reportJSON: Data("{}".utf8))
        #expect(errors == ["$: the schema uses 'maxProperties' at #, which this validator does not implement"])
    }

    @Test("not JSON at all is one error, not a crash")
    func garbageIsRejected() throws {
        let errors = try SchemaValidator().validate(reportJSON: Data("{\"schemaVersion\": ".utf8))
        #expect(errors.count == 1 && errors[0].hasPrefix("$: not JSON"))
    }
}
