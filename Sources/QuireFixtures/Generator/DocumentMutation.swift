import QuireNews

/// Odd shapes the real APIs send for single documents (API_NOTES §3, §6) and random damage, applied
/// by the ``FixtureAPI`` to a seeded fraction of the documents it serves.
///
/// Each mutation knows what a correct client makes of it: the document is still mappable (and
/// under which id), or it must be quarantined with the JSON path of the failure. The API logs that
/// expectation for every document it serves (``FixtureAPI/servedDocuments``), so a test can check a
/// whole fetch against it.
public enum DocumentMutation: String, CaseIterable, Sendable, Hashable {
    /// `headline` removed (multimedia documents have none): stored without a headline.
    case noHeadline
    /// `pub_date` removed (topic pages and lists): stored without a date.
    case noPublicationDate
    /// `headline.main` empty beside a `print_headline`: stored with the print headline.
    case emptyMainHeadline
    /// `_id` and `uri` removed (an `fl=` response): stored under its `web_url`.
    case noIDButWebURL
    /// `_id`, `uri` and `web_url` all removed: quarantined (no identity).
    case noIdentity
    /// An id of 700 bytes: stored under it, whole.
    case longID
    /// ESC, CR, BEL and DEL inside the headline and abstract: stored, every character kept.
    case controlCharacters
    /// An abstract of 200,000 characters: stored, nothing truncated.
    case hugeValue
    /// Optional strings `null` or `""`: stored with those values absent.
    case nullsAndEmptyStrings
    /// `pub_date` a number: quarantined at `pub_date`.
    case numericDate
    /// `multimedia` a string: quarantined at `multimedia`.
    case stringMultimedia
    /// `word_count` a word: quarantined at `word_count`.
    case wordyWordCount
    /// The document replaced by a string: quarantined at the document itself.
    case notAnObject
    /// A member nesting arrays and objects 2,000 deep (past any parser's limit): quarantined at
    /// that member, the rest of the page stored.
    case deepNesting
    /// Feedzilla: `url` removed: quarantined (no identity).
    case feedzillaNoURL
    /// Feedzilla: `publish_date` not a date: quarantined at `publish_date`.
    case feedzillaBadDate
    /// Feedzilla: the title entity-encoded HTML with markup: stored as plain text.
    case feedzillaEncodedTitle

    /// The mutations for NYT documents.
    public static let nyt: [DocumentMutation] = allCases.filter { !$0.rawValue.hasPrefix("feedzilla") }
    /// The mutations for Feedzilla stories.
    public static let feedzilla: [DocumentMutation] = [
        .feedzillaNoURL, .feedzillaBadDate, .feedzillaEncodedTitle, .controlCharacters, .hugeValue, .notAnObject,
        .deepNesting,
    ]

    /// The JSON key (relative to the document) a correct client names when it quarantines the
    /// document, or `nil` when the document stays mappable. `""` is the document itself.
    public var rejectedAt: String? {
        switch self {
        case .noIdentity: "web_url"
        case .numericDate: "pub_date"
        case .stringMultimedia: "multimedia"
        case .wordyWordCount: "word_count"
        case .notAnObject: ""
        case .deepNesting: "related"
        case .feedzillaNoURL: "url"
        case .feedzillaBadDate: "publish_date"
        default: nil
        }
    }

    /// The headline and abstract a `controlCharacters` document carries.
    public static let controlHeadline = "Breaking\u{1B}]0;owned\u{07} news\u{1B}[2J\rnow\u{7F}"
    /// The abstract a `controlCharacters` document carries.
    public static let controlAbstract = "line one\r\nline two\u{1B}[31m red\u{1B}[0m\u{00}end"

