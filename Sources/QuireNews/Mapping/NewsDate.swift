public import Foundation

/// Parsing and writing of the timestamp forms the news APIs use, without `DateFormatter`.
///
/// Accepted by ``parse(_:)``:
/// - ISO 8601: `2012-01-01T18:46:02Z`, `2019-06-15T19:18:14+0000`, `2019-06-15T19:18:14+00:00`,
///   fractional seconds (`…14.123Z`), a space instead of `T`, no zone (read as UTC), or a bare date
///   `2012-01-01` (UTC midnight).
/// - RFC 822 / RFC 1123: `Tue, 05 Oct 2010 14:11:00 +0100` (the weekday is optional and not checked
///   against the date; the offset is honoured), zones `GMT`, `UT`, `UTC`, `Z` and the US zone names.
///
/// Calendar fields are range-checked (month 1–12, the day within its month, hour < 24, minute < 60,
/// second ≤ 60), so `2019-02-30` is rejected rather than rolled over.
public enum NewsDate {
    /// Parses any accepted form, or returns `nil`.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            guard let first = bytes.first else { return nil }
            if first &- UInt8(ascii: "0") < 10, let date = iso8601(bytes) { return date }
            return rfc822(bytes)
        }
    }

    /// Writes `date` as ISO 8601 UTC with `Z` and whole seconds (fractions are kept when present):
    /// `2016-08-12T00:00:00Z`.
    public static func iso8601String(_ date: Date) -> String {
        format(date, offsetMinutes: 0, style: .iso8601Z)
    }

    /// A way of writing a timestamp; see ``format(_:offsetMinutes:style:)``.
    public enum Style: Sendable, Hashable {
        /// `2012-01-01T18:46:02Z` (the offset is ignored: always UTC).
        case iso8601Z
        /// `2019-06-15T19:18:14+0000`.
        case iso8601Offset
        /// `2019-06-15T19:18:14+00:00`.
        case iso8601OffsetColon
        /// `Tue, 05 Oct 2010 14:11:00 +0100`.
        case rfc822
    }

    /// Writes `date` as ISO 8601 UTC with `Z` and always three fraction digits
    /// (`2016-08-12T00:00:00.000Z`): every timestamp the same width, for columns.
    public static func iso8601MillisecondsString(_ date: Date) -> String {
        format(date, offsetMinutes: 0, style: .iso8601Z, alwaysMilliseconds: true)
    }

    /// Writes `date` in local time at `offsetMinutes` east of UTC, in `style`.
    public static func format(_ date: Date, offsetMinutes: Int, style: Style) -> String {
        format(date, offsetMinutes: offsetMinutes, style: style, alwaysMilliseconds: false)
    }

    private static func format(_ date: Date, offsetMinutes: Int, style: Style, alwaysMilliseconds: Bool) -> String {
        let offset = style == .iso8601Z ? 0 : offsetMinutes
        // Rounded to the millisecond first, so that 14.9996 s is written 15.000, not 14; within
        // ±10^14 s (a damaged timestamp must not trap), and NaN as the epoch.
        let seconds = date.timeIntervalSince1970 + Double(offset * 60)
        let totalMillis = Int((seconds.isNaN ? 0 : min(max(seconds, -1e14), 1e14) * 1000).rounded())
        let whole = floorDiv(totalMillis, 1000)
        let millis = totalMillis - whole * 1000
        let days = floorDiv(whole, 86_400)
        let secondOfDay = whole - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let hour = secondOfDay / 3600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        let fractionText = millis > 0 || alwaysMilliseconds ? "." + pad(millis, 3) : ""
        let sign = offset < 0 ? "-" : "+"
        let zoneHours = pad(abs(offset) / 60, 2), zoneMinutes = pad(abs(offset) % 60, 2)
        let time = "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
        switch style {
        case .iso8601Z:
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(time)\(fractionText)Z"
        case .iso8601Offset:
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(time)\(fractionText)\(sign)\(zoneHours)\(zoneMinutes)"
        case .iso8601OffsetColon:
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(time)\(fractionText)\(sign)\(zoneHours):\(zoneMinutes)"
        case .rfc822:
            // 1970-01-01 was a Thursday.
            let weekday = weekdayNames[Int(((days % 7) + 7 + 4) % 7)]
            return "\(weekday), \(pad(day, 2)) \(monthNames[month - 1]) \(pad(year, 4)) \(time) \(sign)\(zoneHours)\(zoneMinutes)"
        }
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, UTC)

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        (1...12).contains(month) && day >= 1 && day <= daysInMonth(year: year, month: month)
    }

    static func makeDate(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double, offsetSeconds: Int
    ) -> Date? {
        guard isValid(year: year, month: month, day: day), hour < 24, minute < 60, second <= 60 else { return nil }
        let total = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        // Whole seconds since 2001 (Date's own epoch) are exact; adding the fraction rounds once,
        // to the nearest instant a Date holds (about 100 ns apart for today's dates).
        let seconds = Double(total - 978_307_200) + fraction
        // Only instants that print with a four-digit year in UTC: an offset, or the rounding of
        // `9999-12-31T23:59:59.99999Z` (Dates are 30 µs apart there), moved some past year
        // 9999 or before year 0, which dump printed and load then refused.
        guard seconds >= firstSecond, seconds < endSecond else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z, in seconds since 2001.
    static let firstSecond = Double(days(year: 0, month: 1, day: 1) * 86_400 - 978_307_200)
    static let endSecond = Double(days(year: 10_000, month: 1, day: 1) * 86_400 - 978_307_200)

    // MARK: - Parsers

    /// A cursor over the ASCII bytes of a timestamp.
    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
                index += 1
            }
            return value
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpaces() {
            while peek == UInt8(ascii: " ") { index += 1 }
        }

        /// Letters up to the next non-letter.
        mutating func word() -> String {
            let start = index
            while let byte = peek, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") { index += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        }

        /// `+hhmm`, `-hhmm`, `+hh:mm`, `+hh` or a zone name; returns seconds east of UTC.
        mutating func zone(allowNames: Bool) -> Int? {
            // RFC 822 requires a zone; ISO 8601 without one is read as UTC.
            guard let sign = peek else { return allowNames ? nil : 0 }
            if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                index += 1
                guard let hours = digits(2) else { return nil }
                var minutes = 0
                // ISO 8601 allows `+hh`; RFC 822 always has four digits.
                if !atEnd || allowNames {
                    _ = expect(UInt8(ascii: ":"))
                    guard let m = digits(2) else { return nil }
                    minutes = m
                }
                guard hours < 24, minutes < 60 else { return nil }
                let seconds = hours * 3600 + minutes * 60
                return sign == UInt8(ascii: "-") ? -seconds : seconds
            }
            // RFC 3339 takes `z` as `Z` (and `t` as `T`).
            if sign == UInt8(ascii: "Z") || sign == UInt8(ascii: "z") {
                index += 1
                return 0
            }
            guard allowNames else { return nil }
            switch word().uppercased() {
            case "GMT", "UT", "UTC", "Z": return 0
            case "EST": return -5 * 3600
            case "EDT": return -4 * 3600
            case "CST": return -6 * 3600
            case "CDT": return -5 * 3600
            case "MST": return -7 * 3600
            case "MDT": return -6 * 3600
            case "PST": return -8 * 3600
            case "PDT": return -7 * 3600
            default: return nil
            }
        }

        mutating func fraction() -> Double? {
            guard expect(UInt8(ascii: ".")) || expect(UInt8(ascii: ",")) else { return 0 }
            // The digits as an integer over a power of ten: one correctly rounded division, where
            // summing digit × 0.1ⁿ would add an error per digit. Digits past the 18th are read
            // and dropped (they are far below any Date's resolution).
            var numerator: Int64 = 0, used = 0, count = 0
            while let byte = peek, byte &- UInt8(ascii: "0") < 10 {
                if used < 18 {
                    numerator = numerator * 10 + Int64(byte - UInt8(ascii: "0"))
                    used += 1
                }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            var scale = 1.0
            for _ in 0..<used { scale *= 10 }
            return Double(numerator) / scale
        }
    }

    static func iso8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var s = Scanner(bytes: bytes)
        guard let year = s.digits(4), s.expect(UInt8(ascii: "-")), let month = s.digits(2),
            s.expect(UInt8(ascii: "-")), let day = s.digits(2)
        else { return nil }
        if s.atEnd {
            return makeDate(year: year, month: month, day: day, hour: 0, minute: 0, second: 0, fraction: 0, offsetSeconds: 0)
        }
        guard s.expect(UInt8(ascii: "T")) || s.expect(UInt8(ascii: "t")) || s.expect(UInt8(ascii: " ")),
            let hour = s.digits(2), s.expect(UInt8(ascii: ":")), let minute = s.digits(2)
        else { return nil }
        var second = 0
        if s.expect(UInt8(ascii: ":")) {
            guard let value = s.digits(2) else { return nil }
            second = value
        }
        guard let fraction = s.fraction(), let offset = s.zone(allowNames: false), s.atEnd else { return nil }
        return makeDate(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, fraction: fraction,
            offsetSeconds: offset)
    }

    static func rfc822(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var s = Scanner(bytes: bytes)
        s.skipSpaces()
        if let first = s.peek, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z") {
            let weekday = s.word()
            guard weekday.count >= 3, s.expect(UInt8(ascii: ",")) else { return nil }
            s.skipSpaces()
        }
        var day = 0
        guard let d1 = s.digits(1) else { return nil }
        day = d1
        if let byte = s.peek, byte &- UInt8(ascii: "0") < 10, let d2 = s.digits(1) { day = day * 10 + d2 }
        s.skipSpaces()
        let monthName = s.word()
        guard monthName.count >= 3,
            let monthIndex = monthNames.firstIndex(where: { $0.lowercased() == monthName.prefix(3).lowercased() })
        else { return nil }
        s.skipSpaces()
        let yearStart = s.index
        while let byte = s.peek, byte &- UInt8(ascii: "0") < 10 { s.index += 1 }
        let yearDigits = s.index - yearStart
        s.index = yearStart
        guard yearDigits == 4 || yearDigits == 2, var year = s.digits(yearDigits) else { return nil }
        if yearDigits == 2 { year += year < 50 ? 2000 : 1900 }
        s.skipSpaces()
        guard let hour = s.digits(2), s.expect(UInt8(ascii: ":")), let minute = s.digits(2) else { return nil }
        var second = 0
        if s.expect(UInt8(ascii: ":")) {
            guard let value = s.digits(2) else { return nil }
            second = value
        }
        s.skipSpaces()
        guard let offset = s.zone(allowNames: true) else { return nil }
        s.skipSpaces()
        guard s.atEnd else { return nil }
        return makeDate(
            year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second, fraction: 0,
            offsetSeconds: offset)
    }
}
