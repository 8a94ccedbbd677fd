// Watches.swift — what `ship --follow` waits on instead of polling: inotify on the spool directory (a report
// renamed into it) and pidfds of other shippers holding claims (readable when that process ends).
import CCrashwatch
import Glibc

/// An inotify instance watching one directory for entries moved or created in it.
public final class DirectoryWatch {
    /// Readable when events wait.
    public let fd: Int32

    /// Watches `path` for entries created in or moved into it (a writer's or a releasing shipper's rename),
    /// and for the directory's own removal. A link to the directory is followed (a spool may be reached
    /// through a trusted link; the caller has judged the path already).
    public init(path: String) throws(SystemError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError("inotify_init1", errno: lastErrno()) }
        let mask = UInt32(IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(fd, path, mask) >= 0 else {
            let saved = lastErrno()
            close(fd)
            throw SystemError("inotify_add_watch \(path)", errno: saved)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Whether the watched directory was removed or moved away (nothing more will arrive in it).
    public private(set) var directoryGone = false

    /// Reads the waiting events (the caller looks at the directory itself); whether there were any.
    @discardableResult
    public func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in retryingOnEINTR { read(fd, raw.baseAddress, raw.count) } }
            if count <= 0 { return any }
            any = true
            // struct inotify_event: wd (4), mask (4), cookie (4), len (4), then `len` bytes of name.
            var offset = 0
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { directoryGone = true }
                offset += 16 + length
            }
        }
    }
}

/// A pidfd: a descriptor that becomes readable when its process ends (Linux 5.3).
public final class ProcessWatch {
    /// Readable once the process has exited.
    public let fd: Int32
    /// The process watched.
    public let pid: Int32

    /// Opens a pidfd for `pid`; throws (ESRCH) when it is gone already, ENOSYS on kernels without pidfds.
    public init(pid: Int32) throws(SystemError) {
        let fd = cw_pidfd_open(pid)
        guard fd >= 0 else { throw SystemError("pidfd_open", pid: pid, errno: lastErrno()) }
        self.fd = fd
        self.pid = pid
    }

    deinit { close(fd) }
}

/// Waits for child `pid` to end, at most until `deadlineNanoseconds` (CLOCK_MONOTONIC): its status, or nil
/// when it was killed at the deadline (then reaped). Sleeps in poll on a pidfd, not in a loop.
public func waitForChild(_ pid: Int32, deadlineNanoseconds: Int64) -> WaitStatus? {
    if let watch = try? ProcessWatch(pid: pid) {
        var descriptor = pollfd(fd: watch.fd, events: Int16(POLLIN), revents: 0)
        while true {
            let remaining = deadlineNanoseconds - Clock.monotonicNanoseconds()
            if remaining <= 0 { break }
            let ready = retryingOnEINTR { poll(&descriptor, 1, Int32(min(remaining / 1_000_000 + 1, 60_000))) }
            if ready != 0 { break }
        }
    }
    var status: Int32 = 0
    if retryingOnEINTR({ waitpid(pid, &status, Int32(CW_WNOHANG)) }) == pid { return WaitStatus(raw: status) }
    killProcess(pid)
    _ = retryingOnEINTR { waitpid(pid, &status, 0) }
    return nil
}
