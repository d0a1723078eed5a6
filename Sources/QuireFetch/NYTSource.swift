public import Foundation
public import QuireNews

/// The NYT Article Search v2 source: pages through a query, splitting its date range when more
/// results exist than the page cap reaches.
///
/// Ten documents a page. A window ends at the last page `hits` announces, at the page cap
/// (``pageCap`` pages, 0-based; the API serves "up to 100 pages"), or, when the API gave no
/// `hits` (or one that a page shows to be too low), at a page with fewer than ten documents; a
/// short or empty page before the announced end is not taken for the end (the API has answered
/// pages empty while the next ones worked), but ``emptyPagesEndingAWindow`` empty pages in a row
/// are (a `hits` that overstates would otherwise cost every page up to the cap, at 5 requests a
/// minute).
/// When page 0 of a window reports more hits than `pageCap * 10`, the page's documents are
/// stored (they are fetched again in the halves: upserts) and the window is split by date, so
/// nothing unreachable is silently lost; single days that still overflow are recorded in
/// ``NYTCheckpoint/truncatedDayCount`` (with the results out of reach in ``NYTCheckpoint/unreachableResults``).
public struct NYTSource: FetchSource {
    /// The query (its `page` is ignored: paging is the source's job).
    public let query: NYTQuery
    /// The search endpoint, such as `https://api.nytimes.com/svc/search/v2/articlesearch.json`.
    public let endpoint: String
    /// The key sent as `api-key`.
    public let key: APIKey
    /// Pages per window: 0..<pageCap.
    public let pageCap: Int
    /// The most pages to fetch for the query in all, across resumed runs (`--max-pages`).
    public let maxPages: Int?
    /// The range split when the query has no dates of its own and overflows.
    public let fallbackRange: NYTDateWindow

    /// Empty pages in a row, before the end `hits` announces, that end a window all the same.
    public static let emptyPagesEndingAWindow = 3

    /// The most windows a walk moves to its end (``NYTCheckpoint/deferredWindows``): the
    /// checkpoint stays small.
    public static let deferredWindowLimit = 64

    /// The real API's endpoint.
    public static let defaultEndpoint = "https://api.nytimes.com/svc/search/v2/articlesearch.json"

    /// A source for `query`.
    ///
    /// - Parameters:
    ///   - query: What to search.
    ///   - key: The API key.
    ///   - endpoint: The search URL (the fixture server's in tests).
    ///   - pageCap: Pages per window (default 100: pages 0…99).
    ///   - maxPages: Stop after this many pages in all.
    ///   - fallbackRange: Used for splitting when the query has no begin or end date (default
    ///     1851-09-18, the paper's first issue, to 2030-12-31).
    public init(
        query: NYTQuery, key: APIKey, endpoint: String = NYTSource.defaultEndpoint, pageCap: Int = 100,
        maxPages: Int? = nil, fallbackRange: NYTDateWindow? = nil
    ) {
        var query = query
        query.page = 0
        self.query = query
        self.key = key
        self.endpoint = endpoint
        self.pageCap = max(1, min(pageCap, NYTQuery.pageRange.upperBound + 1))
        self.maxPages = maxPages
        self.fallbackRange =
            fallbackRange
            ?? NYTDateWindow(begin: NYTDay(year: 1851, month: 9, day: 18)!, end: NYTDay(year: 2030, month: 12, day: 31)!)
    }

