// Journal.swift — one structured entry to systemd-journald over its native protocol (systemd's
// docs/JOURNAL_NATIVE_PROTOCOL.md): `NAME=value\n` per field, or `NAME\n<64-bit LE length><bytes>\n` for a value
// holding a newline, sent as one datagram to /run/systemd/journal/socket — or, when the entry is too large for
// a datagram, written to a sealed memfd whose descriptor travels alone in an empty datagram (SCM_RIGHTS), as
// sd_journal_sendv does. The socket is non-blocking and every send is MSG_DONTWAIT: a busy or stuck journald
// costs crashwatch one failed call, never a wait. Names and values may come from the crashed program (its
// paths, its function names), so names are validated and values capped here, for every caller.
import CCrashwatch
import Glibc

/// One field of a journal entry: a name journald accepts from a client, and a value of at most `valueLimit` bytes.
public struct JournalField: Equatable, Sendable {
    /// The most bytes of UTF-8 a value keeps; a longer one is cut at a character boundary and ends in
    /// `…[truncated]` (the cap reports use for names and paths).
    public static let valueLimit = maximumNameBytes
    /// The longest field name journald accepts.
    public static let nameLimit = 64

    /// The field name, e.g. `MESSAGE` or `CRASHWATCH_PID`.
    public let name: String
    /// The value's bytes, sent exactly (a NUL byte included: nothing here goes through a C string).
    public let value: [UInt8]

    /// A field, or nil when `name` is not one a client may send (see `isValidName`); `value` is capped.
    public init?(_ name: String, _ value: String) {
        guard JournalField.isValidName(name) else { return nil }
        self.name = name
        self.value = Array(capped(value).utf8)
    }

    /// Whether journald takes `name` from a client: 1 to 64 characters of `A`–`Z`, `0`–`9` and `_`, not
    /// starting with a digit, and not with `_` (those are the trusted fields journald adds itself).
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= nameLimit, first != UInt8(ascii: "_"),
              !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
        else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }
}

/// What became of a journal entry.
public enum JournalSendResult: Equatable, Sendable {
    /// journald has the entry (the kernel queued it on journald's socket).
    case sent
    /// No journald here: the socket does not exist, or nobody listens on it. The caller falls back to stderr.
    case noJournal
    /// Sending failed otherwise, e.g. EAGAIN when journald's queue is full (crashwatch does not wait).
    case failed(SystemError)
}

/// journald's native protocol, client side.
public enum Journal {
    /// Where journald listens for native entries.
    public static let socketPath = "/run/systemd/journal/socket"

    /// The entry in the native format: each field as `NAME=value\n`, or, when its value holds a newline,
    /// as `NAME\n`, the value's length as a little-endian 64-bit integer, the value and `\n`.
    public static func encode(_ fields: [JournalField]) -> [UInt8] {
        var entry: [UInt8] = []
        entry.reserveCapacity(fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.count + 10 })
        for field in fields {
            entry.append(contentsOf: field.name.utf8)
            if field.value.contains(UInt8(ascii: "\n")) {
                entry.append(UInt8(ascii: "\n"))
                let length = UInt64(field.value.count)
                for shift in stride(from: 0, to: 64, by: 8) { entry.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
            } else {
                entry.append(UInt8(ascii: "="))
            }
            entry.append(contentsOf: field.value)
            entry.append(UInt8(ascii: "\n"))
        }
        return entry
    }

    /// Sends one entry to the journald socket at `socketPath` without blocking: as a datagram, or through a
    /// sealed memfd when the kernel finds it too large for one (EMSGSIZE, ENOBUFS).
    public static func send(_ fields: [JournalField], socketPath: String = socketPath) -> JournalSendResult {
        // A NUL would end the path early in C and name another socket; an empty entry is no entry.
        guard !socketPath.utf8.contains(0) else { return .failed(SystemError("sendmsg \(socketPath)", errno: EINVAL)) }
        guard !fields.isEmpty else { return .failed(SystemError("sendmsg \(socketPath) (empty entry)", errno: EINVAL)) }
        let entry = encode(fields)
        let socket = cw_unix_datagram_socket()
        guard socket >= 0 else { return .failed(SystemError("socket(AF_UNIX, SOCK_DGRAM)", errno: lastErrno())) }
        defer { close(socket) }

        let sent = entry.withUnsafeBytes { cw_unix_datagram_send(socket, socketPath, $0.baseAddress, $0.count, nil, 0) }
        if sent >= 0 { return .sent }
        let saved = lastErrno()
        guard saved == EMSGSIZE || saved == ENOBUFS else { return outcome(of: saved, socketPath: socketPath) }

        // Too large for a datagram: the same bytes in a memfd sealed against every change, so journald can
        // read them without trusting us to leave them alone.
        let memory = entry.withUnsafeBytes { cw_sealed_memfd("crashwatch-journal-entry", $0.baseAddress, $0.count) }
        guard memory >= 0 else { return .failed(SystemError("memfd_create (journal entry)", errno: lastErrno())) }
        defer { close(memory) }
        var passed = memory
        if cw_unix_datagram_send(socket, socketPath, nil, 0, &passed, 1) >= 0 { return .sent }
        return outcome(of: lastErrno(), socketPath: socketPath)
    }

    /// A failed send's result: no journal for a missing socket or one nobody listens on, else the error.
    private static func outcome(of error: Int32, socketPath: String) -> JournalSendResult {
        error == ENOENT || error == ECONNREFUSED ? .noJournal : .failed(SystemError("sendmsg \(socketPath)", errno: error))
    }
}
