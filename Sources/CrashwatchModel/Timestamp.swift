// Timestamp.swift — UTC calendar arithmetic and RFC 3339 timestamps for reports, without Foundation's
// formatters: integer days-from-civil conversions (Howard Hinnant's algorithms), exact for every
// instant an `Int64` of nanoseconds since the Unix epoch can hold (years 1677 to 2262).

/// A UTC calendar date and time of day with nanosecond precision (proleptic Gregorian calendar).
public struct UTCDateTime: Hashable, Sendable {
    /// The year, e.g. 2026.
    public var year: Int
    /// The month, 1 to 12.
    public var month: Int
    /// The day of the month, 1 to 31.
    public var day: Int
    /// The hour, 0 to 23.
    public var hour: Int
    /// The minute, 0 to 59.
    public var minute: Int
    /// The second, 0 to 59 (leap seconds are not represented).
    public var second: Int
    /// Nanoseconds within the second, 0 to 999 999 999.
    public var nanosecond: Int

    /// Creates a date-time from its fields; the caller guarantees they are in range.
    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, nanosecond: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.nanosecond = nanosecond
    }

    /// Splits an instant, in nanoseconds since 1970-01-01T00:00:00Z, into UTC calendar fields.
    public init(nanosecondsSinceEpoch: Int64) {
        let (seconds, nanosecond) = floorDivide(nanosecondsSinceEpoch, 1_000_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        self.init(year: year, month: month, day: day, hour: Int(secondOfDay / 3600), minute: Int(secondOfDay / 60 % 60),
                  second: Int(secondOfDay % 60), nanosecond: Int(nanosecond))
    }

    /// The instant in nanoseconds since the Unix epoch, or nil when it does not fit in an `Int64`.
    public var nanosecondsSinceEpoch: Int64? {
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        var seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        var fraction = Int64(nanosecond)
        if seconds < 0 && fraction > 0 {
            // Borrow a second so the product stays in range down to Int64.min.
            seconds += 1
            fraction -= 1_000_000_000
        }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return nil }
        let (sum, overflow2) = scaled.addingReportingOverflow(fraction)
        return overflow2 ? nil : sum
    }

    /// Whether `year` is a leap year in the Gregorian calendar.
    public static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// The number of days in `month` (1 to 12) of `year`.
    public static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// RFC 3339 timestamps as reports write them: UTC, millisecond precision, `2026-11-30T09:01:57.123Z`.
public enum RFC3339 {
    /// Formats an instant (nanoseconds since the Unix epoch) as `YYYY-MM-DDTHH:MM:SS.mmmZ`, truncating to milliseconds.
    public static func format(nanosecondsSinceEpoch: Int64) -> String {
        format(UTCDateTime(nanosecondsSinceEpoch: nanosecondsSinceEpoch))
    }

    /// Formats UTC calendar fields as `YYYY-MM-DDTHH:MM:SS.mmmZ`, truncating to milliseconds.
    public static func format(_ time: UTCDateTime) -> String {
        var text = ""
        text.reserveCapacity(24)
        text += pad(time.year, 4) + "-" + pad(time.month, 2) + "-" + pad(time.day, 2)
        text += "T" + pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
        text += "." + pad(time.nanosecond / 1_000_000, 3) + "Z"
        return text
    }

    /// Parses an RFC 3339 date-time into nanoseconds since the Unix epoch; nil when malformed or out of range.
    ///
    /// Accepts `T` or `t` between date and time, any number of fraction digits (beyond nine are truncated),
    /// and `Z`, `z` or a `±HH:MM` offset. A leap second (`:60`) is rejected: the epoch count has no place for it.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var position = 0

        func number(_ width: Int) -> Int? {
            guard position + width <= bytes.count,
                  let value = decimalNumber(bytes[position..<position + width], maxDigits: width) else { return nil }
            position += width
            return Int(value)
        }
        func expect(_ allowed: String) -> Bool {
            guard position < bytes.count, allowed.utf8.contains(bytes[position]) else { return false }
            position += 1
            return true
        }

        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
              let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...UTCDateTime.daysInMonth(month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }

        var nanosecond = 0
        if expect(".") {
            let end = bytes[position...].firstIndex { $0 < 0x30 || $0 > 0x39 } ?? bytes.count
            guard end > position, let value = decimalNumber(bytes[position..<min(end, position + 9)]) else { return nil }
            nanosecond = Int(value)
            for _ in min(end - position, 9)..<9 { nanosecond *= 10 }
            position = end
        }

        var offsetSeconds = 0
        if expect("Zz") {
            // UTC.
        } else if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
            let sign = bytes[position] == UInt8(ascii: "-") ? -1 : 1
            position += 1
            guard let offsetHour = number(2), expect(":"), let offsetMinute = number(2), offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard position == bytes.count else { return nil }

        let local = UTCDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                                nanosecond: nanosecond)
        guard let localNanoseconds = local.nanosecondsSinceEpoch else { return nil }
        let (utc, overflow) = localNanoseconds.subtractingReportingOverflow(Int64(offsetSeconds) * 1_000_000_000)
        return overflow ? nil : utc
    }
}

/// `value` in `radix` (lowercase), zero-padded to `width` digits; a negative value keeps its sign in
/// front. The one padding routine for dates, file names and escapes.
public func pad(_ value: Int, _ width: Int, radix: Int = 10) -> String {
    let digits = String(value.magnitude, radix: radix)
    let padded = digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
    return value < 0 ? "-" + padded : padded
}

/// Division rounding towards negative infinity, with a remainder in `0..<divisor`.
private func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
    var quotient = value / divisor, remainder = value % divisor
    if remainder < 0 {
        quotient -= 1
        remainder += divisor
    }
    return (quotient, remainder)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
private func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
private func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
    let z = Int(days) + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}
