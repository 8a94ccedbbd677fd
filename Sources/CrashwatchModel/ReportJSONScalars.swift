// ReportJSONScalars.swift — the report writer's scalars (null, booleans, numbers, addresses) and the one JSON
// string escaper, which `JSONText` offers to the other JSON crashwatch prints.

extension ReportJSONWriter {
    // MARK: Scalars

    /// Appends literal text as it is.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `null`.
    mutating func null() { raw("null") }

    /// Appends `true` or `false`.
    mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// Appends a string literal, escaped.
    mutating func string(_ text: String) { Self.writeString(text, into: &bytes) }

    /// Appends a string literal, or `null` for nil.
    mutating func string(_ text: String?) {
        if let text { string(text) } else { null() }
    }

    /// Appends a finite number as Swift's shortest round-tripping `description` (`18.75`, `1e-07`).
    mutating func double(_ value: Double) { bytes.append(contentsOf: value.description.utf8) }

    /// Appends an integer in decimal, or `null` for nil.
    mutating func integer<Integer: FixedWidthInteger>(_ value: Integer?) {
        if let value { integer(value) } else { null() }
    }

    /// Appends an integer in decimal, `-` first when it is negative (what `String(value)` writes).
    mutating func integer<Integer: FixedWidthInteger>(_ value: Integer) {
        var magnitude = UInt64(value.magnitude)
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        if magnitude < 10 { bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)); return }
        let start = bytes.count
        while magnitude > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        }
        bytes[start...].reverse()
    }

    /// Appends an address as a `hex(_:)` string literal (`"0x7f3a9c214000"`), or `null` for nil.
    mutating func address(_ value: Address?) {
        if let value { address(value) } else { null() }
    }

    /// Appends an address as a `hex(_:)` string literal: `"0x`, lower-case digits without leading zeros, `"`.
    mutating func address(_ value: Address) {
        raw("\"0x")
        let number = value.value
        var shift = number == 0 ? 0 : (63 - number.leadingZeroBitCount) / 4 * 4
        while true {
            let digit = UInt8(truncatingIfNeeded: number >> UInt64(shift)) & 0xF
            bytes.append(digit < 10 ? UInt8(ascii: "0") &+ digit : UInt8(ascii: "a") &+ (digit &- 10))
            if shift == 0 { break }
            shift -= 4
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a JSON string literal: `"` and `\` escaped, control characters as `\n`-style or `\u00XX` escapes.
    static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let contiguous: Void? = text.utf8.withContiguousStorageIfAvailable { writeEscaped($0, into: &output) }
        if contiguous == nil {
            var copy = text
            copy.withUTF8 { writeEscaped($0, into: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 bytes with JSON escapes, copying the runs between escapes in one piece.
    static func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            default:
                let digits: StaticString = "0123456789abcdef"
                output.append(contentsOf: #"\u00"#.utf8)
                digits.withUTF8Buffer { hexDigits in
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0xF)])
                }
            }
        }
        if runStart < utf8.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }
}


/// JSON string literals escaped exactly as reports are written, for the other JSON crashwatch prints
/// (`list --json`, `claim --json`): one escaper for all of it.
public enum JSONText {
    /// A JSON string literal for the text, or `null` for nil.
    public static func string(_ text: String?) -> String {
        guard let text else { return "null" }
        var bytes: [UInt8] = []
        ReportJSONWriter.writeString(text, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal to `bytes` (UTF-8), escaped as reports escape strings.
    public static func append(_ text: String, to bytes: inout [UInt8]) {
        ReportJSONWriter.writeString(text, into: &bytes)
    }
}
