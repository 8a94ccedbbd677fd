// Sockets.swift — socket helpers of the tests: a bound AF_UNIX datagram socket that receives what the code
// under test sends (journald's stand-in), payload and passed descriptors alike, and journald's native entry
// format parsed back.
import Foundation
import Glibc

/// An AF_UNIX datagram socket bound at a fresh temporary path: a stand-in for journald's socket.
public final class DatagramSocket {
    /// The socket file's path.
    public let path: String
    /// The bound socket.
    public let fd: Int32

    /// Binds a socket at `<tmp>/<prefix>-<8 random hex digits>.socket`.
    public init(_ prefix: String = "cw-socket") throws {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8)).socket"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Whether `stopListening` closed the socket already (then `deinit` must not: the number may be another's by then).
    private var closed = false

    /// Closes the socket, leaving its file: a socket nobody listens on.
    public func stopListening() {
        guard !closed else { return }
        closed = true
        close(fd)
    }

    deinit {
        if !closed { close(fd) }
        unlink(path)
    }

    /// The datagram waiting on the socket (without waiting for one): its payload and the descriptors it carried.
    public func receive() -> (payload: [UInt8], descriptors: [Int32])? {
        var payload = [UInt8](repeating: 0, count: 1 << 20)
        var control = [UInt8](repeating: 0, count: 256)
        let got = payload.withUnsafeMutableBytes { buffer in
            control.withUnsafeMutableBytes { controlBuffer in
                var vector = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBuffer.baseAddress
                    message.msg_controllen = controlBuffer.count
                    let count = recvmsg(fd, &message, Int32(MSG_DONTWAIT))
                    return (count, message.msg_controllen)
                }
            }
        }
        guard got.0 >= 0 else { return nil }
        // Control messages: cmsghdr (size_t length, int level, int type) then the data, 8-byte aligned.
        var descriptors: [Int32] = []
        var offset = 0
        while offset + 16 <= got.1 {
            let length = control.withUnsafeBytes { $0.load(fromByteOffset: offset, as: Int.self) }
            let level = control.withUnsafeBytes { $0.load(fromByteOffset: offset + 8, as: Int32.self) }
            let type = control.withUnsafeBytes { $0.load(fromByteOffset: offset + 12, as: Int32.self) }
            if level == SOL_SOCKET && type == 1 /* SCM_RIGHTS */ {
                for start in stride(from: offset + 16, to: offset + length, by: 4) {
                    descriptors.append(control.withUnsafeBytes { $0.load(fromByteOffset: start, as: Int32.self) })
                }
            }
            guard length > 0 else { break }
            offset += (length + 7) & ~7
        }
        return (Array(payload[..<got.0]), descriptors)
    }
}

/// journald's native entry format, read back as journald reads it.
public enum JournalEntry {
    /// Parses an entry as journald does — `NAME=value` lines, or NAME, newline, a 64-bit little-endian length,
    /// the bytes and a newline — into (name, value) pairs; nil when it is malformed.
    public static func parse(_ bytes: [UInt8]) -> [(String, [UInt8])]? {
        var fields: [(String, [UInt8])] = []
        var index = 0
        while index < bytes.count {
            guard let end = bytes[index...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else { return nil }
            let name = String(decoding: bytes[index..<end], as: UTF8.self)
            if bytes[end] == UInt8(ascii: "=") {
                guard let newline = bytes[(end + 1)...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                fields.append((name, Array(bytes[(end + 1)..<newline])))
                index = newline + 1
            } else {
                guard end + 9 <= bytes.count else { return nil }
                var length = 0
                for byte in bytes[(end + 1)..<(end + 9)].reversed() { length = length << 8 | Int(byte) }
                let start = end + 9
                guard start + length < bytes.count, bytes[start + length] == UInt8(ascii: "\n") else { return nil }
                fields.append((name, Array(bytes[start..<(start + length)])))
                index = start + length + 1
            }
        }
        return fields
    }
}
