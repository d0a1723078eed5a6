import Foundation
public import QuireNews

/// An inclusive range of days, as `begin_date`…`end_date`.
public struct NYTDateWindow: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The first day.
    public var begin: NYTDay
    /// The last day (not before `begin`).
    public var end: NYTDay

    /// A window; `end` is raised to `begin` if it comes before.
    public init(begin: NYTDay, end: NYTDay) {
        self.begin = begin
        self.end = max(begin, end)
    }

    /// How many days the window covers.
    public var dayCount: Int { Self.dayNumber(end) - Self.dayNumber(begin) + 1 }

    /// The window cut in two halves by date, the first half ending at the middle day.
    /// `nil` for a single day.
    public func split() -> (first: NYTDateWindow, second: NYTDateWindow)? {
        guard dayCount > 1 else { return nil }
        let middle = Self.dayNumber(begin) + (dayCount - 1) / 2
        let firstEnd = Self.day(number: middle)
        let secondBegin = Self.day(number: middle + 1)
        return (NYTDateWindow(begin: begin, end: firstEnd), NYTDateWindow(begin: secondBegin, end: end))
    }

    public var description: String { "\(begin)…\(end)" }

    static func dayNumber(_ day: NYTDay) -> Int { Int((day.date.timeIntervalSince1970 / 86_400).rounded(.down)) }
    static func day(number: Int) -> NYTDay { NYTDay(date: .init(timeIntervalSince1970: Double(number) * 86_400)) }
}

/// Where an NYT query's fetch stands: a pure value that says what to fetch next.
///
/// Work is a queue of date windows, each paged from 0. The first window is the query as given
/// (`window == nil` when it has no dates). When a window's first page reports more hits than the
/// page cap can reach, the window is replaced by its two halves (newer half first for
/// `sort=newest`), until a window fits or is a single day.
public struct NYTCheckpoint: Codable, Sendable, Hashable {
    /// The query this checkpoint belongs to (``NYTSource/queryIdentity``).
    public var queryIdentity: String
    /// The window being paged; `nil` means the query's own date parameters (possibly none).
    public var window: NYTDateWindow?
    /// The next page of the current window.
    public var nextPage: Int
    /// Windows still to fetch after the current one, in order.
    public var pendingWindows: [NYTDateWindow]
    /// Windows fully fetched, in order (`nil` windows are recorded as the query's range).
    public var doneWindows: [NYTDateWindow?]
    /// Single-day windows with more results than the page cap reaches (the rest are unreachable).
    public var truncatedWindows: [NYTDateWindow]
    /// Pages fetched so far in all (for `--max-pages`).
    public var pagesFetched: Int
    /// Whether every window is done.
    public var isFinished: Bool

    /// The start of a query: its own range, page 0.
    public init(queryIdentity: String, window: NYTDateWindow?) {
        self.queryIdentity = queryIdentity
        self.window = window
        nextPage = 0
        pendingWindows = []
        doneWindows = []
        truncatedWindows = []
        pagesFetched = 0
        isFinished = false
    }
}
