// Address.swift — a 64-bit address, offset or register value, written in JSON as a lower-case hex string.
import FoundationEssentials

/// A 64-bit address, offset or register value; written in JSON as a lower-case hex string, `"0x7f3a…"`.
public struct Address: Hashable, Comparable, Sendable, Codable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The numeric value.
    public var value: UInt64

    /// Wraps a numeric value.
    public init(_ value: UInt64) { self.value = value }

    /// Wraps an integer literal.
    public init(integerLiteral value: UInt64) { self.value = value }

    /// Parses `0x` followed by 1 to 16 hex digits (either case); nil otherwise.
    public init?(hex text: String) {
        guard text.hasPrefix("0x"), text.utf8.count > 2, text.utf8.count <= 18,
              let value = UInt64(text.dropFirst(2), radix: 16), text.dropFirst(2).allSatisfy(\.isHexDigit)
        else { return nil }
        self.value = value
    }

    /// The hex form, as `hex(_:)` writes it.
    public var description: String { hex(value) }

    /// Orders addresses numerically.
    public static func < (lhs: Address, rhs: Address) -> Bool { lhs.value < rhs.value }

    /// Decodes a hex string, refusing numbers and anything `init(hex:)` refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let address = Address(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a hex string like 0x7f00, got '\(text)'")
        }
        self = address
    }

    /// Encodes the hex string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex(value))
    }
}
