// DecimalNumber.swift — the one bounded decimal parser: ASCII digits to a number, with no sign, no blanks and
// no overflow. Every reader of decimal text (/proc files, claim holders, report names, maps) uses it.

/// The value of 1 to `maxDigits` ASCII decimal digits (at most 20, the most a `UInt64` holds); nil for anything
/// else: no digits, too many, a byte that is not a digit, a value past `UInt64.max`, or — when `leadingZeros`
/// is false — a leading `0` on anything but `0` itself.
/// Inlinable: the maps parser calls it for every line's inode.
@inlinable
public func decimalNumber<Digits: Collection<UInt8>>(_ digits: Digits, maxDigits: Int = 20, leadingZeros: Bool = true) -> UInt64? {
    guard !digits.isEmpty, digits.count <= min(maxDigits, 20) else { return nil }
    if !leadingZeros, digits.count > 1, digits.first == UInt8(ascii: "0") { return nil }
    var value: UInt64 = 0
    for digit in digits {
        guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: 10)
        let (sum, carry) = product.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
        guard !overflow, !carry else { return nil }
        value = sum
    }
    return value
}

/// The same for text (a `Substring` of a split line, a file name's part).
public func decimalNumber(_ text: some StringProtocol, maxDigits: Int = 20, leadingZeros: Bool = true) -> UInt64? {
    decimalNumber(text.utf8, maxDigits: maxDigits, leadingZeros: leadingZeros)
}
