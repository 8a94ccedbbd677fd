// JSONReaderValues.swift — `JSONReader`'s scalar values: strings (escapes, surrogate pairs, UTF-8 checked),
// numbers (RFC 8259's grammar; integers and doubles converted as FoundationEssentials' `JSONDecoder` converts
// them), booleans and the report's hex addresses. The rules are in JSONReader.swift's banner.

extension JSONReader {

    // MARK: Strings

    /// Reads a string.
    mutating func string() throws -> String {
        guard current == UInt8(ascii: "\"") else { throw mismatch(String.self) }
        at += 1
        let start = at
        var ascii = true
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                defer { at += 1 }
                if ascii { return String(decoding: bytes[start..<at], as: UTF8.self) }
                guard let text = String(validating: bytes[start..<at], as: UTF8.self) else { throw error(.malformed) }
                return text
            }
            if byte == UInt8(ascii: "\\") {
                return String(decoding: try unescaped(from: start), as: UTF8.self)
            }
            guard byte >= 0x20 else { throw error(.malformed) }
            if byte >= 0x80 { ascii = false }
            at += 1
        }
        throw error(.malformed)
    }

    /// Reads a string or `null` (nil).
    mutating func optionalString() throws -> String? {
        try null() ? nil : string()
    }

    /// The UTF-8 of the string whose text started at `start` (after its quote), read up to its closing quote
    /// from the first escape at the reading position; valid UTF-8, or `malformed`.
    mutating func unescaped(from start: Int) throws -> [UInt8] {
        var text = Array(bytes[start..<at])
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard String(validating: text, as: UTF8.self) != nil else { throw error(.malformed) }
                return text
            case UInt8(ascii: "\\"):
                guard let escaped = current else { throw error(.malformed) }
                at += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0c)
                case UInt8(ascii: "n"): text.append(0x0a)
                case UInt8(ascii: "r"): text.append(0x0d)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"): try appendEscapedScalar(to: &text)
                default: throw error(.malformed)
                }
            case 0..<0x20:
                throw error(.malformed)
            default:
                text.append(byte)
            }
        }
        throw error(.malformed)
    }

    /// Reads the four hex digits after `\u` (and a low surrogate's escape after a high one) and appends the scalar's
    /// UTF-8; an unpaired surrogate is `malformed`, as `JSONDecoder` has it.
    mutating func appendEscapedScalar(to text: inout [UInt8]) throws {
        var value = try hexQuad()
        if (0xDC00...0xDFFF).contains(value) { throw error(.malformed) }
        if (0xD800...0xDBFF).contains(value) {
            guard bytes.count - at >= 2, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                throw error(.malformed)
            }
            at += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw error(.malformed) }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else { throw error(.malformed) }
        text.append(contentsOf: UTF8.encode(scalar)!)
    }

    /// The value of four hex digits at the reading position, consumed.
    mutating func hexQuad() throws -> UInt32 {
        guard bytes.count - at >= 4 else { throw error(.malformed) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Hex.nibble(bytes[at]) else { throw error(.malformed) }
            value = value << 4 | UInt32(digit)
            at += 1
        }
        return value
    }

    /// Skips a string, checking it as `JSONSyntax.isWellFormed` does (escapes' hex digits, not their pairing).
    mutating func skipString() throws {
        at += 1
        let start = at
        var ascii = true
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                if !ascii, String(validating: bytes[start..<at], as: UTF8.self) == nil { throw error(.malformed) }
                at += 1
                return
            case UInt8(ascii: "\\"):
                at += 1
                guard let escaped = current else { throw error(.malformed) }
                at += 1
                if escaped == UInt8(ascii: "u") {
                    _ = try hexQuad()
                } else {
                    guard "\"\\/bfnrt".utf8.contains(escaped) else { throw error(.malformed) }
                }
            case 0..<0x20:
                throw error(.malformed)
            default:
                if byte >= 0x80 { ascii = false }
                at += 1
            }
        }
        throw error(.malformed)
    }

    /// The key of an object member, as written when it has no escapes, else unescaped.
    mutating func keyBytes() throws -> ArraySlice<UInt8> {
        guard current == UInt8(ascii: "\"") else { throw error(.malformed) }
        let start = at + 1
        try skipString()
        let raw = bytes[start..<(at - 1)]
        guard raw.contains(UInt8(ascii: "\\")) else { return raw }
        var reader = JSONReader(bytes)
        reader.at = start - 1
        return try reader.unescapedString()[...]
    }

    /// The UTF-8 of the string at the reading position, escapes resolved.
    private mutating func unescapedString() throws -> [UInt8] {
        Array(try string().utf8)
    }

    // MARK: Numbers

    /// Reads a number's text, checking RFC 8259's grammar: its range and whether it has a fraction or an exponent.
    mutating func number() throws -> (text: Range<Int>, integral: Bool) {
        let start = at
        var integral = true
        if current == UInt8(ascii: "-") { at += 1 }
        if current == UInt8(ascii: "0") {
            at += 1
        } else if digits() == 0 {
            throw error(.malformed)
        }
        if current == UInt8(ascii: ".") {
            at += 1
            integral = false
            guard digits() > 0 else { throw error(.malformed) }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            at += 1
            integral = false
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { throw error(.malformed) }
        }
        return (start..<at, integral)
    }

    /// Consumes decimal digits; how many.
    @inline(__always)
    mutating func digits() -> Int {
        let start = at
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
        return at - start
    }

    /// Reads an integer of type `T`: digits that fit, or — as `JSONDecoder` does — a number with a fraction or an
    /// exponent whose value is an exact `T` (`1.0`, `1e2`; beyond 2^53 its decimal value, truncated).
    mutating func integer<T: FixedWidthInteger>(_ type: T.Type = T.self) throws -> T {
        guard let first = current, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else { throw mismatch(T.self) }
        let (range, integral) = try number()
        if integral, let value = exactInteger(T.self, range) { return value }
        let refusal = JSONReadError(kind: .invalid("Parsed JSON number <\(String(decoding: bytes[range], as: UTF8.self))> does not fit in \(T.self)."),
                                    offset: range.lowerBound)
        guard let double = Double(String(decoding: bytes[range], as: UTF8.self)), let value = T(exactly: double) else { throw refusal }
        if double.magnitude < 0x1p53 { return value }
        guard let truncated = truncatedInteger(T.self, range) else { throw refusal }
        return truncated
    }

    /// Reads an integer of type `T` or `null` (nil).
    mutating func optionalInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws -> T? {
        try null() ? nil : integer(T.self)
    }

    /// The value of an integral number's text (`-`, digits) when `T` holds it.
    func exactInteger<T: FixedWidthInteger>(_ type: T.Type, _ range: Range<Int>) -> T? {
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var value: T = 0
        while index < range.upperBound {
            let digit = T(bytes[index] - 0x30)
            let (product, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = negative ? product.subtractingReportingOverflow(digit) : product.addingReportingOverflow(digit)
            guard !overflow, !carry else { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// A number's decimal value truncated toward zero (`Decimal`'s conversion in `JSONDecoder`'s slow path), when its
    /// digits and the result fit 64 bits.
    func truncatedInteger<T: FixedWidthInteger>(_ type: T.Type, _ range: Range<Int>) -> T? {
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0, exponent = 0, inFraction = false
        while index < range.upperBound, bytes[index] != UInt8(ascii: "e"), bytes[index] != UInt8(ascii: "E") {
            if bytes[index] == UInt8(ascii: ".") {
                inFraction = true
            } else {
                let (product, overflow) = mantissa.multipliedReportingOverflow(by: 10)
                let (sum, carry) = product.addingReportingOverflow(UInt64(bytes[index] - 0x30))
                guard !overflow, !carry else { return nil }
                mantissa = sum
                if inFraction { exponent -= 1 }
            }
            index += 1
        }
        if index < range.upperBound {
            guard let stated = Int(String(decoding: bytes[(index + 1)..<range.upperBound], as: UTF8.self)) else { return nil }
            exponent += stated
        }
        while exponent > 0 {
            let (product, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            mantissa = product
            exponent -= 1
        }
        while exponent < 0, mantissa > 0 {
            mantissa /= 10
            exponent += 1
        }
        if negative {
            guard T.isSigned, let magnitude = Int64(exactly: mantissa) else { return mantissa == 0 ? 0 : nil }
            return T(exactly: -magnitude)
        }
        return T(exactly: mantissa)
    }

    /// Reads a double: refused when it overflows, or rounds to zero from digits that are not all zero.
    mutating func double() throws -> Double {
        guard let first = current, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) else { throw mismatch(Double.self) }
        let (range, _) = try number()
        let text = String(decoding: bytes[range], as: UTF8.self)
        guard let value = Double(text), value.isFinite,
              value != 0 || !bytes[range].prefix(while: { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") })
                .contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) else {
            throw JSONReadError(kind: .invalid("Parsed JSON number <\(text)> does not fit in Double."), offset: range.lowerBound)
        }
        return value
    }

    /// Reads a double or `null` (nil).
    mutating func optionalDouble() throws -> Double? {
        try null() ? nil : double()
    }

    // MARK: Booleans and addresses

    /// Reads `true` or `false`.
    mutating func bool() throws -> Bool {
        switch current {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw mismatch(Bool.self)
        }
    }

    /// Reads an address: a string `Address(hex:)` accepts (`0x` and 1 to 16 hex digits).
    mutating func address() throws -> Address {
        let start = at
        // The usual form, read from the bytes: `"0x` and 1 to 16 hex digits, then the closing quote.
        if bytes.count - at >= 5, bytes[at] == UInt8(ascii: "\""), bytes[at + 1] == UInt8(ascii: "0"), bytes[at + 2] == UInt8(ascii: "x") {
            var index = at + 3, value: UInt64 = 0
            while index < bytes.count, index - at <= 19, let digit = Hex.nibble(bytes[index]) {
                value = value << 4 | UInt64(digit)
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\""), (4...19).contains(index - at) {
                at = index + 1
                return Address(value)
            }
        }
        let text = try string()
        guard let address = Address(hex: text) else {
            throw JSONReadError(kind: .invalid("expected a hex string like 0x7f00, got '\(text)'"), offset: start)
        }
        return address
    }

    /// Reads an address or `null` (nil).
    mutating func optionalAddress() throws -> Address? {
        try null() ? nil : address()
    }
}
