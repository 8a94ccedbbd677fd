// MemoryFiles.swift — in-memory files (memfd) for handing bytes to a child process, sealed when the child must
// not change them, and read-only mappings of whole files.
import CCrashwatch
import Glibc

/// An anonymous in-memory file (`memfd_create`), for handing bytes to a child process.
public enum MemoryFile {
    public static func create(name: String) throws(SystemError) -> OwnedDescriptor {
        let fd = cw_memfd(name)
        guard fd >= 0 else { throw SystemError("memfd_create", errno: lastErrno()) }
        return OwnedDescriptor(adopting: fd)
    }

    /// Appends up to `count` bytes to `file` (from `create`), whose size is `offset`, written in place by `fill`
    /// through a shared mapping of them: they come zeroed and their pages allocated in one go (`MAP_POPULATE`),
    /// with no buffer of the caller's to fault in first and copy from after. `fill` returns how many of them to
    /// keep; the file then ends after those, and its offset is there. Returns that count.
    public static func append(to file: OwnedDescriptor, at offset: UInt64, count: Int,
                              fill: (UnsafeMutableRawBufferPointer) -> Int) throws(SystemError) -> Int {
        guard count > 0 else { return 0 }
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        let mapped = offset & ~(page - 1)
        let lead = Int(offset - mapped)
        guard ftruncate(file.fd, off_t(offset) + off_t(count)) == 0 else { throw SystemError("grow the memfd", errno: lastErrno()) }
        let address = mmap(nil, lead + count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, file.fd, off_t(mapped))
        guard let address, address != MAP_FAILED else {
            let failure = lastErrno()
            _ = ftruncate(file.fd, off_t(offset))
            throw SystemError("map the memfd", errno: failure)
        }
        let kept = min(max(fill(UnsafeMutableRawBufferPointer(start: address + lead, count: count)), 0), count)
        munmap(address, lead + count)
        let end = off_t(offset) + off_t(kept)
        guard ftruncate(file.fd, end) == 0 else { throw SystemError("trim the memfd", errno: lastErrno()) }
        guard lseek(file.fd, end, SEEK_SET) == end else { throw SystemError("lseek", errno: lastErrno()) }
        return kept
    }

    /// Makes `file` (from `create`) immutable for good: whoever holds it — a worker handed it as input — can
    /// neither write, shrink nor grow it, nor lift the seals.
    public static func seal(_ file: OwnedDescriptor) throws(SystemError) {
        let result = cw_memfd_seal(file.fd)
        guard result == 0 else { throw SystemError("seal the memfd", errno: result) }
    }
}

/// A read-only mapping of a whole file, unmapped when the value goes away.
public final class MappedFile {
    public let bytes: UnsafeRawBufferPointer

    /// Maps the file open at `fd` (at most `limit` bytes of it).
    public init(_ descriptor: OwnedDescriptor, limit: Int) throws(SystemError) {
        guard let size = descriptor.size() else { throw SystemError("fstat", errno: lastErrno()) }
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard size <= Int64(limit) else { throw SystemError("map capture (\(size) bytes, limit \(limit))", errno: EFBIG) }
        let address = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor.fd, 0)
        guard let address, address != MAP_FAILED else { throw SystemError("mmap", errno: lastErrno()) }
        bytes = UnsafeRawBufferPointer(start: address, count: Int(size))
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}

