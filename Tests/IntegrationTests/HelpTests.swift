// HelpTests.swift — every command's whole `--help`, compared with Fixtures/help/<command>.txt: the text a
// user reads is reviewed like code, and an option the parser gains or loses shows up here.
// CRASHWATCH_UPDATE_FIXTURES=1 rewrites the files from the binary.
import CrashwatchTestSupport
import Foundation
import Testing

@Suite struct HelpTests {
    static let commands = ["", "run", "attach", "list", "show", "export", "prune", "claim", "ack", "release", "quarantine", "symbolicate", "ship", "analyze-core", "snapshot", "debug", "core-handler", "doctor"]

    @Test("each command's --help is the reviewed text", arguments: commands)
    func help(_ command: String) throws {
        let arguments = command.isEmpty ? ["--help"] : [command, "--help"]
        // A terminal width is not given: the text must not depend on one.
        let result = try run(Paths.crashwatch, arguments, environment: ["COLUMNS": "100"])
        #expect(result.termination == .exited(0), "\(result.stderr)")
        let file = "\(Paths.root)/Fixtures/help/\(command.isEmpty ? "crashwatch" : command).txt"
        if ProcessInfo.processInfo.environment["CRASHWATCH_UPDATE_FIXTURES"] == "1" {
            try result.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: file, encoding: .utf8)
        #expect(result.stdout == expected, "crashwatch \(command) --help differs from \(file)")
    }

    @Test("every option the parser knows appears in its command's help", arguments: commands.dropFirst())
    func everyOptionDocumented(_ command: String) throws {
        let help = try run(Paths.crashwatch, [command, "--help"]).stdout
        let file = try String(contentsOfFile: "\(Paths.root)/Fixtures/help/\(command).txt", encoding: .utf8)
        #expect(help == file)
        // A misspelled option is refused by name: the parser's table and the text are one.
        let bogus = try run(Paths.crashwatch, [command, "--no-such-option"])
        #expect(bogus.termination == .exited(64) && bogus.stderr.contains("--no-such-option"), "\(bogus.stderr)")
    }
}
