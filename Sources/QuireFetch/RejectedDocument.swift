public import Foundation
import QuireNews

/// A fetched document that could not be mapped, kept in the `rejects` collection (the
/// quarantine) instead of stopping its page.
///
/// It keeps everything needed to map it again later, after the mapping is fixed, without
/// refetching (``StoreFetchSink/remap(now:progress:)``): the raw JSON (with the API key scrubbed) and which
/// mapping it needs. Its id is a hash of the source and the document's bytes, so a page fetched
/// again quarantines the same document once; a document that is not an object (a bare string,
/// which several documents may share) also hashes its page and index. When the document names
/// its article (`ArticleIdentity`), the id starts with the article's id: a later fetch that
/// stores that article finds its quarantined copies and removes them (they are older).
public struct RejectedDocument: Codable, Sendable, Hashable {
    /// `<article id> <hash>` or `<hash>`: the hash of source and bytes is 32 hex digits.
    public var id: String
    /// The source (``FetchSource/sourceID``) whose page held it.
    public var source: String
    /// The mapping it needs: `nyt` or `feedzilla`.
    public var mapping: String
    /// The query tag its page was fetched for, when there is one.
    public var query: String?
    /// The request: `page 3 of 2019-01-01…2019-06-30`, `category 12`.
    public var page: String
    /// Its index among the page's documents.
    public var index: Int
    /// The JSON path of the failure, relative to the response (`response.docs[3].pub_date`).
    public var path: String
    /// Why it could not be mapped.
    public var message: String
    /// The document's JSON.
    public var raw: Data
    /// When it was rejected.
    public var rejectedAt: Date

    /// Creates a reject record.
    public init(
        id: String, source: String, mapping: String, query: String?, page: String, index: Int, path: String,
        message: String, raw: Data, rejectedAt: Date
    ) {
        self.id = id
        self.source = source
        self.mapping = mapping
        self.query = query
        self.page = page
        self.index = index
        self.path = path
        self.message = message
        self.raw = raw
        self.rejectedAt = rejectedAt
    }

    /// The record of `reject`, one of `page`'s documents.
    public init(_ reject: DocumentReject, of page: FetchedPage) {
        let hash = Self.identity(
            source: reject.rawDocument.first == UInt8(ascii: "{")
                ? page.sourceID : "\(page.sourceID)\u{0}\(page.pageLabel)\u{0}\(reject.index)",
            raw: reject.rawDocument)
        let article = ArticleIdentity.id(ofDocument: reject.rawDocument, mapping: page.mappingKind)
        self.init(
            id: article.map { Self.id(ofArticle: $0, hash: hash) } ?? hash,
            source: page.sourceID,
            mapping: page.mappingKind, query: page.queryTag, page: page.pageLabel, index: reject.index,
            path: reject.error.path, message: reject.error.description, raw: Data(reject.rawDocument),
            rejectedAt: page.fetchedAt)
    }

    /// The id of a quarantined copy of article `article` whose bytes hash to `hash`.
    static func id(ofArticle article: String, hash: String) -> String { "\(article) \(hash)" }

    /// Whether `id` is that of a quarantined copy of article `article` (`<article> <32 hex digits>`:
    /// not of another article whose id merely starts with `article` and a space).
    static func isCopy(_ id: String, ofArticle article: String) -> Bool {
        articleID(ofID: id) == article
    }

    /// The article a reject's id names (`<article> <32 hex digits>`), or nil for a plain hash.
    static func articleID(ofID id: String) -> String? {
        let utf8 = Array(id.utf8)
        guard utf8.count > 33, utf8[utf8.count - 33] == UInt8(ascii: " "),
            utf8.suffix(32).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else { return nil }
        return String(decoding: utf8.prefix(utf8.count - 33), as: UTF8.self)
    }

    /// The id of a document from `source` with these bytes: two 64-bit FNV-1a hashes with
    /// different offsets, as 32 hex digits.
    public static func identity(source: String, raw: [UInt8]) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x6c62_272e_07bb_0142
        func mix(_ byte: UInt8) {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = second ^ (second >> 29)
        }
        for byte in source.utf8 { mix(byte) }
        mix(0)
        for byte in raw { mix(byte) }
        return hex(first) + hex(second)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
