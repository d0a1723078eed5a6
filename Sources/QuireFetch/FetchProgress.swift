public import Foundation
public import QuireNews

/// What a fetch run is doing, for the CLI to draw. Never carries the API key.
public enum FetchProgress: Sendable, Hashable {
    /// A page was committed: its label (`page 3 of 2019-01-01…2019-06-30`), its record count,
    /// and the run's totals so far.
    case pageFetched(label: String, records: Int, totalPages: Int, totalRecords: Int)
    /// The rate limiter holds the next request for this many seconds.
    case waitingForRateLimit(seconds: Double)
    /// A request failed for `reason`; attempt `attempt` follows after `seconds`.
    case retrying(reason: RetryPolicy.Reason, attempt: Int, seconds: Double)
    /// The run ended normally.
    case finished(FetchSummary)
}

/// What a run did.
public struct FetchSummary: Sendable, Hashable {
    /// Requests whose page was committed.
    public var pages: Int = 0
    /// Articles committed (counting an article again if a later page repeats it).
    public var records: Int = 0
    /// Requests repeated after a 429, 5xx or transport failure.
    public var retries: Int = 0
    /// Times the rate limiter made the run wait.
    public var waits: Int = 0
    /// Seconds spent waiting for the rate limiter.
    public var waitedSeconds: Double = 0
    /// Seconds spent in retry back-off.
    public var backoffSeconds: Double = 0
    /// Whether the run started from a stored checkpoint.
    public var resumed: Bool = false
    /// Whether the source has nothing left to fetch (false when `maxPages` stopped it).
    public var isComplete: Bool = false

    /// An empty summary.
    public init() {}
}

/// A query's articles: fresh from the network, or what the store held when the network failed.
public struct FetchResult: Sendable {
    /// The articles stored for the query.
    public var articles: [Article]
    /// True when the fetch failed and these are stored articles from an earlier fetch.
    public var isStale: Bool
    /// When the stored articles were last fetched (`nil` when nothing was ever fetched).
    public var fetchedAt: Date?
    /// Why the fetch failed, when it did.
    public var failure: FetchError?

    /// Creates a result.
    public init(articles: [Article], isStale: Bool, fetchedAt: Date?, failure: FetchError? = nil) {
        self.articles = articles
        self.isStale = isStale
        self.fetchedAt = fetchedAt
        self.failure = failure
    }
}
