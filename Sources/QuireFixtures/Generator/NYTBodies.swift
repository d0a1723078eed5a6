import Foundation
public import QuireNews

/// A whole NYT Article Search response body for `articles` in `era`'s exact shape.
///
/// `page` sets `meta.offset` (`page * 10`); `hits` is written as given. In `era2025` an empty page
/// is `"docs": null`. See ``NYTEra`` for each era's quirks and ``nytRoundTrip(_:era:)`` for what
/// survives the trip.
public func nytPageBody(articles: [Article], hits: Int, page: Int, era: NYTEra) -> [UInt8] {
    nytPageBody(documents: articles.map { nytDocument($0, era: era) }, hits: hits, page: page, era: era)
}

/// A page body around already rendered documents (some possibly mutated).
func nytPageBody(documents docs: [FixtureJSON], hits: Int, page: Int, era: NYTEra) -> [UInt8] {
    let counters = FixtureJSON.object([("hits", .int(hits)), ("offset", .int(page * 10)), ("time", .int(17 + page))])
    let response: FixtureJSON
    let copyright: String
    var style = FixtureJSON.Style()
    switch era {
    case .era2012:
        copyright = "Copyright (c) 2013 The New York Times Company.  All Rights Reserved."
        response = .object([("meta", counters), ("docs", .array(docs)), ("facets", .array([]))])
    case .era2016:
        copyright = "Copyright (c) 2013 The New York Times Company.  All Rights Reserved."
        style.escapeSlashes = true
        style.escapeNonASCII = true
        response = .object([("meta", counters), ("docs", .array(docs))])
    case .era2019:
        copyright = "Copyright (c) 2019 The New York Times Company. All Rights Reserved."
        style.escapeNonASCII = true
        response = .object([("docs", .array(docs)), ("meta", counters)])
    case .era2025:
        copyright = "Copyright (c) 2025 The New York Times Company. All Rights Reserved."
        response = .object([("docs", docs.isEmpty ? .null : .array(docs)), ("metadata", counters)])
    }
    let root = FixtureJSON.object([("status", .string("OK")), ("copyright", .string(copyright)), ("response", response)])
    return root.bytes(style: style)
}

