public import QuireCodec
import Foundation

/// The compact fast path: the bytes of the synthesized `Codable` conformance, without its containers,
/// except that the enumeration-like fields are written as interned strings (read back equal).
extension Article: CompactCodable {
    /// Field names in the order of the synthesized `Encodable` conformance (the stored properties' order).
    /// The enumeration-like fields (a few dozen values across a whole archive) are interned.
    public static let compactKeys = CompactKeySet(
        CodingKeys.self, interned: [.source, .section, .subsection, .newsDesk, .printSection, .documentType, .typeOfMaterial])


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
        writer.write(id, for: CompactKey(CodingKeys.id))
        writer.writeIfPresent(url, for: CompactKey(CodingKeys.url))
        writer.writeIfPresent(headline, for: CompactKey(CodingKeys.headline))
        writer.writeIfPresent(kicker, for: CompactKey(CodingKeys.kicker))
        writer.writeIfPresent(abstract, for: CompactKey(CodingKeys.abstract))
        writer.writeIfPresent(snippet, for: CompactKey(CodingKeys.snippet))
        writer.writeIfPresent(leadParagraph, for: CompactKey(CodingKeys.leadParagraph))
        writer.writeIfPresent(source, for: CompactKey(CodingKeys.source))
        writer.writeIfPresent(sourceURL, for: CompactKey(CodingKeys.sourceURL))
        writer.writeIfPresent(publishedAt, for: CompactKey(CodingKeys.publishedAt))
        writer.writeIfPresent(section, for: CompactKey(CodingKeys.section))
        writer.writeIfPresent(subsection, for: CompactKey(CodingKeys.subsection))
        writer.writeIfPresent(newsDesk, for: CompactKey(CodingKeys.newsDesk))
        writer.writeIfPresent(printSection, for: CompactKey(CodingKeys.printSection))
        writer.writeIfPresent(printPage, for: CompactKey(CodingKeys.printPage))
        writer.writeIfPresent(documentType, for: CompactKey(CodingKeys.documentType))
        writer.writeIfPresent(typeOfMaterial, for: CompactKey(CodingKeys.typeOfMaterial))
        writer.writeIfPresent(wordCount, for: CompactKey(CodingKeys.wordCount))
        writer.writeIfPresent(byline, for: CompactKey(CodingKeys.byline))
        writer.writeIfPresent(authors, for: CompactKey(CodingKeys.authors))
        try writer.writeIfPresent(keywords, for: CompactKey(CodingKeys.keywords))
        try writer.writeIfPresent(multimedia, for: CompactKey(CodingKeys.multimedia))
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
            switch CodingKeys(rawValue: key.index) {
            case .id?: id = try reader.readString()
            case .url?: url = try reader.readString()
            case .headline?: headline = try reader.readString()
            case .kicker?: kicker = try reader.readString()
            case .abstract?: abstract = try reader.readString()
            case .snippet?: snippet = try reader.readString()
            case .leadParagraph?: leadParagraph = try reader.readString()
            case .source?: source = try reader.readString()
            case .sourceURL?: sourceURL = try reader.readString()
            case .publishedAt?: publishedAt = try reader.readDate()
            case .section?: section = try reader.readString()
            case .subsection?: subsection = try reader.readString()
            case .newsDesk?: newsDesk = try reader.readString()
            case .printSection?: printSection = try reader.readString()
            case .printPage?: printPage = try reader.readString()
            case .documentType?: documentType = try reader.readString()
            case .typeOfMaterial?: typeOfMaterial = try reader.readString()
            case .wordCount?: wordCount = try reader.readInt()
            case .byline?: byline = try reader.readString()
            case .authors?: authors = try reader.readStrings()
            case .keywords?: keywords = try reader.readArray(of: Keyword.self)
            case .multimedia?: multimedia = try reader.readArray(of: Media.self)
            default: break
            }
        }
        // One init from locals: filling `self` field by field would release each field's old value.
        self.init(
            id: try reader.require(id, CompactKey(CodingKeys.id)), url: url, headline: headline,
            kicker: kicker, abstract: abstract, snippet: snippet, leadParagraph: leadParagraph, source: source,
            sourceURL: sourceURL, publishedAt: publishedAt, section: section, subsection: subsection,
            newsDesk: newsDesk, printSection: printSection, printPage: printPage, documentType: documentType,
            typeOfMaterial: typeOfMaterial, wordCount: wordCount, byline: byline, authors: authors,
            keywords: keywords, multimedia: multimedia)
    }
}
