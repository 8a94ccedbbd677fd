// SpoolLocationTests.swift — the spool path chosen from --spool, the environment, the settings file and the
// user, as a table.
import CrashwatchSpool
import Testing

/// The spool path resolution, as a table of inputs and expected paths.
@Suite struct SpoolLocationTests {
    /// One row of the table: the inputs and the expected spool path.
    struct Row: Sendable, CustomTestStringConvertible {
        /// The `--spool` option, if given.
        let explicit: String?
        /// The settings file's `spool`, if it has one.
        var configured: String? = nil
        /// The environment variables.
        let environment: [String: String]
        /// Whether crashwatch runs as root.
        let isRoot: Bool
        /// The path `resolve` must return.
        let expected: String
        /// The row in one line, for test output.
        var testDescription: String { "\(explicit ?? "-") \(configured ?? "-") \(environment) root=\(isRoot) → \(expected)" }
    }

    /// An environment that sets every variable resolution looks at.
    static let everything = ["CRASHWATCH_SPOOL": "/env/spool", "XDG_STATE_HOME": "/xdg", "HOME": "/home/ann"]

    /// Each row resolves to its expected path.
    @Test(arguments: [
        Row(explicit: "/opt/x", environment: everything, isRoot: true, expected: "/opt/x"),
        Row(explicit: "relative/dir", environment: everything, isRoot: false, expected: "relative/dir"),
        Row(explicit: nil, environment: everything, isRoot: true, expected: "/env/spool"),
        Row(explicit: "", environment: everything, isRoot: false, expected: "/env/spool"),
        Row(explicit: nil, environment: ["XDG_STATE_HOME": "/xdg", "HOME": "/home/ann"], isRoot: true,
            expected: "/var/lib/crashwatch/reports"),
        Row(explicit: nil, environment: ["CRASHWATCH_SPOOL": "", "HOME": "/root"], isRoot: true,
            expected: "/var/lib/crashwatch/reports"),
        Row(explicit: nil, environment: ["XDG_STATE_HOME": "/xdg", "HOME": "/home/ann"], isRoot: false,
            expected: "/xdg/crashwatch/reports"),
        Row(explicit: nil, environment: ["XDG_STATE_HOME": "/xdg/", "HOME": "/home/ann"], isRoot: false,
            expected: "/xdg/crashwatch/reports"),
        Row(explicit: nil, environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/ann"], isRoot: false,
            expected: "/home/ann/.local/state/crashwatch/reports"),
        Row(explicit: nil, environment: ["XDG_STATE_HOME": "", "HOME": "/home/ann/"], isRoot: false,
            expected: "/home/ann/.local/state/crashwatch/reports"),
        Row(explicit: nil, environment: ["HOME": "/"], isRoot: false, expected: "/.local/state/crashwatch/reports"),
        Row(explicit: nil, environment: [:], isRoot: false, expected: "/var/lib/crashwatch/reports"),
        // --spool beats everything; $CRASHWATCH_SPOOL (one unit's own) beats the shared settings file, which
        // beats the defaults.
        Row(explicit: "/opt/x", configured: "/conf/spool", environment: everything, isRoot: true, expected: "/opt/x"),
        Row(explicit: nil, configured: "/conf/spool", environment: everything, isRoot: true, expected: "/env/spool"),
        Row(explicit: nil, configured: "/conf/spool", environment: ["CRASHWATCH_SPOOL": "", "HOME": "/home/ann"], isRoot: false,
            expected: "/conf/spool"),
        Row(explicit: nil, configured: "/conf/spool", environment: [:], isRoot: true, expected: "/conf/spool"),
        Row(explicit: nil, configured: "", environment: [:], isRoot: true, expected: "/var/lib/crashwatch/reports"),
    ])
    func resolves(row: Row) {
        #expect(SpoolLocation.resolve(explicit: row.explicit, configured: row.configured, environment: row.environment,
                                      isRoot: row.isRoot) == row.expected)
    }
}