    /// The query's parameters without `page`, in the API's order: the identity of the result set.
    public var queryIdentity: String {
        query.queryItems.filter { $0.name != "page" }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// Where the source fetches from, as part of its identity: empty for the real API (so stores
    /// written before endpoints were part of it resume), else `<host[:port]><path>@`.
    public var endpointIdentity: String {
        guard endpoint != Self.defaultEndpoint else { return "" }
        var rest = SourceURL.withoutSchemeAndCredentials(endpoint)
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        return rest.lowercased() + "@"
    }

    /// `nyt:<endpoint identity><query identity>`: the same query against another endpoint (the
    /// demo's fixture server, a proxy) is another source with its own checkpoint.
    public var sourceID: String { "nyt:" + endpointIdentity + queryIdentity }

    /// The tag of the query index: the ``sourceID``.
    public var queryTag: String { sourceID }

    public var apiKey: APIKey? { key }

    public var mappingKind: String { "nyt" }

    public var budgetID: String {
        "nyt:" + SourceURL.withoutSchemeAndCredentials(endpoint).prefix { $0 != "/" && $0 != "?" }.lowercased()
    }

    /// A run of set-aside pages keeps the walk's time: a later `--refresh` starts from there
    /// (stamped with the retry's time, it skipped what was published in between).
    public func completed(_ checkpoint: NYTCheckpoint, at now: Date) -> NYTCheckpoint {
        var stamped = checkpoint
        stamped.completedAt = checkpoint.completedAt ?? now
        return stamped
    }

    /// After a finished walk: the query again from the day before the walk completed (a day of
    /// overlap, so articles published while it ran are not missed) to the query's end.
    public func refreshCheckpoint(after finished: NYTCheckpoint, now: Date) -> NYTCheckpoint? {
        guard finished.isFinished, let completedAt = finished.completedAt else { return nil }
        let from = NYTDay(date: completedAt.addingTimeInterval(-86_400))
        let begin = max(query.begin ?? from, from)
        let end = query.end ?? NYTDay(date: now)
        guard begin <= end else {
            var nothing = finished
            nothing.completedAt = now
            return nothing
        }
        var fresh = NYTCheckpoint(queryIdentity: queryIdentity, window: NYTDateWindow(begin: begin, end: end))
        // Still set aside (a refresh follows the run that retried them): the next run retries them.
        fresh.setAsidePages = finished.setAsidePages
        return fresh
    }

    /// A page that failed for good is set aside and the walk goes on past it, as past a page of
    /// ten documents (the next page tells where the window ends); in a run of set-aside pages,
    /// it stays set aside and the next one is fetched. Page 0 of a window of several days is not
    /// set aside: its `hits` decide whether the window must be split, and the window is asked as
    /// its two halves instead (a server refusing that one request hid every result of the window,
    /// on every run); a single day waits at the end of the walk (once:
    /// ``NYTCheckpoint/deferredWindows``), so the other windows are fetched; a day without others
    /// pending, or deferred already, is set aside by its page 0, whose retry asks the day's other
    /// pages after it. The query's very first page stops the run (a bad query, a wrong endpoint:
    /// nothing was fetched, and the error is said at once).
    public func skipping(_ request: SourceRequest, at checkpoint: NYTCheckpoint) -> NYTCheckpoint? {
        guard !checkpoint.isFinished, checkpoint != initialCheckpoint else { return nil }
        if checkpoint.nextPage == 0 && checkpoint.retryQueue == nil {
            if var next = halved(checkpoint) {
                next.emptyPagesInARow = 0
                return next
            }
            guard let window = checkpoint.window else { return nil }
            var next = checkpoint
            next.emptyPagesInARow = 0
            guard !checkpoint.pendingWindows.isEmpty, !checkpoint.deferredWindows.contains(window),
                checkpoint.deferredWindows.count < Self.deferredWindowLimit
            else {
                // Failing again at the end, or with no other window to wait for: the day is set
                // aside by its first page, which the retry follows with the day's other pages
                // (it stopped every run of the query there, for good).
                next.setAsidePages.append(NYTPageRef(window: window, page: 0))
                finishWindow(&next)
                return next
            }
            next.deferredWindows.append(window)
            next.pendingWindows.append(window)
            next.window = next.pendingWindows.removeFirst()
            return next
        }
        var next = checkpoint
        next.setAsidePages.append(NYTPageRef(window: checkpoint.window, page: checkpoint.nextPage))
        next.emptyPagesInARow = 0
        if next.retryQueue != nil {
            nextRetry(&next)
        } else if checkpoint.nextPage + 1 >= pagesPerWindow(checkpoint) {
            finishWindow(&next)
        } else {
            next.nextPage += 1
        }
        return next
    }

    /// ``skipping(_:at:)``, and a server's own page cap learned: a page refused with a 400 right
    /// after the page before it was (both after pages that answered) is a page number the server
    /// does not serve (an older spec's `page: must be less than or equal to 10`). Setting aside
    /// every page past it cost two pages a run and an error each run; the window is asked as
    /// its halves instead, and every later window is narrowed to the pages the server answers
    /// (``NYTCheckpoint/learnedPageCap``). One refused page alone is set aside as before.
    public func skipping(_ request: SourceRequest, at checkpoint: NYTCheckpoint, after error: FetchError) -> NYTCheckpoint? {
        let refused = error.code == .badRequest && checkpoint.retryQueue == nil && checkpoint.nextPage > 0
        if refused, let previous = checkpoint.refusedPage, previous == checkpoint.nextPage - 1, !checkpoint.isFinished {
            var next = checkpoint
            next.learnedPageCap = min(previous, checkpoint.learnedPageCap ?? previous)
            next.refusedPage = nil
            next.emptyPagesInARow = 0
            // The first refused page lies past the cap: no page to fetch again.
            next.setAsidePages.removeAll { $0 == NYTPageRef(window: checkpoint.window, page: previous) }
            if let split = halved(next) {
                next = split
                next.nextPage = 0
            } else {
                next.truncatedDayCount += 1
                finishWindow(&next)
            }
            return next
        }
        guard var next = skipping(request, at: checkpoint) else { return nil }
        next.refusedPage = refused && next.window == checkpoint.window && next.nextPage == checkpoint.nextPage + 1 ? checkpoint.nextPage : nil
        return next
    }

    /// The pages a window: ``pageCap``, or fewer when the server refused more.
    func pagesPerWindow(_ checkpoint: NYTCheckpoint) -> Int { min(pageCap, checkpoint.learnedPageCap ?? pageCap) }

    /// After a finished walk that set pages aside: a run over those pages alone.
    public func retryCheckpoint(after finished: NYTCheckpoint) -> NYTCheckpoint? {
        guard finished.isFinished, let first = finished.setAsidePages.first else { return nil }
        var retry = finished
        retry.setAsidePages = []
        retry.retryQueue = Array(finished.setAsidePages.dropFirst())
        retry.window = first.window
        retry.nextPage = first.page
        retry.isFinished = false
        return retry
    }

    public func setAsideCount(in checkpoint: NYTCheckpoint) -> Int { checkpoint.setAsidePages.count }

    /// In a run over set-aside pages cut short: the page it was at and those queued after it too.
    public func stillSetAside(in checkpoint: NYTCheckpoint) -> Int {
        guard let queue = checkpoint.retryQueue, !checkpoint.isFinished else { return checkpoint.setAsidePages.count }
        return checkpoint.setAsidePages.count + 1 + queue.count
    }

    public func unreachableResults(in checkpoint: NYTCheckpoint) -> Int { checkpoint.unreachableResults }

    public func datesIgnored(in checkpoint: NYTCheckpoint) -> Bool { checkpoint.datesIgnored }

    /// Whether a page answering `window` holds dated results and none of them near it: the API
    /// ignored the range (a day of slack each side for the API's own time zone).
    static func ignoresDates(_ window: NYTDateWindow, _ articles: [Article]) -> Bool {
        let dates = articles.compactMap(\.publishedAt)
        let from = window.begin.date.addingTimeInterval(-86_400)
        let to = window.end.date.addingTimeInterval(2 * 86_400)
        return !dates.isEmpty && !dates.contains { $0 >= from && $0 < to }
    }

    /// `checkpoint` with its window (the query's own range when it has none) replaced by its two
    /// halves, the newer first for `sort=newest`; nil for a single day.
    private func halved(_ checkpoint: NYTCheckpoint) -> NYTCheckpoint? {
        let bounds = checkpoint.window ?? NYTDateWindow(
            begin: query.begin ?? fallbackRange.begin, end: query.end ?? fallbackRange.end)
        guard let (older, newer) = bounds.split() else { return nil }
        let halves = query.sort == .newest ? [newer, older] : [older, newer]
        var next = checkpoint
        next.window = halves[0]
        next.pendingWindows = [halves[1]] + checkpoint.pendingWindows
        return next
    }

    /// Moves a run of set-aside pages to its next page, or ends it.
    private func nextRetry(_ next: inout NYTCheckpoint) {
        guard var queue = next.retryQueue, !queue.isEmpty else {
            (next.retryQueue, next.window, next.nextPage, next.isFinished) = (nil, nil, 0, true)
            return
        }
        let page = queue.removeFirst()
        (next.retryQueue, next.window, next.nextPage) = (queue, page.window, page.page)
    }

    /// Ends the current window: the next pending one, or the end of the walk.
    private func finishWindow(_ next: inout NYTCheckpoint) {
        next.emptyPagesInARow = 0
        next.refusedPage = nil
        next.doneWindowCount += 1
        if next.pendingWindows.isEmpty {
            next.window = nil
            next.isFinished = true
        } else {
            next.window = next.pendingWindows.removeFirst()
        }
        next.nextPage = 0
    }

    public var initialCheckpoint: NYTCheckpoint {
        let window: NYTDateWindow? =
            if let begin = query.begin, let end = query.end { NYTDateWindow(begin: begin, end: end) } else { nil }
        return NYTCheckpoint(queryIdentity: queryIdentity, window: window)
    }

    public func accepts(_ checkpoint: NYTCheckpoint) -> Bool { checkpoint.queryIdentity == queryIdentity }

    public func isFinished(_ checkpoint: NYTCheckpoint) -> Bool { checkpoint.isFinished }

    public func nextRequest(after checkpoint: NYTCheckpoint) -> SourceRequest? {
        guard !checkpoint.isFinished else { return nil }
        if let maxPages, checkpoint.pagesFetched >= maxPages { return nil }
        var request = query
        request.page = checkpoint.nextPage
        if let window = checkpoint.window {
            request.begin = window.begin
            request.end = window.end
        }
        var items = request.queryItems.map { "\($0.name)=\(percentEncoded($0.value))" }
        items.append("api-key=" + percentEncoded(key.value))
        let separator = endpoint.contains("?") ? "&" : "?"
        let range = checkpoint.window.map { " of \($0)" } ?? ""
        return SourceRequest(
            url: endpoint + separator + items.joined(separator: "&"), label: "page \(checkpoint.nextPage)\(range)")
    }

    public func process(_ body: [UInt8], for request: SourceRequest, at checkpoint: NYTCheckpoint)
        throws(NewsMappingError) -> SourcePage<NYTCheckpoint>
    {
        let page = try NYTArticleSearch.parsePage(body)
        var next = checkpoint
        next.pagesFetched += 1
        if checkpoint.retryQueue != nil {
            // A day set aside by its first page: its other pages follow it in the retry.
            if checkpoint.nextPage == 0, let window = checkpoint.window, let hits = page.hits {
                let reachable = pagesPerWindow(checkpoint) * 10
                let pages = (min(hits, reachable) + 9) / 10
                if pages > 1 { next.retryQueue = (1..<pages).map { NYTPageRef(window: window, page: $0) } + (next.retryQueue ?? []) }
                next.unreachableResults += max(0, hits - reachable)
            }
            nextRetry(&next)
            return SourcePage(
                articles: page.articles, rawDocuments: page.rawDocuments, rejects: page.rejects, queryTag: queryTag,
                checkpoint: next)
        }
        next.refusedPage = nil
        let reachable = pagesPerWindow(checkpoint) * 10
        var unreachable = 0

        // The whole query's count: only from the walk's first window (a checkpoint of an older
        // build resumed past its split has none, and a half's count would be taken for it).
        if checkpoint.nextPage == 0, checkpoint.queryHits == nil, checkpoint.pendingWindows.isEmpty,
            checkpoint.doneWindowCount == 0
        {
            next.queryHits = page.hits
        }
        if checkpoint.nextPage == 0, let hits = page.hits, hits > reachable {
            let ignored = checkpoint.window.map { Self.ignoresDates($0, page.articles) } ?? false
            if ignored {
                // Every narrower window would bring the same results: halving them went on for
                // millions of requests. This window is paged to the cap; the rest is unreachable.
                next.pendingWindows = []
                next.datesIgnored = true
            } else if let split = halved(next) {
                next = split
                // A page spent on learning the window is too large still stores its results.
                return SourcePage(
                    articles: page.articles, rawDocuments: page.rawDocuments, rejects: page.rejects, queryTag: queryTag,
                    checkpoint: next)
            }
            if !ignored, let total = checkpoint.queryHits, hits >= total {
                // A single day reporting every result of the query: the other windows hold none,
                // or the API ignores the dates and each would answer the same (undated results
                // cannot show it): halving them went on for millions of requests. Either way
                // the rest of the walk brings nothing.
                next.pendingWindows = []
                next.datesIgnored = !page.articles.contains { $0.publishedAt != nil }
            }
            if !ignored { next.truncatedDayCount += 1 }
            unreachable = hits - reachable
            next.unreachableResults += unreachable
        }

        let lastPage = checkpoint.nextPage + 1 >= pagesPerWindow(checkpoint)
        // A page holding more than `hits` announced shows the count is stale: then, as without
        // one, a short page is the end.
        let hitsReached =
            if let hits = page.hits, hits >= checkpoint.nextPage * 10 + page.documentCount {
                (checkpoint.nextPage + 1) * 10 >= hits
            } else {
                page.documentCount < 10
            }
        next.emptyPagesInARow = page.documentCount == 0 ? checkpoint.emptyPagesInARow + 1 : 0
        let emptyRunEnds = next.emptyPagesInARow >= Self.emptyPagesEndingAWindow
        if lastPage || hitsReached || emptyRunEnds {
            finishWindow(&next)
        } else {
            next.nextPage += 1
        }
        return SourcePage(
            articles: page.articles, rawDocuments: page.rawDocuments, rejects: page.rejects, unreachable: unreachable,
            queryTag: queryTag, checkpoint: next)
    }
}
