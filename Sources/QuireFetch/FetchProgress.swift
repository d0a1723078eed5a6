public import Foundation
public import QuireNews

/// What a fetch run is doing, for the CLI to draw. Never carries the API key.
public enum FetchProgress: Sendable, Hashable {
    /// A page was committed: its label (`page 3 of 2019-01-01…2019-06-30`), its record count,
    /// and the run's totals so far: pages, and distinct articles stored (``FetchSummary/articles``).
    case pageFetched(label: String, records: Int, totalPages: Int, totalArticles: Int)
    /// A document of the page `label` could not be mapped and was quarantined: its index in the
    /// page, the JSON path and the reason (scrubbed of the key).
    case rejected(label: String, index: Int, path: String, message: String)
    /// The page `label` failed for good and the source went on without it (a Feedzilla
    /// category); the next run retries it.
    case skipped(label: String, message: String)
    /// The page `label` failed for good and the source asks for its results another way
    /// instead of setting it aside (NYT: the window as narrower ones, a single day at the end of
    /// the walk, or windows narrowed to a server's own page cap).
    case rerouted(label: String, message: String)
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
    /// Articles committed (counting an article again if a later page repeats it: upserts).
    public var records: Int = 0
    /// Distinct articles stored by this run (ten copies of one id are one article).
    public var articles: Int = 0
    /// Of ``articles``, those whose id was not in the store before.
    public var newArticles: Int = 0
    /// Of ``articles``, those fetched again equal to the stored version (not written again).
    public var unchangedArticles: Int = 0
    /// Of ``articles``, those that replaced a different stored version.
    public var updatedArticles: Int { max(0, articles - newArticles - unchangedArticles) }
    /// Documents quarantined because they could not be mapped (one served twice counts once,
    /// as it is quarantined once).
    public var rejected: Int = 0
    /// Documents served in the committed pages (mapped or rejected).
    public var documents: Int = 0
    /// Results the API reported that no request of this query's walk can reach (single days
    /// with more results than the page cap), counted over the walk so far, earlier runs' pages
    /// too (a resumed run that completes the walk says them); narrow the query (`--fq`, a
    /// shorter date range) to get them.
    public var unreachable: Int = 0
    /// Whether the API answered date ranges with results outside them, so the walk could not
    /// narrow a query past the page cap by dates (``unreachable`` counts what it left out).
    public var datesIgnored: Bool = false
    /// Pages that failed for good and were set aside so the others could be fetched (Feedzilla
    /// categories: ``FetchProgress/skipped(label:message:)``); the next run retries them.
    public var skipped: Int = 0
    /// Pages that failed for good whose results the source asks for another way
    /// (``FetchProgress/rerouted(label:message:)``): nothing set aside.
    public var rerouted: Int = 0
    /// Pages set aside and not fetched since when the run ended, by this run (``skipped``) or
    /// by an earlier one: a run that completes a walk resumed after a page was set aside says
    /// so. The next run retries them.
    public var setAside: Int = 0
    /// Whether the source had already been fetched to the end, so nothing was requested.
    public var alreadyComplete: Bool = false
    /// Requests repeated after a 429, 5xx or transport failure.
    public var retries: Int = 0
    /// Times the rate limiter made the run wait.
    public var waits: Int = 0
    /// Seconds spent waiting for the rate limiter.
    public var waitedSeconds: Double = 0
    /// Seconds spent in retry back-off.
    public var backoffSeconds: Double = 0
    /// Whether the run took up a walk where a stored checkpoint had stopped it (not a refresh of
    /// a finished walk, which starts a new one).
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

/// What a run does with the stored checkpoint of its source.
public enum FetchMode: Sendable, Hashable {
    /// Go on from the stored checkpoint; a finished source fetches nothing.
    case resume
    /// For a finished source, fetch only what is newer than its last completed run (sources
    /// that cannot tell start over); an unfinished one resumes.
    case refresh
    /// Ignore the stored checkpoint and start from the beginning (records are upserted by id).
    case restart
}
