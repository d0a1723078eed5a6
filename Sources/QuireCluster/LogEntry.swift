public import Foundation
import QuireCodec
public import QuireFetch
public import QuireNews

/// One entry of the replicated log: a fetched page, or one part of a page too large for one
/// entry. Every part of a page is written in the same etcd transaction as the source's new
/// checkpoint, so a replica sees all of them at one revision or none.
///
/// Stored as QuireCodec's standalone form (field names included), zstd-compressed.
public struct LogEntry: Codable, Sendable, Hashable {
    /// The source whose checkpoint the page advanced.
    public var source: String
    /// The checkpoint key's version after the page: 1 for the source's first page, 2 for the
    /// next… Unique per source, so two entries with one version would be one page committed twice.
    public var version: Int64
    /// This part's index, from 0.
    public var part: Int
    /// How many parts the page has.
    public var parts: Int
    /// The request the page answers (`page 3 of …`).
    public var label: String
    /// The mapping the documents need (`nyt`, `feedzilla`).
    public var mappingKind: String
    /// The query tag of the page's articles.
    public var queryTag: String?
    /// When the page was fetched.
    public var fetchedAt: Date
    /// The source's checkpoint after the page (the same in every part).
    public var checkpoint: Data
    /// This part's articles.
    public var articles: [Article]
    /// This part's article lists.
    public var lists: [ArticleList]
    /// This part's categories (a category list's page; nil in entries written before they were kept).
    public var categories: [QuireNews.Category]?
    /// This part's quarantined documents.
    public var rejects: [RejectedDocument]
    /// How many log entries the etcd transaction that wrote this one put (every part of every
    /// page it committed), so a replica can tell a revision it read whole from one cut by its
    /// read limit; nil means ``parts``.
    public var transactionEntries: Int?

    /// Creates an entry.
    public init(
        source: String, version: Int64, part: Int, parts: Int, label: String, mappingKind: String, queryTag: String?,
        fetchedAt: Date, checkpoint: Data, articles: [Article], lists: [ArticleList],
        categories: [QuireNews.Category]? = nil, rejects: [RejectedDocument], transactionEntries: Int? = nil
    ) {
        self.categories = categories
        self.source = source
        self.version = version
        self.part = part
        self.parts = parts
        self.label = label
        self.mappingKind = mappingKind
        self.queryTag = queryTag
        self.fetchedAt = fetchedAt
        self.checkpoint = checkpoint
        self.articles = articles
        self.lists = lists
        self.rejects = rejects
        self.transactionEntries = transactionEntries
    }

    /// The entries of the transaction that wrote this one.
    var entriesInTransaction: Int { transactionEntries ?? parts }

    /// The page as the store's fetch sink writes it.
    public var page: FetchedPage {
        FetchedPage(
            sourceID: source, articles: articles, lists: lists, categories: categories ?? [], pageLabel: label,
            mappingKind: mappingKind,
            queryTag: queryTag, checkpoint: checkpoint, fetchedAt: fetchedAt)
    }

    /// The compressed bytes stored in etcd.
    public func encoded() throws -> [UInt8] {
        LogCompression.compress(try CompactEncoder().encodeStandalone(self))
    }

    /// Decodes an entry read from etcd.
    public static func decode(_ bytes: [UInt8]) throws(ClusterError) -> LogEntry {
        let plain = try LogCompression.decompress(bytes)
        do {
            return try CompactDecoder().decodeStandalone(LogEntry.self, from: plain)
        } catch {
            throw ClusterError(.corruptLogEntry, "a log entry does not decode: \(error)")
        }
    }

    /// `page` cut into entries of at most `maxBytes` compressed bytes each (halving the
    /// articles until each part fits).
    ///
    /// - Throws: ``ClusterError/Code/pageTooLarge`` when one article alone exceeds `maxBytes`.
    static func entries(of page: FetchedPage, version: Int64, maxBytes: Int) throws -> [[UInt8]] {
        let rejects = page.rejects.map { RejectedDocument($0, of: page) }
        func entry(_ articles: ArraySlice<Article>, first: Bool) -> LogEntry {
            LogEntry(
                source: page.sourceID, version: version, part: 0, parts: 1, label: page.pageLabel,
                mappingKind: page.mappingKind, queryTag: page.queryTag, fetchedAt: page.fetchedAt,
                checkpoint: page.checkpoint, articles: Array(articles), lists: first ? page.lists : [],
                categories: first && !page.categories.isEmpty ? page.categories : nil, rejects: first ? rejects : [])
        }
        // Lists, categories and rejects ride with the first part; articles are split.
        var pieces: [LogEntry] = []
        var pending: [(ArraySlice<Article>, Bool)] = [(page.articles[...], true)]
        while let (articles, first) = pending.popLast() {
            let candidate = entry(articles, first: first)
            if try candidate.encoded().count <= maxBytes {
                pieces.append(candidate)
            } else if articles.count > 1 {
                let middle = articles.startIndex + articles.count / 2
                // Pushed in reverse so the first half is popped (and ordered) first.
                pending.append((articles[middle...], false))
                pending.append((articles[..<middle], first))
            } else {
                throw ClusterError(
                    .pageTooLarge,
                    "\(page.pageLabel) of \(page.sourceID): one record exceeds \(maxBytes) bytes compressed")
            }
        }
        return try pieces.enumerated().map { index, piece in
            var piece = piece
            piece.part = index
            piece.parts = pieces.count
            piece.transactionEntries = pieces.count
            return try piece.encoded()
        }
    }
}
