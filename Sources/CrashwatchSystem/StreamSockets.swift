// StreamSockets.swift — AF_UNIX stream sockets with the kernel's word on who is at the other end
// (SO_PEERCRED), for a supervisor's control socket: the listener and its connections never block the
// supervisor; a client waits for its answer at most the time it is given.
import CCrashwatch
import Glibc

/// Who is at the other end of a Unix stream connection, as the kernel recorded it at connect.
public struct PeerCredentials: Equatable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    init(_ raw: cw_peer_credentials) { self.init(pid: raw.pid, uid: raw.uid, gid: raw.gid) }
}

/// A listening Unix stream socket bound to a path; the path is removed when the value goes away.
public final class StreamListener: Sendable {
    /// Readable whenever a connection waits to be accepted.
    public let fd: Int32
    public let path: String

    /// Binds `path` (whatever is there is removed first: a stale socket of a supervisor that died; the caller
    /// owns the directory, which nobody else may write) and gives the socket file `mode`.
    public init(path: String, mode: UInt32) throws(SystemError) {
        unlink(path)
        let fd = cw_unix_stream_listen(path, mode)
        guard fd >= 0 else { throw SystemError("listen on \(path)", errno: lastErrno()) }
        self.fd = fd
        self.path = path
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Whether `path` is a directory (not a link to one) owned by the effective user that no one else may
    /// write: a socket bound there cannot be replaced by another user.
    public static func isOwnDirectory(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o022 == 0
    }

    /// The next waiting connection with its peer's credentials; nil when none waits.
    public func accept() throws(SystemError) -> StreamConnection? {
        var peer = cw_peer_credentials()
        let client = cw_unix_stream_accept(fd, &peer)
        if client == -2 { return nil }
        guard client >= 0 else { throw SystemError("accept on \(path)", errno: lastErrno()) }
        return StreamConnection(fd: client, peer: PeerCredentials(peer))
    }
}

/// One end of a Unix stream connection, closed when the value goes away.
public final class StreamConnection: Sendable {
    public let fd: Int32
    /// The other end, as the kernel recorded it at connect.
    public let peer: PeerCredentials

    init(fd: Int32, peer: PeerCredentials) {
        self.fd = fd
        self.peer = peer
    }

    deinit { close(fd) }

    /// Connects to the socket at `path` and learns who serves it.
    public static func connect(to path: String) throws(SystemError) -> StreamConnection {
        var peer = cw_peer_credentials()
        let fd = cw_unix_stream_connect(path, &peer)
        guard fd >= 0 else { throw SystemError("connect to \(path)", errno: lastErrno()) }
        return StreamConnection(fd: fd, peer: PeerCredentials(peer))
    }

    /// Sends what fits without blocking; returns how many bytes went (0 when none could).
    public func send(_ bytes: [UInt8]) throws(SystemError) -> Int {
        let sent = bytes.withUnsafeBytes { cw_unix_stream_send(fd, $0.baseAddress, $0.count) }
        if sent == -2 { return 0 }
        guard sent >= 0 else { throw SystemError("send on a Unix stream socket", errno: lastErrno()) }
        return sent
    }

    /// What the connection received, at most `limit` bytes, waiting at most `timeoutMilliseconds` (0: not at
    /// all, -1: no limit). nil when nothing came in time; empty at the end of the stream.
    public func receive(limit: Int, timeoutMilliseconds: Int32 = 0) throws(SystemError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max(limit, 1))
        let count = buffer.withUnsafeMutableBytes { cw_unix_stream_receive(fd, $0.baseAddress, $0.count, timeoutMilliseconds) }
        if count == -2 { return nil }
        guard count >= 0 else { throw SystemError("receive on a Unix stream socket", errno: lastErrno()) }
        return Array(buffer.prefix(count))
    }
}
