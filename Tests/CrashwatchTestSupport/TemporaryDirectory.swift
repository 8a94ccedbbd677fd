// TemporaryDirectory.swift — the one temporary directory of the test targets: a fresh directory under the
// system temporary directory, removed with everything in it when the value goes away (or at `remove()`).
import Foundation
import Glibc

/// A fresh directory under the system temporary directory, removed with its contents when released.
public final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates a new, empty directory named `prefix-XXXXXX` with permission bits `mode` (0755: others may
    /// enter, as programs run as another user need; 0700 for a private one).
    public init(_ prefix: String = "cw-test", mode: mode_t = 0o755) throws {
        var base = NSTemporaryDirectory()
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        guard chmod(path, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// The path of `name` inside the directory.
    public func join(_ name: String) -> String { "\(path)/\(name)" }

    /// Deletes the directory tree now (tests unmount what they mount first); the release does it otherwise.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    deinit { remove() }
}
