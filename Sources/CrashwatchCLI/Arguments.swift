// Arguments.swift — crashwatch's own small command-line parser: declared options, GNU-style spellings
// (`--name VALUE`, `--name=VALUE`, `-x VALUE`), `--` to end options, and help text generated from the
// same declarations so `--help` cannot drift from what is accepted.

/// One option a command accepts.
public struct OptionSpec: Sendable {
    /// The long name without dashes (`max-frames`).
    public let name: String
    /// An optional one-letter short form.
    public let short: Character?
    /// The placeholder for the value (`N`, `DIR`), or nil for a flag.
    public let valueName: String?
    /// Whether the option may be given more than once (values accumulate).
    public let repeatable: Bool
    /// One line of help.
    public let help: String

    /// How the option is spelled in help texts: `-n, --limit N`.
    public var spelling: String {
        (short.map { "-\($0), " } ?? "") + "--\(name)" + (valueName.map { " \($0)" } ?? "")
    }

    /// The help line as `--help` and the manual page print it (`help`, marked when repeatable).
    public var fullHelp: String { help + (repeatable ? " (repeatable)" : "") }

    public init(_ name: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false, help: String) {
        self.name = name
        self.short = short
        self.valueName = value
        self.repeatable = repeatable
        self.help = help
    }
}

/// A command-line mistake; the CLI prints it with a usage line and exits 64.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    /// The settings-file key whose value this error is about, when the file (not the command line) gave it:
    /// `run` then leaves the setting at its default and goes on (ConfigFile's "fail open").
    public var settingsKey: String?
    public init(_ message: String, settingsKey: String? = nil) {
        self.message = message
        self.settingsKey = settingsKey
    }
    public var description: String { message }
}

/// The outcome of parsing: which flags were set, the values given, and the remaining operands.
public struct ParsedArguments: Equatable, Sendable {
    public var flags: Set<String> = []
    public var values: [String: [String]] = [:]
    public var operands: [String] = []

    /// Whether the flag was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }
    /// The last value given for the option, if any.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for a repeatable option, in order.
    public func all(_ name: String) -> [String] { values[name] ?? [] }
}

/// Parses `arguments` against `specs`.
///
/// With `operandsEndOptions`, the first operand and everything after it are operands (like `env` or
/// `nohup`: options after the command name belong to the command). `--` always ends the options.
public func parseArguments(_ arguments: [String], specs: [OptionSpec], operandsEndOptions: Bool)
    throws(UsageError) -> ParsedArguments
{
    var result = ParsedArguments()
    var index = 0

    func spec(named name: String) throws(UsageError) -> OptionSpec {
        guard let spec = specs.first(where: { $0.name == name }) else { throw UsageError("unknown option '--\(name)'") }
        return spec
    }

    func record(_ spec: OptionSpec, inlineValue: String?, spelled: String) throws(UsageError) {
        guard let valueName = spec.valueName else {
            if inlineValue != nil { throw UsageError("option '\(spelled)' takes no value") }
            result.flags.insert(spec.name)
            return
        }
        let value: String
        if let inlineValue {
            value = inlineValue
        } else {
            index += 1
            guard index < arguments.count else { throw UsageError("option '\(spelled)' needs a value (\(valueName))") }
            value = arguments[index]
        }
        if !spec.repeatable && result.values[spec.name] != nil {
            throw UsageError("option '--\(spec.name)' given more than once")
        }
        result.values[spec.name, default: []].append(value)
    }

    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--" {
            result.operands.append(contentsOf: arguments[(index + 1)...])
            return result
        }
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                try record(try spec(named: String(body[..<equals])), inlineValue: String(body[body.index(after: equals)...]), spelled: argument)
            } else {
                try record(try spec(named: String(body)), inlineValue: nil, spelled: argument)
            }
        } else if argument.hasPrefix("-") && argument.count > 1 {
            let letters = Array(argument.dropFirst())
            for (position, letter) in letters.enumerated() {
                guard let spec = specs.first(where: { $0.short == letter }) else {
                    throw UsageError("unknown option '-\(letter)'")
                }
                if spec.valueName != nil {
                    let rest = String(letters[(position + 1)...])
                    try record(spec, inlineValue: rest.isEmpty ? nil : rest, spelled: "-\(letter)")
                    break
                }
                try record(spec, inlineValue: nil, spelled: "-\(letter)")
            }
        } else if operandsEndOptions {
            result.operands.append(contentsOf: arguments[index...])
            return result
        } else {
            result.operands.append(argument)
        }
        index += 1
    }
    return result
}

/// Renders the option list of a help text, one aligned line per option.
public func renderOptions(_ specs: [OptionSpec]) -> String {
    let spellings = specs.map { spec -> String in
        var text = spec.short.map { "-\($0), " } ?? "    "
        text += "--\(spec.name)"
        if let value = spec.valueName { text += " \(value)" }
        return text
    }
    let width = (spellings.map(\.count).max() ?? 0) + 2
    return zip(spellings, specs).map { spelling, spec in
        "  " + spelling + String(repeating: " ", count: width - spelling.count) + spec.fullHelp
    }.joined(separator: "\n")
}
