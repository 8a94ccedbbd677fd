// Completion.swift — bash and zsh completion scripts built from the command catalog and its option tables,
// so they offer exactly the commands and options `--help` lists. An option's value is completed by its
// placeholder: DIR a directory, FILE, PATH, CORE or REPORT a file; any other value is left to the user.

enum Completion {
    /// The placeholders whose values are directories, and those whose values are files.
    private static let directoryValues: Set<String> = ["DIR"]
    private static let fileValues: Set<String> = ["FILE", "PATH", "CORE", "REPORT"]

    /// The bash script: `complete -F _crashwatch crashwatch`; after the command word, options of that
    /// command, file names otherwise (bash's default completion).
    static func bash() -> String {
        func spellings(_ specs: [OptionSpec]) -> String {
            specs.flatMap { spec in ["--\(spec.name)"] + (spec.short.map { ["-\($0)"] } ?? []) }.joined(separator: " ")
        }
        var cases = ""
        for command in CommandCatalog.commands {
            let specs = command.syntax.specs
            cases += "        \(command.name)) options='\(spellings(specs))'\n"
            cases += "            valued=' \(spellings(specs.filter { $0.valueName != nil })) '\n"
            cases += "            dirs=' \(spellings(specs.filter { directoryValues.contains($0.valueName ?? "") })) '\n"
            cases += "            files=' \(spellings(specs.filter { fileValues.contains($0.valueName ?? "") })) ' ;;\n"
        }
        let commands = CommandCatalog.commands.map(\.name).joined(separator: " ")
        return """
            # bash completion for crashwatch \(CLI.version), generated from its option tables (crashwatch __manual bash).
            _crashwatch() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                local command= i options valued dirs files
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case ${COMP_WORDS[i]} in -*) ;; *) command=${COMP_WORDS[i]}; break ;; esac
                done
                if [[ -z $command ]]; then
                    COMPREPLY=($(compgen -W '\(commands) \(spellings(CLI.specs))' -- "$cur"))
                    return
                fi
                case $command in
            \(cases)        *) return ;;
                esac
                # After run's COMMAND (or --), every word belongs to that program: bash's default completion.
                if [[ $command == run ]]; then
                    for ((i++; i < COMP_CWORD; i++)); do
                        case ${COMP_WORDS[i]} in
                            --) return ;;
                            -*) ;;
                            *) [[ $valued == *" ${COMP_WORDS[i-1]} "* ]] || return ;;
                        esac
                    done
                fi
                if [[ $dirs == *" $prev "* ]]; then COMPREPLY=($(compgen -d -- "$cur")); return; fi
                if [[ $files == *" $prev "* ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
                [[ $valued == *" $prev "* ]] && return
                [[ $cur == -* ]] && COMPREPLY=($(compgen -W "$options" -- "$cur"))
            }
            complete -o bashdefault -o default -F _crashwatch crashwatch

            """
    }

    /// The zsh script (`#compdef crashwatch`): commands with their summaries, then `_arguments` per command.
    static func zsh() -> String {
        let menu = CommandCatalog.commands.map { "        '\($0.name):\(quoted($0.summary).replacing(":", with: "\\:"))'" }
            .joined(separator: "\n")
        var cases = ""
        for command in CommandCatalog.commands {
            let rest = command.name == "run" ? "':command:_command_names -e' '*::arguments:_normal'" : "'*:argument:_files'"
            let specs = command.syntax.specs.map(zshSpec).joined(separator: " \\\n                ")
            cases += "        \(command.name))\n            _arguments -s \\\n                \(specs) \\\n                \(rest) ;;\n"
        }
        return """
            #compdef crashwatch
            # zsh completion for crashwatch \(CLI.version), generated from its option tables (crashwatch __manual zsh).
            _crashwatch() {
                local -a commands
                commands=(
            \(menu)
                )
                if (( CURRENT == 2 )); then
                    if [[ $PREFIX == -* ]]; then
                        _arguments '(- *)'{-h,--help}'[show this help]' '(- *)--version[print the version]'
                    else
                        _describe -t commands 'crashwatch command' commands
                    fi
                    return
                fi
                local command=$words[2]
                shift words
                (( CURRENT-- ))
                case $command in
            \(cases)        *) _files ;;
                esac
            }
            _crashwatch "$@"

            """
    }

    /// One `_arguments` spec: `'(-n --limit)'{-n,--limit}'[help]:N:'` (repeatable ones starred).
    private static func zshSpec(_ spec: OptionSpec) -> String {
        let help = quoted(spec.help).replacing("[", with: "\\[").replacing("]", with: "\\]")
        var action = ""
        if let value = spec.valueName {
            let completer = directoryValues.contains(value) ? "_files -/" : fileValues.contains(value) ? "_files" : " "
            action = ":\(quoted(value).replacing(":", with: "\\:")):\(completer)"
        }
        let star = spec.repeatable ? "*" : ""
        guard let short = spec.short else { return "'\(star)--\(spec.name)[\(help)]\(action)'" }
        let exclusion = spec.repeatable ? "" : "'(-\(short) --\(spec.name))'"
        return "\(exclusion)\(star.isEmpty ? "" : "'*'"){-\(short),--\(spec.name)}'[\(help)]\(action)'"
    }

    /// `text` safe inside single quotes.
    private static func quoted(_ text: String) -> String { text.replacing("'", with: "'\\''") }
}
