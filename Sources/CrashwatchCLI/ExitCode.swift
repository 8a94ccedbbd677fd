// ExitCode.swift — crashwatch's exit statuses: a contract, documented in --help and the README.

/// The statuses crashwatch itself exits with. `run` otherwise exits exactly as its command did.
public enum ExitCode {
    /// Success (`--help`, `--version`).
    public static let success: Int32 = 0
    /// The command line was wrong (BSD `EX_USAGE`).
    public static let usage: Int32 = 64
    /// An input file is not data crashwatch can read (BSD `EX_DATAERR`).
    public static let dataError: Int32 = 65
    /// An input file cannot be opened or read (BSD `EX_NOINPUT`).
    public static let noInput: Int32 = 66
    /// A service crashwatch needs did not answer as it should (`ship --check`; BSD `EX_UNAVAILABLE`).
    public static let unavailable: Int32 = 69
    /// Some work is left for a later attempt (`ship --once` kept reports; BSD `EX_TEMPFAIL`).
    public static let temporaryFailure: Int32 = 75
    /// An output file cannot be created (BSD `EX_CANTCREAT`).
    public static let cannotCreate: Int32 = 73
    /// crashwatch could not set up supervision: ptrace refused, fork failed (BSD `EX_OSERR`).
    public static let systemError: Int32 = 71
    /// The command exists but cannot be executed (as in a shell).
    public static let notExecutable: Int32 = 126
    /// A processing worker's confinement (limits, identity) could not be set up: it processed nothing.
    public static let confinementFailed: Int32 = 126
    /// The command was not found (as in a shell).
    public static let notFound: Int32 = 127
}
