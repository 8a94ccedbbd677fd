// NotifyRelay.swift — the socket side of crashwatch's sd_notify relay. systemd accepts notifications
// (READY=1, WATCHDOG=1, FDSTORE=1 …) only from a service's main process under the default
// NotifyAccess=main, and the main process is crashwatch: the program gets a socket of crashwatch's
// instead, and crashwatch sends on, from itself, what the supervisor's filter keeps of what arrives there
// (CrashwatchSupervisor's NotifyFilter: no main-PID change, descriptors only for the fd store).
import CCrashwatch
import Glibc

/// One notification a process sent to the relay socket.
public struct NotifyMessage: Sendable {
    /// The datagram (newline-separated `KEY=value` assignments, as sd_notify sends them).
    public var bytes: [UInt8]
    /// The sending process, from the kernel's credentials (0 when the kernel gave none).
    public var senderPID: Int32
    /// Descriptors passed with it, owned: closed when the last reference goes (the ones not sent on, too).
    public var descriptors: [OwnedDescriptor]
}

/// The relay's own socket: an abstract AF_UNIX datagram socket with a random name.
public final class NotifySocket: Sendable {
    /// Readable whenever a notification waits.
    public let fd: Int32
    /// The address for the program's `NOTIFY_SOCKET` (`@crashwatch/notify/PID/RANDOM`).
    public let address: String
    /// The largest notification relayed; systemd reads at most this much too (its NOTIFY_BUFFER_MAX).
    public static let maximumMessageBytes = 4096

    public init() throws(SystemError) {
        var name = [CChar](repeating: 0, count: 108)
        let fd = cw_notify_open(&name, name.count)
        guard fd >= 0 else { throw SystemError("open the sd_notify relay socket", errno: lastErrno()) }
        self.fd = fd
        self.address = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { close(fd) }

    /// The next waiting notification; nil when none waits. Messages cut short are dropped (as systemd
    /// drops them) and the next one is returned.
    public func receive() throws(SystemError) -> NotifyMessage? {
        var buffer = [UInt8](repeating: 0, count: Self.maximumMessageBytes)
        var fds = [Int32](repeating: -1, count: Int(CW_NOTIFY_MAX_FDS))
        while true {
            var sender: Int32 = 0
            var count = fds.count
            let length = buffer.withUnsafeMutableBytes { bytes in
                cw_notify_receive(fd, bytes.baseAddress, bytes.count, &sender, &fds, &count)
            }
            if length == -2 { continue }
            if length < 0 { throw SystemError("receive from the sd_notify relay socket", errno: lastErrno()) }
            if length == 0 { return nil }
            return NotifyMessage(bytes: Array(buffer.prefix(length)), senderPID: sender,
                                 descriptors: fds.prefix(count).map { OwnedDescriptor(adopting: $0) })
        }
    }

    /// Sends `bytes` with `descriptors` to `address` (a NOTIFY_SOCKET value: `/path` or `@abstract`) without
    /// blocking, from a fresh socket; the kernel gives the receiver crashwatch's own credentials.
    public static func send(_ bytes: [UInt8], descriptors: [OwnedDescriptor], to address: String) throws(SystemError) {
        let socket = cw_unix_datagram_socket()
        guard socket >= 0 else { throw SystemError("socket(AF_UNIX, SOCK_DGRAM)", errno: lastErrno()) }
        defer { close(socket) }
        let fds = descriptors.map(\.fd)
        let sent = bytes.withUnsafeBytes { buffer in
            fds.withUnsafeBufferPointer { passed in
                cw_unix_datagram_send(socket, address, buffer.baseAddress, buffer.count, passed.baseAddress, passed.count)
            }
        }
        guard sent == bytes.count else { throw SystemError("send to NOTIFY_SOCKET \(address)", errno: sent < 0 ? lastErrno() : EMSGSIZE) }
    }
}
