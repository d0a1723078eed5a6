import Foundation

/// Dates typed on the command line: `YYYY-MM-DD` or `YYYYMMDD`, meaning midnight UTC of that day.
enum CommandLineDate {
    /// Parses a day, or returns nil when the text is not a real calendar date in years 1…9999.
    static func parse(_ text: String) -> Date? {
        let digits: [UInt8]
        let bytes = Array(text.utf8)
        switch bytes.count {
        case 10 where bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-"):
            digits = Array(bytes[0..<4] + bytes[5..<7] + bytes[8..<10])
        case 8:
            digits = bytes
        default:
            return nil
        }
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        func number(_ range: Range<Int>) -> Int {
            digits[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        let year = number(0..<4)
        let month = number(4..<6)
        let day = number(6..<8)
        guard year >= 1, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else {
            return nil
        }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days) * 86_400)
    }

    /// Formats a date as `YYYY-MM-DD` (UTC), the inverse of ``parse(_:)`` for midnights.
    static func format(_ date: Date) -> String {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        let (year, month, day) = civil(fromDays: days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar, counted in 400-year eras
    /// (146 097 days each) so there is no loop over years.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        // Count years from March so the leap day falls at the end of the year.
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let marchMonth = (month + 9) % 12
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysSinceEpoch(year:month:day:)``.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