    /// Applies the mutation to one rendered document; `id` is its NYT id (for ``longID``).
    func apply(to document: FixtureJSON, random: inout SplitMix64) -> FixtureJSON {
        guard case .object(var members) = document else { return document }
        func set(_ key: String, _ value: FixtureJSON) {
            if let i = members.firstIndex(where: { $0.0 == key }) { members[i].1 = value } else { members.append((key, value)) }
        }
        func remove(_ keys: String...) { members.removeAll { keys.contains($0.0) } }
        switch self {
        case .noHeadline: remove("headline")
        case .noPublicationDate: remove("pub_date")
        case .emptyMainHeadline:
            set("headline", .object([("main", .string("")), ("kicker", .null), ("print_headline", .string("  The Printed Headline "))]))
        case .noIDButWebURL: remove("_id", "uri")
        case .noIdentity: remove("_id", "uri", "web_url")
        case .longID:
            let long = "nyt://article/" + String(repeating: "long-", count: 137) + String(random.next(), radix: 16)
            remove("uri")
            set("_id", .string(long))
        case .controlCharacters:
            if members.contains(where: { $0.0 == "title" }) {
                set("title", .string(Self.controlHeadline))
                set("summary", .string(Self.controlAbstract))
            } else {
                set("headline", .object([("main", .string(Self.controlHeadline))]))
                set("abstract", .string(Self.controlAbstract))
            }
        case .hugeValue:
            let text = String(repeating: "A very long abstract, sentence after sentence. ", count: 4_256)
            set(members.contains(where: { $0.0 == "summary" }) ? "summary" : "abstract", .string(text))
        case .nullsAndEmptyStrings:
            set("abstract", .null)
            set("snippet", .string(""))
            set("lead_paragraph", .null)
            set("news_desk", .string(""))
            set("section_name", .null)
        case .numericDate: set("pub_date", .int(1_562_000_000))
        case .stringMultimedia: set("multimedia", .string("images/2019/01/01/photo.jpg"))
        case .wordyWordCount: set("word_count", .string("many"))
        case .notAnObject: return .string("<document withdrawn>")
        case .deepNesting:
            // Brackets and quotes inside strings too, so that skipping the value must read them as text.
            let level = #"{"k\"]}":["[{\"",1.5e3,"#
            let nested = String(repeating: level, count: 1_000) + "null" + String(repeating: "]}", count: 1_000)
            set("related", .verbatim(nested))
        case .feedzillaNoURL: remove("url")
        case .feedzillaBadDate: set("publish_date", .string("yesterday at noon"))
        case .feedzillaEncodedTitle:
            set("title", .string("&lt;b&gt;Caf&eacute; &amp; Bar&lt;/b&gt; opens &#8212; &ldquo;finally&rdquo;"))
        }
        return .object(members)
    }

    /// The id a correct client stores the mutated document under (or, for one it quarantines, the
    /// id it still names), or `nil` when it has none.
    static func storedID(of document: FixtureJSON, api: String) -> String? {
        ArticleIdentity.id(ofDocument: document.bytes(style: .init()), mapping: api)
    }
}

/// Which documents the ``FixtureAPI`` damages.
public struct DocumentMutationPlan: Sendable, Hashable {
    /// Seeds the choice of documents and mutations.
    public var seed: UInt64
    /// The share of documents mutated, in percent.
    public var percent: Int
    /// The mutations to draw from (each equally likely).
    public var nyt: [DocumentMutation]
    /// The mutations drawn for Feedzilla stories.
    public var feedzilla: [DocumentMutation]

    /// A plan mutating `percent` % of the documents with every kind of mutation.
    public init(
        seed: UInt64, percent: Int = 25, nyt: [DocumentMutation] = DocumentMutation.nyt,
        feedzilla: [DocumentMutation] = DocumentMutation.feedzilla
    ) {
        self.seed = seed
        self.percent = percent
        self.nyt = nyt
        self.feedzilla = feedzilla
    }
}

/// One document the ``FixtureAPI`` served, and what a correct client makes of it.
public struct ServedDocument: Sendable, Hashable {
    /// `nyt` or `feedzilla`.
    public var api: String
    /// The request's path and query (without the key).
    public var request: String
    /// The document's index in its page.
    public var index: Int
    /// The mutation applied, if any.
    public var mutation: DocumentMutation?
    /// For a mappable document, the id it is stored under.
    public var storedID: String?
    /// For a document to quarantine, the key of the failure relative to the document.
    public var rejectedAt: String?
    /// For a document to quarantine, the article id it still names (`ArticleIdentity`), if any:
    /// a later page that stores that article retires its quarantined copy.
    public var namedID: String?
}
