import Foundation
public import QuireNews

/// `/v1/categories.json`: a bare array; `nil` names are written as `""`, as the API did.
public func feedzillaCategoriesBody(_ categories: [Category]) -> [UInt8] {
    FixtureJSON.array(categories.map { c in
        FixtureJSON.object([
            ("category_id", .int(c.id)), ("display_category_name", .string(c.displayName ?? "")),
            ("english_category_name", .string(c.englishName ?? "")), ("url_category_name", .string(c.urlName ?? "")),
        ])
    }).bytes(style: .init(escapeSlashes: true))
}

/// The Feedzilla story number of an article (stable, derived from its id).
public func feedzillaStoryNumber(_ article: Article) -> Int {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in article.id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
    return 100_000_000 + Int(hash % 900_000_000)
}

/// The story URL Feedzilla gives `article` in category `categoryID` for a request whose query
/// string was `requestQuery` (echoed after `?`).
public func feedzillaStoryURL(_ article: Article, categoryID: Int, requestQuery: String) -> String {
    "http://news.feedzilla.com/en_us/stories/category-\(categoryID)/\(feedzillaStoryNumber(article))"
        + (requestQuery.isEmpty ? "" : "?" + requestQuery)
}

/// `/v1/categories/{id}/articles.json` for `articles`: RFC 822 dates (alternately `+0100` and
/// `+0000`, both honoured), titles with the source appended in parentheses, story URLs that repeat
/// `requestQuery`, slashes escaped as `\/`, images as `enclosures`.
public func feedzillaArticleListBody(categoryID: Int, articles: [Article], requestQuery: String) -> [UInt8] {
    feedzillaArticleListBody(
        categoryID: categoryID, documents: feedzillaStoryDocuments(categoryID: categoryID, articles: articles, requestQuery: requestQuery))
}

/// A category body around already rendered stories (some possibly mutated).
func feedzillaArticleListBody(categoryID: Int, documents items: [FixtureJSON]) -> [UInt8] {
    let root = FixtureJSON.object([
        ("articles", .array(items)),
        ("description", .string("Feedzilla: news in category \(categoryID)")),
        ("syndication_url", .string("http://www.feedzilla.com/rss/category-\(categoryID)")),
        ("title", .string("Feedzilla - Category \(categoryID)")),
    ])
    return root.bytes(style: .init(escapeSlashes: true))
}

/// Each article as a story object of a category list.
func feedzillaStoryDocuments(categoryID: Int, articles: [Article], requestQuery: String) -> [FixtureJSON] {
    articles.enumerated().map { (index: Int, a: Article) -> FixtureJSON in
        var members: [(String, FixtureJSON)] = []
        if let date = a.publishedAt {
            members.append(("publish_date", .string(NewsDate.format(date, offsetMinutes: index % 2 == 0 ? 60 : 0, style: .rfc822))))
        }
        members += [
            ("source", .text(a.source)), ("source_url", .text(a.sourceURL ?? feedzillaSourceURL)),
            ("summary", .string(entityEncoded(a.abstract ?? ""))), ("title", .string(feedzillaTitle(a) ?? "")),
            ("url", .string(feedzillaStoryURL(a, categoryID: categoryID, requestQuery: requestQuery))),
        ]
        if let byline = a.byline { members.append(("author", .string(byline))) }
        if let media = a.multimedia {
            members.append(("enclosures", .array(media.map { m in
                FixtureJSON.object([("media_type", .string("image/jpeg")), ("uri", .string(m.url))])
            })))
        }
        return .object(members)
    }
}

private let feedzillaSourceURL = "http://www.nytimes.com"

/// Text as Feedzilla sent summaries: HTML-escaped, typographic quotes as named references.
func entityEncoded(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\u{2019}": out += "&rsquo;"
        case "\u{201C}": out += "&ldquo;"
        case "\u{201D}": out += "&rdquo;"
        case "é": out += "&eacute;"
        default: out.append(character)
        }
    }
    return out
}

private func feedzillaTitle(_ a: Article) -> String? {
    guard let headline = a.headline else { return nil }
    return a.source.map { "\(headline) (\($0))" } ?? headline
}

/// What ``Feedzilla/parseArticleList(_:categoryID:)`` returns for an article rendered by
/// ``feedzillaArticleListBody(categoryID:articles:requestQuery:)``: the derived id, the story URL
/// without its query, the title with its source suffix, the summary as `abstract`, and images as
/// `image/jpeg` enclosures. NYT-only fields are dropped.
public func feedzillaRoundTrip(_ article: Article, categoryID: Int) -> Article {
    let url = feedzillaStoryURL(article, categoryID: categoryID, requestQuery: "")
    return Article(
        id: "feedzilla:\(feedzillaStoryNumber(article))", url: url,
        headline: feedzillaTitle(article).map { NewsText.trimmed(NewsText.plainTextFromEncodedHTML($0)) },
        abstract: article.abstract.map(NewsText.plainTextFromEncodedHTML), source: article.source, sourceURL: article.sourceURL ?? feedzillaSourceURL,
        publishedAt: article.publishedAt, byline: article.byline,
        multimedia: article.multimedia.map { $0.map { Media(url: $0.url, kind: "image/jpeg") } })
}

/// The list ``Feedzilla/parseArticleList(_:categoryID:)`` returns for that body.
public func feedzillaExpectedList(categoryID: Int, articles: [Article]) -> ArticleList {
    var seen: Set<String> = []
    let ids = articles.map { "feedzilla:\(feedzillaStoryNumber($0))" }.filter { seen.insert($0).inserted }
    return ArticleList(
        id: Feedzilla.listID(categoryID: categoryID), title: "Feedzilla - Category \(categoryID)",
        url: "http://www.feedzilla.com/rss/category-\(categoryID)",
        articleDescription: "Feedzilla: news in category \(categoryID)", articleIDs: ids)
}
