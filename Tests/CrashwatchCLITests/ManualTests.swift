// ManualTests.swift — the manual pages and shell completions `crashwatch __manual` builds for the package:
// every command `--help` names is in them, each command's section holds exactly the options its `--help`
// lists (read back from the roff), the roff escaping survives hostile text, and the bash completion,
// run by a real bash, offers a command's options and completes value placeholders as they say.
@testable import CrashwatchCLI
import Foundation
import CrashwatchTestSupport
import Testing

@Suite struct ManualTests {
    /// The commands `crashwatch --help` lists under "Commands:" (`ack ID / release ID` names two).
    static var helpCommands: [String] {
        let section = CLI.help.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        return section.split(separator: "\n").flatMap { line -> [String] in
            let words = line.split(separator: " ").map(String.init)
            let slash = words.firstIndex(of: "/").map { [words[$0 + 1]] } ?? []
            return [words[0]] + slash
        }
    }

    /// `-n, --limit N` spellings of the option lines of a `--help` text.
    static func helpSpellings(_ help: String) -> [String] {
        let options = help.components(separatedBy: "\nOptions:\n")[1].components(separatedBy: "\n\n")[0]
        return options.split(separator: "\n").map { line in
            String(line.trimmingPrefix(while: { $0 == " " }).split(separator: "  ")[0])
        }
    }

    /// The roff of one `.SS "crashwatch NAME"` section, up to the next section.
    static func section(_ page: String, _ name: String) -> String? {
        let parts = page.components(separatedBy: ".SS \"crashwatch \(ManualPage.escape(name))\"\n")
        guard parts.count == 2 else { return nil }
        return parts[1].components(separatedBy: "\n.S")[0]
    }

    /// The option tags of a roff section, fonts and escapes undone: `-n, --limit N`.
    static func tagSpellings(_ roff: String) -> [String] {
        roff.components(separatedBy: ".TP\n").dropFirst().map { paragraph in
            var tag = String(paragraph.split(separator: "\n")[0])
            for (escaped, plain) in [("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\-", "-"), ("\\e", "\\")] {
                tag = tag.replacing(escaped, with: plain)
            }
            return tag
        }
    }

    @Test func everyCommandInHelpIsInTheCatalog() {
        #expect(Self.helpCommands == CommandCatalog.commands.map(\.name))
    }

    @Test func eachCommandSectionHasTheOptionsOfItsHelp() throws {
        let page = ManualPage.crashwatch()
        for command in CommandCatalog.commands {
            let roff = try #require(Self.section(page, command.name), "no section for \(command.name)")
            #expect(Self.tagSpellings(roff) == Self.helpSpellings(command.syntax.help), "\(command.name)")
            for spec in command.syntax.specs {
                #expect(roff.contains("\n" + ManualPage.escape(spec.fullHelp) + "\n"), "\(command.name) --\(spec.name)")
            }
        }
        #expect(page.contains(".SS \"crashwatch doctor\""))
    }

    @Test func settingsPageNamesEveryKey() {
        let page = ManualPage.settingsFile()
        for key in ConfigFile.keys {
            #expect(page.contains(".TP\n\\fB\(ManualPage.escape(key))\\fR = "), "\(key)")
        }
        #expect(CommandCatalog.option(forSetting: "headers")?.spec.name == "header")
        #expect(CommandCatalog.option(forSetting: "max-age")?.commands == ["run", "attach", "prune", "core-handler"])
    }

    @Test func escapingSurvivesHostileText() {
        #expect(ManualPage.escape(".TH x") == "\\&.TH x")
        #expect(ManualPage.escape("--max-age a\\b 'q' `c`") == "\\-\\-max\\-age a\\eb \\(aqq\\(aq \\(gac\\(ga")
        #expect(ManualPage.escape("✓ —") == "\\[u2713] \\[u2014]")
        #expect(ManualPage.text("a\n  kept\n\nb") == "a\n.nf\n  kept\n.fi\n.PP\nb\n")
    }

    /// What the bash completion offers for `words` (the last one being completed).
    static func bashCompletion(_ words: [String], in directory: String) throws -> [String] {
        let script = Completion.bash() + """
            COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
            _crashwatch; printf '%s\\n' "${COMPREPLY[@]}"
            """
        let output = try Subprocess.output("/bin/bash", ["--norc", "--noprofile", "-c", script], workingDirectory: directory)
        return output.split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        let directory = try TemporaryDirectory("cw-completion")
        defer { directory.remove() }
        try Subprocess.output("/bin/mkdir", [directory.join("spooldir")])
        try Subprocess.output("/usr/bin/touch", [directory.join("spoolfile")])
        #expect(try Self.bashCompletion(["crashwatch", "do"], in: directory.path) == ["doctor"])
        #expect(try Self.bashCompletion(["crashwatch", "d"], in: directory.path) == ["debug", "doctor"])
        #expect(try Self.bashCompletion(["crashwatch", "list", "--li"], in: directory.path) == ["--limit"])
        #expect(try Self.bashCompletion(["crashwatch", "list", "--spool", "spool"], in: directory.path) == ["spooldir"])
        #expect(try Self.bashCompletion(["crashwatch", "list", "--config", "spool"], in: directory.path) == ["spooldir", "spoolfile"])
        #expect(try Self.bashCompletion(["crashwatch", "list", "--limit", ""], in: directory.path) == [])
        // After run's COMMAND, options belong to that program: none of crashwatch's are offered.
        #expect(try Self.bashCompletion(["crashwatch", "run", "--app-name", "x", "./app", "--sp"], in: directory.path) == [])
        #expect(try Self.bashCompletion(["crashwatch", "run", "--sp"], in: directory.path) == ["--spool"])
    }

    @Test func zshCompletionParses() throws {
        guard let zsh = Paths.which("zsh") else {
            try Test.cancel("zsh is not installed here: the zsh completion's syntax goes unchecked")
        }
        let directory = try TemporaryDirectory("cw-zsh")
        defer { directory.remove() }
        let script = directory.join("_crashwatch")
        try Completion.zsh().write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Subprocess.run(zsh, ["-n", script])
        #expect(result.succeeded, "zsh -n: \(result.stderr)")
    }
}
