// ProcStat.swift — the one parser of `/proc/PID/stat` (and `/proc/PID/task/TID/stat`) lines: the fields after
// the `(comm)` field, which may itself hold spaces and parentheses, so the line is read from its last `)`.
// Field numbers are those of proc(5): 1 pid, 2 comm, 3 state, 22 starttime, 33 sigignore, 34 sigcatch,
// 48–51 arg_start, arg_end, env_start, env_end. It takes bytes or text, never a path.
import CrashwatchModel

/// One `stat` line, parsed lazily: each field is found by counting the single spaces after `(comm)`.
public struct ProcStat {
    /// The bytes after the `)` that closes `comm`: a space, then field 3 onwards.
    private let rest: ArraySlice<UInt8>

    /// A stat line from its bytes; nil when it holds no `)` (not a stat line).
    public init?(_ bytes: ArraySlice<UInt8>) {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        rest = bytes[(close + 1)...]
    }

    /// A stat line from its text; nil when it holds no `)`.
    public init?(text: some StringProtocol) {
        self.init(Array(text.utf8)[...])
    }

    /// Field 3, the state letter (`R`, `S`, `D`, `Z`, `X`, …); nil when absent.
    public var state: UInt8? { field(3)?.first }

    /// The bytes of field `number` (3 or more); nil when the line ends before it. Fields are separated by
    /// spaces (runs of them count as one) and the line may end in a newline.
    public func field(_ number: Int) -> ArraySlice<UInt8>? {
        guard number >= 3 else { return nil }
        var current = 2
        var index = rest.startIndex
        while index < rest.endIndex {
            while index < rest.endIndex, rest[index] == UInt8(ascii: " ") || rest[index] == UInt8(ascii: "\n") {
                index += 1
            }
            guard index < rest.endIndex else { return nil }
            var end = index
            while end < rest.endIndex, rest[end] != UInt8(ascii: " "), rest[end] != UInt8(ascii: "\n") { end += 1 }
            current += 1
            if current == number { return rest[index..<end] }
            index = end
        }
        return nil
    }

    /// Field `number` as an unsigned decimal (`decimalNumber`); nil when absent or not one.
    public func number(_ number: Int) -> UInt64? {
        field(number).flatMap { decimalNumber($0) }
    }
}
