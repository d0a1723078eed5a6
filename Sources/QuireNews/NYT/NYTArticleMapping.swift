import Foundation

/// The declarative mapping of one `response.docs[]` element, covering every era (2012 → 2025).
extension NYTArticleSearch {
    /// Maps a document object to an ``Article``.
    ///
    /// | property | key path | tolerance |
    /// |---|---|---|
    /// | `id` | `_id`, else `uri`, else `web_url` | required (else the document is quarantined), byte-exact |
    /// | `url` | `web_url` | absent in `fl=` responses that leave it out |
    /// | `headline` | `headline.main`, else `headline.print_headline`, `headline.seo`, `headline.name` | trimmed, highlight tags removed, character references (`&rsquo;`) decoded; a bare string accepted |
    /// | `kicker`, `abstract`, `leadParagraph` | `headline.kicker`, `abstract`, `lead_paragraph` | character references decoded |
    /// | `snippet` | `snippet` | highlight tags (`hl=true`) removed, character references decoded |
    /// | `printPage` | `print_page` | string or number |
    /// | `wordCount` | `word_count` | number or numeric string |
    /// | `publishedAt` | `pub_date` | `Z`, `+0000`, `+00:00`, fractions; missing on topic pages |
    /// | `byline`, `authors` | `byline.original`, `byline.person[]`, `byline.organization` | `byline` may be `[]`; without `original`, derived from the persons (with their `qualifier`; a person that is only an `organization` by it) or the organization |
    /// | `keywords` | `keywords[]` | `rank` string or number; values' character references decoded |
    /// | `multimedia` | `multimedia` | array (relative urls) or the 2025 object |
    public static let articleMapping = JSONMapping<Article> { m throws(NewsMappingError) in
        typealias R = ArticleRules
        return Article(
            id: try m(R.id), url: try m(R.url), headline: try m(R.headline), kicker: try m(R.kicker),
            abstract: try m(R.abstract), snippet: try m(R.snippet), leadParagraph: try m(R.leadParagraph),
            source: try m(R.source), publishedAt: try m(R.publishedAt), section: try m(R.section),
            subsection: try m(R.subsection), newsDesk: try m(R.newsDesk), printSection: try m(R.printSection),
            printPage: try m(R.printPage), documentType: try m(R.documentType), typeOfMaterial: try m(R.typeOfMaterial),
            wordCount: try m(R.wordCount), byline: try m(R.byline), authors: try m(R.authors),
            keywords: try m(R.keywords), multimedia: try m(R.multimedia))
    }

    /// The rules of ``articleMapping``, built once (key paths are split and transformers composed
    /// here, not for every document on the fetch path).
    enum ArticleRules {
        /// Where a document's id is, in order (also read from quarantined documents: ``ArticleIdentity``).
        static let idPaths: [JSONKeyPath] = ["_id", "uri", "web_url"]
        static let id: MappingRule<String> = .required(idPaths, .identifier)
        static let url: MappingRule<String?> = .string("web_url")
        static let headline = MappingRule<String?> { m throws(NewsMappingError) in
            if case .string(let text)? = try m.raw("headline") { return cleanHeadline(text) }
            // Some documents leave `main` and `print_headline` null and name the story only in
            // the headline's SEO or name fields: a stored article without any headline is worse.
            for path: JSONKeyPath in ["headline.main", "headline.print_headline", "headline.seo", "headline.name"] {
                if let text = try m(headlineText(path)) { return text }
            }
            return nil
        }
        static let kicker = MappingRule<String?> { m throws(NewsMappingError) in
            if case .string? = try m.raw("headline") { return nil }
            return try m(text("headline.kicker"))
        }
        static let abstract: MappingRule<String?> = text("abstract")
        static let snippet: MappingRule<String?> = .optional(
            ["snippet"],
            ValueTransformer.string.map { text in nonEmpty(NewsText.decodingEntities(NewsText.removingHighlightTags(text))) })
        static let leadParagraph: MappingRule<String?> = text("lead_paragraph")
        static let source: MappingRule<String?> = .string("source")
        static let publishedAt: MappingRule<Date?> = .date("pub_date")
        static let section: MappingRule<String?> = .string("section_name")
        static let subsection: MappingRule<String?> = .string("subsection_name")
        static let newsDesk: MappingRule<String?> = .string("news_desk")
        static let printSection: MappingRule<String?> = .string("print_section", lenient: true)
        static let printPage: MappingRule<String?> = .string("print_page", lenient: true)
        static let documentType: MappingRule<String?> = .string("document_type")
        static let typeOfMaterial: MappingRule<String?> = .string("type_of_material")
        static let wordCount: MappingRule<Int?> = .int("word_count", lenient: true)
        static let authors = MappingRule<[String]?> { m throws(NewsMappingError) in
            if case .string? = try m.raw("byline") { return nil }
            if let people = try m(.array("byline.person", of: personNameMapping)) { return people }
            guard let organization = try m(.string("byline.organization")) else { return nil }
            return [organization]
        }
        static let byline = MappingRule<String?> { m throws(NewsMappingError) in
            if case .string(let text)? = try m.raw("byline") { return nonEmpty(NewsText.trimmed(text)) }
            if let original = try m(.string("byline.original")) { return original }
            guard let names = try m(authors) else { return nil }
            return derivedByline(names)
        }

