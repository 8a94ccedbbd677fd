// JSONReader.swift — a pull reader over JSON bytes (RFC 8259), for documents read on a hot path from hostile
// hands: the report decoder (ReportJSONDecoding.swift) walks a report with it in one pass, building values as it
// goes, and refuses exactly what `JSONSyntax.isWellFormed` refuses — malformed text, invalid UTF-8, control
// characters in strings, nesting deeper than `maximumDepth` — wherever it is, in members it reads or skips.
// Bounds: every index is checked (an array subscript); nesting is counted and capped (the only recursion,
// skipping an unknown value, is at most `maximumDepth` deep); a string or an array is never longer than the
// input, and nothing is reserved from a count the input states.
//
// What a value reader accepts follows FoundationEssentials' `JSONDecoder`, so that the decoder it replaced and
// this one agree on every well-formed document: an integer may be written with a fraction or an exponent when
// its value is exact (`1.0`, `1e2`); a double that overflows, or underflows to zero from non-zero digits, is
// refused; a decoded string refuses an unpaired surrogate escape (a skipped one is only checked for its hex
// digits); of a repeated member the first is taken and the later ones only checked for syntax.

/// Why a JSON document could not be read as the value expected, and where (member names and array indices).
struct JSONReadError: Error {
    /// What went wrong.
    enum Kind {
        /// The text is not well-formed JSON (or nests too deep).
        case malformed
        /// A value of another JSON type than the member's.
        case typeMismatch(Any.Type, found: String)
        /// `null` for a member that must have a value.
        case null(Any.Type)
        /// A required member is absent.
        case missing(String)
        /// A value of the right type that the member cannot hold (a number out of range, an address that is not hex).
        case invalid(String)
    }
    /// One step of the path to the value concerned.
    enum Step {
        /// A member, by name.
        case key(String)
        /// An array element, by position.
        case index(Int)
    }

    var kind: Kind
    /// The path from the document's top to the value concerned, outermost first.
    var path: [Step] = []
    /// The byte offset where the problem was seen.
    var offset: Int

    /// The same error as a `DecodingError`, the error type `JSONDecoder` threw for the same input.
    var decodingError: DecodingError {
        let codingPath: [any CodingKey] = path.map {
            switch $0 {
            case .key(let name): JSONPathKey(stringValue: name)
            case .index(let index): JSONPathKey(intValue: index)
            }
        }
        switch kind {
        case .malformed:
            return .dataCorrupted(.init(codingPath: codingPath, debugDescription: "The given data was not valid JSON (byte \(offset))."))
        case .typeMismatch(let type, let found):
            return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found \(found) instead."))
        case .null(let type):
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) value but found null instead."))
        case .missing(let name):
            return .keyNotFound(JSONPathKey(stringValue: name), .init(codingPath: codingPath, debugDescription: "No value associated with key \(name)."))
        case .invalid(let text):
            return .dataCorrupted(.init(codingPath: codingPath, debugDescription: text))
        }
    }
}

/// A coding key naming a member or an array position in a `DecodingError`'s path.
struct JSONPathKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

/// The member names of one record type, matched against a document's keys as bytes.
struct JSONKeys {
    /// Each name's UTF-8, in the record type's declaration order (the order the writer writes them in).
    let names: [[UInt8]]

    /// The names of `Field`'s cases (at most 64: `JSONReader.members` marks the ones seen in one word).
    init<Field: CaseIterable>(_ field: Field.Type) {
        names = Field.allCases.map { Array("\($0)".utf8) }
        precondition(names.count <= 64)
    }

    /// The position of the name equal to `key`, trying `hint` first (the writer's order makes it the usual answer).
    func position(of key: ArraySlice<UInt8>, hint: Int) -> Int? {
        let count = names.count
        var position = hint < count ? hint : 0
        for _ in 0..<count {
            if names[position].count == key.count && names[position].elementsEqual(key) { return position }
            position = position + 1 == count ? 0 : position + 1
        }
        return nil
    }
}

/// The fields of a record type: an enum whose cases are its member names in order, with their `JSONKeys`.
protocol JSONFields: CaseIterable, RawRepresentable<Int> {
    /// The cases' names as bytes (`JSONKeys(Self.self)`, made once).
    static var keys: JSONKeys { get }
}

/// Reads one JSON document front to back; see the file comment.
struct JSONReader {
    /// How deep objects and arrays may nest, as `JSONSyntax.isWellFormed` allows.
    static let maximumDepth = 256

    /// The document.
    let bytes: [UInt8]
    /// The next byte to read.
    var at = 0
    /// How many objects and arrays enclose the reading position.
    var depth = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The byte at the reading position; nil at the end.
    var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    /// An error of `kind` at the reading position.
    func error(_ kind: JSONReadError.Kind) -> JSONReadError { JSONReadError(kind: kind, offset: at) }

    /// Reads a whole document: whitespace, one value (read by `body`), whitespace, the end.
    mutating func document<Value>(_ body: (inout JSONReader) throws -> Value) throws -> Value {
        whitespace()
        let value = try body(&self)
        whitespace()
        guard at == bytes.count else { throw error(.malformed) }
        return value
    }

    /// Skips JSON whitespace.
    @inline(__always)
    mutating func whitespace() {
        while at < bytes.count {
            let byte = bytes[at]
            guard byte == 0x20 || byte == 0x0a || byte == 0x0d || byte == 0x09 else { return }
            at += 1
        }
    }

