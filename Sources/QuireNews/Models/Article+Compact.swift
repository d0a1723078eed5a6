public import QuireCodec
import Foundation

/// The compact fast path: the bytes of the synthesized `Codable` conformance, without its containers,
/// except that the enumeration-like fields are written as interned strings (read back equal).
extension Article: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance (the stored properties' order).
    /// The enumeration-like fields (a few dozen values across a whole archive) are interned.
    public static let compactKeys = CompactKeySet(
        [
            "id", "url", "headline", "kicker", "abstract", "snippet", "leadParagraph", "source", "sourceURL",
            "publishedAt", "section", "subsection", "newsDesk", "printSection", "printPage", "documentType",
            "typeOfMaterial", "wordCount", "byline", "authors", "keywords", "multimedia",
        ],
        interned: ["source", "section", "subsection", "newsDesk", "printSection", "documentType", "typeOfMaterial"])

    /// Positions in ``compactKeys``.
    private enum Keys {
        static let id: CompactKey = 0
        static let url: CompactKey = 1
        static let headline: CompactKey = 2
        static let kicker: CompactKey = 3
        static let abstract: CompactKey = 4
        static let snippet: CompactKey = 5
        static let leadParagraph: CompactKey = 6
        static let source: CompactKey = 7
        static let sourceURL: CompactKey = 8
        static let publishedAt: CompactKey = 9
        static let section: CompactKey = 10
        static let subsection: CompactKey = 11
        static let newsDesk: CompactKey = 12
        static let printSection: CompactKey = 13
        static let printPage: CompactKey = 14
        static let documentType: CompactKey = 15
        static let typeOfMaterial: CompactKey = 16
        static let wordCount: CompactKey = 17
        static let byline: CompactKey = 18
        static let authors: CompactKey = 19
        static let keywords: CompactKey = 20
        static let multimedia: CompactKey = 21
    }

    public func warm(_ writer: inout CompactObjectWriter) {
        writer.warm(id)
        writer.warm(url)
        writer.warm(headline)
        writer.warm(kicker)
        writer.warm(abstract)
        writer.warm(snippet)
        writer.warm(leadParagraph)
        writer.warm(source)
        writer.warm(sourceURL)
        writer.warm(section)
        writer.warm(subsection)
        writer.warm(newsDesk)
        writer.warm(printSection)
        writer.warm(printPage)
        writer.warm(documentType)
        writer.warm(typeOfMaterial)
        writer.warm(byline)
        writer.warm(authors)
    }

    public func encode(to writer: inout CompactObjectWriter) throws {
        writer.write(id, for: Keys.id)
        writer.writeIfPresent(url, for: Keys.url)
        writer.writeIfPresent(headline, for: Keys.headline)
        writer.writeIfPresent(kicker, for: Keys.kicker)
        writer.writeIfPresent(abstract, for: Keys.abstract)
        writer.writeIfPresent(snippet, for: Keys.snippet)
        writer.writeIfPresent(leadParagraph, for: Keys.leadParagraph)
        writer.writeIfPresent(source, for: Keys.source)
        writer.writeIfPresent(sourceURL, for: Keys.sourceURL)
        writer.writeIfPresent(publishedAt, for: Keys.publishedAt)
        writer.writeIfPresent(section, for: Keys.section)
        writer.writeIfPresent(subsection, for: Keys.subsection)
        writer.writeIfPresent(newsDesk, for: Keys.newsDesk)
        writer.writeIfPresent(printSection, for: Keys.printSection)
        writer.writeIfPresent(printPage, for: Keys.printPage)
        writer.writeIfPresent(documentType, for: Keys.documentType)
        writer.writeIfPresent(typeOfMaterial, for: Keys.typeOfMaterial)
        writer.writeIfPresent(wordCount, for: Keys.wordCount)
        writer.writeIfPresent(byline, for: Keys.byline)
        writer.writeIfPresent(authors, for: Keys.authors)
        try writer.writeIfPresent(keywords, for: Keys.keywords)
        try writer.writeIfPresent(multimedia, for: Keys.multimedia)
    }

    public init(from reader: inout CompactObjectReader) throws {
        var id: String?
        var url: String?
        var headline: String?
        var kicker: String?
        var abstract: String?
        var snippet: String?
        var leadParagraph: String?
        var source: String?
        var sourceURL: String?
        var publishedAt: Date?
        var section: String?
        var subsection: String?
        var newsDesk: String?
        var printSection: String?
        var printPage: String?
        var documentType: String?
        var typeOfMaterial: String?
        var wordCount: Int?
        var byline: String?
        var authors: [String]?
        var keywords: [Keyword]?
        var multimedia: [Media]?
        while let key = try reader.next() {
            switch key {
            case Keys.id: id = try reader.readString()
            case Keys.url: url = try reader.readString()
            case Keys.headline: headline = try reader.readString()
            case Keys.kicker: kicker = try reader.readString()
            case Keys.abstract: abstract = try reader.readString()
            case Keys.snippet: snippet = try reader.readString()
            case Keys.leadParagraph: leadParagraph = try reader.readString()
            case Keys.source: source = try reader.readString()
            case Keys.sourceURL: sourceURL = try reader.readString()
            case Keys.publishedAt: publishedAt = try reader.readDate()
            case Keys.section: section = try reader.readString()
            case Keys.subsection: subsection = try reader.readString()
            case Keys.newsDesk: newsDesk = try reader.readString()
            case Keys.printSection: printSection = try reader.readString()
            case Keys.printPage: printPage = try reader.readString()
            case Keys.documentType: documentType = try reader.readString()
            case Keys.typeOfMaterial: typeOfMaterial = try reader.readString()
            case Keys.wordCount: wordCount = try reader.readInt()
            case Keys.byline: byline = try reader.readString()
            case Keys.authors: authors = try reader.readStrings()
            case Keys.keywords: keywords = try reader.readArray(of: Keyword.self)
            case Keys.multimedia: multimedia = try reader.readArray(of: Media.self)
            default: break
            }
        }
        // One init from locals, built in place (see `InPlace`): filling `self` field by field released
        // each field's old value.
        self.init(
            id: try reader.require(id, Keys.id), url: url, headline: headline,
            kicker: kicker, abstract: abstract, snippet: snippet, leadParagraph: leadParagraph, source: source,
            sourceURL: sourceURL, publishedAt: publishedAt, section: section, subsection: subsection,
            newsDesk: newsDesk, printSection: printSection, printPage: printPage, documentType: documentType,
            typeOfMaterial: typeOfMaterial, wordCount: wordCount, byline: byline, authors: authors,
            keywords: keywords, multimedia: multimedia)
    }
}
