/// Parses the query language of docs/SEARCH.md into a ``Query``.
///
/// ```
/// storm surge            both terms (AND is implied)
/// storm OR flood         either            storm AND flood   both (AND is optional)
/// storm -surge           storm, not surge  storm NOT surge   the same
/// "storm surge"          the phrase        clim*             a prefix ("clim sur*" too)
/// headline:storm         in one field      headline:(a OR b), headline:"a b"
/// section:Science        a filter field's exact value (section:"Business Day")
/// (storm OR flood) -rain parentheses group
/// ```
/// Operators are upper case; `or`, `and`, `not` in lower case are terms. Words are tokenized and
/// folded like documents (without joined hyphen forms): a word that gives several tokens
/// (`covid-19`, `O’Brien`, `東京都`) is searched as a phrase. Any input gives a query or a
/// ``QueryError`` with a position; the parser never traps, nests at most ``maximumDepth`` deep and
/// accepts at most ``maximumTerms`` words (a phrase's each counted).
public struct QueryParser: Sendable {
    /// The fields `name:` may name.
    public var schema: TextSchema
    /// The fewest characters a prefix may have before its `*` (default 2).
    public var minimumPrefixLength: Int
    /// The deepest nesting of parentheses, field filters and negations accepted (default 32).
    public var maximumDepth: Int
    /// The most words (prefixes included, a phrase's words each, filter values such as
    /// `section:Arts` not) a query may hold (default 64, twice what web search engines take). Each is read and scored on its own, so
    /// this bounds what one query costs, which matters when anyone can send one (`quire serve`).
    public var maximumTerms: Int

    /// The tokenizer rules of the index the queries search (``TokenizerOptions/revision``).
    public var revision: Int

    /// A parser for `schema`.
    public init(
        schema: TextSchema = .articles, minimumPrefixLength: Int = 2, maximumDepth: Int = 32, maximumTerms: Int = 64,
        revision: Int = TokenizerOptions.currentRevision
    ) {
        self.revision = revision
        self.schema = schema
        self.minimumPrefixLength = max(1, minimumPrefixLength)
        self.maximumDepth = maximumDepth
        self.maximumTerms = max(1, maximumTerms)
    }

    /// The query `text` means.
    public func parse(_ text: String) throws(QueryError) -> Query {
        var lexer = Lexer(text)
        let lexemes = try lexer.lexemes()
        // A filter field's value (`section:Science`) is an exact index lookup, not a scored term:
        // it does not count (the CLI's --section and the API's section= add one).
        let terms = lexemes.indices.filter { i in
            switch lexemes[i].kind {
            case .word, .phrase:
                // The field before the value, or before its negation (`section:-Arts`).
                let field = i > 0 && lexemes[i - 1].kind == .not ? i - 2 : i - 1
                guard field >= 0, case .field(let name) = lexemes[field].kind else { return true }
                return !schema.filterFields.contains(name.lowercased())
            default: return false
            }
        }
        // A phrase counts its words, and so does a word the tokenizer splits (`a-b-c`, a run of
        // CJK): each is a posting list read (a phrase of a thousand words passed as one term).
        var counted = 0
        var tokenizer = Tokenizer(options: TokenizerOptions(joinHyphenated: false, revision: revision))
        for i in terms {
            switch lexemes[i].kind {
            case .phrase(let text, _), .word(let text): counted += max(1, tokenizer.queryTerms(text).count)
            default: counted += 1
            }
            if counted > maximumTerms { throw QueryError(.tooManyTerms(maximum: maximumTerms), at: lexemes[i].position) }
        }
        var state = ParseState(parser: self, lexemes: lexemes, end: lexer.characterCount)
        let query = try state.parseOr(depth: 0)
        if state.index < lexemes.count {
            // Only a stray ')' stops parseOr before the end.
            throw QueryError(.unexpectedClosingParenthesis, at: lexemes[state.index].position)
        }
        guard let query else { throw QueryError(.nothingToSearch, at: 0) }
        return query
    }
}

/// One lexical unit of a query, with its character offset.
struct Lexeme: Sendable {
    enum Kind: Sendable, Equatable {
        case open, close, or, and, not
        /// `name:` (the name as written).
        case field(String)
        /// A bare word (may end with `*`).
        case word(String)
        /// A quoted phrase; `prefix` when followed by `*`.
        case phrase(String, prefix: Bool)
    }

    var kind: Kind
    var position: Int
}

