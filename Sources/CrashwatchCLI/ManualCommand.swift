// ManualCommand.swift — `crashwatch __manual PART`, a hidden command for packaging (`make deb`): prints the
// manual pages and shell completions built from the option tables (ManualPage, Completion).
import CrashwatchSystem

enum ManualCommand {
    static let name = "__manual"

    /// What each part is, and the text it prints.
    static let parts: [(name: String, about: String, render: @Sendable () -> String)] = [
        ("crashwatch.1", "the crashwatch(1) manual page (roff)", ManualPage.crashwatch),
        ("crashwatch.conf.5", "the crashwatch.conf(5) manual page (roff)", ManualPage.settingsFile),
        ("bash", "bash completion (/usr/share/bash-completion/completions/crashwatch)", Completion.bash),
        ("zsh", "zsh completion (/usr/share/zsh/vendor-completions/_crashwatch)", Completion.zsh),
    ]

    static let usage = "crashwatch __manual " + parts.map(\.name).joined(separator: "|")

    static func main(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, let part = parts.first(where: { $0.name == arguments[0] }) else {
            if arguments == ["--help"] || arguments == ["-h"] {
                StandardStream.out("Usage: \(usage)\n\nPrints, for packaging, one of:\n"
                    + parts.map { "  \($0.name)  \($0.about)\n" }.joined())
                return ExitCode.success
            }
            return CLI.usageFailure(UsageError("name one part"), usage: usage, helpCommand: "crashwatch __manual --help")
        }
        StandardStream.out(part.render())
        return ExitCode.success
    }
}
