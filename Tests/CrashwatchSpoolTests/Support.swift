// Support.swift — the spool tests' helpers: direct file system probes
// (modes, contents, links, FIFOs, times, tmpfs mounts) that check what the spool did without going through
// it, real threads for concurrency tests, and report names and contents made to order.
import CrashwatchSpool
import CrashwatchTestSupport
import Foundation
import Glibc
import Testing

/// Probes of the file system that do not use the code under test.
enum Probe {
    /// `lstat` of a path, or nil when it does not exist.
    static func status(_ path: String) -> stat? {
        var raw = stat()
        return lstat(path, &raw) == 0 ? raw : nil
    }

    /// The permission bits (07777) of a path, not following links.
    static func permissions(_ path: String) -> UInt32? { status(path).map { UInt32($0.st_mode & 0o7777) } }

    /// Whether the path itself is a regular file.
    static func isRegularFile(_ path: String) -> Bool { status(path).map { $0.st_mode & S_IFMT == S_IFREG } ?? false }

    /// Whether the path itself is a symbolic link.
    static func isSymbolicLink(_ path: String) -> Bool { status(path).map { $0.st_mode & S_IFMT == S_IFLNK } ?? false }

    /// The bytes of a file (following links), or nil when it cannot be read.
    static func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    /// The names in a directory, sorted, without `.` and `..`.
    static func names(_ path: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }

    /// Creates (or replaces) a regular file with the given bytes.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw POSIXError(.EIO)
        }
    }

    /// Creates a symbolic link at `path` pointing to `target`.
    static func symlink(_ path: String, to target: String) throws {
        guard Glibc.symlink(target, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Gives the path itself (a symbolic link is not followed) to `owner`, keeping its group.
    static func lchown(_ path: String, _ owner: UInt32) throws {
        guard Glibc.lchown(path, owner, UInt32.max) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Creates a FIFO (named pipe) at `path`.
    static func fifo(_ path: String) throws {
        guard mkfifo(path, 0o640) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Sets permission bits exactly.
    static func chmod(_ path: String, _ permissions: UInt32) throws {
        guard Glibc.chmod(path, mode_t(permissions)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Sets a file's modification (and access) time to `nanoseconds` since the epoch.
    static func setModificationTime(_ path: String, nanoseconds: Int64) throws {
        let time = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        let times = [time, time]
        guard utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// The process's umask, read from /proc/self/status (setting it to read it would race other tests).
    static func umask() -> UInt32 {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
            return UInt32(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0o022
        }
        return 0o022
    }

    /// Gives a directory the default ACL `user::rw-,group::r--,mask::---,other::---`, so that files created
    /// in it get no group or other bits whatever mode they ask for; false when the file system has no ACLs.
    static func setNarrowingDefaultACL(_ path: String) -> Bool {
        // The kernel's xattr form of an ACL: a version, then (tag, permissions, id) entries.
        func entry(_ tag: UInt16, _ permissions: UInt16) -> [UInt8] {
            withUnsafeBytes(of: tag.littleEndian, Array.init) + withUnsafeBytes(of: permissions.littleEndian, Array.init)
                + withUnsafeBytes(of: UInt32.max.littleEndian, Array.init)
        }
        let value = withUnsafeBytes(of: UInt32(2).littleEndian, Array.init)
            + entry(0x01, 6) + entry(0x04, 4) + entry(0x10, 0) + entry(0x20, 0)
        // <sys/xattr.h> is not in Swift's Glibc module: look setxattr(2)'s libc wrapper up by name.
        typealias SetXattr = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer, Int, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setxattr") else { return false }
        let setxattr = unsafeBitCast(symbol, to: SetXattr.self)
        return value.withUnsafeBytes { setxattr(path, "system.posix_acl_default", $0.baseAddress!, $0.count, 0) } == 0
    }

    /// Creates an empty file with `open(…, O_CREAT, permissions)`, as the kernel then narrows it.
    static func createFile(_ path: String, permissions: UInt32) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode_t(permissions))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        close(fd)
    }

    /// Mounts a tmpfs of `size` bytes with root mode `mode` on `path`; false when the machine forbids it.
    static func mountTmpfs(_ path: String, size: Int, mode: UInt32) -> Bool {
        mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=\(String(mode, radix: 8))") == 0
    }

    /// Unmounts `path` (lazily, so a leaked descriptor cannot keep it busy).
    static func unmount(_ path: String) { umount2(path, Int32(MNT_DETACH)) }

    /// Whether this process may mount a tmpfs (root or CAP_SYS_ADMIN in its mount namespace).
    static let canMountTmpfs: Bool = {
        guard let directory = try? TemporaryDirectory(mode: 0o700) else { return false }
        defer { directory.remove() }
        guard mountTmpfs(directory.path, size: 4096, mode: 0o700) else { return false }
        unmount(directory.path)
        return true
    }()
}

/// A deterministic report id for test number `index`: `00000000-0000-4000-8000-<index as 12 digits>`.
func testID(_ index: Int) -> UUID {
    let digits = String(index)
    return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)!
}

/// A fixed "now" for retention tests: 2023-11-14T22:13:20Z, in nanoseconds.
let fixedNow: Int64 = 1_700_000_000 * 1_000_000_000

/// Nanoseconds in one minute.
let minute: Int64 = 60 * 1_000_000_000

/// Runs `body(0)` … `body(count - 1)` each on its own new thread (not a pool that might run them one after
/// another), all released at once when every thread has started, and returns when all have finished.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let started = DispatchGroup()
    let finished = DispatchGroup()
    for _ in 0..<count { started.enter() }
    for index in 0..<count {
        finished.enter()
        let thread = Thread {
            started.leave()
            started.wait()
            body(index)
            finished.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    finished.wait()
}

/// A value shared between threads, changed only under its lock.
final class Locked<Value>: @unchecked Sendable {
    /// The lock that guards `value`.
    private let lock = NSLock()
    /// The value; touched only inside `withLock`.
    private var value: Value

    /// Shares `value`.
    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    var current: Value { withLock { $0 } }
}

/// A report name `minutesAgo` minutes before `fixedNow` for executable `executable`, with id `testID(index)`.
func reportName(_ index: Int, minutesAgo: Int64, executable: String = "/usr/bin/app", pid: Int32 = 100) -> ReportFileName {
    ReportFileName(timeNanoseconds: fixedNow - minutesAgo * minute, pid: pid, executable: executable, id: testID(index))
}

/// The bytes a test writes for report `name`: its id and a size that varies with it, so a torn or
/// mixed-up file is noticed.
func reportBytes(for name: ReportFileName) -> [UInt8] {
    let padding = String(repeating: "x", count: 100 + Int(name.id.uuid.15) * 7)
    return Array("{\"id\":\"\(name.idText)\",\"pad\":\"\(padding)\"}".utf8)
}

/// A pid that no process can have: above the kernel's largest `pid_max` (2^22).
let impossiblePID: Int32 = (1 << 22) + 4242