struct Lexer {
    let scalars: [Unicode.Scalar]
    /// The character offset of each scalar (and of the end).
    let characterOffsets: [Int]
    var index = 0

    var characterCount: Int { characterOffsets.last ?? 0 }

    init(_ text: String) {
        var scalars: [Unicode.Scalar] = []
        var offsets: [Int] = []
        var characterIndex = 0
        for character in text {
            for scalar in character.unicodeScalars {
                // Fullwidth letters, digits, `＊`, `＂` and `－` (a Japanese or Chinese input
                // method's `ＯＲ`, `ＮＹ＊`) are read as ASCII, operators included; fullwidth
                // brackets and colons stay punctuation (`トヨタ（株）`, `ＮＨＫ：`).
                let ascii = Self.isFullwidthQueryCharacter(scalar.value) ? Unicode.Scalar(scalar.value - 0xFEE0) : nil
                scalars.append(ascii ?? scalar)
                offsets.append(characterIndex)
            }
            characterIndex += 1
        }
        offsets.append(characterIndex)
        self.scalars = scalars
        self.characterOffsets = offsets
    }

    static func isFullwidthQueryCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0xFF10...0xFF19, 0xFF21...0xFF3A, 0xFF41...0xFF5A, 0xFF0A, 0xFF02, 0xFF0D: return true
        default: return false
        }
    }

    static func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.isWhitespace || s.value == 0 }
    static func isOpeningQuote(_ s: Unicode.Scalar) -> Bool { s == "\"" || s == "\u{201C}" || s == "\u{201E}" }
    static func isClosingQuote(_ s: Unicode.Scalar) -> Bool { s == "\"" || s == "\u{201D}" || s == "\u{201C}" }
    static func endsWord(_ s: Unicode.Scalar) -> Bool { isSpace(s) || s == "(" || s == ")" || isOpeningQuote(s) }

    /// Whether `last` is a `name:` ending just before `position` (its operand starts there).
    static func endsField(_ last: Lexeme?, before position: Int) -> Bool {
        guard let last, case .field(let name) = last.kind else { return false }
        return last.position + name.count + 1 == position
    }

    mutating func lexemes() throws(QueryError) -> [Lexeme] {
        var out: [Lexeme] = []
        while index < scalars.count {
            let s = scalars[index]
            let position = characterOffsets[index]
            if Self.isSpace(s) {
                index += 1
            } else if s == "(" {
                out.append(Lexeme(kind: .open, position: position))
                index += 1
            } else if s == ")" {
                out.append(Lexeme(kind: .close, position: position))
                index += 1
            } else if Self.isOpeningQuote(s) {
                index += 1
                var content = String.UnicodeScalarView()
                var closed = false
                while index < scalars.count {
                    let c = scalars[index]
                    index += 1
                    if Self.isClosingQuote(c) {
                        closed = true
                        break
                    }
                    content.append(c)
                }
                guard closed else { throw QueryError(.unterminatedPhrase, at: position) }
                var prefix = false
                if index < scalars.count, scalars[index] == "*" {
                    prefix = true
                    index += 1
                }
                out.append(Lexeme(kind: .phrase(String(content), prefix: prefix), position: position))
            } else if s == "-", index + 1 < scalars.count,
                !Self.isSpace(scalars[index + 1]), scalars[index + 1] != ")",
                index == 0 || Self.endsWord(scalars[index - 1]) || Self.endsField(out.last, before: position)
                    || (out.last?.kind == .not && out.last?.position == position - 1)  // `--storm`
            {
                // A leading minus negates what follows (`headline:-storm` too); inside a word
                // (covid-19) it is text.
                out.append(Lexeme(kind: .not, position: position))
                index += 1
            } else {
                var word = String.UnicodeScalarView()
                let start = index
                // Kept as the word grows: testing the whole word at each `:` made a long word of
                // colons quadratic.
                var namesField = true
                while index < scalars.count {
                    let c = scalars[index]
                    // A straight quote inside a word is text (`צה"ל`, `12"`, as typed for gershayim
                    // and inches): only one that begins a word opens a phrase.
                    if Self.endsWord(c), !(c == "\"" && index > start) { break }
                    if c == ":", index > start, namesField {
                        // `name:` — the rest, or the next group or phrase, is its operand.
                        out.append(Lexeme(kind: .field(String(word)), position: position))
                        index += 1
                        word = String.UnicodeScalarView()
                        break
                    }
                    namesField = namesField && c.isASCII && c.properties.isAlphabetic
                    word.append(c)
                    index += 1
                }
                if word.isEmpty { continue }
                let text = String(word)
                switch text {
                case "OR": out.append(Lexeme(kind: .or, position: position))
                case "AND": out.append(Lexeme(kind: .and, position: position))
                case "NOT": out.append(Lexeme(kind: .not, position: position))
                default:
                    out.append(Lexeme(kind: .word(text), position: position))
                }
            }
        }
        return out
    }
}

