// StandardStream.swift — the process's standard streams written with write(2), and whether they are a terminal.
import Glibc

/// The process's standard streams, written with write(2) whole (no buffering, no Foundation).
public enum StandardStream {
    /// Writes `text` to standard output.
    public static func out(_ text: String) { writeAll(1, text) }
    /// Writes `text` to standard error.
    public static func err(_ text: String) { writeAll(2, text) }

    /// Writes `text` to `fd`, waiting as long as that takes.
    public static func write(_ fd: Int32, _ text: String) { writeAll(fd, text) }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { buffer in retryingOnEINTR { Glibc.write(fd, buffer.baseAddress, buffer.count) } }
            if written <= 0 { return }  // a closed stream: nothing sensible left to do
            bytes = bytes.dropFirst(written)
        }
    }
}

/// The terminal a standard stream may be.
public enum Terminal {
    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// The terminal's width in columns, nil when `fd` is not a terminal or it does not say.
    public static func columns(_ fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
