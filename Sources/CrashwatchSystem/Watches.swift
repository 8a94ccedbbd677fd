// Watches.swift — what `ship --follow` waits on instead of polling: inotify on the spool directory (a report
// renamed into it) and pidfds of other shippers holding claims (readable when that process ends).
import CCrashwatch
import Glibc

/// An inotify instance watching one directory for entries moved or created in it.
public final class DirectoryWatch {
    /// Readable when events wait.
    public let fd: Int32

    /// Watches `path` for entries created in or moved into it (a writer's or a releasing shipper's rename).
    public init(path: String) throws(SystemError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError("inotify_init1", errno: lastErrno()) }
        let mask = UInt32(IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)
        guard inotify_add_watch(fd, path, mask) >= 0 else {
            let saved = lastErrno()
            close(fd)
            throw SystemError("inotify_add_watch \(path)", errno: saved)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Reads and discards the waiting events (the caller looks at the directory itself); whether there were any.
    @discardableResult
    public func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in retryingOnEINTR { read(fd, raw.baseAddress, raw.count) } }
            if count <= 0 { return any }
            any = true
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
