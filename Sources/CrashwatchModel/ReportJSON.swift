// ReportJSON.swift — writes a `CrashReport` as JSON text directly, without Codable: one small function per
// record type appends UTF-8 bytes to one pre-reserved `[UInt8]`. Encoding sits on the crash-to-report critical
// path (the crashed process is held stopped meanwhile); the generic Codable tree encoder this replaces took
// ~8 ms for a 65-thread, 325 KB report, this writer ~0.5 ms (release build, same machine).
//
// The output is byte-for-byte what the former Codable tree encoder wrote (Fixtures/example-report.json is the
// golden file; Tests/CrashwatchModelTests/ReportJSONTests.swift compares against a copy of that encoder):
// - object keys in declaration order; `nil` written as `null`, so every key is always present;
// - `environment` keys sorted; `/` never escaped; strings escaped by `writeString(_:into:)`;
// - two-space indentation; arrays of strings, and array elements whose members are all scalars (registers,
//   frames, images, soft errors), on one line each; other objects one member per line; `[]` and `{}` when empty;
// - integers in decimal, `captureDurationMs` as Swift's `Double.description` (NaN and infinities throw an
//   `EncodingError`), addresses as `hex(_:)` strings (`"0x7f3a…"`); a final newline.
// Its inverse is ReportJSONDecoding.swift (`CrashReport.decode`). A field added to a record type must be added to
// its writer (ReportJSONRecords.swift, in declaration order) and its reader too. The scalars and the string escaper are
// `JSONWriter`'s (JSONWriter.swift), shared with every other JSON crashwatch writes; this file holds the
// report's layout: members one per line, indentation, one-line objects.

/// Encodes crash reports as JSON text; see the file comment for the layout.
enum ReportJSON {
    /// Encodes a report as UTF-8 JSON ending in a newline; throws `EncodingError` for a non-finite duration.
    static func encode(_ report: CrashReport) throws -> [UInt8] {
        guard report.captureDurationMs.isFinite else {
            throw EncodingError.invalidValue(report.captureDurationMs, .init(
                codingPath: [FieldKey("captureDurationMs")],
                debugDescription: "\(report.captureDurationMs) is not valid JSON"))
        }
        var writer = JSONWriter(capacity: estimatedSize(of: report))
        writer.write(report)
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }

    /// A generous guess at a report's encoded size, from its counts and frame strings, so the buffer rarely grows.
    static func estimatedSize(of report: CrashReport) -> Int {
        var size = 4096 + 320 * report.images.count + 256 * report.softErrors.count
        size += 64 * (report.process.commandLine.count + report.process.environment.count)
        for thread in report.threads {
            size += 160 + 48 * thread.registers.count + 256 * thread.frames.count
            for frame in thread.frames {
                size += (frame.symbol?.utf8.count ?? 0) + (frame.function?.utf8.count ?? 0) + (frame.file?.utf8.count ?? 0)
            }
        }
        return size
    }

    /// A coding key naming the report field an `EncodingError` is about.
    struct FieldKey: CodingKey {
        /// The field's name.
        var stringValue: String
        /// Always nil: fields are named, not indexed.
        var intValue: Int? { nil }

        /// Names a field.
        init(_ name: String) { stringValue = name }
        /// Names a field (never fails).
        init?(stringValue: String) { self.stringValue = stringValue }
        /// Refuses array positions: a report field always has a name.
        init?(intValue: Int) { nil }
    }
}

/// The report's layout: the writer places its own commas, line breaks and indentation (`layoutBreak`).
extension JSONWriter {

    /// Writes an array whose elements (written by `element`) each start a line at `indent + 2`; `[]` when empty.
    @inline(__always)
    mutating func lines<Element>(_ elements: [Element], indent: Int, _ element: (inout JSONWriter, Element) -> Void) {
        if elements.isEmpty { literal("[]"); return }
        for index in elements.indices {
            newline(after: index == 0 ? .openArray : .comma, indent: indent + 2)
            element(&self, elements[index])
        }
        newline(after: .nothing, indent: indent)
        endArray()
    }

    /// Writes an array of strings on one line: `["a", "b"]`, or `[]`.
    mutating func strings(_ values: [String]) {
        layoutBreak("[")
        for index in values.indices {
            if index > 0 { layoutBreak(", ") }
            string(values[index])
        }
        endArray()
    }

    /// Starts a member of a multi-line object: `{` or `,`, a newline, `indent` spaces, then `"key": `.
    @inline(__always)
    mutating func member(_ key: StaticString, indent: Int, first: Bool = false) {
        newline(after: first ? .openObject : .comma, indent: indent)
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        layoutBreak("\": ")
    }

    /// Starts a member of a one-line object, given as its JSON text: `{"key": ` for the first, `, "key": ` after.
    @inline(__always)
    mutating func field(_ text: StaticString) { layoutBreak(text) }

    /// Ends a multi-line object: a newline, `indent` spaces and `}`.
    @inline(__always)
    mutating func closeObject(indent: Int) {
        newline(after: .nothing, indent: indent)
        endObject()
    }

    /// What a line break follows: a container's opening bracket, a comma between elements, or nothing.
    enum LineStart {
        /// `{`, opening an object.
        case openObject
        /// `[`, opening an array.
        case openArray
        /// `,`, ending a member or an element.
        case comma
        /// Nothing: the line break before a closing bracket.
        case nothing
    }

    /// Appends what the line break follows, a newline and `indent` spaces, in one piece.
    @inline(__always)
    mutating func newline(after start: LineStart, indent: Int) {
        // Each literal is the leading byte, a newline and 16 spaces, more than any report nests.
        let text: StaticString, lead: Int
        switch start {
        case .openObject: (text, lead) = ("{\n                ", 2)
        case .openArray: (text, lead) = ("[\n                ", 2)
        case .comma: (text, lead) = (",\n                ", 2)
        case .nothing: (text, lead) = ("\n                ", 1)
        }
        let spaces = min(indent, text.utf8CodeUnitCount - lead)
        text.withUTF8Buffer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<(lead + spaces)])) }
        if spaces < indent { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent - spaces)) }
        needsSeparator = false
    }
}