/// One `response.docs[]` element in `era`'s shape.
func nytDocument(_ a: Article, era: NYTEra) -> FixtureJSON {
    let staticPrefix = "https://static01.nyt.com/"
    func relative(_ url: String) -> String { url.hasPrefix(staticPrefix) ? String(url.dropFirst(staticPrefix.count)) : url }
    func date(_ style: NewsDate.Style) -> FixtureJSON {
        a.publishedAt.map { .string(NewsDate.format($0, offsetMinutes: 0, style: style)) } ?? .null
    }
    func person(_ name: String, rank: Int, era2019: Bool) -> FixtureJSON {
        let parts = name.split(separator: " ").map(String.init)
        let middle = parts.count > 2 ? parts[1..<(parts.count - 1)].joined(separator: " ") : nil
        var members: [(String, FixtureJSON)] = [
            ("firstname", .string(parts.first ?? name)), ("middlename", .text(middle)),
            ("lastname", parts.count > 1 ? .string(parts.last!) : .null),
        ]
        if era2019 { members += [("qualifier", .null), ("title", .null)] }
        members += [("role", .string("reported")), ("organization", .string("")), ("rank", .int(rank))]
        return .object(members)
    }
    let media = a.multimedia ?? []
    var doc: [(String, FixtureJSON)] = []
    switch era {
    case .era2012:
        doc = [
            ("web_url", .text(a.url)), ("snippet", .string(a.snippet ?? "")),
            ("lead_paragraph", .string(a.leadParagraph ?? "")), ("abstract", .string(a.abstract ?? "")),
            ("print_page", .text(a.printPage)), ("blog", .array([])), ("source", .text(a.source)),
            ("multimedia", .array(media.map { (m: Media) -> FixtureJSON in
                .object([
                    ("width", m.width.map { FixtureJSON.int($0) } ?? .null), ("url", .string(relative(m.url))),
                    ("height", m.height.map { FixtureJSON.int($0) } ?? .null),
                    ("subtype", .text(m.kind)), ("type", .string("image")),
                    ("legacy", .object([("hasthumbnail", .string("Y")), ("thumbnailheight", .int(75)), ("thumbnailwidth", .int(75))])),
                ])
            })),
            ("headline", .object([("main", .string(a.headline ?? ""))] + (a.kicker.map { [("kicker", FixtureJSON.string($0))] } ?? []))),
            ("keywords", .array((a.keywords ?? []).map { (k: Keyword) -> FixtureJSON in
                .object((k.rank.map { [("rank", FixtureJSON.string(String($0)))] } ?? []) + [("name", .string(k.name)), ("value", .string(k.value))])
            })),
            ("pub_date", date(.iso8601Z)), ("document_type", .text(a.documentType)), ("news_desk", .text(a.newsDesk)),
            ("section_name", .text(a.section)),
            ("byline", a.byline.map { .object([("person", .array([.object([("organization", .string("")), ("role", .string("reported")), ("rank", .int(1))])])), ("original", .string($0))]) } ?? .null),
            ("type_of_material", .text(a.typeOfMaterial)), ("_id", .string(a.id)),
            ("word_count", a.wordCount.map { FixtureJSON.int($0) } ?? .null),
        ]
    case .era2016:
        let authors = a.authors ?? []
        let byline: FixtureJSON = a.byline == nil && authors.isEmpty
            ? .array([])
            : .object([("person", .array(authors.enumerated().map { (i: Int, n: String) -> FixtureJSON in person(n, rank: i + 1, era2019: false) })), ("original", .text(a.byline))])
        doc = [
            ("web_url", .text(a.url)), ("snippet", .string(a.snippet ?? "")), ("lead_paragraph", .text(a.leadParagraph)),
            ("abstract", .text(a.abstract)), ("print_page", .text(a.printPage)), ("blog", .array([])),
            ("source", .text(a.source)),
            ("multimedia", .array(media.map { (m: Media) -> FixtureJSON in
                let name = m.kind ?? "image"
                return .object([
                    ("width", m.width.map { FixtureJSON.int($0) } ?? .null), ("url", .string(relative(m.url))),
                    ("height", m.height.map { FixtureJSON.int($0) } ?? .null), ("subtype", .text(m.kind)),
                    ("legacy", .object([
                        (name, .string(relative(m.url))), ("\(name)width", .string(m.width.map { String($0) } ?? "")),
                        ("\(name)height", .string(m.height.map { String($0) } ?? "")),
                    ])),
                    ("type", .string("image")),
                ])
            })),
            ("headline", .object([("main", .string(a.headline ?? "")), ("content_kicker", .null), ("kicker", .text(a.kicker)), ("print_headline", .text(a.headline))])),
            ("keywords", .array((a.keywords ?? []).map { (k: Keyword) -> FixtureJSON in
                .object((k.rank.map { [("rank", FixtureJSON.string(String($0)))] } ?? []) + [("is_major", .string("N")), ("name", .string(k.name)), ("value", .string(k.value))])
            })),
            ("pub_date", date(.iso8601Z)), ("document_type", .text(a.documentType)), ("news_desk", .text(a.newsDesk)),
            ("section_name", .text(a.section)), ("subsection_name", .text(a.subsection)), ("byline", byline),
            ("type_of_material", .text(a.typeOfMaterial)), ("_id", .string(a.id)),
            ("word_count", a.wordCount.map { .string(String($0)) } ?? .null), ("slideshow_credits", .null),
        ]
    case .era2019:
        let authors = a.authors ?? []
        doc = [
            ("_id", .string(a.id)), ("abstract", .string(a.abstract ?? "")), ("blog", .array([])),
            ("byline", .object([
                ("original", .text(a.byline)),
                ("person", .array(authors.enumerated().map { (i: Int, n: String) -> FixtureJSON in person(n, rank: i + 1, era2019: true) })),
                ("organization", .null),
            ])),
            ("document_type", .text(a.documentType)),
            ("headline", .object([
                ("main", .string(a.headline ?? "")), ("kicker", .text(a.kicker)), ("content_kicker", .null),
                ("print_headline", .text(a.headline)), ("name", .null), ("seo", .null), ("sub", .null),
            ])),
            ("keywords", .array((a.keywords ?? []).map { (k: Keyword) -> FixtureJSON in
                .object([("name", .string(k.name)), ("value", .string(k.value))] + (k.rank.map { [("rank", FixtureJSON.int($0))] } ?? []) + [("major", .string("N"))])
            })),
            ("lead_paragraph", .string(a.leadParagraph ?? "")),
            ("multimedia", .array(media.enumerated().map { (index: Int, m: Media) -> FixtureJSON in
                .object([
                    ("rank", .int(0)), ("subtype", .text(m.kind)), ("caption", .null), ("credit", .null),
                    ("type", .string("image")), ("url", .string(relative(m.url))),
                    ("height", m.height.map { FixtureJSON.int($0) } ?? .null), ("width", m.width.map { FixtureJSON.int($0) } ?? .null),
                    ("legacy", index % 2 == 0 ? FixtureJSON.object([]) : FixtureJSON.array([])), ("subType", .text(m.kind)), ("crop_name", .text(m.kind)),
                ])
            })),
            ("news_desk", .string(a.newsDesk ?? "")), ("print_page", .text(a.printPage)), ("print_section", .text(a.printSection)),
            ("pub_date", date(.iso8601Offset)), ("section_name", .text(a.section)), ("snippet", .string(a.snippet ?? "")),
            ("source", .text(a.source)), ("subsection_name", .text(a.subsection)), ("type_of_material", .text(a.typeOfMaterial)),
            ("uri", .string(a.id)), ("web_url", .text(a.url)), ("word_count", a.wordCount.map { FixtureJSON.int($0) } ?? .null),
        ]
    case .era2025:
        let (main, thumbnail) = renditions2025(media)
        func rendition(_ m: Media?) -> FixtureJSON {
            .object([("url", .string(m?.url ?? "")), ("height", .int(m?.height ?? 0)), ("width", .int(m?.width ?? 0))])
        }
        let seconds = Int(a.publishedAt?.timeIntervalSince1970 ?? 0)
        doc = [
            ("abstract", .string(a.abstract ?? "")),
            ("byline", .object([("original", .text(a.byline))])),
            ("document_type", .text(a.documentType)),
            ("headline", .object([("main", .string(a.headline ?? "")), ("kicker", .string(a.kicker ?? "")), ("print_headline", .text(a.headline))])),
            ("_id", .string(a.id)),
            ("keywords", .array((a.keywords ?? []).map { (k: Keyword) -> FixtureJSON in
                .object([("name", .string(k.name)), ("value", .string(k.value))] + (k.rank.map { [("rank", FixtureJSON.int($0))] } ?? []))
            })),
            ("multimedia", .object([
                ("caption", .string(main?.caption ?? "")), ("credit", .string(main?.credit ?? "")),
                ("default", rendition(main)), ("thumbnail", rendition(thumbnail)),
            ])),
            ("news_desk", .string(a.newsDesk ?? "")), ("print_page", .text(a.printPage)), ("print_section", .text(a.printSection)),
            ("pub_date", date(seconds % 2 == 0 ? .iso8601Z : .iso8601OffsetColon)), ("section_name", .text(a.section)),
            ("snippet", .string(a.snippet ?? "")), ("source", .text(a.source)), ("subsection_name", .string(a.subsection ?? "")),
            ("type_of_material", .text(a.typeOfMaterial)), ("uri", .string(a.id)), ("web_url", .text(a.url)),
            ("word_count", a.wordCount.map { FixtureJSON.int($0) } ?? .null),
        ]
        if let lead = a.leadParagraph { doc.append(("lead_paragraph", .string(lead))) }
    }
    if a.publishedAt == nil { doc.removeAll { $0.0 == "pub_date" } }
    return .object(doc)
}

