import Foundation

/// Reading a dumped article (one line of `quire dump --format jsonl`) without `JSONDecoder`.
///
/// Several times faster than `JSONDecoder` (no value tree, no key strings, no containers), and
/// stricter where a store needs it: a whole number must be whole (`wordCount: 3.7` is an error,
/// not 3), the id must not be empty, and a member that `Article` does not have is refused, so a
/// dump of another collection is never stored as junk articles. Members may come in any order
/// (the dump's order is read fastest); `null` is the same as an absent member.
extension Article {
    /// The article of one JSON object (one dump line, without its newline).
    ///
    /// - Throws: ``NewsMappingError`` whose `path` names the field (`keywords[2].rank`).
    public init(jsonLine bytes: UnsafeBufferPointer<UInt8>) throws(NewsMappingError) {
        var reader = JSONByteReader(bytes: bytes, maxDepth: 16)
        reader.skipWhitespace()
        if reader.position == bytes.count { throw NewsMappingError(.emptyBody) }
        self = try Article.read(&reader)
        try reader.expectEnd()
    }

    /// The member names as bytes, in declaration order (the dump's order).
    private static let memberNames: [[UInt8]] = CodingKeys.allCases.map { Array($0.stringValue.utf8) }

    static func read(_ reader: inout JSONByteReader) throws(NewsMappingError) -> Article {
        try reader.beginObject()
        var id: String?
        var url: String?, headline: String?, kicker: String?, abstract: String?, snippet: String?
        var leadParagraph: String?, source: String?, sourceURL: String?, publishedAt: Date?, section: String?
        var subsection: String?, newsDesk: String?, printSection: String?, printPage: String?
        var documentType: String?, typeOfMaterial: String?, wordCount: Int?, byline: String?
        var authors: [String]?, keywords: [Keyword]?, multimedia: [Media]?
        var first = true
        var hint = 0
        while let name = try reader.nextMember(first: &first) {
            guard let index = reader.match(name, in: memberNames, hint: hint), let key = CodingKeys(rawValue: index) else {
                throw .unknownField(reader.text(of: name), in: "an article")
            }
            hint = index + 1
            do throws(NewsMappingError) {
                switch key {
                case .id: id = try reader.string()
                case .url: url = try reader.optionalString()
                case .headline: headline = try reader.optionalString()
                case .kicker: kicker = try reader.optionalString()
                case .abstract: abstract = try reader.optionalString()
                case .snippet: snippet = try reader.optionalString()
                case .leadParagraph: leadParagraph = try reader.optionalString()
                case .source: source = try reader.optionalString()
                case .sourceURL: sourceURL = try reader.optionalString()
                case .publishedAt: publishedAt = try reader.optionalDate()
                case .section: section = try reader.optionalString()
                case .subsection: subsection = try reader.optionalString()
                case .newsDesk: newsDesk = try reader.optionalString()
                case .printSection: printSection = try reader.optionalString()
                case .printPage: printPage = try reader.optionalString()
                case .documentType: documentType = try reader.optionalString()
                case .typeOfMaterial: typeOfMaterial = try reader.optionalString()
                case .wordCount: wordCount = try reader.optionalInt()
                case .byline: byline = try reader.optionalString()
                case .authors: authors = try reader.optionalArray { (r) throws(NewsMappingError) in try r.string() }
                case .keywords: keywords = try reader.optionalArray(Keyword.read)
                case .multimedia: multimedia = try reader.optionalArray(Media.read)
                }
            } catch {
                throw error.prefixed(by: [.key(key.stringValue)])
            }
        }
        guard let id else { throw NewsMappingError(.missingField, at: [.key("id")]) }
        // A fetch takes an id of white space only for none (ArticleIdentity): so does a load.
        guard !NewsText.isBlank(id) else {
            throw NewsMappingError(.invalidValue(id.isEmpty ? "the id is empty" : "the id is white space only"), at: [.key("id")])
        }
        return Article(
            id: id, url: url, headline: headline, kicker: kicker, abstract: abstract, snippet: snippet,
            leadParagraph: leadParagraph, source: source, sourceURL: sourceURL, publishedAt: publishedAt,
            section: section, subsection: subsection, newsDesk: newsDesk, printSection: printSection,
            printPage: printPage, documentType: documentType, typeOfMaterial: typeOfMaterial, wordCount: wordCount,
            byline: byline, authors: authors, keywords: keywords, multimedia: multimedia)
    }
}

extension Keyword {
    private static let memberNames: [[UInt8]] = CodingKeys.allCases.map { Array($0.stringValue.utf8) }

    static func read(_ reader: inout JSONByteReader) throws(NewsMappingError) -> Keyword {
        try reader.beginObject()
        var name: String?, value: String?, rank: Int?
        var first = true
        var hint = 0
        while let member = try reader.nextMember(first: &first) {
            guard let index = reader.match(member, in: memberNames, hint: hint), let key = CodingKeys(rawValue: index) else {
                throw .unknownField(reader.text(of: member), in: "a keyword")
            }
            hint = index + 1
            do throws(NewsMappingError) {
                switch key {
                case .name: name = try reader.string()
                case .value: value = try reader.string()
                case .rank: rank = try reader.optionalInt()
                }
            } catch {
                throw error.prefixed(by: [.key(key.stringValue)])
            }
        }
        guard let name else { throw NewsMappingError(.missingField, at: [.key("name")]) }
        guard let value else { throw NewsMappingError(.missingField, at: [.key("value")]) }
        return Keyword(name: name, value: value, rank: rank)
    }
}

extension Media {
    private static let memberNames: [[UInt8]] = CodingKeys.allCases.map { Array($0.stringValue.utf8) }

    static func read(_ reader: inout JSONByteReader) throws(NewsMappingError) -> Media {
        try reader.beginObject()
        var url: String?, width: Int?, height: Int?, caption: String?, credit: String?, kind: String?
        var first = true
        var hint = 0
        while let member = try reader.nextMember(first: &first) {
            guard let index = reader.match(member, in: memberNames, hint: hint), let key = CodingKeys(rawValue: index) else {
                throw .unknownField(reader.text(of: member), in: "an image")
            }
            hint = index + 1
            do throws(NewsMappingError) {
                switch key {
                case .url: url = try reader.string()
                case .width: width = try reader.optionalInt()
                case .height: height = try reader.optionalInt()
                case .caption: caption = try reader.optionalString()
                case .credit: credit = try reader.optionalString()
                case .kind: kind = try reader.optionalString()
                }
            } catch {
                throw error.prefixed(by: [.key(key.stringValue)])
            }
        }
        guard let url else { throw NewsMappingError(.missingField, at: [.key("url")]) }
        return Media(url: url, width: width, height: height, caption: caption, credit: credit, kind: kind)
    }
}
