public import QuireNews

/// Where a Feedzilla fetch stands: the category list (fixed once fetched) and the categories done.
public struct FeedzillaCheckpoint: Codable, Sendable, Hashable {
    /// The categories to fetch, in order; `nil` until `/categories.json` has been read.
    public var categoryIDs: [Int]?
    /// How many of `categoryIDs` are done (they are fetched in order).
    public var doneCount: Int
    /// Categories of this walk whose page failed for good (an HTTP error, a body that is not an
    /// article list): set aside so that the others are fetched; the next run retries them.
    public var failedCategoryIDs: [Int]
    /// Whether this walk is over the categories a walk before it set aside (its categories not
    /// done yet are still set aside).
    public var retrying: Bool

    /// The start: nothing listed, nothing done.
    public init() {
        categoryIDs = nil
        doneCount = 0
        failedCategoryIDs = []
        retrying = false
    }

    private enum CodingKeys: String, CodingKey {
        case categoryIDs, doneCount, failedCategoryIDs, retrying
    }

    /// Reads checkpoints stored before failed categories were kept too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        categoryIDs = try container.decodeIfPresent([Int].self, forKey: .categoryIDs)
        doneCount = try container.decode(Int.self, forKey: .doneCount)
        failedCategoryIDs = try container.decodeIfPresent([Int].self, forKey: .failedCategoryIDs) ?? []
        retrying = try container.decodeIfPresent(Bool.self, forKey: .retrying) ?? false
    }

    /// The categories fully fetched.
    public var doneCategoryIDs: [Int] { Array((categoryIDs ?? []).prefix(doneCount)) }

    /// Whether every category is done.
    public var isFinished: Bool { categoryIDs.map { doneCount >= $0.count } ?? false }
}

/// A Feedzilla-style source: the category list, then each category's article list, stored as an
/// `ArticleList` with its articles.
public struct FeedzillaSource: FetchSource {
    /// The API base, such as `http://api.feedzilla.com/v1` (no trailing slash).
    public let baseURL: String
    /// Only these categories (in the API's order), or all when `nil`.
    public let categoryFilter: [Int]?
    /// `count`: articles asked for per category (the API allows at most 100).
    public let articlesPerCategory: Int

    /// A source over `baseURL`.
    public init(baseURL: String, categories: [Int]? = nil, articlesPerCategory: Int = 100) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.categoryFilter = categories
        self.articlesPerCategory = max(1, min(100, articlesPerCategory))
    }

    /// `feedzilla:<base URL>` without the URL's user and password, and the categories asked for.
    public var sourceID: String {
        "feedzilla:" + SourceURL.withoutCredentials(baseURL)
            + (categoryFilter.map { "?categories=" + $0.map(String.init).joined(separator: ",") } ?? "")
    }

    public var apiKey: APIKey? { nil }

    public var mappingKind: String { "feedzilla" }

    public var budgetID: String { "feedzilla:" + SourceURL.withoutCredentials(baseURL) }

    public var initialCheckpoint: FeedzillaCheckpoint { FeedzillaCheckpoint() }

    /// The page label of the category list's request (and of its quarantined categories).
    public static let categoriesLabel = "categories"

    /// The query tag of a category's articles: its list id, `feedzilla:category:<id>`.
    public static func queryTag(categoryID: Int) -> String { Feedzilla.listID(categoryID: categoryID) }

    public func isFinished(_ checkpoint: FeedzillaCheckpoint) -> Bool { checkpoint.isFinished }

    /// Categories are independent: one whose page fails for good is set aside and the next one
    /// fetched. The category list itself cannot be.
    public func skipping(_ request: SourceRequest, at checkpoint: FeedzillaCheckpoint) -> FeedzillaCheckpoint? {
        guard let ids = checkpoint.categoryIDs, checkpoint.doneCount < ids.count else { return nil }
        var next = checkpoint
        next.failedCategoryIDs.append(ids[checkpoint.doneCount])
        next.doneCount += 1
        return next
    }

    public func setAsideCount(in checkpoint: FeedzillaCheckpoint) -> Int { checkpoint.failedCategoryIDs.count }

    /// In a walk over set-aside categories cut short: those it has not fetched again yet too.
    public func stillSetAside(in checkpoint: FeedzillaCheckpoint) -> Int {
        guard checkpoint.retrying, let ids = checkpoint.categoryIDs else { return checkpoint.failedCategoryIDs.count }
        return checkpoint.failedCategoryIDs.count + max(0, ids.count - checkpoint.doneCount)
    }

    /// A finished walk that set categories aside: a walk over those alone.
    public func retryCheckpoint(after finished: FeedzillaCheckpoint) -> FeedzillaCheckpoint? {
        guard finished.isFinished, !finished.failedCategoryIDs.isEmpty else { return nil }
        var retry = FeedzillaCheckpoint()
        retry.categoryIDs = finished.failedCategoryIDs
        retry.retrying = true
        return retry
    }

    public func nextRequest(after checkpoint: FeedzillaCheckpoint) -> SourceRequest? {
        guard let ids = checkpoint.categoryIDs else {
            return SourceRequest(url: baseURL + "/categories.json", label: Self.categoriesLabel)
        }
        guard checkpoint.doneCount < ids.count else { return nil }
        let id = ids[checkpoint.doneCount]
        return SourceRequest(
            url: baseURL + "/categories/\(id)/articles.json?count=\(articlesPerCategory)", label: "category \(id)")
    }

    public func process(_ body: [UInt8], for request: SourceRequest, at checkpoint: FeedzillaCheckpoint)
        throws(NewsMappingError) -> SourcePage<FeedzillaCheckpoint>
    {
        var next = checkpoint
        guard let ids = checkpoint.categoryIDs else {
            // A category that cannot be mapped is quarantined; the others are fetched.
            let list = try Feedzilla.parseCategoryList(body)
            // A category listed twice is fetched once (its first listing's place).
            var seen: Set<Int> = []
            let listed = list.categories.map(\.id).filter { seen.insert($0).inserted }
            // A category asked for that the API does not list: said, not skipped in silence.
            if let wanted = categoryFilter {
                let unknown = wanted.filter { !listed.contains($0) }.sorted()
                if !unknown.isEmpty { throw NewsMappingError(.unknownCategories(unknown, listed: listed.count)) }
            }
            next.categoryIDs = categoryFilter.map { wanted in listed.filter(wanted.contains) } ?? listed
            return SourcePage(articles: [], categories: list.categories, rejects: list.rejects, queryTag: nil, checkpoint: next)
        }
        let id = ids[checkpoint.doneCount]
        let page = try Feedzilla.parseArticleList(body, categoryID: id)
        next.doneCount += 1
        return SourcePage(
            articles: page.articles, lists: [page.list], rawDocuments: page.rawDocuments, rejects: page.rejects,
            queryTag: Self.queryTag(categoryID: id), checkpoint: next)
    }
}
