// JSONWriter.swift — the one JSON writer of crashwatch: every JSON text it writes (reports, `list --json`,
// `claim --json`, OTLP/JSON log records, Sentry events) is appended by this type to one `[UInt8]`, with one
// string escaper and one way to write numbers and addresses.
//
// Two layers use it:
// - one-line JSON (OTLP and Sentry compact; the lines of `list --json`/`claim --json` `spaced`, `"a": 1, "b": 2`):
//   `beginObject`/`key`/scalars/`endObject`, or the `object {}`/`array {}` blocks; the writer puts the commas
//   between members and elements itself.
// - the report's own layout (indented, one frame per line; ReportJSON.swift): it places line breaks and
//   commas itself through `layoutBreak`, and the scalars below are shared.
// Strings: `"` and `\` escaped, control characters as `\n`-style or `\u00XX` escapes, `/` and non-ASCII
// written as they are (UTF-8). Integers in decimal; doubles as Swift's shortest round-tripping `description`
// (the caller keeps them finite); addresses as `"0x…"` strings, lower-case, without leading zeros.
//
// Not written with it: the two formats only crashwatch writes and reads back — the raw capture's metadata
// (RawCapture.swift, between the supervisor and its own worker binary) and the spool's group index
// (GroupIndex.swift) — kept on Codable so that one type declaration gives both the writer and the reader of
// every field (see their banners).

/// Appends JSON text to a byte buffer; see the file comment.
public struct JSONWriter {
    /// The JSON text written so far, UTF-8.
    public var bytes: [UInt8] = []
    /// Whether a value was written in the current container, so the next member or element needs a comma.
    @usableFromInline var needsSeparator = false
    /// Whether a space follows each `:` and `,` the writer puts in (`{"a": 1, "b": 2}`), for JSON a person reads.
    let spaced: Bool

    /// A writer whose buffer has room for `capacity` bytes before it must grow; `spaced` puts a space after
    /// each `:` and `,` it writes.
    public init(capacity: Int = 0, spaced: Bool = false) {
        self.spaced = spaced
        bytes.reserveCapacity(capacity)
    }

    // MARK: Containers (compact)

    /// Writes the comma a member or element needs when one came before it in the same container.
    @inline(__always)
    mutating func separate() {
        if needsSeparator {
            bytes.append(UInt8(ascii: ","))
            if spaced { bytes.append(UInt8(ascii: " ")) }
        }
    }

