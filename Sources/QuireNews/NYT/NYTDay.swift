public import Foundation

/// A calendar day, as the NYT API's `begin_date` / `end_date` take it.
public struct NYTDay: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    /// The year (four digits).
    public let year: Int
    /// The month, 1–12.
    public let month: Int
    /// The day of the month.
    public let day: Int

    /// A valid Gregorian day, or `nil` (`2019-02-30`, month 13, a year outside 1–9999).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), NewsDate.isValid(year: year, month: month, day: day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `YYYY-MM-DD` or `YYYYMMDD`.
    public init?(string: String) {
        let bytes = Array(string.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte &- UInt8(ascii: "0") < 10 else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let parts: (Int?, Int?, Int?)
        switch bytes.count {
        case 8:
            parts = (number(0..<4), number(4..<6), number(6..<8))
        case 10 where bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-"):
            parts = (number(0..<4), number(5..<7), number(8..<10))
        default:
            return nil
        }
        guard let year = parts.0, let month = parts.1, let day = parts.2 else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The UTC day containing `date`.
    public init(date: Date) {
        // Clamped to about ±35 million years (Int(_:) traps on NaN and past Int's range).
        let seconds = date.timeIntervalSince1970.isNaN ? 0 : min(max(date.timeIntervalSince1970, -0x1p50), 0x1p50)
        let days = NewsDate.floorDiv(Int(seconds.rounded(.down)), 86_400)
        let civil = NewsDate.civil(fromDays: days)
        year = civil.year
        month = civil.month
        day = civil.day
    }

    /// `YYYYMMDD`, the API's form.
    public var compact: String { NewsDate.pad(year, 4) + NewsDate.pad(month, 2) + NewsDate.pad(day, 2) }

    /// `YYYY-MM-DD`.
    public var description: String { "\(NewsDate.pad(year, 4))-\(NewsDate.pad(month, 2))-\(NewsDate.pad(day, 2))" }

    /// Midnight UTC at the start of the day.
    public var date: Date {
        Date(timeIntervalSince1970: Double(NewsDate.days(year: year, month: month, day: day) * 86_400))
    }

    public static func < (lhs: NYTDay, rhs: NYTDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}
