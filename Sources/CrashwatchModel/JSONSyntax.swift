// JSONSyntax.swift — a one-pass check that bytes are one well-formed JSON value (RFC 8259), without
// building anything (the spool's group index is checked with it before it is decoded; the report decoder,
// `JSONReader`, refuses exactly what it refuses). The same scanner finds where an object's members and an
// array's elements lie, so that a part of a large document can be decoded without the rest.

/// Checks JSON text for well-formedness.
public enum JSONSyntax {
    /// Whether `bytes` hold exactly one JSON value (surrounding whitespace allowed), nested at most
    /// `maximumDepth` deep, with valid strings (escapes, no control characters, valid UTF-8) and numbers.
    public static func isWellFormed(_ bytes: some Collection<UInt8>, maximumDepth: Int = 256) -> Bool {
        let checked: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            var scanner = Scanner(bytes: buffer, maximumDepth: maximumDepth)
            return scanner.document()
        }
        if let checked { return checked }
        return isWellFormed(Array(bytes), maximumDepth: maximumDepth)
    }

    /// The members of the JSON object at `range` of `bytes` (all of them by default): each key as written,
    /// quotes included, and its value; nil when no well-formed object starts there. Nothing is decoded.
    public static func members(of bytes: [UInt8], in range: Range<Int>? = nil) -> [(key: Range<Int>, value: Range<Int>)]? {
        items(of: bytes, in: range ?? bytes.indices, members: true)?.map { ($0.key!, $0.value) }
    }

    /// The elements of the JSON array at `range` of `bytes`; nil when no well-formed array starts there.
    public static func elements(of bytes: [UInt8], in range: Range<Int>) -> [Range<Int>]? {
        items(of: bytes, in: range, members: false)?.map(\.value)
    }

    /// Whether the key at `range` of `bytes` (as `members` gives it) is `name`, written without escapes.
    public static func key(in bytes: [UInt8], _ range: Range<Int>, is name: String) -> Bool {
        range.count == name.utf8.count + 2 && bytes[range.dropFirst().dropLast()].elementsEqual(name.utf8)
    }

    private static func items(of bytes: [UInt8], in range: Range<Int>, members: Bool) -> [(key: Range<Int>?, value: Range<Int>)]? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: UnsafeBufferPointer(rebasing: buffer[..<range.upperBound]), maximumDepth: 256)
            scanner.at = range.lowerBound
            scanner.items = []
            scanner.whitespace()
            guard scanner.current == UInt8(ascii: members ? "{" : "["),
                  scanner.container(close: UInt8(ascii: members ? "}" : "]"), members: members) else { return nil }
            return scanner.items
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var at = 0
        var depth = 0
        /// When set, the outermost container scanned records its members or elements here (key, value).
        var items: [(key: Range<Int>?, value: Range<Int>)]?

        init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        var current: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func document() -> Bool {
            whitespace()
            guard value() else { return false }
            whitespace()
            return at == bytes.count
        }

        mutating func whitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 { at += 1 }
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - at >= count else { return false }
            for index in 0..<count where bytes[at + index] != text.utf8Start[index] { return false }
            at += count
            return true
        }

        mutating func value() -> Bool {
            switch current {
            case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), members: true)
            case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), members: false)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case .some(let byte) where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39): return number()
            default: return false
            }
        }

        mutating func container(close: UInt8, members: Bool) -> Bool {
            depth += 1
            guard depth <= maximumDepth else { return false }
            defer { depth -= 1 }
            at += 1
            whitespace()
            if current == close {
                at += 1
                return true
            }
            let recording = depth == 1 && items != nil
            while true {
                var key: Range<Int>?
                if members {
                    let start = at
                    guard current == UInt8(ascii: "\""), string() else { return false }
                    key = start..<at
                    whitespace()
                    guard current == UInt8(ascii: ":") else { return false }
                    at += 1
                    whitespace()
                }
                let start = at
                guard value() else { return false }
                if recording { items?.append((key, start..<at)) }
                whitespace()
                if current == UInt8(ascii: ",") {
                    at += 1
                    whitespace()
                    continue
                }
                guard current == close else { return false }
                at += 1
                return true
            }
        }

        mutating func string() -> Bool {
            at += 1
            let start = at
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    let valid = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self) != nil
                    at += 1
                    return valid
                case UInt8(ascii: "\\"):
                    at += 1
                    guard let escaped = current else { return false }
                    if escaped == UInt8(ascii: "u") {
                        guard bytes.count - at > 4 else { return false }
                        for index in 1...4 where !isHexDigit(bytes[at + index]) { return false }
                        at += 5
                    } else {
                        guard "\"\\/bfnrt".utf8.contains(escaped) else { return false }
                        at += 1
                    }
                case 0..<0x20:
                    return false
                default:
                    at += 1
                }
            }
            return false
        }

        func isHexDigit(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
        }

        mutating func digits() -> Int {
            let start = at
            while let byte = current, byte >= 0x30 && byte <= 0x39 { at += 1 }
            return at - start
        }

        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { at += 1 }
            if current == UInt8(ascii: "0") {
                at += 1
            } else if digits() == 0 {
                return false
            }
            if current == UInt8(ascii: ".") {
                at += 1
                guard digits() > 0 else { return false }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                at += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { return false }
            }
            return true
        }
    }
}
