import Foundation
import Quire
import QuireNews

/// The fetch service's sink on a Quire store: each page's articles, lists, query index
/// entries, raw documents, rejected documents and the source's checkpoint commit in one
/// transaction, so a process killed at any instant resumes at the first uncommitted page with
/// nothing lost or doubled.
///
/// It is also the offline reader: what a query fetched stays readable when the network fails.
public struct StoreFetchSink: FetchSink, OfflineReader {
    /// The store written to.
    public let store: Store
    /// Keep each fetched document's JSON (zstd-compressed) for re-mapping later without refetching.
    public let retainRawDocuments: Bool

    // The sink's own collections are package-only: a write into them would reset the
    // exactly-once state (a checkpoint, the daily quota); the quarantine reads through
    // `rejectedDocuments()`.

    /// The source checkpoints, by source id.
    package static let sources = StoreCollection<SourceState>(name: "sources", key: { .string($0.sourceID) })
    /// When each query tag was last fetched.
    package static let tags = StoreCollection<TagState>(name: "tags", key: { .string($0.tag) })
    /// Raw fetched documents by article id, compressed.
    package static let rawDocuments = StoreCollection<RawDocument>(
        name: "raw", key: { .string($0.id) }, compressed: true)

    /// Documents that could not be mapped (the quarantine), by ``RejectedDocument/id``.
    package static let rejects = StoreCollection<RejectedDocument>(
        name: "rejects", key: { .string($0.id) }, compressed: true)

    /// The requests of the last day by budget (API host), so the daily quota survives restarts.
    package static let budgets = StoreCollection<RequestBudget>(name: "budgets", key: { .string($0.id) })

    /// A sink on `store`; registers the news schema and the sink's own collections.
    public init(store: Store, retainRawDocuments: Bool = false) throws {
        self.store = store
        self.retainRawDocuments = retainRawDocuments
        try NewsSchema.register(in: store)
        try store.register(Self.sources)
        try store.register(Self.tags)
        try store.register(Self.rawDocuments)
        try store.register(Self.rejects)
        try store.register(Self.budgets)
    }

    public func requestTimes(budget: String) async throws -> [Date] {
        try store.read { try $0.get(.string(budget), from: Self.budgets) }?.times ?? []
    }

    public func recordRequests(_ times: [Date], budget: String) async throws {
        try await store.write { txn in try Self.record(times, budget: budget, in: txn) }
    }

    /// Merges `times` into the stored budget (another process may have written its own since).
    private static func record(_ times: [Date], budget: String, in txn: borrowing StoreTransaction) throws {
        let stored = try txn.get(.string(budget), from: budgets)
        try txn.put(RequestBudget(id: budget, times: RequestBudget.merged(stored?.times ?? [], times)), in: budgets)
    }

    public func checkpoint(for sourceID: String) async throws -> Data? {
        try store.read { try $0.get(.string(sourceID), from: Self.sources) }?.checkpoint
    }

    public func commit(_ page: FetchedPage) async throws -> PageCommit {
        let retain = retainRawDocuments
        let rejects = page.rejects.map { RejectedDocument($0, of: page) }
        return try await store.write { txn in
            try Self.write(page, rejects: rejects, retainRawDocuments: retain, in: txn)
        }
    }

    /// Writes `page` (its articles, lists, query index entries, `rejects`, raw documents and
    /// checkpoint) in `txn`: what ``commit(_:)`` does, for callers that add their own records to
    /// the same transaction (a cluster replica adds the log revision it applied).
    ///
    /// The sink's collections must be registered (``init(store:retainRawDocuments:)``).
    public static func write(
        _ page: FetchedPage, rejects: [RejectedDocument], retainRawDocuments retain: Bool,
        in txn: borrowing StoreTransaction
    ) throws -> PageCommit {
        try write(pages: [(page, rejects)], retainRawDocuments: retain, in: txn)
    }