    /// Consumes `null` if it is next; false (nothing consumed) for any other value.
    mutating func null() throws -> Bool {
        guard current == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Consumes `text` or throws `malformed`.
    mutating func literal(_ text: StaticString) throws {
        let count = text.utf8CodeUnitCount
        guard bytes.count - at >= count else { throw error(.malformed) }
        for index in 0..<count where bytes[at + index] != text.utf8Start[index] { throw error(.malformed) }
        at += count
    }

    /// The error for a value that is not of `type`: `null` where a value is needed, another type, or malformed text.
    func mismatch(_ type: Any.Type) -> JSONReadError {
        let found: String
        switch current {
        case UInt8(ascii: "n"): return error(.null(type))
        case UInt8(ascii: "{"): found = "a dictionary"
        case UInt8(ascii: "["): found = "an array"
        case UInt8(ascii: "\""): found = "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): found = "bool"
        case .some(let byte) where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39): found = "number"
        default: return error(.malformed)
        }
        return error(.typeMismatch(type, found: found))
    }

    // MARK: Containers

    /// Reads an object whose members are `Field`'s: `body` reads the value of each member named by a case, the
    /// first time it appears; other members and repeats are skipped (checked for syntax only).
    mutating func members<Field: JSONFields>(_ body: (inout JSONReader, Field) throws -> Void) throws {
        guard current == UInt8(ascii: "{") else { throw mismatch([String: Any].self) }
        try enter()
        at += 1
        whitespace()
        if current == UInt8(ascii: "}") {
            at += 1
            depth -= 1
            return
        }
        let keys = Field.keys
        var seen: UInt64 = 0
        var hint = 0
        while true {
            let key = try keyBytes()
            whitespace()
            guard current == UInt8(ascii: ":") else { throw error(.malformed) }
            at += 1
            whitespace()
            if let position = keys.position(of: key, hint: hint), seen & (1 << position) == 0 {
                seen |= 1 << position
                hint = position + 1
                do { try body(&self, Field(rawValue: position)!) } catch var failure as JSONReadError {
                    failure.path.insert(.key(String(decoding: keys.names[position], as: UTF8.self)), at: 0)
                    throw failure
                }
            } else {
                try skipValue()
            }
            if try nextItem(close: UInt8(ascii: "}")) { return }
        }
    }

    /// Reads an object of string values as a dictionary; of a repeated key the first value is kept.
    mutating func stringDictionary() throws -> [String: String] {
        guard current == UInt8(ascii: "{") else { throw mismatch([String: String].self) }
        try enter()
        at += 1
        whitespace()
        var dictionary: [String: String] = [:]
        if current == UInt8(ascii: "}") {
            at += 1
            depth -= 1
            return dictionary
        }
        while true {
            let key = try string()
            whitespace()
            guard current == UInt8(ascii: ":") else { throw error(.malformed) }
            at += 1
            whitespace()
            if dictionary[key] == nil {
                do { dictionary[key] = try string() } catch var failure as JSONReadError {
                    failure.path.insert(.key(key), at: 0)
                    throw failure
                }
            } else {
                try skipValue()
            }
            if try nextItem(close: UInt8(ascii: "}")) { return dictionary }
        }
    }

    /// Reads an array, `element` reading each element in turn; those `keep` refuses are dropped as soon as read.
    mutating func elements<Element>(keeping keep: ((Element) -> Bool)? = nil,
                                    _ element: (inout JSONReader) throws -> Element) throws -> [Element] {
        guard current == UInt8(ascii: "[") else { throw mismatch([Element].self) }
        try enter()
        at += 1
        whitespace()
        var result: [Element] = []
        if current == UInt8(ascii: "]") {
            at += 1
            depth -= 1
            return result
        }
        var index = 0
        while true {
            do {
                let value = try element(&self)
                if keep?(value) ?? true { result.append(value) }
            } catch var failure as JSONReadError {
                failure.path.insert(.index(index), at: 0)
                throw failure
            }
            index += 1
            if try nextItem(close: UInt8(ascii: "]")) { return result }
        }
    }

    /// Enters an object or an array, refusing to nest deeper than `maximumDepth`.
    @inline(__always)
    mutating func enter() throws {
        depth += 1
        guard depth <= JSONReader.maximumDepth else { throw error(.malformed) }
    }

    /// After a member or an element: true (the container closed, and left) at `close`, false after a comma.
    @inline(__always)
    mutating func nextItem(close: UInt8) throws -> Bool {
        whitespace()
        guard let byte = current else { throw error(.malformed) }
        at += 1
        if byte == UInt8(ascii: ",") {
            whitespace()
            return false
        }
        guard byte == close else {
            at -= 1
            throw error(.malformed)
        }
        depth -= 1
        return true
    }

    /// Skips one value of any type, checking its syntax as `JSONSyntax.isWellFormed` does.
    mutating func skipValue() throws {
        switch current {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = current == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            try enter()
            at += 1
            whitespace()
            if current == close {
                at += 1
                depth -= 1
                return
            }
            while true {
                if close == UInt8(ascii: "}") {
                    guard current == UInt8(ascii: "\"") else { throw error(.malformed) }
                    try skipString()
                    whitespace()
                    guard current == UInt8(ascii: ":") else { throw error(.malformed) }
                    at += 1
                    whitespace()
                }
                try skipValue()
                if try nextItem(close: close) { return }
            }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case .some(let byte) where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39): _ = try number()
        default: throw error(.malformed)
        }
    }
}
