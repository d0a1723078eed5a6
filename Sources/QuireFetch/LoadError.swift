/// Why a load of JSON Lines stopped. Everything committed before it stays committed.
public struct LoadError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The input cannot be opened or read (or a line is too long).
        case input
        /// A line is not a record the collection can store; ``LoadError/line`` and
        /// ``LoadError/field`` say where.
        case record
        /// The store refused a chunk (a full disk, a damaged store).
        case store
        /// Ctrl-C (or the caller's interrupt check) stopped the load between chunks.
        case interrupted
    }

    /// What kind of failure.
    public var kind: Kind
    /// What went wrong, without the line number.
    public var message: String
    /// The input line (1-based) of a bad record.
    public var line: Int?
    /// The field of a bad record, as a path (`keywords[2].rank`); nil for the record as a whole.
    public var field: String?
    /// Records committed (or about to be, for the chunk before a bad line) before the failure.
    public var recordsBefore: Int
    /// The store's error, for ``Kind/store``.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ kind: Kind, _ message: String, line: Int? = nil, field: String? = nil, recordsBefore: Int = 0,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.underlying = underlying
        self.message = message
        self.line = line
        self.field = field
        self.recordsBefore = recordsBefore
    }

    /// `line 3: wordCount: expected a whole number written without a fraction or an exponent, found 3.7 (2 records loaded before it)`.
    public var description: String {
        var text = line.map { "line \($0): " } ?? ""
        text += message
        if kind != .interrupted && kind != .input || line != nil { text += " " + Self.loadedBefore(recordsBefore) }
        return text
    }

    /// `(2 records loaded before it)`, `(1 record loaded before it)`.
    public static func loadedBefore(_ records: Int) -> String {
        "(\(records) record\(records == 1 ? "" : "s") loaded before it)"
    }
}
