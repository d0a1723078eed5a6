/// Why a response body could not be mapped, and where.
///
/// Every failure of the JSON parser, of a page parser or of a user mapping is one of these. `path`
/// names the JSON location, like `response.docs[3].pub_date`; it is the empty string for the root.
/// A page that throws returns nothing: no article of it is mapped partially.
public struct NewsMappingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The API answered with a gateway `fault` object (invalid or missing key: HTTP 401; rate limit: 429).
        case apiFault(message: String, code: String?)
        /// The API answered with `"status": "ERROR"` (bad parameter, HTTP 400) or a server error object.
        case apiError(messages: [String])
        /// The body is an HTML or XML page, not JSON (an old gateway's 403 page, for example).
        case html
        /// The body is empty.
        case emptyBody
        /// The bytes are not valid JSON at `offset`.
        case malformedJSON(offset: Int, reason: String)
        /// The JSON ends before its last value is complete (`offset` is the body's length).
        case truncated(offset: Int)
        /// Arrays and objects nest deeper than the parser's limit, at `offset`.
        case depthLimitExceeded(offset: Int)
        /// The value at `path` has another JSON type than the mapping needs.
        case typeMismatch(expected: String, found: String)
        /// A required value is missing, `null` or empty at `path`.
        case missingField
        /// A required value that may come from any of several keys (an NYT document's `_id`,
        /// else `uri`, else `web_url`: all of them, in order) is missing, `null` or empty at
        /// each; `path` is the last one's, as for ``missingField``.
        case missingAll([String])
        /// The string at `path` is present but is not a date in any accepted form.
        case invalidDate(String)
        /// The value at `path` has the right type but cannot be used (a non-numeric `"word_count"`, say).
        case invalidValue(String)
        /// Categories asked for that the API's category list does not hold (a typo: a later run
        /// that asks the same would fail the same).
        case unknownCategories([Int], listed: Int)
    }

    /// What went wrong.
    public var kind: Kind
    /// The location as path components, outermost first.
    public var pathComponents: [JSONPathComponent]

    /// Creates an error at a location.
    public init(_ kind: Kind, at pathComponents: [JSONPathComponent] = []) {
        self.kind = kind
        self.pathComponents = pathComponents
    }

    /// The JSON location, like `response.docs[3].pub_date` (empty for the root).
    public var path: String { pathComponents.rendered }

    /// The same error, located under `prefix` (used as an error travels out of nested mappings).
    public func prefixed(by prefix: [JSONPathComponent]) -> NewsMappingError {
        NewsMappingError(kind, at: prefix + pathComponents)
    }

    public var description: String {
        let location = path.isEmpty ? "<root>" : Self.excerpt(path)
        switch kind {
        case .apiFault(let message, let code):
            return "API fault: \(message)" + (code.map { " (\($0))" } ?? "")
        case .apiError(let messages):
            return "API error: " + (messages.isEmpty ? "no message" : messages.joined(separator: "; "))
        case .html:
            return "the body is an HTML or XML page, not JSON"
        case .emptyBody:
            return "the body is empty"
        case .malformedJSON(let offset, let reason):
            return "malformed JSON at byte \(offset) (in \(location)): \(reason)"
        case .truncated(let offset):
            return "truncated JSON: the body ends at byte \(offset) inside \(location)"
        case .depthLimitExceeded(let offset):
            return "JSON nests too deeply at byte \(offset) (in \(location))"
        case .typeMismatch(let expected, let found):
            return "\(location): expected \(expected), found \(found)"
        case .missingField:
            return "\(location): required value is missing, null or empty"
        case .missingAll(let keys):
            let others = keys.dropLast()
            return "\(location): required value is missing, null or empty, and so \(others.count == 1 ? "is" : "are") \(others.joined(separator: ", "))"
        case .invalidDate(let text):
            return "\(location): not a date: \"\(Self.excerpt(text))\""
        case .invalidValue(let text):
            return "\(location): invalid value: \(Self.excerpt(text))"
        case .unknownCategories(let ids, let listed):
            let names = ids.map(String.init).joined(separator: ", ")
            return "category \(names) is not among the \(listed) categories the API lists (a fetch stores the list it read: quire dump --collection categories; one that could not be read is in quire rejects)"
        }
    }

    /// At most `limit` characters of a value a document holds, and how many more it has: a
    /// 1 MiB date string made a 1 MiB line on stderr and in `quire rejects`. (An error body's
    /// messages are cut where the fetch explains them.)
    package static func excerpt(_ text: String, limit: Int = 200) -> String {
        var count = 0
        var end = text.startIndex
        while end < text.endIndex, count < limit {
            text.formIndex(after: &end)
            count += 1
        }
        guard end < text.endIndex else { return text }
        return text[..<end] + "… (\(text.count - limit) more characters)"
    }
}