        static func headlineText(_ path: JSONKeyPath) -> MappingRule<String?> {
            .optional([path], ValueTransformer.string.map { cleanHeadline($0) })
        }

        /// Trimmed, without `hl=true` highlighting, character references decoded; `nil` when
        /// nothing is left.
        static func cleanHeadline(_ text: String) -> String? {
            nonEmpty(NewsText.trimmed(NewsText.decodingEntities(NewsText.removingHighlightTags(text))))
        }

        /// Text a reader sees, with HTML character references decoded (`&rsquo;` in captions,
        /// API_NOTES §3): an entity's name is no word of the article, and searching for `’`
        /// should find it.
        static func text(_ path: JSONKeyPath) -> MappingRule<String?> {
            .optional([path], ValueTransformer.string.map { nonEmpty(NewsText.decodingEntities($0)) })
        }

        static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

        /// A byline as the NYT prints one: `By A`, `By A and B`, `By A, B and C`.
        static func derivedByline(_ names: [String]) -> String? {
            guard let last = names.last else { return nil }
            let head = names.dropLast()
            return "By " + (head.isEmpty ? last : head.joined(separator: ", ") + " and " + last)
        }
        static let keywords: MappingRule<[Keyword]?> = .array("keywords", of: keywordMapping)
        static let multimedia: MappingRule<[Media]?> = .optional(["multimedia"], multimediaTransformer)
    }

    /// `keywords[]`: `{name, value, rank?}` with `rank` a string (before 2018) or a number.
    /// A keyword without a name or value carries nothing and is left out.
    public static let keywordMapping = JSONMapping<Keyword> { m throws(NewsMappingError) in
        guard let name = try m(.string("name")), let value = try m(.string("value")) else { return nil }
        // Values are text a reader sees (`Caf&eacute; Culture`), decoded like the headline.
        return Keyword(name: name, value: NewsText.decodingEntities(value), rank: try m(.int("rank", lenient: true)))
    }

    /// `byline.person[]`: first, middle and last names and the qualifier (`Jr.`) joined by single
    /// spaces; a person without any name is its `organization` (2012 bylines list an agency as a
    /// person: `Reuters`), and without either it is left out.
    public static let personNameMapping = JSONMapping<String> { m throws(NewsMappingError) in
        let parts = [
            try m(.string("firstname")), try m(.string("middlename")), try m(.string("lastname")),
            try m(.string("qualifier")),
        ].compactMap { $0 }.filter { !$0.isEmpty }
        if !parts.isEmpty { return parts.joined(separator: " ") }
        guard let organization = try m(.string("organization")), !organization.isEmpty else { return nil }
        return organization
    }

    /// One image of the array shape (2012 → early 2025); an image without `url` is left out.
    public static let mediaItemMapping = JSONMapping<Media> { m throws(NewsMappingError) in
        guard let url = try m(.absoluteURL("url")) else { return nil }
        return Media(
            url: url,
            width: try m(.int("width", lenient: true)),
            height: try m(.int("height", lenient: true)),
            caption: try m(ArticleRules.text("caption")),
            credit: try m(ArticleRules.text("credit")),
            kind: try m(.optional(["subtype", "subType", "crop_name", "type"], .string)))
    }

    /// One rendition (`default`, `thumbnail`) of the 2025 object shape.
    static func renditionMapping(kind: String, caption: String?, credit: String?) -> JSONMapping<Media> {
        JSONMapping { m throws(NewsMappingError) in
            guard let url = try m(.absoluteURL("url")) else { return nil }
            return Media(
                url: url, width: try m(.int("width", lenient: true)), height: try m(.int("height", lenient: true)),
                caption: caption, credit: credit, kind: kind)
        }
    }

    /// `multimedia`: an array of images, or the 2025 object
    /// `{caption, credit, default: {url, height, width}, thumbnail: {…}}`, which maps to a
    /// `default` image (with the caption and credit) and a `thumbnail` image.
    public static let multimediaTransformer = ValueTransformer<[Media]> { value throws(NewsMappingError) in
        switch value {
        case .array:
            return try ValueTransformer<[Media]>.array(of: mediaItemMapping).transform(value)
        case .object(let object):
            let m = JSONMapper(object: object)
            let caption = try m(ArticleRules.text("caption"))
            let credit = try m(ArticleRules.text("credit"))
            var images: [Media] = []
            if let main = try m(.object("default", renditionMapping(kind: "default", caption: caption, credit: credit))) {
                images.append(main)
            }
            if let thumbnail = try m(.object("thumbnail", renditionMapping(kind: "thumbnail", caption: nil, credit: nil))) {
                images.append(thumbnail)
            }
            return images.isEmpty ? nil : images
        default:
            throw .mismatch("array or object", value)
        }
    }
}
