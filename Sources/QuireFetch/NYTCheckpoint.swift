public import Foundation
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

/// One page of a window: a page set aside to be fetched again.
public struct NYTPageRef: Codable, Sendable, Hashable {
    /// The window (`nil`: the query's own dates).
    public var window: NYTDateWindow?
    /// The page, 0-based.
    public var page: Int

    public init(window: NYTDateWindow?, page: Int) {
        self.window = window
        self.page = page
    }
}

/// Where an NYT query's fetch stands: a pure value that says what to fetch next.
///
/// Work is a queue of date windows, each paged from 0. The first window is the query as given
/// (`window == nil` when it has no dates). When a window's first page reports more hits than the
/// page cap can reach, the window is replaced by its two halves (newer half first for
/// `sort=newest`), until a window fits or is a single day. The checkpoint stays small however
/// many windows a query splits into: finished windows are counted, not listed, and the pending
/// queue holds at most one window per level of halving.
public struct NYTCheckpoint: Codable, Sendable, Hashable {
    /// The query this checkpoint belongs to (``NYTSource/queryIdentity``).
    public var queryIdentity: String
    /// The window being paged; `nil` means the query's own date parameters (possibly none).
    public var window: NYTDateWindow?
    /// The next page of the current window.
    public var nextPage: Int
    /// Windows still to fetch after the current one, in order.
    public var pendingWindows: [NYTDateWindow]
    /// How many windows were fully fetched.
    public var doneWindowCount: Int
    /// How many single-day windows had more results than the page cap reaches.
    public var truncatedDayCount: Int
    /// Results the API reported in those days beyond the page cap: unreachable without a
    /// narrower query.
    public var unreachableResults: Int
    /// Whether the API answered a date range with results outside it (a server or proxy that
    /// drops `begin_date`/`end_date`): the walk then stops halving windows, which would repeat
    /// the same results for ever, and the results past the page cap count as unreachable.
    public var datesIgnored: Bool
    /// Pages fetched so far in all (for `--max-pages`).
    public var pagesFetched: Int
    /// Empty pages in a row just before ``nextPage`` in the current window (see
    /// ``NYTSource/emptyPagesEndingAWindow``).
    public var emptyPagesInARow: Int
    /// Whether every window is done.
    public var isFinished: Bool
    /// When the walk finished (the start of a later `--refresh`).
    public var completedAt: Date?
    /// Pages that failed for good while their neighbours worked (an HTML 403, a body that
    /// cannot be read: API_NOTES §1), passed to go on with the walk; the next plain run after
    /// the walk fetches them again (``NYTSource/retryCheckpoint(after:)``).
    public var setAsidePages: [NYTPageRef]
    /// In a run that fetches set-aside pages again: those to fetch after the current one
    /// (``window`` and ``nextPage``); nil in a walk.
    public var retryQueue: [NYTPageRef]?
    /// The `hits` of the walk's first page 0 (the whole query): a single day that reports as
    /// many holds every result, or the API ignores the dates (undated results cannot tell).
    public var queryHits: Int?
    /// Windows whose page 0 failed for good and were moved to the end of the walk (once each),
    /// so one window's first page does not stop every later window.
    public var deferredWindows: [NYTDateWindow]
    /// The pages a window the server answers, learned when it refused two pages in a row with a
    /// 400 (an older spec's `page: must be less than or equal to 10`): windows are narrowed to
    /// fit it from then on. Nil while no such refusal was seen (``NYTSource/pageCap`` holds).
    public var learnedPageCap: Int?
    /// The page of the current window last refused with a 400 and set aside (nil once a page
    /// after it answered): a second refusal right after it is the server's page cap.
    public var refusedPage: Int?

    /// The start of a query: its own range, page 0.
    public init(queryIdentity: String, window: NYTDateWindow?) {
        self.queryIdentity = queryIdentity
        self.window = window
        nextPage = 0
        pendingWindows = []
        doneWindowCount = 0
        truncatedDayCount = 0
        unreachableResults = 0
        datesIgnored = false
        pagesFetched = 0
        emptyPagesInARow = 0
        isFinished = false
        completedAt = nil
        setAsidePages = []
        retryQueue = nil
        queryHits = nil
        deferredWindows = []
        learnedPageCap = nil
        refusedPage = nil
    }

