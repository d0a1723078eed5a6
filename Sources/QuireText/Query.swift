/// A parsed full-text query: a tree of boolean operators over folded terms.
///
/// Terms are already folded by the same ``Tokenizer`` rules as the documents, so an evaluator
/// compares bytes. `fields` on a leaf is the set of text field ids it may match in (empty: any
/// field); a field filter (`headline:storm`) sets it for the leaves below it.
public indirect enum Query: Sendable, Hashable {
    /// Documents containing `term`.
    case term(String, fields: FieldSet)
    /// Documents containing a term that starts with `prefix`.
    case prefix(String, fields: FieldSet)
    /// Documents where `terms` occur at consecutive positions in one field; when `lastIsPrefix`,
    /// the last element matches any term starting with it.
    case phrase([String], lastIsPrefix: Bool, fields: FieldSet)
    /// Documents matching every child (at least one child is not a `.not`).
    case and([Query])
    /// Documents matching any child.
    case or([Query])
    /// Inside an `.and`: documents not matching the child.
    case not(Query)
    /// Documents whose filter field `name` (lowercased) equals `value` exactly (`section:Science`).
    case filter(name: String, value: String)

    /// Every distinct term, prefix and phrase term in the query, for fetching statistics.
    public var terms: [String] {
        var out: [String] = []
        func walk(_ q: Query) {
            switch q {
            case .term(let t, _), .prefix(let t, _): out.append(t)
            case .phrase(let ts, _, _): out.append(contentsOf: ts)
            case .and(let cs), .or(let cs): cs.forEach(walk)
            case .not(let c): walk(c)
            case .filter: break
            }
        }
        walk(self)
        var seen = Set<String>()
        return out.filter { seen.insert($0).inserted }
    }
}

/// A set of text field ids (0..<16), as a bit mask; empty means every field.
public struct FieldSet: Sendable, Hashable, OptionSet {
    /// Bit `i` is field id `i`.
    public var rawValue: UInt16

    /// The set with these bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The set holding only `id`.
    public init(field id: UInt8) { rawValue = 1 << UInt16(id & 15) }

    /// Every field.
    public static let all = FieldSet([])

    /// Whether a token of field `id` matches (always, for the empty set).
    @inline(__always)
    public func allows(_ id: UInt8) -> Bool { rawValue == 0 || rawValue & (1 << UInt16(id & 15)) != 0 }
}

/// Why a query could not be parsed, and where.
public struct QueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Hashable {
        /// A `"` with no closing quote.
        case unterminatedPhrase
        /// A `(` with no `)`.
        case unclosedParenthesis
        /// A `)` with no `(`.
        case unexpectedClosingParenthesis
        /// `()` or a field filter with nothing after the colon.
        case emptyGroup
        /// An operator (`OR`, `AND`, `NOT`, `-`) with nothing it could apply to.
        case missingOperand(String)
        /// `name:` where name is neither a text field nor a filter field.
        case unknownField(String)
        /// A filter field applied to a group or a prefix, or nested inside another field filter.
        case misplacedFieldFilter(String)
        /// A prefix shorter than the parser's minimum (`a*`); `lastPart` names the short last
        /// part of a word that tokenizes into several (`covid-1*`: `1`).
        case prefixTooShort(minimum: Int, lastPart: String? = nil)
        /// A `*` that does not end a word.
        case misplacedWildcard
        /// Nothing searchable: only operators, punctuation or emoji, or only negations.
        case nothingToSearch
        /// A conjunction made only of negations (`-storm`, `a OR -b`): it would match almost
        /// everything.
        case onlyNegations
        /// Deeper nesting than the parser allows.
        case tooDeep
        /// More words (a phrase's each counted) than the parser allows.
        case tooManyTerms(maximum: Int)
    }

    /// What is wrong.
    public var reason: Reason
    /// The offset in the query, in characters (grapheme clusters), of the offending token.
    public var position: Int

    /// An error.
    public init(_ reason: Reason, at position: Int) {
        self.reason = reason
        self.position = position
    }

    public var description: String {
        let what: String
        switch reason {
        case .unterminatedPhrase: what = "unterminated phrase (a \" with no closing quote)"
        case .unclosedParenthesis: what = "'(' is never closed"
        case .unexpectedClosingParenthesis: what = "')' without '('"
        case .emptyGroup: what = "empty group"
        case .missingOperand(let op): what = "'\(op)' has nothing to apply to"
        case .unknownField(let name): what = "unknown field '\(name)' (quote text that holds a ':', as \"\(name):…\")"
        case .misplacedFieldFilter(let name): what = "'\(name):' takes a single value here"
        case .prefixTooShort(let minimum, nil): what = "a prefix needs at least \(minimum) characters before '*'"
        case .prefixTooShort(let minimum, let part?):
            what = "a prefix needs at least \(minimum) characters before '*' in its last part ('\(part)' is shorter)"
        case .misplacedWildcard: what = "'*' only ends a word of letters or digits, as in clim*"
        case .nothingToSearch: what = "nothing to search for"
        case .onlyNegations: what = "a query needs a term that is not negated"
        case .tooDeep: what = "the query nests too deeply"
        case .tooManyTerms(let maximum): what = "the query has more than \(maximum) words"
        }
        return "\(what) at character \(position + 1)"
    }
}
