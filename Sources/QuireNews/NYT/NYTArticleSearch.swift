/// Parsing of NYT Article Search API v2 responses (`/svc/search/v2/articlesearch.json`).
public enum NYTArticleSearch {
    /// Parses one response body into a page of articles.
    ///
    /// The body is judged by its shape, not by its HTTP status: an HTML page, a gateway `fault`
    /// (401 invalid key, 429 rate limit) and a `"status": "ERROR"` body (400) are typed errors.
    /// `response.docs` may be `null` (an empty page); the counters are read from `response.meta`
    /// or, since 2025, `response.metadata`.
    ///
    /// All or nothing: if any document fails, the whole page throws and no article is returned.
    ///
    /// - Throws: ``NewsMappingError`` naming the JSON path, such as `response.docs[3].pub_date`.
    public static func parsePage(_ body: [UInt8]) throws(NewsMappingError) -> NYTPage {
        let root = try ResponseBody.parse(body)
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
        switch response["docs"] {
        case nil:
            throw NewsMappingError(.missingField, at: docsPath)
        case .null?:
            break
        case .array(let docs)?:
            articles.reserveCapacity(docs.count)
            rawDocuments.reserveCapacity(docs.count)
            for (index, doc) in docs.enumerated() {
                guard case .object(let object) = doc else {
                    throw NewsMappingError.mismatch("object", doc).prefixed(by: docsPath + [.index(index)])
                }
                do throws(NewsMappingError) {
                    // The article mapping never skips a document: `id` and `url` are required.
                    guard let article = try articleMapping.map(object) else {
                        throw NewsMappingError(.missingField)
                    }
                    articles.append(article)
                } catch {
                    throw error.prefixed(by: docsPath + [.index(index)])
                }
                rawDocuments.append(Array(body[object.byteRange]))
            }
        case let other?:
            throw NewsMappingError.mismatch("array", other).prefixed(by: docsPath)
        }

        let counters = JSONMapper(object: response)
        var hits: Int?
        var offset: Int?
        do throws(NewsMappingError) {
            hits = try counters(.optional(["meta.hits", "metadata.hits"], .int(lenient: true)))
            offset = try counters(.optional(["meta.offset", "metadata.offset"], .int(lenient: true)))
        } catch {
            throw error.prefixed(by: [.key("response")])
        }
        return NYTPage(articles: articles, hits: hits, offset: offset, rawDocuments: rawDocuments)
    }
}
