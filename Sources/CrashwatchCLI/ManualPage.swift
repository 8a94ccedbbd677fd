// ManualPage.swift — crashwatch(1) and crashwatch.conf(5) in roff (man(7) macros), built from the command
// catalog and its option tables: the same usage lines, descriptions, options and exit statuses `--help`
// prints, so the manual cannot drift from what the command line accepts. Text is escaped for roff: every
// `-` is a minus (`\-`, so options can be copied from the page), quotes are ASCII, and characters outside
// ASCII are named (`\[u2713]`), whatever the formatter's input encoding.
import CrashwatchSpool

enum ManualPage {
    /// crashwatch(1): the synopsis, every command with its usage, description, options and notes.
    static func crashwatch() -> String {
        // CLI.help's paragraphs: usage, description, commands, options, then notes (spool, settings, exit).
        let parts = CLI.help.components(separatedBy: "\n\n")
        let description = parts.count > 1 ? parts[1] : ""
        let notes = parts.drop { !$0.hasPrefix("Options:") }.dropFirst().joined(separator: "\n\n")
        var page = header(name: "CRASHWATCH", section: 1, title: "User Commands")
        page += ".SH NAME\ncrashwatch \\- an out\\-of\\-process crash reporter for Linux\n"
        page += ".SH SYNOPSIS\n" + synopsis(CLI.usage)
        page += ".SH DESCRIPTION\n" + text(description)
        page += ".PP\n" + text(notes)
        page += ".SH OPTIONS\n" + options(CLI.specs)
        page += ".SH COMMANDS\n"
        for command in CommandCatalog.commands {
            let syntax = command.syntax
            page += ".SS \"crashwatch \(escape(command.name))\"\n" + synopsis(syntax.usage)
            page += ".PP\n" + text(syntax.about) + ".PP\nOptions:\n" + options(syntax.specs)
            page += ".PP\n" + text(syntax.after)
        }
        page += """
            .SH FILES
            .TP
            .I /etc/crashwatch.conf
            Settings shared by every command; see \\fBcrashwatch.conf\\fR(5).
            .TP
            .I /var/lib/crashwatch/reports
            The shared spool. Members of the \\fB\(Spool.readerGroupName)\\fR group may read its reports;
            services in the \\fB\(Spool.writerGroupName)\\fR group, and root, add them.
            .SH SEE ALSO
            \\fBcrashwatch.conf\\fR(5), \\fBcoredumpctl\\fR(1), \\fBsystemd.exec\\fR(5), \\fBcore\\fR(5)

            """
        return page
    }

    /// crashwatch.conf(5): the file's syntax, then every key with the values it takes and the option it
    /// stands for.
    static func settingsFile() -> String {
        var page = header(name: "CRASHWATCH.CONF", section: 5, title: "File Formats")
        page += ".SH NAME\ncrashwatch.conf \\- crashwatch settings\n"
        page += ".SH SYNOPSIS\n" + text(ConfigFile.defaultPath)
        page += ".SH DESCRIPTION\n" + text("""
            UTF-8 'key = value' lines; blank lines and lines starting with # are ignored (# starts a comment only
            at the start of a line: quote a value that holds ' #' with double quotes). The keys are the long
            option names they stand for, and an option on the command line wins over its key (for spool,
            $CRASHWATCH_SPOOL wins too). A value holding a control character is refused. crashwatch run reads
            the file leniently: a line it cannot take, a value found bad when used or an unreadable file is left
            out, the default stands for it, and one line names every problem before the program starts. The
            other commands read it strictly: its first mistake is a usage error. --config FILE reads another file.
            """)
        page += ".SH KEYS\n"
        for key in CommandCatalog.settingKeys {
            page += ".TP\n\\fB\(escape(key))\\fR = \\fI\(escape(ConfigFile.valueForms[key] ?? "a value"))\\fR\n"
            if let (spec, commands) = CommandCatalog.option(forSetting: key) {
                page += escape(spec.fullHelp) + "\n.br\n"
                page += escape("As --\(spec.name) of " + commands.map { "crashwatch \($0)" }.joined(separator: ", ") + ".") + "\n"
            }
        }
        page += """
            .SH EXAMPLE
            .nf
            .RS
            spool = /var/lib/crashwatch/reports
            max\\-reports = 200
            max\\-per\\-exe = 20
            max\\-age = 30d
            .RE
            .fi
            .SH SEE ALSO
            \\fBcrashwatch\\fR(1)

            """
        return page
    }

    private static func header(name: String, section: Int, title: String) -> String {
        // .nh and .ad l: no hyphenation, ragged right, so options and values print as `--help` spells them.
        ".TH \(name) \(section) \"\" \"crashwatch \(CLI.version)\" \"\(title)\"\n.nh\n.ad l\n"
    }

    private static func synopsis(_ usage: String) -> String {
        let words = usage.split(separator: " ", maxSplits: 1).map(String.init)
        return ".B \(escape(words[0]))\n" + (words.count > 1 ? escape(words[1]) + "\n" : "")
    }

    /// One `.TP` paragraph per option: the spelling in bold (values in italics), the help line below.
    static func options(_ specs: [OptionSpec]) -> String {
        specs.map { spec in
            var tag = spec.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            tag += "\\fB\\-\\-\(escape(spec.name))\\fR"
            if let value = spec.valueName { tag += " \\fI\(escape(value))\\fR" }
            return ".TP\n\(tag)\n\(escape(spec.fullHelp))\n"
        }.joined()
    }

    /// Help text as roff: a blank line starts a paragraph, indented lines (examples, lists) keep their
    /// layout, other lines are filled.
    static func text(_ text: String) -> String {
        var out = ""
        var verbatim = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let indented = line.first == " "
            if indented != verbatim {
                out += indented ? ".nf\n" : ".fi\n"
                verbatim = indented
            }
            out += line.isEmpty ? ".PP\n" : escape(String(line)) + "\n"
        }
        return out + (verbatim ? ".fi\n" : "")
    }

    /// `text` escaped for roff: backslashes, minus signs, quotes, a leading period, non-ASCII characters.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "'": out += "\\(aq"
            case "`": out += "\\(ga"
            case _ where !scalar.isASCII:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.hasPrefix(".") ? "\\&" + out : out
    }
}
