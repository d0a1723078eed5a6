public import Foundation
public import QuireNews

/// A paged API the ``FetchService`` can walk: it says what to request next from a checkpoint, and
/// turns a response body into records and the following checkpoint.
///
/// A source is a pure function of its checkpoint: no hidden state, so a run resumed from a stored
/// checkpoint makes exactly the requests an uninterrupted run would have made from there.
public protocol FetchSource: Sendable {
    /// The source's progress: a pure value saying what to fetch next.
    associatedtype Checkpoint: Codable, Sendable, Hashable

    /// A stable identity (the key of the stored checkpoint); never contains the API key.
    var sourceID: String { get }

    /// The secret to keep out of every error and event, if the source uses one.
    var apiKey: APIKey? { get }

    /// Which mapping its documents need (`nyt`, `feedzilla`), kept with rejects and raw documents
    /// so they can be mapped again later.
    var mappingKind: String { get }

    /// Whose request budget the source spends (the API host), for the stored daily budget.
    var budgetID: String { get }

    /// Where a new source starts.
    var initialCheckpoint: Checkpoint { get }

    /// Whether a stored checkpoint belongs to this source (same query).
    func accepts(_ checkpoint: Checkpoint) -> Bool

    /// Whether nothing is left to fetch (as opposed to a page limit stopping the walk).
    func isFinished(_ checkpoint: Checkpoint) -> Bool

    /// A checkpoint that fetches only what is newer than a finished walk (`--refresh`), or `nil`
    /// when the source can only start over.
    func refreshCheckpoint(after finished: Checkpoint, now: Date) -> Checkpoint?

    /// The finished checkpoint stamped with when the walk completed.
    func completed(_ checkpoint: Checkpoint, at now: Date) -> Checkpoint

    /// The next request, or `nil` when the source is done (or a page limit is reached).
    func nextRequest(after checkpoint: Checkpoint) -> SourceRequest?

    /// The checkpoint past `request` when its page failed for good (an HTTP error after the
    /// retries, a body that cannot be mapped) and the source can go on without it; nil stops
    /// the run with the error, the checkpoint kept, so a later run retries the page.
    func skipping(_ request: SourceRequest, at checkpoint: Checkpoint) -> Checkpoint?

    /// ``skipping(_:at:)`` told the failure, so a source can do better than set the page aside
    /// (narrow what it asks when the server refuses a page number). The default calls
    /// ``skipping(_:at:)``.
    func skipping(_ request: SourceRequest, at checkpoint: Checkpoint, after error: FetchError) -> Checkpoint?

    /// For a plain run of a finished walk: a checkpoint that fetches again what the walk set
    /// aside (``skipping(_:at:)``), or nil when nothing was.
    func retryCheckpoint(after finished: Checkpoint) -> Checkpoint?

    /// Pages (or categories) the walk at `checkpoint` has set aside and not fetched since: the
    /// next run retries them.
    func setAsideCount(in checkpoint: Checkpoint) -> Int

    /// Pages (or categories) still set aside when a run ends at `checkpoint`: those of
    /// ``setAsideCount(in:)``, and, for a run over set-aside pages that ends before its end,
    /// those it has not asked again yet. The default is ``setAsideCount(in:)``.
    func stillSetAside(in checkpoint: Checkpoint) -> Int

    /// Results the API reported for the walk at `checkpoint` that no request can reach.
    func unreachableResults(in checkpoint: Checkpoint) -> Int

    /// Whether the API ignored the walk's date ranges (the same results for every range).
    func datesIgnored(in checkpoint: Checkpoint) -> Bool

    /// Maps the body answering `request` and computes the checkpoint after it.
    ///
    /// Documents that cannot be mapped go into ``SourcePage/rejects``; the page still commits.
    ///
    /// - Throws: `NewsMappingError` naming the JSON path when the envelope is broken; then
    ///   nothing of the page is stored.
    func process(_ body: [UInt8], for request: SourceRequest, at checkpoint: Checkpoint)
        throws(NewsMappingError) -> SourcePage<Checkpoint>
}

extension FetchSource {
    public func accepts(_ checkpoint: Checkpoint) -> Bool { true }

    public func isFinished(_ checkpoint: Checkpoint) -> Bool { nextRequest(after: checkpoint) == nil }

    public func refreshCheckpoint(after finished: Checkpoint, now: Date) -> Checkpoint? { nil }

    public func completed(_ checkpoint: Checkpoint, at now: Date) -> Checkpoint { checkpoint }

    public func skipping(_ request: SourceRequest, at checkpoint: Checkpoint) -> Checkpoint? { nil }

    public func skipping(_ request: SourceRequest, at checkpoint: Checkpoint, after error: FetchError) -> Checkpoint? {
        skipping(request, at: checkpoint)
    }

    public func retryCheckpoint(after finished: Checkpoint) -> Checkpoint? { nil }

    public func setAsideCount(in checkpoint: Checkpoint) -> Int { 0 }

    public func stillSetAside(in checkpoint: Checkpoint) -> Int { setAsideCount(in: checkpoint) }

    public func unreachableResults(in checkpoint: Checkpoint) -> Int { 0 }

    public func datesIgnored(in checkpoint: Checkpoint) -> Bool { false }
}

/// One request a source wants made. Its description, debug description and mirror show the
/// URL redacted (``redactedURL``), so printing or dumping a request never shows a key.
public struct SourceRequest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The full URL, which may carry the API key: never shown, logged or stored.
    public var url: String
    /// A short description without secrets, such as `page 3 of 2019-01-01…2019-06-30`.
    public var label: String

    /// Creates a request.
    public init(url: String, label: String) {
        self.url = url
        self.label = label
    }

    /// The URL with secrets redacted.
    public var redactedURL: String { URLRedactionBridge.redact(url) }

    public var description: String { "\(label) (\(redactedURL))" }
    public var debugDescription: String { "SourceRequest(url: \(redactedURL), label: \(label))" }
    public var customMirror: Mirror { Mirror(self, children: ["url": redactedURL, "label": label], displayStyle: .struct) }
}

/// What a source made of one response.
public struct SourcePage<Checkpoint: Codable & Sendable & Hashable>: Sendable {
    /// The mapped articles.
    public var articles: [Article]
    /// Mapped lists.
    public var lists: [ArticleList]
    /// The categories a category list named (Feedzilla's `/categories.json`).
    public var categories: [QuireNews.Category]
    /// Raw documents parallel to `articles` (may be empty).
    public var rawDocuments: [[UInt8]]
    /// The documents that could not be mapped (quarantined with the page).
    public var rejects: [DocumentReject]
    /// How many results the API reported but the source cannot reach (a window capped at
    /// 1,000 results), learnt on this page.
    public var unreachable: Int
    /// The query tag of the articles.
    public var queryTag: String?
    /// The checkpoint after this page.
    public var checkpoint: Checkpoint

    /// Creates a page.
    public init(
        articles: [Article], lists: [ArticleList] = [], categories: [QuireNews.Category] = [], rawDocuments: [[UInt8]] = [],
        rejects: [DocumentReject] = [], unreachable: Int = 0, queryTag: String?, checkpoint: Checkpoint
    ) {
        self.articles = articles
        self.lists = lists
        self.categories = categories
        self.rawDocuments = rawDocuments
        self.rejects = rejects
        self.unreachable = unreachable
        self.queryTag = queryTag
        self.checkpoint = checkpoint
    }
}
