import Foundation

/// Parsing of a Feedzilla-style category API (`/v1/categories.json`,
/// `/v1/categories/{id}/articles.json`).
public enum Feedzilla {
    /// Parses `/v1/categories.json`: a bare JSON array of categories. `""` names become `nil`.
    /// Strict: one category that cannot be mapped fails the whole list (``parseCategoryList(_:)``
    /// keeps the others).
    ///
    /// - Throws: ``NewsMappingError`` naming the path (`[4].category_id`), or for an HTML/error body.
    public static func parseCategories(_ body: [UInt8]) throws(NewsMappingError) -> [Category] {
        let list = try parseCategoryList(body)
        if let reject = list.rejects.first { throw reject.error }
        return list.categories
    }

    /// Parses `/v1/categories.json` category by category: one that cannot be mapped (no
    /// `category_id`, a name that is not a string, nesting deeper than the parser's limit) is a
    /// reject (`[4].category_id`), and the others are still returned.
    ///
    /// - Throws: ``NewsMappingError`` for a body that is not a list: not JSON, truncated, HTML, an
    ///   error object, or not an array.
    public static func parseCategoryList(_ body: [UInt8]) throws(NewsMappingError) -> FeedzillaCategoryList {
        let (root, setAside) = try ResponseBody.parseSettingAsideBadValues(body)
        if case .object(let object) = root { try ResponseBody.rejectErrorShapes(object) }
        guard case .array(let elements) = root else { throw .mismatch("array", root) }
        var list = FeedzillaCategoryList()
        list.categories.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            let location: [JSONPathComponent] = [.index(index)]
            let raw = if case .object(let object) = element { Array(body[object.byteRange]) } else { element.jsonBytes }
            if let error = setAside.error(inDocumentAt: location) {
                list.rejects.append(DocumentReject(index: index, error: error, rawDocument: raw))
                continue
            }
            do throws(NewsMappingError) {
                if let category = try categoryMapping.map(element) { list.categories.append(category) }
            } catch {
                list.rejects.append(DocumentReject(index: index, error: error.prefixed(by: location), rawDocument: raw))
            }
        }
        try setAside.requireInside([])
        return list
    }

    /// Parses a category's article list into the list, its articles and the stories that could
    /// not be mapped.
    ///
    /// Article identity ignores a Feedzilla story URL's query string (which echoes the request)
    /// and its category segment, so the same story fetched in two categories or by two requests is
    /// one article (see ``storyID(forURL:)``); the stored `url` has that query removed. A story
    /// listed twice appears once. Each story is mapped on its own: one without a `url`, or with a value
    /// of a type that makes no sense, or nesting deeper than the parser's limit, is a reject
    /// (`articles[2].publish_date`), and the rest of the list is still returned.
    ///
    /// - Throws: ``NewsMappingError`` for a body that is not a list: not JSON, truncated, HTML, an
    ///   error object, no `articles`, or `articles` that is not an array.
    public static func parseArticleList(_ body: [UInt8], categoryID: Int) throws(NewsMappingError) -> FeedzillaPage {
        let (root, setAside) = try ResponseBody.parseSettingAsideBadValues(body)
        guard case .object(let object) = root else { throw .mismatch("object", root) }
        try ResponseBody.rejectErrorShapes(object)
        let m = JSONMapper(object: object)
        var page = FeedzillaPage(list: ArticleList(id: listID(categoryID: categoryID)))
        // A story listed twice: its last copy is kept, in its first place in the list (the rule of
        // NYT pages, of later categories and of `quire load`: the last seen wins).
        // By the id's bytes, as the store tells ids apart (`String` equality merges canonically
        // equivalent ones, and one of two stories was lost).
        var place: [[UInt8]: Int] = [:]
        switch object["articles"] {
        case nil:
            throw NewsMappingError(.missingField, at: [.key("articles")])
        case .null?:
            break
        case .array(let elements)?:
            for (index, element) in elements.enumerated() {
                let location: [JSONPathComponent] = [.key("articles"), .index(index)]
                let raw: [UInt8] = if case .object(let story) = element { Array(body[story.byteRange]) } else { element.jsonBytes }
                if let error = setAside.error(inDocumentAt: location) {
                    page.rejects.append(DocumentReject(index: index, error: error, rawDocument: raw))
                    continue
                }
                do throws(NewsMappingError) {
                    guard let article = try articleMapping.map(element) else { throw NewsMappingError(.missingField) }
                    if let earlier = place[Array(article.id.utf8)] {
                        page.articles[earlier] = article
                        page.rawDocuments[earlier] = raw
                    } else {
                        place[Array(article.id.utf8)] = page.articles.count
                        page.articles.append(article)
                        page.rawDocuments.append(raw)
                    }
                } catch {
                    page.rejects.append(DocumentReject(index: index, error: error.prefixed(by: location), rawDocument: raw))
                }
            }
        case let other?:
            throw NewsMappingError.mismatch("array", other).prefixed(by: [.key("articles")])
        }
        try setAside.requireInside([.key("articles")])
        // The list's own fields are optional: a bad one is left out rather than losing the stories.
        page.list.title = (try? m(.string("title"))).flatMap { $0.map(cleanTitle) } ?? nil
        page.list.url = (try? m(.string("syndication_url"))) ?? nil
        page.list.articleDescription = (try? m(.string("description"))).flatMap { $0.map(NewsText.plainTextFromEncodedHTML) } ?? nil
        page.list.articleIDs = page.articles.map(\.id)
        return page
    }

    /// A title as readers expect it: references decoded, markup removed, trimmed.
    static func cleanTitle(_ text: String) -> String? {
        let clean = NewsText.trimmed(NewsText.plainTextFromEncodedHTML(text))
        return clean.isEmpty ? nil : clean
    }

    /// The identity of a category's article list: `feedzilla:category:<id>`.
    public static func listID(categoryID: Int) -> String { "feedzilla:category:\(categoryID)" }

    /// A story URL as stored: without its fragment, and for a Feedzilla story URL
    /// (`…/stories/<category>/<story>?<echo>`) without the query string that echoes the request.
    /// Any other URL keeps its query: `story.php?id=1` and `story.php?id=2` are two stories.
    public static func canonicalURL(_ url: String) -> String {
        let whole = url.firstIndex(of: "#").map { url[..<$0] } ?? Substring(url)
        guard let query = whole.firstIndex(of: "?") else { return String(whole) }
        return storySegment(ofURL: whole[..<query]) != nil ? String(whole[..<query]) : String(whole)
    }

    /// The stable article id of a story URL.
    ///
    /// Feedzilla story URLs look like `http://news.feedzilla.com/en_us/stories/<category>/<story>?<echo>`:
    /// the id is `feedzilla:<story>`, the last path segment, so neither the echoed query nor the
    /// category matters. Other URLs give `feedzilla:<host><path>[?<query>]` without scheme or
    /// fragment (host lowercased, a trailing `/` of the path dropped), so `http` and `https`,
    /// `WWW.X.COM` and `www.x.com` give one id.
    public static func storyID(forURL url: String) -> String {
        let canonical = Substring(canonicalURL(NewsText.trimmed(url)))
        if let story = storySegment(ofURL: canonical) { return "feedzilla:\(story)" }
        let query = canonical.firstIndex(of: "?").map { canonical[$0...] } ?? ""
        var rest = canonical[..<(canonical.firstIndex(of: "?") ?? canonical.endIndex)]
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = rest[..<slash].lowercased()
        var path = rest[slash...]
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return "feedzilla:\(host)\(path)\(query)"
    }

    /// The story segment of a Feedzilla story URL (`…/stories/<category>/<story>`, query ignored),
    /// or nil; a URL that ends at the category (no story) is not taken for the category's one story.
    static func storySegment(ofURL url: Substring) -> Substring? {
        let beforeQuery = url[..<(url.firstIndex(of: "?") ?? url.endIndex)]
        var rest = beforeQuery
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        let path = rest[(rest.firstIndex(of: "/") ?? rest.endIndex)...]
        let segments = path.split(separator: "/")
        guard let stories = segments.lastIndex(of: "stories"), segments.count - stories >= 3 else { return nil }
        return segments.last
    }

    /// `{category_id, display_category_name, english_category_name, url_category_name}`.
    public static let categoryMapping = JSONMapping<Category> { m throws(NewsMappingError) in
        Category(
            id: try m(.required(["category_id"], .int(lenient: true))),
            displayName: try m(.string("display_category_name")),
            englishName: try m(.string("english_category_name")),
            urlName: try m(.string("url_category_name")))
    }

    /// The member of a story that gives its identity (``storyID(forURL:)``).
    static let storyURLKey = "url"

    /// `{publish_date, source, source_url, summary, title, url, author?, enclosures?}`.
    public static let articleMapping = JSONMapping<Article> { m throws(NewsMappingError) in
        let url = try m(.required([JSONKeyPath(storyURLKey)], .identifier))
        return Article(
            id: storyID(forURL: url),
            url: canonicalURL(NewsText.trimmed(url)),
            headline: try m(.string("title")).flatMap(cleanTitle),
            // A summary of markup alone (`&lt;p&gt;&lt;/p&gt;`) is none, as an empty one is.
            abstract: try m(.string("summary")).map(NewsText.plainTextFromEncodedHTML).flatMap {
                $0.allSatisfy(\.isWhitespace) ? nil : $0
            },
            source: try m(.string("source")),
            sourceURL: try m(.string("source_url")),
            publishedAt: try m(.date("publish_date")),
            byline: try m(.string("author")),
            multimedia: try m(.array("enclosures", of: enclosureMapping)))
    }

    /// `enclosures[]`: `{uri, media_type, length?}`; an enclosure without `uri` is left out.
    public static let enclosureMapping = JSONMapping<Media> { m throws(NewsMappingError) in
        guard let uri = try m(.string("uri")) else { return nil }
        return Media(url: uri, kind: try m(.string("media_type")))
    }
}

/// The parsed Feedzilla category list.
public struct FeedzillaCategoryList: Sendable, Hashable {
    /// The categories that mapped, in list order.
    public var categories: [Category] = []
    /// The categories that could not be mapped, in list order.
    public var rejects: [DocumentReject] = []
}

/// One parsed Feedzilla category page.
public struct FeedzillaPage: Sendable, Hashable {
    /// The category's list; its `articleIDs` are those of ``articles``.
    public var list: ArticleList
    /// The stories that mapped, each once, in list order.
    public var articles: [Article]
    /// Each mapped story's exact JSON bytes, parallel to ``articles``.
    public var rawDocuments: [[UInt8]]
    /// The stories that could not be mapped.
    public var rejects: [DocumentReject]

    /// Creates a page.
    public init(list: ArticleList, articles: [Article] = [], rawDocuments: [[UInt8]] = [], rejects: [DocumentReject] = []) {
        self.list = list
        self.articles = articles
        self.rawDocuments = rawDocuments
        self.rejects = rejects
    }
}
