// main.swift — the crashwatch executable: hands the command line to CrashwatchCLI and nothing else.
import CrashwatchCLI

CLI.main(Array(CommandLine.arguments.dropFirst()))
