/// One document of a page that could not be mapped, kept so that it can be quarantined and
/// mapped again later instead of stopping the page.
///
/// A page maps document by document: the documents that map become articles, each one that
/// does not becomes a reject, and only a broken envelope (not JSON, HTML, `docs` not an array)
/// fails the page as a whole.
public struct DocumentReject: Sendable, Hashable {
    /// The document's index in the page (`response.docs[index]`, `articles[index]`).
    public var index: Int
    /// Why it failed, with the JSON path relative to the response (`response.docs[3].pub_date`).
    public var error: NewsMappingError
    /// The document's exact JSON bytes.
    public var rawDocument: [UInt8]

    /// Creates a reject.
    public init(index: Int, error: NewsMappingError, rawDocument: [UInt8]) {
        self.index = index
        self.error = error
        self.rawDocument = rawDocument
    }
}
