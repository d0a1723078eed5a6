public import Foundation
public import QuireNews

/// Where fetched pages go: the seam between the fetch service and the store.
///
/// The store implements it so that a page's records, their indexes and the source's checkpoint
/// commit in one transaction: a process killed at any instant has either all of a page or none
/// of it, and resumes at the first uncommitted page.
public protocol FetchSink: Sendable {
    /// The checkpoint last committed for `sourceID`, or `nil` when the source never committed.
    func checkpoint(for sourceID: String) async throws -> Data?

    /// Stores `page`'s records and its checkpoint, atomically.
    func commit(_ page: FetchedPage) async throws
}

/// One fetched page, ready to be stored with the checkpoint that follows it.
public struct FetchedPage: Sendable, Hashable {
    /// The source (``FetchSource/sourceID``) whose checkpoint this page advances.
    public var sourceID: String
    /// The page's articles (possibly none: a page that only advances the checkpoint, such as the
    /// Feedzilla category list or an NYT date-window split).
    public var articles: [Article]
    /// Article lists (a Feedzilla category's list).
    public var lists: [ArticleList]
    /// The raw JSON of each document, parallel to `articles` when present (NYT), empty otherwise.
    public var rawDocuments: [[UInt8]]
    /// Which query fetched these articles (`nyt:q=…`, `feedzilla:category:12`), for the query
    /// index and the offline fallback.
    public var queryTag: String?
    /// The encoded checkpoint *after* this page.
    public var checkpoint: Data
    /// When the page was fetched (from the service's ``FetchClock``).
    public var fetchedAt: Date

    /// Creates a page.
    public init(
        sourceID: String, articles: [Article], lists: [ArticleList] = [], rawDocuments: [[UInt8]] = [],
        queryTag: String?, checkpoint: Data, fetchedAt: Date
    ) {
        self.sourceID = sourceID
        self.articles = articles
        self.lists = lists
        self.rawDocuments = rawDocuments
        self.queryTag = queryTag
        self.checkpoint = checkpoint
        self.fetchedAt = fetchedAt
    }
}

/// Reads what the store holds for a query, for the offline fallback.
public protocol OfflineReader: Sendable {
    /// The stored articles fetched by `queryTag`, and when they were last fetched.
    func storedArticles(for queryTag: String) throws -> (articles: [Article], fetchedAt: Date?)
}
