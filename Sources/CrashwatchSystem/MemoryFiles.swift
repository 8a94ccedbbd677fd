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