    /// Writes several pages in `txn`, in order, as ``write(_:rejects:retainRawDocuments:in:)``
    /// does one at a time, with the articles of all of them written as one batch (their
    /// full-text postings built at once); a later page's article replaces an earlier one's.
    /// - Returns: the outcome of all the pages together.
    public static func write(
        pages: [(page: FetchedPage, rejects: [RejectedDocument])], retainRawDocuments retain: Bool,
        in txn: borrowing StoreTransaction
    ) throws -> PageCommit {
        var outcome = PageCommit()
        // Before anything is written: a page whose checkpoint another run moved is not stored.
        // (The pages of one batch follow each other.)
        if let first = pages.first?.page, first.follows != nil {
            try CheckpointMoved.check(first, against: try txn.get(.string(first.sourceID), from: Self.sources)?.checkpoint)
        }
        // Each id's last version in the batch (a later page's article replaces an earlier one's),
        // in the order the ids were first seen. By the key's bytes, as the store tells ids apart:
        // Swift's string equality merges canonically equivalent ids (`café` composed and
        // decomposed), and one of the two articles was lost.
        var order: [StoreKey] = []
        var latest: [StoreKey: Article] = [:]
        // The last page of the batch storing each article: a reject of an earlier page is older
        // than what is stored, and not kept (as if the pages had been written one at a time).
        var lastStoring: [StoreKey: Int] = [:]
        for (index, (page, _)) in pages.enumerated() {
            for article in page.articles {
                let key = StoreKey.string(article.id)
                if latest.updateValue(article, forKey: key) == nil { order.append(key) }
                lastStoring[key] = index
            }
        }
        // Compared with what is stored before any of the batch is written: an article fetched
        // again unchanged (a --refresh, an overlapping window) is not written again, which would
        // only rewrite its pages and its postings and add a change to the feed.
        var changed: [Article] = []
        changed.reserveCapacity(order.count)
        for key in order {
            let article = latest[key]!
            if let stored = try txn.get(key, from: NewsSchema.articles) {
                if stored == article {
                    outcome.unchangedArticles += 1
                    continue
                }
                outcome.updatedArticles += 1
            } else {
                outcome.newArticles += 1
            }
            changed.append(article)
        }
        try txn.put(contentsOf: changed, in: NewsSchema.articles)
        outcome.writtenIDs = changed.map(\.id)
        try removeQuarantinedCopies(of: order.map { latest[$0]!.id }, in: txn)
        // An unchanged article's raw copy still maps to what is stored: kept.
        if !retain { try removeRawCopies(of: changed.map(\.id), in: txn) }
        for (index, (page, rejects)) in pages.enumerated() {
            outcome.rejects += rejects.count
            for reject in rejects {
                if let article = RejectedDocument.articleID(ofID: reject.id), let last = lastStoring[.string(article)],
                    last > index
                {
                    continue
                }
                try txn.put(reject, in: Self.rejects)
            }
            for category in page.categories { try txn.put(category, in: NewsSchema.categories) }
            for list in page.lists {
                try txn.put(list, in: NewsSchema.lists)
                try txn.setMembers(list.articleIDs.map { .string($0) }, of: .string(list.id), in: NewsSchema.listArticles)
            }
            if let tag = page.queryTag {
                try txn.addMembers(page.articles.map { .string($0.id) }, to: .string(tag), in: NewsSchema.queryArticles)
                try txn.put(TagState(tag: tag, fetchedAt: page.fetchedAt), in: Self.tags)
            }
            if retain {
                for (article, raw) in zip(page.articles, page.rawDocuments) {
                    try txn.put(
                        RawDocument(
                            id: article.id, json: Data(raw), fetchedAt: page.fetchedAt, mapping: page.mappingKind,
                            articleDigest: ArticleDigest.of(article)),
                        in: Self.rawDocuments)
                }
            }
            if let budget = page.budget { try Self.record(page.requestTimes, budget: budget, in: txn) }
            try txn.put(
                SourceState(sourceID: page.sourceID, checkpoint: page.checkpoint, updatedAt: page.fetchedAt),
                in: Self.sources)
        }
        return outcome
    }