/// The error bodies the NYT API sends (API_NOTES §4), with their HTTP status.
public enum NYTErrorBody: CaseIterable, Sendable {
    /// 401, `{"fault":{"faultstring":"Invalid ApiKey",…}}`.
    case invalidKey
    /// 401, the key parameter is missing.
    case missingKey
    /// 429, rate limit (note the double space in "limit  exceeded", as captured).
    case rateLimited
    /// 400, `{"status":"ERROR",…,"errors":[…]}`.
    case badRequest
    /// 403, an HTML page.
    case forbiddenHTML
    /// 500, a Spring Boot error object.
    case serverError

    /// The HTTP status the API pairs with this body.
    public var status: Int {
        switch self {
        case .invalidKey, .missingKey: 401
        case .rateLimited: 429
        case .badRequest: 400
        case .forbiddenHTML: 403
        case .serverError: 500
        }
    }

    /// The body bytes.
    public var body: [UInt8] {
        let text: String
        switch self {
        case .invalidKey:
            text = #"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#
        case .missingKey:
            text = #"{"fault":{"faultstring":"Failed to resolve API Key variable request.queryparam.api-key","detail":{"errorcode":"steps.oauth.v2.FailedToResolveAPIKey"}}}"#
        case .rateLimited:
            text = #"{"fault":{"faultstring":"Rate limit quota violation. Quota limit  exceeded. Identifier : 4b0b7a5e-6a8f-4c1e-9d3a-2f1e0c9b8a77","detail":{"errorcode":"policies.ratelimit.QuotaViolation"}}}"#
        case .badRequest:
            text = #"{"status":"ERROR","copyright":"Copyright (c) 2024 The New York Times Company. All Rights Reserved.","errors":["error in fq: Cannot parse 'section_name:(\"Sports'"]}"#
        case .forbiddenHTML:
            text = "<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n</body>\r\n</html>\r\n"
        case .serverError:
            text = #"{"timestamp":1497458226546,"status":500,"error":"Internal Server Error","exception":"java.lang.NullPointerException","message":"No message available","path":"/svc/add/v1/articlesearch.json"}"#
        }
        return Array(text.utf8)
    }
}
