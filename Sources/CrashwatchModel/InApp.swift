// InApp.swift — the in_app rule: which mapped images ship with the app, decided once per capture from the
// path text alone (never resolved: the file may be gone). The decision table lives in
// Fixtures/in_app_vectors.tsv and Tests/CrashwatchModelTests/InAppTests.swift checks every row.

/// Decides whether a mapping's image is part of the app, from `--app-root` options or the executable's path.
///
/// - Roots are the `--app-root` values. Without any, the root is the executable's directory, or that
///   directory's parent when it is named `bin`, `sbin` or `libexec`.
/// - A default root that would be a shared system directory claims nothing: then the executable alone is
///   in-app. Shared directories are `/`, `/usr`, `/usr/local`, `/opt` (the design's system prefixes, plus
///   `/opt`, which holds many unrelated apps) and the library directories `/lib*`, `/usr/lib*`,
///   `/usr/local/lib*` and their multiarch subdirectories (`/usr/lib/x86_64-linux-gnu`), so an executable
///   installed there never makes libc in-app.
/// - Paths are compared by whole components (`/opt/app2/lib` is not inside `/opt/app`), after removing a trailing
///   ` (deleted)` and normalising repeated slashes, trailing slashes and `.` components. Nothing is resolved:
///   `..` and symlinks are compared as written, so give canonical roots (the kernel writes canonical paths).
/// - Never in-app: anonymous mappings (empty path), pseudo-paths (`[vdso]`, `[vsyscall]`, `[vvar]`, `[heap]`,
///   `[stack]`, `[anon:…]`, anything else in brackets), `/memfd:…` and every other path that is not absolute
///   (`anon_inode:…`). Relative roots therefore match nothing.
public struct InAppRule: Sendable, Equatable {
    /// The normalised roots in effect: the `--app-root` values, or the default derived from the executable.
    public let roots: [String]
    /// The normalised executable path when it alone is in-app (no roots given and no default root applies).
    public let executableOnly: String?

    /// The absolute roots split into components, for whole-component prefix tests.
    private let rootComponents: [[Substring]]

    /// Derives the rule: explicit `appRoots` when any are given, else the default from `executablePath`.
    public init(appRoots: [String], executablePath: String) {
        if !appRoots.isEmpty {
            roots = appRoots.map(InAppRule.normalized).filter { !$0.isEmpty }
            executableOnly = nil
        } else if let root = InAppRule.defaultRoot(forExecutable: executablePath) {
            roots = [root]
            executableOnly = nil
        } else {
            let executable = InAppRule.normalized(InAppRule.deletedSuffixRemoved(executablePath).path)
            roots = []
            executableOnly = InAppRule.isFilePath(executable) ? executable : nil
        }
        rootComponents = roots.filter { $0.hasPrefix("/") }.map(InAppRule.components)
    }

    /// Whether the image mapped from `mappingPath` (as `/proc/PID/maps` writes it) ships with the app.
    public func isInApp(_ mappingPath: String) -> Bool {
        let path = InAppRule.normalized(InAppRule.deletedSuffixRemoved(mappingPath).path)
        guard InAppRule.isFilePath(path) else { return false }
        if let executableOnly, path == executableOnly { return true }
        let parts = InAppRule.components(path)
        return rootComponents.contains { root in root.count <= parts.count && parts.starts(with: root) }
    }

    /// The default app root for an executable, or nil when the executable alone is in-app (or it is no file path).
    public static func defaultRoot(forExecutable executablePath: String) -> String? {
        let executable = normalized(deletedSuffixRemoved(executablePath).path)
        guard isFilePath(executable) else { return nil }
        var directory = Array(components(executable).dropLast())
        if let last = directory.last, last == "bin" || last == "sbin" || last == "libexec" {
            directory.removeLast()
        }
        if isSharedSystemDirectory(directory) { return nil }
        return "/" + directory.joined(separator: "/")
    }

    /// Splits a maps path into the path proper and whether the kernel marked it ` (deleted)`.
    public static func deletedSuffixRemoved(_ path: String) -> (path: String, deleted: Bool) {
        let suffix = " (deleted)"
        guard path.hasSuffix(suffix) else { return (path, false) }
        return (String(path.dropLast(suffix.count)), true)
    }

    /// A path with repeated slashes, trailing slashes and `.` components removed (`//opt/./app/` → `/opt/app`).
    public static func normalized(_ path: String) -> String {
        // The kernel writes maps paths normalised already: those come back as they are, not split and joined.
        if isNormalized(path.utf8) { return path }
        let parts = components(path)
        let absolute = path.hasPrefix("/")
        if parts.isEmpty { return absolute ? "/" : "" }
        return (absolute ? "/" : "") + parts.joined(separator: "/")
    }

    /// Whether `normalized` would give the path back unchanged: no empty or `.` component, no trailing slash
    /// (but `/` itself).
    private static func isNormalized(_ path: String.UTF8View) -> Bool {
        var count = 0
        var componentLength = 0
        var componentIsDot = false
        for byte in path {
            if byte == UInt8(ascii: "/") {
                // The component this slash ends is empty (`//`, `x//`) or `.`; a leading slash ends none.
                if count > 0 && (componentLength == 0 || componentIsDot) { return false }
                componentLength = 0
                componentIsDot = false
            } else {
                componentIsDot = componentLength == 0 && byte == UInt8(ascii: ".")
                componentLength += 1
            }
            count += 1
        }
        if componentIsDot { return false }
        return componentLength > 0 || count <= 1
    }

    /// The non-empty components of a path other than `.`.
    private static func components(_ path: String) -> [Substring] {
        path.split(separator: "/").filter { $0 != "." }
    }

    /// Whether a normalised path can name an image file: absolute, not `/` itself and not a memfd.
    private static func isFilePath(_ path: String) -> Bool {
        path.hasPrefix("/") && path != "/" && !path.hasPrefix("/memfd:")
    }

    /// Whether a directory (as components) holds files of many packages, so it cannot be an app root.
    private static func isSharedSystemDirectory(_ directory: [Substring]) -> Bool {
        switch directory.count {
        case 0: return true
        case 1: return directory[0] == "usr" || directory[0] == "opt" || isLibraryDirectoryName(directory[0])
        case 2:
            if directory[0] == "usr" { return directory[1] == "local" || isLibraryDirectoryName(directory[1]) }
            return isLibraryDirectoryName(directory[0]) && isMultiarchName(directory[1])
        case 3:
            if directory[0] == "usr" && directory[1] == "local" { return isLibraryDirectoryName(directory[2]) }
            return directory[0] == "usr" && isLibraryDirectoryName(directory[1]) && isMultiarchName(directory[2])
        case 4:
            return directory[0] == "usr" && directory[1] == "local" && isLibraryDirectoryName(directory[2])
                && isMultiarchName(directory[3])
        default: return false
        }
    }

    /// Whether a directory name is a library directory: `lib`, `lib32`, `lib64`, `libx32`.
    private static func isLibraryDirectoryName(_ name: Substring) -> Bool {
        name == "lib" || name == "lib32" || name == "lib64" || name == "libx32"
    }

    /// Whether a directory name is a multiarch tuple such as `x86_64-linux-gnu` or `aarch64-linux-gnu`.
    private static func isMultiarchName(_ name: Substring) -> Bool { name.contains("-linux-") }
}
