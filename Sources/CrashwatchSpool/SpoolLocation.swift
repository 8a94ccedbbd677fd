// SpoolLocation.swift — where the spool directory is: a pure function of the command line option, the
// environment, the settings file and whether we run as root.

/// Chooses the spool directory from the `--spool` option, the environment, the settings file and the user.
public enum SpoolLocation {
    /// The system-wide spool used when running as root.
    public static let systemPath = "/var/lib/crashwatch/reports"

    /// The environment variable that names the spool for every crashwatch command.
    public static let environmentVariable = "CRASHWATCH_SPOOL"

    /// Resolves the spool path: `--spool DIR`, else `$CRASHWATCH_SPOOL`, else the settings file's `spool`, else
    /// the system spool as root, else `$XDG_STATE_HOME/crashwatch/reports`, else
    /// `$HOME/.local/state/crashwatch/reports`.
    ///
    /// The environment comes before the settings file because the file is shared by every service on the
    /// machine while the environment is one unit's own (`Environment=CRASHWATCH_SPOOL=` in a unit must win
    /// over `/etc/crashwatch.conf`). Empty values count as unset. `XDG_STATE_HOME` is ignored unless absolute, as the XDG Base Directory
    /// specification says. Without a usable `HOME` the system spool is returned, so that the failure to
    /// open it names a real path instead of guessing a private one (a predictable path in `/tmp` would be
    /// an attack surface).
    public static func resolve(explicit: String?, configured: String? = nil, environment: [String: String], isRoot: Bool) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        if let configured, !configured.isEmpty { return configured }
        if isRoot { return systemPath }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return join(state, "crashwatch/reports")
        }
        if let home = environment["HOME"], !home.isEmpty {
            return join(home, ".local/state/crashwatch/reports")
        }
        return systemPath
    }

    /// Joins a directory and a relative path with exactly one slash between them.
    private static func join(_ directory: String, _ relative: String) -> String {
        var base = Substring(directory)
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        return base == "/" ? "/\(relative)" : "\(base)/\(relative)"
    }
}
