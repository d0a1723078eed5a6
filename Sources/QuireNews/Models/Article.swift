public import Foundation

/// A news article, mapped from any era of the NYT Article Search API or from a Feedzilla-style feed.
///
/// Property names are the field names of the CLI dump, and the synthesized `Codable` conformance
/// omits `nil` values: an absent value is never written as an empty string. The mappings turn the
/// APIs' empty strings and empty arrays into `nil`, trim headlines, remove search highlighting
/// (`<strong>`) from headlines and snippets and decode the entity-encoded HTML of Feedzilla titles
/// and summaries; all other text is kept exactly (nothing truncated, control characters kept).
public struct Article: Codable, Sendable, Hashable {
    /// The identification attribute. NYT: `_id`, else `uri`, else `web_url`, byte-exact
    /// (`nyt://article/<uuid>` or 24 hex digits). Feedzilla: `feedzilla:<story id>`, derived from
    /// the story URL without its query.
    public var id: String
    /// The article's web address (NYT `web_url`; Feedzilla's story URL without the request's
    /// query); absent when the API left it out (an `fl=` response without `web_url`).
    public var url: String?
    /// The main headline (`headline.main`; Feedzilla `title`).
    public var headline: String?
    /// The kicker above the headline (`headline.kicker`).
    public var kicker: String?
    /// The abstract (`abstract`; Feedzilla `summary`).
    public var abstract: String?
    /// The search snippet (`snippet`).
    public var snippet: String?
    /// The first paragraph (`lead_paragraph`).
    public var leadParagraph: String?
    /// The source (`"The New York Times"`, or a Feedzilla publisher).
    public var source: String?
    /// The source's address (Feedzilla `source_url`).
    public var sourceURL: String?
    /// The publication time (`pub_date`; Feedzilla `publish_date`, offsets honoured).
    public var publishedAt: Date?
    /// The section (`section_name`; multi-valued sections stay joined by `"; "`).
    public var section: String?
    /// The subsection (`subsection_name`).
    public var subsection: String?
    /// The news desk (`news_desk`).
    public var newsDesk: String?
    /// The print section (`print_section`).
    public var printSection: String?
    /// The print page, as text (`print_page`, a string or a number depending on the era).
    public var printPage: String?
    /// The document type (`document_type`: `article`, `blogpost`, `multimedia`, `topic`).
    public var documentType: String?
    /// The type of material (`type_of_material`: `News`, `Op-Ed`, ...).
    public var typeOfMaterial: String?
    /// The word count (`word_count`, a string or a number depending on the era).
    public var wordCount: Int?
    /// The byline as printed (`byline.original`; Feedzilla `author`).
    public var byline: String?
    /// The authors' names (`byline.person[]`: first, middle and last names joined by spaces).
    public var authors: [String]?
    /// The keywords.
    public var keywords: [Keyword]?
    /// The images.
    public var multimedia: [Media]?

    /// The coding keys: the one declaration of the fields' names (the case names) and their
    /// compact positions (the raw values), in property order.
    /// The names of an article's fields, as stored and as JSON writes them (`leadParagraph`).
    public static let fieldNames: [String] = CodingKeys.allCases.map(\.stringValue)

    enum CodingKeys: Int, CodingKey, CaseIterable {
        case id, url, headline, kicker, abstract, snippet, leadParagraph, source, sourceURL, publishedAt, section
        case subsection, newsDesk, printSection, printPage, documentType, typeOfMaterial, wordCount, byline
        case authors, keywords, multimedia
    }

    /// Creates an article; only `id` is required.
    public init(
        id: String, url: String? = nil, headline: String? = nil, kicker: String? = nil, abstract: String? = nil,
        snippet: String? = nil, leadParagraph: String? = nil, source: String? = nil, sourceURL: String? = nil,
        publishedAt: Date? = nil, section: String? = nil, subsection: String? = nil, newsDesk: String? = nil,
        printSection: String? = nil, printPage: String? = nil, documentType: String? = nil,
        typeOfMaterial: String? = nil, wordCount: Int? = nil, byline: String? = nil, authors: [String]? = nil,
        keywords: [Keyword]? = nil, multimedia: [Media]? = nil
    ) {
        self.id = id
        self.url = url
        self.headline = headline
        self.kicker = kicker
        self.abstract = abstract
        self.snippet = snippet
        self.leadParagraph = leadParagraph
        self.source = source
        self.sourceURL = sourceURL
        self.publishedAt = publishedAt
        self.section = section
        self.subsection = subsection
        self.newsDesk = newsDesk
        self.printSection = printSection
        self.printPage = printPage
        self.documentType = documentType
        self.typeOfMaterial = typeOfMaterial
        self.wordCount = wordCount
        self.byline = byline
        self.authors = authors
        self.keywords = keywords
        self.multimedia = multimedia
    }
}