/// Where a parse stands, and what a field filter above the current node allows.
struct ParseState {
    let parser: QueryParser
    let lexemes: [Lexeme]
    let end: Int
    var index = 0
    var tokenizer: Tokenizer

    init(parser: QueryParser, lexemes: [Lexeme], end: Int) {
        tokenizer = Tokenizer(options: TokenizerOptions(joinHyphenated: false, revision: parser.revision))
        self.parser = parser
        self.lexemes = lexemes
        self.end = end
    }

    var position: Int { index < lexemes.count ? lexemes[index].position : end }
    var peek: Lexeme.Kind? { index < lexemes.count ? lexemes[index].kind : nil }

    /// `a OR b OR …`; nil when there is nothing searchable.
    mutating func parseOr(depth: Int) throws(QueryError) -> Query? {
        guard depth <= parser.maximumDepth else { throw QueryError(.tooDeep, at: position) }
        var parts: [Query] = []
        var start = index
        if let first = try parseAnd(depth: depth) { parts.append(first) }
        while peek == .or {
            let at = position
            if index == start { throw QueryError(.missingOperand("OR"), at: at) }
            index += 1
            start = index
            if peek == nil || peek == .close || peek == .or { throw QueryError(.missingOperand("OR"), at: at) }
            if let next = try parseAnd(depth: depth) { parts.append(next) }
        }
        if parts.count <= 1 { return parts.first }
        return .or(parts.flatMap { if case .or(let inner) = $0 { inner } else { [$0] } })
    }

    /// `a b AND c NOT d …` up to `OR`, `)` or the end.
    mutating func parseAnd(depth: Int) throws(QueryError) -> Query? {
        var items: [Query] = []
        var firstPosition: Int? = nil
        while let kind = peek, kind != .or, kind != .close {
            if kind == .and {
                let at = position
                index += 1
                if items.isEmpty || peek == nil || peek == .close || peek == .or || peek == .and {
                    throw QueryError(.missingOperand("AND"), at: at)
                }
                continue
            }
            let at = position
            if let item = try parseUnary(depth: depth) {
                if firstPosition == nil { firstPosition = at }
                items.append(item)
            }
        }
        if items.isEmpty { return nil }
        if items.allSatisfy({ if case .not = $0 { true } else { false } }) {
            throw QueryError(.onlyNegations, at: firstPosition ?? position)
        }
        if items.count == 1 { return items[0] }
        return .and(items.flatMap { if case .and(let inner) = $0 { inner } else { [$0] } })
    }

    /// `NOT x`, `-x` or a primary.
    mutating func parseUnary(depth: Int) throws(QueryError) -> Query? {
        if peek == .not {
            let at = position
            index += 1
            guard depth < parser.maximumDepth else { throw QueryError(.tooDeep, at: at) }
            guard let kind = peek, kind != .or, kind != .close, kind != .and else {
                throw QueryError(.missingOperand("NOT"), at: at)
            }
            guard let operand = try parseUnary(depth: depth + 1) else { return nil }
            // Two negations cancel (`NOT NOT storm`, `--storm`): the term itself.
            if case .not(let inner) = operand { return inner }
            return .not(operand)
        }
        return try parsePrimary(depth: depth, fields: .all)
    }

