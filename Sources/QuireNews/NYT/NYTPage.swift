/// One parsed page of NYT Article Search results.
public struct NYTPage: Sendable, Hashable {
    /// The page's articles, in the order of `response.docs`.
    public var articles: [Article]
    /// `meta.hits` (or, since 2025, `metadata.hits`): the total number of matches, when given.
    public var hits: Int?
    /// `meta.offset` / `metadata.offset`: the index of the page's first result, when given.
    public var offset: Int?
    /// Each document's exact JSON bytes, parallel to `articles`, for raw-payload retention.
    public var rawDocuments: [[UInt8]]
    /// The documents that could not be mapped, in page order.
    public var rejects: [DocumentReject]

    /// How many documents the page held: mapped plus rejected.
    public var documentCount: Int { articles.count + rejects.count }

    /// Creates a page.
    public init(
        articles: [Article], hits: Int? = nil, offset: Int? = nil, rawDocuments: [[UInt8]] = [],
        rejects: [DocumentReject] = []
    ) {
        self.articles = articles
        self.hits = hits
        self.offset = offset
        self.rawDocuments = rawDocuments
        self.rejects = rejects
    }
}
