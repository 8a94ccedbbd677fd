// ProcessMemory.swift — another (stopped) process's memory, read through its /proc/TID/mem.
import CCrashwatch
import Glibc

/// Another process's memory (it must be stopped to be coherent), read through its `/proc/TID/mem`, opened once.
/// Not `process_vm_readv`: that faults pages in as the process would, and a page under a userfaultfd the
/// process registered (a post-copy migration, a garbage collector — or a program that wants to stall its
/// reader) waits for that descriptor's handler, the held process itself or anyone it gave it to, in a sleep no
/// signal ends; a read of `/proc/TID/mem` is refused such a page (EIO) at once. (A page of a file on a FUSE
/// file system still waits for its server: `UnreadableFiles` keeps those out.)
public final class ProcessMemory: Sendable {
    private let file: OwnedDescriptor

    /// Opens the memory of the process thread `tid` belongs to; nil when it cannot be (gone, not allowed).
    public init?(through tid: Int32) {
        let fd = Glibc.open("/proc/\(tid)/mem", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        file = OwnedDescriptor(adopting: fd)
    }

    /// Reads up to `buffer.count` bytes at `address` into `buffer`; the number read (short at an unmapped or
    /// unreadable page), 0 when none.
    public func read(address: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty, address <= UInt64(Int64.max) - UInt64(buffer.count) else { return 0 }
        let got = retryingOnEINTR { pread(file.fd, base, buffer.count, off_t(address)) }
        return max(got, 0)
    }

    /// Reads many ranges, each into its buffer; the total read, which stops short at the first range that
    /// cannot be read whole.
    public func read(ranges: [(address: UInt64, buffer: UnsafeMutableRawBufferPointer)]) -> Int {
        var total = 0
        for range in ranges {
            let got = read(address: range.address, into: range.buffer)
            total += got
            if got < range.buffer.count { break }
        }
        return total
    }

    /// Reads `count` bytes at each of `addresses`: by address, the bytes of each range that could be read whole.
    public func read(addresses: [UInt64], count: Int) -> [UInt64: [UInt8]] {
        guard count > 0 else { return [:] }
        var result: [UInt64: [UInt8]] = [:]
        var buffer = [UInt8](repeating: 0, count: count)
        for address in addresses {
            let got = buffer.withUnsafeMutableBytes { read(address: address, into: $0) }
            if got == count { result[address] = buffer }
        }
        return result
    }

    /// Reads up to `count` bytes at `address`.
    public func read(address: UInt64, count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { read(address: address, into: $0) }
        bytes.removeSubrange(got...)
        return bytes
    }
}