    /// A group, phrase, word or field filter.
    mutating func parsePrimary(depth: Int, fields: FieldSet) throws(QueryError) -> Query? {
        guard let lexeme = index < lexemes.count ? lexemes[index] : nil else {
            throw QueryError(.missingOperand("field"), at: end)
        }
        switch lexeme.kind {
        case .open:
            index += 1
            let inner = try parseOr(depth: depth + 1)
            guard peek == .close else { throw QueryError(.unclosedParenthesis, at: lexeme.position) }
            index += 1
            guard let inner else { throw QueryError(.emptyGroup, at: lexeme.position) }
            return fields == .all ? inner : Self.restrict(inner, to: fields)
        case .field(let name):
            index += 1
            guard depth < parser.maximumDepth else { throw QueryError(.tooDeep, at: lexeme.position) }
            let field = parser.schema.field(named: name)
            let lowered = name.lowercased()
            guard field != nil || parser.schema.filterFields.contains(lowered) else {
                throw QueryError(.unknownField(name), at: lexeme.position)
            }
            // `headline:-storm`, `headline:NOT storm`: the field's term left out (-headline:storm).
            let negated = peek == .not
            if negated { index += 1 }
            guard let next = peek, next != .close, next != .or, next != .and, next != .not else {
                throw QueryError(.missingOperand(negated ? "NOT" : name + ":"), at: lexeme.position)
            }
            func negating(_ query: Query) -> Query { negated ? .not(query) : query }
            if let field {
                let inner = FieldSet(field: field.id)
                guard let operand = try parsePrimary(depth: depth + 1, fields: inner) else { return nil }
                return negating(Self.restrict(operand, to: inner))
            }
            // A filter inside a text field (`headline:section:Arts`) would not be the field's.
            guard fields == .all else { throw QueryError(.misplacedFieldFilter(name), at: lexeme.position) }
            switch next {
            case .word(let value) where !value.hasSuffix("*"):
                index += 1
                return negating(.filter(name: lowered, value: value))
            case .phrase(let value, prefix: false):
                // `section:""` names no section: an error, as `--section ''` is.
                guard !value.isEmpty else { throw QueryError(.missingOperand(name + ":"), at: lexeme.position) }
                index += 1
                return negating(.filter(name: lowered, value: value))
            default:
                throw QueryError(.misplacedFieldFilter(name), at: lexeme.position)
            }
        case .word(let word):
            index += 1
            var text = Substring(word)
            var prefix = false
            if text.hasSuffix("*") {
                text = text.dropLast()
                prefix = true
            }
            if text.contains("*") || (prefix && text.isEmpty) {
                throw QueryError(.misplacedWildcard, at: lexeme.position)
            }
            return try leaf(String(text), prefix: prefix, fields: fields, at: lexeme.position)
        case .phrase(let text, let prefixAfter):
            index += 1
            var body = Substring(text)
            var prefix = prefixAfter
            if body.hasSuffix("*") {
                body = body.dropLast()
                prefix = true
            }
            if body.contains("*") { throw QueryError(.misplacedWildcard, at: lexeme.position) }
            return try leaf(String(body), prefix: prefix, fields: fields, at: lexeme.position)
        case .close, .or, .and, .not:
            throw QueryError(.missingOperand("field"), at: lexeme.position)
        }
    }

    /// The term, prefix or phrase of one word or quoted text; nil when it has no tokens.
    mutating func leaf(_ text: String, prefix typed: Bool, fields: FieldSet, at position: Int) throws(QueryError) -> Query? {
        let terms = tokenizer.queryTerms(text)
        guard let last = terms.last else {
            if typed { throw QueryError(.misplacedWildcard, at: position) }
            return nil
        }
        // A lone Han ideograph (`雨`, the `用` of `iPhone用`) is in no bigram of a document's longer
        // run, where it stands only at the start of the bigrams it begins: it matches those. (A
        // lone kana, mostly a particle such as `の`, would match half the index.)
        let lone = last.unicodeScalars.count == 1 && last.unicodeScalars.allSatisfy { ScalarTable.isHan($0.value) }
        let prefix = typed || lone
        if prefix, !lone, last.unicodeScalars.count < parser.minimumPrefixLength {
            let part = terms.count > 1 ? last : nil
            throw QueryError(.prefixTooShort(minimum: parser.minimumPrefixLength, lastPart: part), at: position)
        }
        if terms.count == 1 { return prefix ? .prefix(last, fields: fields) : .term(last, fields: fields) }
        return .phrase(terms, lastIsPrefix: prefix, fields: fields)
    }

    /// `query` with every leaf that allows all fields restricted to `fields` (inner filters win).
    static func restrict(_ query: Query, to fields: FieldSet) -> Query {
        switch query {
        case .term(let t, let f): .term(t, fields: f == .all ? fields : f)
        case .prefix(let t, let f): .prefix(t, fields: f == .all ? fields : f)
        case .phrase(let ts, let p, let f): .phrase(ts, lastIsPrefix: p, fields: f == .all ? fields : f)
        case .and(let cs): .and(cs.map { restrict($0, to: fields) })
        case .or(let cs): .or(cs.map { restrict($0, to: fields) })
        case .not(let c): .not(restrict(c, to: fields))
        case .filter: query
        }
    }
}
