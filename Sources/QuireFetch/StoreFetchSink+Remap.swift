public import Foundation
import Quire
import QuireNews

/// What ``StoreFetchSink/remap(now:progress:)`` did.
public struct RemapSummary: Sendable, Hashable {
    /// Rejects that map now: moved into `articles` and out of the quarantine.
    public var remapped: Int = 0
    /// Rejects that still do not map (their path and message are today's).
    public var stillRejected: Int = 0
    /// Kept raw documents (`--keep-raw`) whose article changed under today's mapping.
    public var rawUpdated: Int = 0
    /// Kept raw documents whose article is already what today's mapping gives.
    public var rawUnchanged: Int = 0
    /// Kept raw documents that today's mapping cannot map (their stored article is kept).
    public var rawFailed: Int = 0
    /// Kept raw documents whose article was changed since it was stored from them (a `quire
    /// load`, a program's `put`): the stored article is kept, not put back to the older document.
    public var rawSuperseded: Int = 0
    /// Kept raw documents read again, whatever came of them.
    public var rawDocuments: Int { rawUpdated + rawUnchanged + rawFailed + rawSuperseded }
    /// Every document mapped again: rejects and raw copies.
    public var documents: Int { remapped + stillRejected + rawDocuments }

    /// An empty summary.
    public init() {}
}

extension StoreFetchSink {
    /// Maps the quarantined documents and the kept raw documents again with today's mappings,
    /// without refetching: rejects that map move into `articles` (with their query's index
    /// entries), the rest stay quarantined; kept raw documents update their articles.
    ///
    /// Idempotent: a second call changes nothing. Runs in transactions of at most 1,000
    /// documents, so memory stays flat and an interruption keeps what was done.
    ///
    /// - Parameters:
    ///   - now: Unused by the mapping; kept for the time of reports.
    ///   - progress: Called after each transaction with the documents (rejects and raw copies)
    ///     mapped again so far.
    /// - Throws: A store error; documents remapped in earlier transactions stay remapped.
    public func remap(now: Date = Date(), progress: (@Sendable (Int) -> Void)? = nil) async throws -> RemapSummary {
        var summary = RemapSummary()
        let rejected = try store.read { snap in
            try snap.count(ofCollectionNamed: Self.rejects.name) > 0 ? snap.values(of: Self.rejects) : []
        }
        for chunk in stride(from: 0, to: rejected.count, by: 1_000).map({ rejected[$0..<min($0 + 1_000, rejected.count)] }) {
            let outcome = try await store.write { txn in
                var outcome = RemapSummary()
                for reject in chunk {
                    switch Self.map(reject) {
                    case .success(let article):
                        try txn.put(article, in: NewsSchema.articles)
                        if let tag = reject.query {
                            try txn.addMembers([.string(article.id)], to: .string(tag), in: NewsSchema.queryArticles)
                            if reject.mapping == "feedzilla" {
                                try Self.addToList(article.id, listID: tag, txn)
                            }
                        }
                        try txn.delete(.string(reject.id), from: Self.rejects)
                        outcome.remapped += 1
                    case .failure(let error):
                        var updated = reject
                        updated.path = error.path
                        updated.message = error.description
                        if updated != reject { try txn.put(updated, in: Self.rejects) }
                        outcome.stillRejected += 1
                    }
                }
                return outcome
            }
            summary.remapped += outcome.remapped
            progress?(summary.documents)
            summary.stillRejected += outcome.stillRejected
            if Task.isCancelled { return summary }
        }
        try await remapRawDocuments(into: &summary, progress: progress)
        return summary
    }

