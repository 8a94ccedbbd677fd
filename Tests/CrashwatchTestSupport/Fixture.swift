// Fixture.swift — a fixture program and the expectations its header comment states, as a contract: the
// `KEY: value` lines at the top of Fixtures/<name>.c (signal, exit, crashed function, thread count, …).
import Foundation
import Testing

/// A C fixture and the expectations its header comment states (`KEY: value` lines).
public struct Fixture: CustomTestStringConvertible, Sendable {
    /// The fixture's name: its source file's and its executable's, without extension.
    public let name: String
    /// The header's `KEY: value` lines.
    public let keys: [String: String]

    public var testDescription: String { name }

    /// The languages fixtures are written in, by file extension.
    public static let extensions = ["c", "cpp", "swift"]

    /// Reads `Fixtures/<name>.<extension>` (the first of `extensions` that exists) and parses its header block.
    public init(_ name: String, extensions: [String] = Fixture.extensions) {
        self.name = name
        let source = extensions.lazy
            .compactMap { try? String(contentsOfFile: "\(Paths.root)/Fixtures/\(name).\($0)", encoding: .utf8) }
            .first ?? ""
        var keys: [String: String] = [:]
        if let end = source.range(of: "*/") {
            for rawLine in source[..<end.lowerBound].split(separator: "\n") {
                let line = rawLine.trimmingCharacters(in: .whitespaces).drop(while: { $0 == "/" || $0 == "*" })
                    .trimmingCharacters(in: .whitespaces)
                guard let colon = line.firstIndex(of: ":") else { continue }
                let key = String(line[..<colon])
                guard key.allSatisfy({ $0.isUppercase || $0 == "-" }), !key.isEmpty else { continue }
                keys[key] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        self.keys = keys
    }

    /// Every fixture program (not the `lib*.c` shared objects), sorted by name; not those whose header says
    /// `RUN: alone` (only their own test runs them: fuse_stall's core dump alone would wait on its FUSE server).
    public static var all: [Fixture] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(Paths.root)/Fixtures")) ?? []
        return names.compactMap { name -> Fixture? in
            guard !name.hasPrefix("lib"), let dot = name.lastIndex(of: "."),
                  extensions.contains(String(name[name.index(after: dot)...])) else { return nil }
            return Fixture(String(name[..<dot]))
        }.filter { $0.keys["RUN"] != "alone" }.sorted { $0.name < $1.name }
    }

    /// `crashwatch run` options the fixture needs: its separate debug directory for `DEBUG: separate`.
    public var captureOptions: [String] { keys["DEBUG"] == "separate" ? ["--debug-dir", "\(Paths.fixtures)/debug"] : [] }

    /// Environment variables the fixture must run with (`ENV: NAME=value ...`).
    public var environment: [String: String] {
        var result: [String: String] = [:]
        for assignment in (keys["ENV"] ?? "").split(separator: " ") {
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            result[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return result
    }

    /// The arguments to run it with (`ARGS:`).
    public var arguments: [String] { (keys["ARGS"] ?? "").split(separator: " ").map(String.init) }
    /// How it must end (`EXIT:`), bare and under crashwatch alike.
    public var expectedExit: Termination? { keys["EXIT"].flatMap(Termination.init(header:)) }
    /// How many crashes crashwatch must report (`CRASHES:`).
    public var expectedCrashes: Int { Int(keys["CRASHES"] ?? "0") ?? 0 }
    /// Expected stdout with `\n` escapes turned into newlines, plus the final newline.
    public var expectedStdout: String? {
        keys["STDOUT"].map { $0.isEmpty ? "" : $0.replacingOccurrences(of: "\\n", with: "\n") + "\n" }
    }
}
