// ExitCode.swift — crashwatch's exit statuses: a contract, documented in --help and the README.

/// The statuses crashwatch itself exits with. `run` otherwise exits exactly as its command did.
public enum ExitCode {
    /// Success (`--help`, `--version`).
    public static let success: Int32 = 0
    /// The command line was wrong (BSD `EX_USAGE`).
    public static let usage: Int32 = 64
    /// crashwatch could not set up supervision: ptrace refused, fork failed (BSD `EX_OSERR`).
    public static let systemError: Int32 = 71
    /// The command exists but cannot be executed (as in a shell).
    public static let notExecutable: Int32 = 126
    /// The command was not found (as in a shell).
    public static let notFound: Int32 = 127
}
