// InAppTests.swift — the in_app decision table (Fixtures/in_app_vectors.tsv) checked row by row, plus the
// helpers the rule is built from.
import CrashwatchModel
import CrashwatchTestSupport
import Foundation
import Testing

/// One row of Fixtures/in_app_vectors.tsv: roots, executable, mapping path, the expected answer and why.
struct InAppVector: CustomTestStringConvertible, Sendable {
    /// The line number in the file, for failure messages.
    let line: Int
    /// The `--app-root` values (none for `-`).
    let appRoots: [String]
    /// The crashed process's executable path.
    let executable: String
    /// The mapping path as `/proc/PID/maps` writes it.
    let mappingPath: String
    /// Whether the mapping must be in-app.
    let expected: Bool
    /// The reason, in a few words.
    let why: String

    /// The line number and reason, as the test lists them.
    var testDescription: String { "line \(line): \(why)" }

    /// Where the table lives: Fixtures/in_app_vectors.tsv.
    static let path = Paths.source("in_app_vectors.tsv")

    /// Every row of the table; malformed rows are reported as issues and skipped.
    static let all: [InAppVector] = {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var vectors: [InAppVector] = []
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            if line == 1 || rawLine.isEmpty || rawLine.hasPrefix("#") { continue }
            let fields = rawLine.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, fields[3] == "true" || fields[3] == "false" else {
                vectors.append(InAppVector(line: line, appRoots: [], executable: "", mappingPath: "", expected: true,
                                           why: "MALFORMED ROW: \(rawLine)"))
                continue
            }
            let roots = fields[0] == "-" ? [] : fields[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            vectors.append(InAppVector(line: line, appRoots: roots, executable: fields[1], mappingPath: fields[2],
                                       expected: fields[3] == "true", why: fields[4]))
        }
        return vectors
    }()
}

@Suite struct InAppTests {
    @Test("the table exists, has its header and at least 40 rows")
    func tableIsComplete() throws {
        let text = try String(contentsOfFile: InAppVector.path, encoding: .utf8)
        #expect(text.hasPrefix("app_roots\texecutable\tmapping_path\texpected\twhy\n"))
        #expect(InAppVector.all.count >= 40)
        #expect(InAppVector.all.contains { $0.expected } && InAppVector.all.contains { !$0.expected })
    }

    @Test("every row of Fixtures/in_app_vectors.tsv", arguments: InAppVector.all)
    func vector(_ vector: InAppVector) {
        #expect(!vector.why.hasPrefix("MALFORMED ROW"), "\(InAppVector.path):\(vector.line) needs 5 tab-separated fields")
        let rule = InAppRule(appRoots: vector.appRoots, executablePath: vector.executable)
        #expect(rule.isInApp(vector.mappingPath) == vector.expected,
                "roots \(vector.appRoots) exe '\(vector.executable)' mapping '\(vector.mappingPath)': \(vector.why)")
    }

    @Test func deletedSuffix() {
        #expect(InAppRule.deletedSuffixRemoved("/opt/app/bin/x (deleted)") == ("/opt/app/bin/x", true))
        #expect(InAppRule.deletedSuffixRemoved("/opt/app/bin/x") == ("/opt/app/bin/x", false))
        #expect(InAppRule.deletedSuffixRemoved("/memfd:a (deleted)") == ("/memfd:a", true))
        #expect(InAppRule.deletedSuffixRemoved("/x(deleted)") == ("/x(deleted)", false))
        #expect(InAppRule.deletedSuffixRemoved(" (deleted)") == ("", true))
        // Only one suffix is the kernel's; a second belongs to the file name.
        #expect(InAppRule.deletedSuffixRemoved("/a (deleted) (deleted)") == ("/a (deleted)", true))
    }

    @Test func defaultRoots() {
        #expect(InAppRule.defaultRoot(forExecutable: "/opt/app/bin/server") == "/opt/app")
        #expect(InAppRule.defaultRoot(forExecutable: "/opt/app/libexec/helper") == "/opt/app")
        #expect(InAppRule.defaultRoot(forExecutable: "/srv/game/server") == "/srv/game")
        #expect(InAppRule.defaultRoot(forExecutable: "/opt/app/bin/server (deleted)") == "/opt/app")
        #expect(InAppRule.defaultRoot(forExecutable: "/usr/bin/python3") == nil)
        #expect(InAppRule.defaultRoot(forExecutable: "/usr/local/sbin/x") == nil)
        #expect(InAppRule.defaultRoot(forExecutable: "/bin/sh") == nil)
        #expect(InAppRule.defaultRoot(forExecutable: "/usr/lib/aarch64-linux-gnu/x") == nil)
        #expect(InAppRule.defaultRoot(forExecutable: "/memfd:x (deleted)") == nil)
        #expect(InAppRule.defaultRoot(forExecutable: "") == nil)
    }

    @Test func ruleExposesItsDecision() {
        let byDefault = InAppRule(appRoots: [], executablePath: "/opt/app/bin/server")
        #expect(byDefault.roots == ["/opt/app"] && byDefault.executableOnly == nil)
        let system = InAppRule(appRoots: [], executablePath: "//usr/bin//tool (deleted)")
        #expect(system.roots.isEmpty && system.executableOnly == "/usr/bin/tool")
        let explicit = InAppRule(appRoots: ["/opt/a/", "", "//srv"], executablePath: "/usr/bin/tool")
        #expect(explicit.roots == ["/opt/a", "/srv"] && explicit.executableOnly == nil)
    }

    @Test func normalisation() {
        #expect(InAppRule.normalized("//opt/./app//") == "/opt/app")
        #expect(InAppRule.normalized("/") == "/")
        #expect(InAppRule.normalized("///") == "/")
        #expect(InAppRule.normalized("") == "")
        #expect(InAppRule.normalized("/opt/../app") == "/opt/../app")
        // Paths already normal come back as they are; every other shape is split and joined.
        let cases: [(String, String)] = [
            (".", ""), ("./", ""), ("./a", "a"), ("a/.", "a"), ("a/./b", "a/b"), ("a//b", "a/b"), ("a/", "a"),
            ("/.", "/"), ("/./", "/"), ("//", "/"), ("/a/", "/a"), ("/a/.", "/a"), ("/.a", "/.a"), ("/a.", "/a."),
            ("/..", "/.."), ("/../a", "/../a"), ("/a/..", "/a/.."), ("/a/b", "/a/b"), ("a", "a"), ("..", ".."),
            ("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
        ]
        for (path, normal) in cases { #expect(InAppRule.normalized(path) == normal, "\(path)") }
    }
}
