// SentryDSN.swift — a Sentry DSN (`https://KEY@host[:port]/[path/]PROJECT`), as Sentry, GlitchTip and Bugsink
// hand it out: where a project's envelopes go (`…/[path/]api/PROJECT/envelope/`) and the key that authenticates
// them (`X-Sentry-Auth`). Parsed strictly, with a message that names what is wrong; the key is never echoed.

/// A parsed Sentry DSN: the server, the project and the public key.
public struct SentryDSN: Equatable, Sendable {
    /// `http` or `https`, lower case.
    public let scheme: String
    /// The public key (the DSN's user part).
    public let publicKey: String
    /// The legacy secret key (the DSN's password part), when the DSN still has one.
    public let secretKey: String?
    /// The host, with its port when the DSN gives one (`sentry.example.com:9000`, `[::1]:8000`).
    public let host: String
    /// The path before the project id, without slashes at either end (`""` for most servers).
    public let pathPrefix: String
    /// The project id (decimal digits).
    public let projectID: String

    /// Parses `text`; throws a message naming the part that is wrong.
    public init(parsing text: String) throws(ExportSetupError) {
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) else {
            throw ExportSetupError("the Sentry DSN contains spaces or control characters")
        }
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https" : lower.hasPrefix("http://") ? "http" : ""
        guard !scheme.isEmpty else {
            throw ExportSetupError("the Sentry DSN must start with https:// or http:// (it looks like https://KEY@HOST/PROJECT)")
        }
        let rest = text.dropFirst(scheme.count + 3)
        guard !rest.contains("?"), !rest.contains("#") else {
            throw ExportSetupError("the Sentry DSN has a query or fragment ('?' or '#'); give it as the server shows it: https://KEY@HOST/PROJECT")
        }
        guard let at = rest.lastIndex(of: "@"), !rest[..<at].contains("/") else {
            throw ExportSetupError("the Sentry DSN has no key: it looks like \(scheme)://KEY@HOST/PROJECT")
        }
        let credentials = rest[..<at].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let key = credentials.first, !key.isEmpty else {
            throw ExportSetupError("the Sentry DSN's key (before '@') is empty")
        }
        let afterAt = rest[rest.index(after: at)...]
        let hostEnd = afterAt.firstIndex(of: "/") ?? afterAt.endIndex
        let host = String(afterAt[..<hostEnd])
        try Self.checkHost(host)
        let path = afterAt[hostEnd...].split(separator: "/", omittingEmptySubsequences: true)
        guard let project = path.last else {
            throw ExportSetupError("the Sentry DSN has no project id after the host (it ends like …@\(host)/PROJECT)")
        }
        guard project.utf8.count <= 20, project.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw ExportSetupError("the Sentry DSN's project id '\(project)' is not a number")
        }
        self.scheme = scheme
        publicKey = String(key)
        secretKey = credentials.count > 1 && !credentials[1].isEmpty ? String(credentials[1]) : nil
        self.host = host
        pathPrefix = path.dropLast().joined(separator: "/")
        projectID = String(project)
    }

    /// A host as a DSN may name it: a name or IPv4 address, or a bracketed IPv6 address, then `:port`.
    private static func checkHost(_ host: String) throws(ExportSetupError) {
        guard !host.isEmpty, !host.hasPrefix(":") else { throw ExportSetupError("the Sentry DSN has no host after '@'") }
        var name = Substring(host)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw ExportSetupError("the Sentry DSN's host '\(host)' lacks its ']'") }
            name = host[...close]
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ExportSetupError("the Sentry DSN's host '\(host)' is not [ADDRESS]:PORT") }
                port = after.dropFirst()
            }
        } else if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            port = host[host.index(after: colon)...]
        }
        guard !name.isEmpty else { throw ExportSetupError("the Sentry DSN has no host after '@'") }
        if let port {
            guard let number = Int(port), (1...65_535).contains(number), port.allSatisfy(\.isASCII) else {
                throw ExportSetupError("the Sentry DSN's port '\(port)' is not a number from 1 to 65535")
            }
        }
    }

    /// Where envelopes go: `SCHEME://HOST[/PATH]/api/PROJECT/envelope/`.
    public var envelopeURL: String {
        "\(scheme)://\(host)/" + (pathPrefix.isEmpty ? "" : pathPrefix + "/") + "api/\(projectID)/envelope/"
    }

    /// The DSN without its secret key (for the envelope header): `SCHEME://KEY@HOST[/PATH]/PROJECT`.
    public var publicText: String {
        "\(scheme)://\(publicKey)@\(host)/" + (pathPrefix.isEmpty ? "" : pathPrefix + "/") + projectID
    }

    /// The `X-Sentry-Auth` header's value for a client named `client` (`crashwatch/1.2`).
    public func authHeader(client: String) -> String {
        "Sentry sentry_version=7, sentry_client=\(client), sentry_key=\(publicKey)"
            + (secretKey.map { ", sentry_secret=\($0)" } ?? "")
    }
}
