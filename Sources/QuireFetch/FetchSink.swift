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

    /// Stores `page`'s records, its rejects and its checkpoint, atomically.
    ///
    /// - Returns: What the commit changed (new and updated articles, rejects kept).
    func commit(_ page: FetchedPage) async throws -> PageCommit

    /// The times of the requests made against `budget` in the last day, as last recorded, so a
    /// new run starts with the daily quota the previous ones left.
    func requestTimes(budget: String) async throws -> [Date]

    /// Records the requests of the last day against `budget` (replacing what was recorded), for
    /// a run that stops without committing another page.
    func recordRequests(_ times: [Date], budget: String) async throws
}

extension FetchSink {
    public func requestTimes(budget: String) async throws -> [Date] { [] }

    public func recordRequests(_ times: [Date], budget: String) async throws {}
}

/// What committing one page changed.
public struct PageCommit: Sendable, Hashable {
    /// Articles whose id was not stored before.
    public var newArticles: Int
    /// Articles that replaced a different stored one with the same id.
    public var updatedArticles: Int
    /// Articles equal to the stored one with the same id: not written again.
    public var unchangedArticles: Int
    /// Rejected documents quarantined.
    public var rejects: Int
    /// The ids of the articles written (new or updated), when the sink tells them: a run then
    /// tells an article a later page repeats changed from one it repeats unchanged (without them
    /// it takes every repeat for unchanged).
    public var writtenIDs: [String]?

    /// Creates an outcome.
    public init(newArticles: Int = 0, updatedArticles: Int = 0, unchangedArticles: Int = 0, rejects: Int = 0) {
        self.newArticles = newArticles
        self.updatedArticles = updatedArticles
        self.unchangedArticles = unchangedArticles
        self.rejects = rejects
    }
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
    /// Categories, by id (Feedzilla's category list), stored in `categories`.
    public var categories: [QuireNews.Category]
    /// The raw JSON of each document, parallel to `articles` when present, empty otherwise
    /// (the API key scrubbed).
    public var rawDocuments: [[UInt8]]
    /// The documents that could not be mapped, with their raw JSON (the API key scrubbed).
    public var rejects: [DocumentReject]
    /// Which request the page answers (`page 3 of 2019-01-01…2019-06-30`), for rejects.
    public var pageLabel: String
    /// Which mapping the page's documents need to be mapped again (`nyt`, `feedzilla`).
    public var mappingKind: String
    /// Which query fetched these articles (`nyt:q=…`, `feedzilla:category:12`), for the query
    /// index and the offline fallback.
    public var queryTag: String?
    /// The encoded checkpoint *after* this page.
    public var checkpoint: Data
    /// When the page was fetched (from the service's ``FetchClock``).
    public var fetchedAt: Date
    /// The request budget the page's requests count against (``FetchSource/budgetID``).
    public var budget: String?
    /// Every request of the last day against ``budget``, this page's included, to record with it.
    public var requestTimes: [Date] = []
    /// The checkpoint the page was fetched from, as its run read or last committed it: a sink
    /// commits the page only while the source's stored checkpoint is still that one
    /// (``CheckpointMoved`` otherwise). `nil` commits without the check.
    public var follows: StoredCheckpoint?

    /// Creates a page.
    public init(
        sourceID: String, articles: [Article], lists: [ArticleList] = [], categories: [QuireNews.Category] = [],
        rawDocuments: [[UInt8]] = [], rejects: [DocumentReject] = [], pageLabel: String = "", mappingKind: String = "nyt",
        queryTag: String?, checkpoint: Data, fetchedAt: Date, budget: String? = nil, requestTimes: [Date] = [],
        follows: StoredCheckpoint? = nil
    ) {
        self.follows = follows
        self.categories = categories
        self.budget = budget
        self.requestTimes = requestTimes
        self.sourceID = sourceID
        self.articles = articles
        self.lists = lists
        self.rawDocuments = rawDocuments
        self.rejects = rejects
        self.pageLabel = pageLabel
        self.mappingKind = mappingKind
        self.queryTag = queryTag
        self.checkpoint = checkpoint
        self.fetchedAt = fetchedAt
    }
}

/// A source's stored checkpoint as a run saw it: none yet, or these bytes.
public enum StoredCheckpoint: Sendable, Hashable {
    case absent
    case stored(Data)

    /// `data` as a stored checkpoint (`nil`: absent).
    public init(_ data: Data?) { self = data.map(StoredCheckpoint.stored) ?? .absent }
}

/// A page not committed because its source's checkpoint moved since its run read it: another
/// run of the same source committed in between (``FetchedPage/follows``).
public struct CheckpointMoved: Error, Sendable, CustomStringConvertible {
    /// The source whose checkpoint moved.
    public var sourceID: String

    public init(sourceID: String) { self.sourceID = sourceID }

    public var description: String { "the checkpoint of \(sourceID) moved since this run read it" }

    /// Throws when `page` follows another checkpoint than `stored` (what the sink holds now).
    public static func check(_ page: FetchedPage, against stored: Data?) throws(CheckpointMoved) {
        if let follows = page.follows, follows != StoredCheckpoint(stored) { throw CheckpointMoved(sourceID: page.sourceID) }
    }
}

/// Reads what the store holds for a query, for the offline fallback.
public protocol OfflineReader: Sendable {
    /// The stored articles fetched by `queryTag`, and when they were last fetched.
    func storedArticles(for queryTag: String) throws -> (articles: [Article], fetchedAt: Date?)
}