    /// Opens an object: `{`.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsSeparator = false
    }

    /// Closes an object: `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsSeparator = true
    }

    /// Opens an array: `[`.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsSeparator = false
    }

    /// Closes an array: `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsSeparator = true
    }

    /// Starts a member of the current object: `"name":`, with the comma before it when one is due. The
    /// next value written is the member's value.
    public mutating func key(_ name: String) {
        separate()
        Self.appendString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        if spaced { bytes.append(UInt8(ascii: " ")) }
        needsSeparator = false
    }

    /// Writes an object whose members `body` writes.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        beginObject()
        body(&self)
        endObject()
    }

    /// Writes a member whose value is an object whose members `body` writes.
    public mutating func object(_ name: String, _ body: (inout JSONWriter) -> Void) {
        key(name)
        object(body)
    }

    /// Writes an array whose elements `body` writes.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        beginArray()
        body(&self)
        endArray()
    }

    /// Writes a member whose value is an array whose elements `body` writes.
    public mutating func array(_ name: String, _ body: (inout JSONWriter) -> Void) {
        key(name)
        array(body)
    }

    // MARK: Members (compact)

    /// Writes `"name":"value"`, or `"name":null` for nil.
    public mutating func member(_ name: String, _ value: String?) {
        key(name)
        string(value)
    }

    /// Writes `"name":value` for an integer, or `"name":null` for nil.
    public mutating func member<Integer: FixedWidthInteger>(_ name: String, _ value: Integer?) {
        key(name)
        integer(value)
    }

    /// Writes `"name":true` or `"name":false`.
    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Writes `"name":["a","b"]`.
    public mutating func member(_ name: String, strings values: [String]) {
        array(name) { json in for value in values { json.string(value) } }
    }

    // MARK: Scalars

    /// Writes `null`.
    public mutating func null() { literal("null") }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) { literal(value ? "true" : "false") }

    /// Writes a string literal, escaped.
    public mutating func string(_ text: String) {
        separate()
        Self.appendString(text, to: &bytes)
        needsSeparator = true
    }

    /// Writes a string literal, or `null` for nil.
    public mutating func string(_ text: String?) {
        if let text { string(text) } else { null() }
    }

    /// Writes a number as Swift's shortest round-tripping `description` (`18.75`, `1e-07`); the caller
    /// keeps it finite (JSON has no NaN or infinity).
    public mutating func double(_ value: Double) {
        separate()
        bytes.append(contentsOf: value.description.utf8)
        needsSeparator = true
    }

    /// Writes an integer in decimal, or `null` for nil.
    public mutating func integer<Integer: FixedWidthInteger>(_ value: Integer?) {
        if let value { integer(value) } else { null() }
    }

    /// Writes an integer in decimal, `-` first when it is negative (what `String(value)` writes).
    public mutating func integer<Integer: FixedWidthInteger>(_ value: Integer) {
        separate()
        var magnitude = UInt64(value.magnitude)
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        if magnitude < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude))
        } else {
            let start = bytes.count
            while magnitude > 0 {
                bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
                magnitude /= 10
            }
            bytes[start...].reverse()
        }
        needsSeparator = true
    }

    /// Writes an address as a string literal (`"0x7f3a9c214000"`), or `null` for nil.
    public mutating func address(_ value: Address?) {
        if let value { address(value) } else { null() }
    }

    /// Writes an address as a string literal: `"0x`, lower-case digits without leading zeros, `"`.
    public mutating func address(_ value: Address) {
        separate()
        bytes.append(contentsOf: #""0x"#.utf8)
        let number = value.value
        var shift = number == 0 ? 0 : (63 - number.leadingZeroBitCount) / 4 * 4
        while true {
            let digit = UInt8(truncatingIfNeeded: number >> UInt64(shift)) & 0xF
            bytes.append(digit < 10 ? UInt8(ascii: "0") &+ digit : UInt8(ascii: "a") &+ (digit &- 10))
            if shift == 0 { break }
            shift -= 4
        }
        bytes.append(UInt8(ascii: "\""))
        needsSeparator = true
    }

    /// Writes JSON text that is already valid JSON (another writer's value) as one value.
    public mutating func json(_ text: [UInt8]) {
        separate()
        bytes.append(contentsOf: text)
        needsSeparator = true
    }

    /// Writes a literal token as one value.
    @inline(__always)
    mutating func literal(_ text: StaticString) {
        separate()
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        needsSeparator = true
    }

    // MARK: Layout (for writers that place their own line breaks)

    /// Appends punctuation or whitespace as it is, after which the next value needs no comma: the report's
    /// layout (ReportJSON.swift) writes its own commas, line breaks and indentation through this.
    @inline(__always)
    mutating func layoutBreak(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        needsSeparator = false
    }

    // MARK: Strings

    /// A JSON string literal for the text, or `null` for nil, as a `String` (for text output).
    public static func literal(_ text: String?) -> String {
        guard let text else { return "null" }
        var bytes: [UInt8] = []
        appendString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends a JSON string literal: `"` and `\` escaped, control characters as `\n`-style or `\u00XX` escapes.
    static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let contiguous: Void? = text.utf8.withContiguousStorageIfAvailable { appendEscaped($0, to: &output) }
        if contiguous == nil {
            var copy = text
            copy.withUTF8 { appendEscaped($0, to: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 bytes with JSON escapes, copying the runs between escapes in one piece.
    static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
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