    /// Removes the quarantined copies of articles just stored: they were fetched before, so a
    /// remap must not put them back over what was stored now.
    static func removeQuarantinedCopies(of ids: [String], in txn: borrowing StoreTransaction) throws {
        guard !ids.isEmpty, try txn.count(ofCollectionNamed: rejects.name) > 0 else { return }
        for id in ids {
            let copies = try txn.values(of: rejects, range: .prefix(.string(id + " ")))
                .map(\.id).filter { RejectedDocument.isCopy($0, ofArticle: id) }
            for copy in copies { try txn.delete(.string(copy), from: rejects) }
        }
    }

    /// Removes the raw copies an earlier `--keep-raw` fetch kept of articles just stored without
    /// one: they are older than what was stored now, and a remap would put them back over it.
    /// (With raw copies kept, this page's copies replace them.)
    static func removeRawCopies(of ids: [String], in txn: borrowing StoreTransaction) throws {
        guard !ids.isEmpty, try txn.count(ofCollectionNamed: rawDocuments.name) > 0 else { return }
        for id in ids { _ = try txn.delete(.string(id), from: rawDocuments) }
    }

    public func storedArticles(for queryTag: String) throws -> (articles: [Article], fetchedAt: Date?) {
        try store.read { snap in
            let keys = try snap.members(of: .string(queryTag), in: NewsSchema.queryArticles)
            let articles = try keys.compactMap { try snap.get($0, from: NewsSchema.articles) }
            let fetchedAt = try snap.get(.string(queryTag), from: Self.tags)?.fetchedAt
            return (articles, fetchedAt)
        }
    }

    /// The quarantine: the fetched documents that could not be mapped, by id (what
    /// `quire rejects` lists; ``remap(now:progress:)`` maps them again).
    public func rejectedDocuments() throws -> [RejectedDocument] {
        try store.read { snap in try snap.values(of: Self.rejects) }
    }
}

/// A source's checkpoint as stored.
package struct SourceState: Codable, Sendable, Hashable {
    public var sourceID: String
    /// The encoded checkpoint after the last committed page.
    public var checkpoint: Data
    public var updatedAt: Date
}

/// When a query (or category) tag was last fetched.
package struct TagState: Codable, Sendable, Hashable {
    public var tag: String
    public var fetchedAt: Date
}

/// A fetched document's raw JSON, kept to re-map articles later without refetching.
package struct RawDocument: Codable, Sendable, Hashable {
    /// The article's id.
    public var id: String
    /// The document's JSON, with the API key scrubbed.
    public var json: Data
    /// When it was fetched.
    public var fetchedAt: Date
    /// The mapping it needs (`nyt`, `feedzilla`); `nil` in stores written before it was kept
    /// (then inferred from the id).
    public var mapping: String?
    /// ``ArticleDigest`` of the article stored from it: a remap updates the article only while it
    /// is still that one (a `quire load` of a corrected article was put back by its older
    /// document). `nil` in stores written before it was kept.
    public var articleDigest: String?
}

/// A stable digest of an article's fields (its JSON with sorted keys, hashed as a reject's
/// bytes are, ``RejectedDocument/identity(source:raw:)``): what a kept raw document's remap
/// compares the stored article with.
enum ArticleDigest {
    static func of(_ article: Article) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let bytes = try? encoder.encode(article) else { return nil }
        return RejectedDocument.identity(source: "article", raw: Array(bytes))
    }
}

/// The requests made against one API's quota in the last day.
package struct RequestBudget: Codable, Sendable, Hashable {
    /// The budget: the API host (``FetchSource/budgetID``).
    public var id: String
    /// When each request was made, oldest first.
    public var times: [Date]

    /// The requests of both lists, each once, oldest first, those more than a day older than
    /// the newest left out. Another process fetching from the same API at the same time keeps
    /// its own list: each write merges, so neither overwrites the other's requests (two runs at
    /// once recorded half the requests they made).
    static func merged(_ stored: [Date], _ times: [Date]) -> [Date] {
        let all = Set(stored).union(times).sorted()
        guard let newest = all.last else { return [] }
        let dayBefore = newest.addingTimeInterval(-86_400)
        return all.filter { $0 > dayBefore }
    }
}
