/// Query text built for a caller's options (the CLI's `--section`, the HTTP API's `section=`).
public enum SearchQuery {
    /// `query` restricted to the records whose filter field `filter` (such as `section`) is
    /// exactly `value`: `(query) filter:"value"`, answered through the filter's index, so a page
    /// of a rare value is as full as the matches allow. The query language has no escape for a
    /// quote, so quotes in `value` are dropped.
    public static func restricting(_ query: String, filter: String, to value: String) -> String {
        "(\(query)) \(filter):\"\(value.filter { $0 != "\"" })\""
    }
}
