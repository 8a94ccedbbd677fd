// CommandCatalog.swift — every command people call, with its declared syntax, in the order `--help` lists
// them: the manual pages and the shell completions (`crashwatch __manual`) are built from this table and
// the option tables it points to, so they say what `--help` says. Hidden commands (`__process`,
// `__manual`) are not in it.

/// One documented command: the word that selects it and its syntax (usage, options, help parts).
struct DocumentedCommand {
    let name: String
    let syntax: CommandSyntax

    /// The first sentence of the command's description, for completion menus (at most 80 characters).
    var summary: String {
        let text = syntax.about.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let sentence = text.firstRange(of: ". ").map { String(text[..<$0.lowerBound]) } ?? text
        return sentence.count <= 80 ? sentence : String(sentence.prefix(77)) + "..."
    }
}

enum CommandCatalog {
    /// The documented commands, in `crashwatch --help` order. A command added to the CLI is added here too
    /// (CommandCatalogTests checks that every command `--help` names is here).
    static let commands: [DocumentedCommand] = [
        DocumentedCommand(name: "run", syntax: RunCommand.syntax),
        DocumentedCommand(name: "attach", syntax: AttachCommand.syntax),
        DocumentedCommand(name: "list", syntax: ListCommand.syntax),
        DocumentedCommand(name: "show", syntax: ShowCommand.syntax),
        DocumentedCommand(name: "export", syntax: ExportCommand.syntax),
        DocumentedCommand(name: "prune", syntax: PruneCommand.syntax),
        DocumentedCommand(name: "claim", syntax: ClaimCommand.syntax),
        DocumentedCommand(name: "ack", syntax: FinishClaimCommand.ack.syntax),
        DocumentedCommand(name: "release", syntax: FinishClaimCommand.release.syntax),
        DocumentedCommand(name: "quarantine", syntax: QuarantineCommand.syntax),
        DocumentedCommand(name: "symbolicate", syntax: SymbolicateCommand.syntax),
        DocumentedCommand(name: "ship", syntax: ShipCommand.syntax),
        DocumentedCommand(name: "analyze-core", syntax: AnalyzeCoreCommand.syntax),
        DocumentedCommand(name: "snapshot", syntax: SnapshotCommand.syntax),
        DocumentedCommand(name: "debug", syntax: DebugCommand.syntax),
        DocumentedCommand(name: "core-handler", syntax: CoreHandlerCommand.syntax),
        DocumentedCommand(name: "doctor", syntax: DoctorCommand.syntax),
    ]

    /// The option a settings-file key stands for (ConfigFile: keys are the long option names; `headers`
    /// is `ship --header`'s), with the commands that take it; nil for a key no command line takes.
    static func option(forSetting key: String) -> (spec: OptionSpec, commands: [String])? {
        let name = key == "headers" ? "header" : key
        let users = commands.filter { $0.syntax.specs.contains { $0.name == name } }
        guard let spec = users.first?.syntax.specs.first(where: { $0.name == name }) else { return nil }
        return (spec, users.map(\.name))
    }

    /// The settings-file keys in a reading order: the spool, retention, processing, then `ship`'s.
    static var settingKeys: [String] {
        let order = ["spool", "max-reports", "max-per-exe", "max-bytes", "max-age", "debuginfod", "annotate", "annotation-deny"]
        return order.filter(ConfigFile.keys.contains) + ConfigFile.keys.subtracting(order).sorted()
    }
}
