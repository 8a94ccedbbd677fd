// Paths.swift — where the tests find things: the package root, the crashwatch binary under test, the built
// fixtures and their sources, the golden example report, and programs on PATH.
import Foundation

/// Paths of the package, the built crashwatch binary, the fixtures and the tools tests call.
public enum Paths {
    /// The package root, found from this file's location (Tests/CrashwatchTestSupport/Paths.swift).
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The crashwatch binary under test: `$CRASHWATCH_BIN`, else the debug build.
    public static let crashwatch: String = ProcessInfo.processInfo.environment["CRASHWATCH_BIN"] ?? "\(root)/.build/debug/crashwatch"

    /// Where `make fixtures` (Fixtures/build.sh) puts the compiled fixtures.
    public static let fixtures = "\(root)/.build/fixtures"

    /// A built fixture's executable.
    public static func fixture(_ name: String) -> String { "\(fixtures)/\(name)" }

    /// A file in the fixtures' source folder, `Fixtures/`.
    public static func source(_ name: String) -> String { "\(root)/Fixtures/\(name)" }

    /// Fixtures/example-report.json: the encoder's output for `SampleReport.report`, the golden report file.
    public static let exampleReport = "\(root)/Fixtures/example-report.json"

    /// The absolute path of `program` found on `PATH` or among `extra`, nil when it is not installed.
    public static func which(_ program: String, extra: [String] = []) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/\(program)" } + extra
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
