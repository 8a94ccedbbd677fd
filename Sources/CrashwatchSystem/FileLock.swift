// FileLock.swift — an exclusive `flock` on a lock file inside a directory, waited for within a bound: how the
// spool's writers take turns on a shared file (the group index) without losing each other's updates.
import CCrashwatch
import Glibc

extension DirectoryHandle {
    /// Opens (creating it with `permissions` when missing) the regular file `name`, never through a link, and
    /// takes an exclusive `flock` on it, trying again every millisecond for at most `waitNanoseconds`; the lock
    /// lasts as long as the returned descriptor. Throws `EWOULDBLOCK` when another holder kept it that long
    /// (a holder that dies releases it: the kernel drops a dead process's locks).
    public func exclusiveLock(named name: String, permissions: UInt32, waitNanoseconds: Int64) throws(SystemError) -> OwnedDescriptor {
        try Self.check(name, "openat")
        var file = retryingOnEINTR { openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        if file < 0 && lastErrno() == ENOENT {
            file = retryingOnEINTR { openat(fd, name, O_CREAT | O_EXCL | O_RDONLY | O_NOFOLLOW | O_CLOEXEC, mode_t(permissions)) }
            if file < 0 && lastErrno() == EEXIST {
                file = retryingOnEINTR { openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
            }
        }
        guard file >= 0 else { throw SystemError("openat \(name)", errno: lastErrno()) }
        let descriptor = OwnedDescriptor(adopting: file)
        var status = stat()
        guard fstat(file, &status) == 0 else { throw SystemError("fstat \(name)", errno: lastErrno()) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw SystemError("flock \(name)", errno: EINVAL) }
        let deadline = Clock.monotonicNanoseconds() + max(waitNanoseconds, 0)
        while flock(file, LOCK_EX | LOCK_NB) != 0 {
            let error = lastErrno()
            guard error == EWOULDBLOCK || error == EINTR else { throw SystemError("flock \(name)", errno: error) }
            guard Clock.monotonicNanoseconds() < deadline else { throw SystemError("flock \(name)", errno: EWOULDBLOCK) }
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            _ = nanosleep(&pause, nil)
        }
        return descriptor
    }
}
