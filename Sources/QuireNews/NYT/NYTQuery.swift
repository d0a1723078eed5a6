/// An NYT Article Search request, reversible like a Mantle request model: it builds its query items
/// and parses them back.
///
/// The API key is not part of the query: the fetch layer adds `api-key` and keeps it secret.
public struct NYTQuery: Sendable, Hashable, Codable {
    /// The result order (`sort`).
    public enum Sort: String, Sendable, Hashable, Codable, CaseIterable {
        /// Newest first.
        case newest
        /// Oldest first.
        case oldest
        /// Best match first.
        case relevance
    }

    /// The search terms (`q`); may be empty when `filter` is given.
    public var query: String
    /// A Lucene filter query (`fq`), such as `section_name:("Sports")`.
    public var filter: String?
    /// The first day, inclusive (`begin_date`).
    public var begin: NYTDay?
    /// The last day, inclusive (`end_date`).
    public var end: NYTDay?
    /// The order (`sort`); the API's default when `nil`.
    public var sort: Sort?
    /// The page, 0-based; 10 results a page.
    public var page: Int
    /// The fields to return (`fl`); all when `nil`.
    public var fields: [String]?

    /// The pages the API serves: 0…100 (documented as "up to 100 pages"; pages up to 99 are the safe ones).
    public static let pageRange = 0...100

    /// Creates a query. An empty `fields` list or `filter` counts as absent.
    public init(
        query: String, filter: String? = nil, begin: NYTDay? = nil, end: NYTDay? = nil, sort: Sort? = nil,
        page: Int = 0, fields: [String]? = nil
    ) {
        self.query = query
        self.filter = filter?.isEmpty == true ? nil : filter
        self.begin = begin
        self.end = end
        self.sort = sort
        self.page = page
        self.fields = fields?.isEmpty == true ? nil : fields
    }

    /// Checks the values the API would reject, before any request is made.
    ///
    /// - Throws: ``QueryError/pageOutOfRange(_:)`` or ``QueryError/endBeforeBegin(begin:end:)``.
    public func validate() throws(QueryError) {
        guard Self.pageRange.contains(page) else { throw .pageOutOfRange(page) }
        if let begin, let end, end < begin { throw .endBeforeBegin(begin: begin, end: end) }
    }

    /// The query items, in a fixed order: `q`, `fq`, `begin_date`, `end_date` (`YYYYMMDD`), `sort`,
    /// `page`, `fl`. Absent values are left out; `page` is always given.
    public var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if !query.isEmpty { items.append(("q", query)) }
        if let filter { items.append(("fq", filter)) }
        if let begin { items.append(("begin_date", begin.compact)) }
        if let end { items.append(("end_date", end.compact)) }
        if let sort { items.append(("sort", sort.rawValue)) }
        items.append(("page", String(page)))
        if let fields { items.append(("fl", fields.joined(separator: ","))) }
        return items
    }

    /// Parses query items back (the inverse of ``queryItems``). `api-key` is ignored; dates may be
    /// `YYYYMMDD` or `YYYY-MM-DD`.
    ///
    /// - Throws: ``QueryError`` for an unknown or repeated parameter or a malformed value.
    ///   The result is not validated; call ``validate()``.
    public init(queryItems: [(name: String, value: String)]) throws(QueryError) {
        var seen: Set<String> = []
        self.init(query: "")
        for (name, value) in queryItems {
            if name == "api-key" { continue }
            guard seen.insert(name).inserted else { throw .repeatedParameter(name) }
            switch name {
            case "q":
                query = value
            case "fq":
                filter = value.isEmpty ? nil : value
            case "begin_date", "end_date":
                guard let day = NYTDay(string: value) else { throw .invalidValue(name: name, value: value) }
                if name == "begin_date" { begin = day } else { end = day }
            case "sort":
                guard let order = Sort(rawValue: value) else { throw .invalidValue(name: name, value: value) }
                sort = order
            case "page":
                guard let number = Int(value) else { throw .invalidValue(name: name, value: value) }
                page = number
            case "fl":
                let list = value.split(separator: ",").map(String.init)
                fields = list.isEmpty ? nil : list
            default:
                throw .unknownParameter(name)
            }
        }
    }
}

/// Why an ``NYTQuery`` cannot be sent or parsed.
public enum QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `page` is outside ``NYTQuery/pageRange``.
    case pageOutOfRange(Int)
    /// `end_date` is before `begin_date`.
    case endBeforeBegin(begin: NYTDay, end: NYTDay)
    /// A parameter's value cannot be parsed.
    case invalidValue(name: String, value: String)
    /// A parameter this model does not know.
    case unknownParameter(String)
    /// A parameter given twice.
    case repeatedParameter(String)

    public var description: String {
        switch self {
        case .pageOutOfRange(let page): "page \(page) is outside \(NYTQuery.pageRange)"
        case .endBeforeBegin(let begin, let end): "end_date \(end) is before begin_date \(begin)"
        case .invalidValue(let name, let value): "invalid \(name): \"\(value)\""
        case .unknownParameter(let name): "unknown parameter \(name)"
        case .repeatedParameter(let name): "parameter \(name) is given twice"
        }
    }
}