    private enum CodingKeys: String, CodingKey {
        case queryIdentity, window, nextPage, pendingWindows, doneWindowCount, truncatedDayCount
        case unreachableResults, datesIgnored, pagesFetched, emptyPagesInARow, isFinished, completedAt, setAsidePages, retryQueue
        case queryHits, deferredWindows, learnedPageCap, refusedPage
        // Written by earlier versions, which listed windows.
        case doneWindows, truncatedWindows
    }

    /// Reads this version's checkpoints and those of earlier versions (which listed the done and
    /// truncated windows instead of counting them).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        queryIdentity = try c.decode(String.self, forKey: .queryIdentity)
        window = try c.decodeIfPresent(NYTDateWindow.self, forKey: .window)
        nextPage = try c.decode(Int.self, forKey: .nextPage)
        pendingWindows = try c.decodeIfPresent([NYTDateWindow].self, forKey: .pendingWindows) ?? []
        pagesFetched = try c.decode(Int.self, forKey: .pagesFetched)
        emptyPagesInARow = try c.decodeIfPresent(Int.self, forKey: .emptyPagesInARow) ?? 0
        isFinished = try c.decode(Bool.self, forKey: .isFinished)
        completedAt = try c.decodeIfPresent(Date.self, forKey: .completedAt)
        unreachableResults = try c.decodeIfPresent(Int.self, forKey: .unreachableResults) ?? 0
        datesIgnored = try c.decodeIfPresent(Bool.self, forKey: .datesIgnored) ?? false
        setAsidePages = try c.decodeIfPresent([NYTPageRef].self, forKey: .setAsidePages) ?? []
        retryQueue = try c.decodeIfPresent([NYTPageRef].self, forKey: .retryQueue)
        queryHits = try c.decodeIfPresent(Int.self, forKey: .queryHits)
        deferredWindows = try c.decodeIfPresent([NYTDateWindow].self, forKey: .deferredWindows) ?? []
        learnedPageCap = try c.decodeIfPresent(Int.self, forKey: .learnedPageCap)
        refusedPage = try c.decodeIfPresent(Int.self, forKey: .refusedPage)
        if let count = try c.decodeIfPresent(Int.self, forKey: .doneWindowCount) {
            doneWindowCount = count
        } else {
            doneWindowCount = try c.decodeIfPresent([NYTDateWindow?].self, forKey: .doneWindows)?.count ?? 0
        }
        if let count = try c.decodeIfPresent(Int.self, forKey: .truncatedDayCount) {
            truncatedDayCount = count
        } else {
            truncatedDayCount = try c.decodeIfPresent([NYTDateWindow].self, forKey: .truncatedWindows)?.count ?? 0
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(queryIdentity, forKey: .queryIdentity)
        try c.encodeIfPresent(window, forKey: .window)
        try c.encode(nextPage, forKey: .nextPage)
        try c.encode(pendingWindows, forKey: .pendingWindows)
        try c.encode(doneWindowCount, forKey: .doneWindowCount)
        try c.encode(truncatedDayCount, forKey: .truncatedDayCount)
        try c.encode(unreachableResults, forKey: .unreachableResults)
        if datesIgnored { try c.encode(datesIgnored, forKey: .datesIgnored) }
        try c.encode(pagesFetched, forKey: .pagesFetched)
        if emptyPagesInARow > 0 { try c.encode(emptyPagesInARow, forKey: .emptyPagesInARow) }
        try c.encode(isFinished, forKey: .isFinished)
        try c.encodeIfPresent(completedAt, forKey: .completedAt)
        if !setAsidePages.isEmpty { try c.encode(setAsidePages, forKey: .setAsidePages) }
        try c.encodeIfPresent(retryQueue, forKey: .retryQueue)
        try c.encodeIfPresent(queryHits, forKey: .queryHits)
        if !deferredWindows.isEmpty { try c.encode(deferredWindows, forKey: .deferredWindows) }
        try c.encodeIfPresent(learnedPageCap, forKey: .learnedPageCap)
        try c.encodeIfPresent(refusedPage, forKey: .refusedPage)
    }
}
