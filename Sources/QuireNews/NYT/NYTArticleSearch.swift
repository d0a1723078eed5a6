/// Parsing of NYT Article Search API v2 responses (`/svc/search/v2/articlesearch.json`).
public enum NYTArticleSearch {
    /// Parses one response body into a page of articles.
    ///
    /// The body is judged by its shape, not by its HTTP status: an HTML page, a gateway `fault`
    /// (401 invalid key, 429 rate limit) and a `"status": "ERROR"` body (400) are typed errors.
    /// `response.docs` may be `null` (an empty page); the counters are read from `response.meta`
    /// or, since 2025, `response.metadata`.
    ///
    /// Each document is mapped on its own: one that cannot be mapped (no `_id`, `uri` or
    /// `web_url`; a value of a type that makes no sense) becomes a ``DocumentReject`` naming its
    /// JSON path, such as `response.docs[3].pub_date`, and the others are still returned; so does
    /// one nesting deeper than the parser's limit. Only a broken envelope throws.
    ///
    /// - Throws: ``NewsMappingError`` for a body that is not a page: not JSON, truncated, HTML, an
    ///   API error object, no `response`, or `docs` that is not an array.
    public static func parsePage(_ body: [UInt8]) throws(NewsMappingError) -> NYTPage {
        let (root, setAside) = try ResponseBody.parseSettingAsideBadValues(body)
        guard case .object(let rootObject) = root else { throw .mismatch("object", root) }
        try ResponseBody.rejectErrorShapes(rootObject)

        guard let responseValue = rootObject["response"], responseValue != .null else {
            throw NewsMappingError(.missingField, at: [.key("response")])
        }
        guard case .object(let response) = responseValue else {
            throw NewsMappingError.mismatch("object", responseValue).prefixed(by: [.key("response")])
        }
        let docsPath: [JSONPathComponent] = [.key("response"), .key("docs")]
        var articles: [Article] = []
        var rawDocuments: [[UInt8]] = []
        var rejects: [DocumentReject] = []
        switch response["docs"] {
        case nil:
            throw NewsMappingError(.missingField, at: docsPath)
        case .null?:
            break
        case .array(let docs)?:
            articles.reserveCapacity(docs.count)
            rawDocuments.reserveCapacity(docs.count)
            for (index, doc) in docs.enumerated() {
                let location = docsPath + [.index(index)]
                if let error = setAside.error(inDocumentAt: location) {
                    let raw = if case .object(let object) = doc { Array(body[object.byteRange]) } else { doc.jsonBytes }
                    rejects.append(DocumentReject(index: index, error: error, rawDocument: raw))
                    continue
                }
                guard case .object(let object) = doc else {
                    rejects.append(DocumentReject(
                        index: index, error: NewsMappingError.mismatch("object", doc).prefixed(by: location),
                        rawDocument: doc.jsonBytes))
                    continue
                }
                let raw = Array(body[object.byteRange])
                do throws(NewsMappingError) {
                    // The article mapping never skips a document: `id` is required.
                    guard let article = try articleMapping.map(object) else { throw NewsMappingError(.missingField) }
                    articles.append(article)
                    rawDocuments.append(raw)
                } catch {
                    rejects.append(DocumentReject(index: index, error: error.prefixed(by: location), rawDocument: raw))
                }
            }
        case let other?:
            throw NewsMappingError.mismatch("array", other).prefixed(by: docsPath)
        }
        try setAside.requireInside(docsPath)

        // The counters only guide paging: one of another type is unknown, not a page that fails
        // (and is retried) for good.
        let counters = JSONMapper(object: response)
        let hits = (try? counters(.optional(["meta.hits", "metadata.hits"], .int(lenient: true)))) ?? nil
        let offset = (try? counters(.optional(["meta.offset", "metadata.offset"], .int(lenient: true)))) ?? nil
        return NYTPage(articles: articles, hits: hits, offset: offset, rawDocuments: rawDocuments, rejects: rejects)
    }
}
