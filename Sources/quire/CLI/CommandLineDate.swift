import Foundation
import QuireNews

/// Dates typed on the command line: `YYYY-MM-DD` or `YYYYMMDD`, meaning midnight UTC of that day.
///
/// The same day syntax as the NYT API's `begin_date`/`end_date`, so it goes through `NYTDay`.
enum CommandLineDate {
    /// Parses a day, or returns nil when the text is not a real calendar date in years 1…9999.
    static func parse(_ text: String) -> Date? {
        NYTDay(string: text)?.date
    }

    /// The last instant of the day that starts at `midnight`: an inclusive `until` bound that
    /// keeps the whole day, sub-millisecond times included.
    static func endOfDay(_ midnight: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: midnight.addingTimeInterval(86_400).timeIntervalSinceReferenceDate.nextDown)
    }

    /// Formats a date as `YYYY-MM-DD` (UTC), the inverse of ``parse(_:)`` for midnights.
    static func format(_ date: Date) -> String {
        NYTDay(date: date).description
    }
}