    private func remapRawDocuments(into summary: inout RemapSummary, progress: (@Sendable (Int) -> Void)?) async throws {
        var after: StoreKey?
        while true {
            let (batch, lastKey): ([RawDocument], StoreKey?) = try store.read { snap in
                guard try snap.count(ofCollectionNamed: Self.rawDocuments.name) > 0 else { return ([], nil) }
                var out: [RawDocument] = []
                var lastKey: StoreKey?
                let range = after.map { StoreKeyRange.after($0) } ?? .all
                for record in snap.records(in: Self.rawDocuments, range: range) {
                    let (key, raw) = try record.get()
                    out.append(raw)
                    lastKey = key
                    if out.count >= 1_000 { break }
                }
                return (out, lastKey)
            }
            guard let lastKey else { return }
            after = lastKey
            let outcome = try await store.write { txn in
                var outcome = RemapSummary()
                for raw in batch {
                    let mapping = raw.mapping ?? (raw.id.hasPrefix("feedzilla:") ? "feedzilla" : "nyt")
                    guard case .success(let article) = Self.map(Array(raw.json), mapping: mapping, index: nil) else {
                        outcome.rawFailed += 1
                        continue
                    }
                    let stored = try txn.get(.string(article.id), from: NewsSchema.articles)
                    if stored == article {
                        outcome.rawUnchanged += 1
                    } else if let stored, let digest = raw.articleDigest, ArticleDigest.of(stored) != digest {
                        outcome.rawSuperseded += 1
                    } else {
                        try txn.put(article, in: NewsSchema.articles)
                        var updated = raw
                        updated.articleDigest = ArticleDigest.of(article)
                        try txn.put(updated, in: Self.rawDocuments)
                        outcome.rawUpdated += 1
                    }
                }
                return outcome
            }
            summary.rawUpdated += outcome.rawUpdated
            summary.rawUnchanged += outcome.rawUnchanged
            summary.rawFailed += outcome.rawFailed
            summary.rawSuperseded += outcome.rawSuperseded
            progress?(summary.documents)
            if Task.isCancelled || batch.count < 1_000 { return }
        }
    }

    /// Maps a quarantined document again. A category of Feedzilla's category list is not an
    /// article: it stays quarantined (the categories are listed again by a fetch that starts
    /// over), with today's reason when it still cannot be mapped.
    static func map(_ reject: RejectedDocument) -> Result<Article, NewsMappingError> {
        guard reject.mapping == "feedzilla", reject.page == FeedzillaSource.categoriesLabel else {
            return map(Array(reject.raw), mapping: reject.mapping, index: reject.index)
        }
        let location: [JSONPathComponent] = [.index(reject.index)]
        do throws(NewsMappingError) {
            _ = try Feedzilla.categoryMapping.decode(Array(reject.raw))
            let reason = "a category, not an article: quire fetch feedzilla --restart lists it again"
            return .failure(NewsMappingError(.invalidValue(reason), at: location))
        } catch {
            return .failure(error.prefixed(by: location))
        }
    }

    /// Maps one document with the mapping its source needs; errors located as in its page.
    static func map(_ raw: [UInt8], mapping: String, index: Int?) -> Result<Article, NewsMappingError> {
        let location: [JSONPathComponent] =
            mapping == "feedzilla"
            ? [.key("articles")] + (index.map { [.index($0)] } ?? [])
            : [.key("response"), .key("docs")] + (index.map { [.index($0)] } ?? [])
        let articleMapping = mapping == "feedzilla" ? Feedzilla.articleMapping : NYTArticleSearch.articleMapping
        do throws(NewsMappingError) {
            return .success(try articleMapping.decode(raw))
        } catch {
            return .failure(error.prefixed(by: location))
        }
    }

    /// Adds `id` to a stored Feedzilla list (its record and its relation), once.
    private static func addToList(_ id: String, listID: String, _ txn: borrowing StoreTransaction) throws {
        guard var list = try txn.get(.string(listID), from: NewsSchema.lists) else { return }
        if !list.articleIDs.contains(id) {
            list.articleIDs.append(id)
            try txn.put(list, in: NewsSchema.lists)
        }
        try txn.addMembers([.string(id)], to: .string(listID), in: NewsSchema.listArticles)
    }
}
