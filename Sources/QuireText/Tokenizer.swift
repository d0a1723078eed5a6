/// What the tokenizer does beyond word breaking and case folding.
public struct TokenizerOptions: Sendable, Hashable {
    /// Remove diacritics from Latin letters (`Café` → `cafe`, `Ǖ` → `u`), Greek ones (revision 3)
    /// and the Arabic hamza and madda (revision 4). Letters that do not decompose (`ø`, `ł`, `đ`;
    /// `ı` before revision 4) and other letters (`й`, `ё`) are kept. Default true.
    public var foldDiacritics: Bool
    /// For words joined by hyphens (`covid-19`, `well-known`), also emit the joined form (`covid19`)
    /// at the first part's position, after the parts. Default true.
    public var joinHyphenated: Bool
    /// Longer terms are cut at the last whole scalar within this many UTF-8 bytes. Default 128.
    public var maximumTermBytes: Int
    /// Which rules: ``currentRevision`` (4: as 3, and `ß` read as `ss`, any script's decimal
    /// digits as ASCII ones, the Arabic tatweel skipped, and with diacritics folding `ı` read as `i`
    /// and Arabic letters without hamza or madda; the last Han character of a run of two or more is
    /// a term of its own too, so that it is found alone), 3 (as 2, and compatibility forms read as
    /// NFKC reads them — `ﬁ` as `fi`, `𝐁` as `B`, `²` as `2`, halfwidth `ｶ` as `カ`, canonical
    /// singletons and exclusions as NFC has them — kana and their voiced sound marks composed, and
    /// `・` a separator), 2 (a letter and the combining marks after it compose, as NFC; invisible
    /// format characters are skipped) or 1, the rules before (marks after a non-Latin letter
    /// dropped or kept apart, format characters separating words). An index keeps the revision
    /// it was made with, so that a document is removed with the terms it was indexed with.
    public var revision: Int

    /// The rules of new indexes.
    public static let currentRevision = 4

    /// Options with the defaults documented on each property.
    public init(
        foldDiacritics: Bool = true, joinHyphenated: Bool = true, maximumTermBytes: Int = 128,
        revision: Int = TokenizerOptions.currentRevision
    ) {
        self.foldDiacritics = foldDiacritics
        self.joinHyphenated = joinHyphenated
        self.maximumTermBytes = max(4, min(maximumTermBytes, Int(UInt16.max)))
        self.revision = max(1, min(revision, Self.currentRevision))
    }
}

/// One token: where its folded term bytes are in a ``TokenBuffer``, its position and its field.
public struct Token: Sendable, Hashable {
    /// How the token arose.
    public enum Kind: UInt8, Sendable {
        /// A word (letters, digits and combining marks between separators), or one part of a
        /// hyphenated word.
        case word
        /// Two adjacent Chinese or Japanese characters, or a single one standing alone.
        case bigram
        /// The parts of a hyphenated word joined (`covid19` for `covid-19`), at the first part's position.
        case joined
        /// The last Han character of a run of two or more (`雨` of `大雨`), at the last bigram's
        /// position (revision 4): found alone, as no bigram begins with it. Queries leave it out.
        case trailing
    }

    /// The offset of the term's first byte in ``TokenBuffer/bytes``.
    public var start: Int
    /// The term's length in UTF-8 bytes (never 0).
    public var length: Int
    /// The position in its field: 0 for the field's first token, +1 for each next one (a joined
    /// token repeats its first part's position).
    public var position: UInt32
    /// The field the token came from, as the caller numbered it.
    public var field: UInt8
    /// How the token arose.
    public var kind: Kind
    /// The token's span in the tokenized text, as UTF-8 offsets (`sourceStart..<sourceEnd`), for
    /// snippets and highlighting. A joined token spans all its parts, a bigram both characters.
    public var sourceStart: UInt32
    /// The end of the token's span in the tokenized text (UTF-8 offset, exclusive).
    public var sourceEnd: UInt32
}

/// Tokens and their folded term bytes, reused across documents so that steady-state tokenizing
/// allocates nothing.
///
/// Call ``removeAll()`` between documents (capacity is kept). Term bytes are valid UTF-8.
public struct TokenBuffer: Sendable {
    /// The folded bytes of every term, back to back.
    public internal(set) var bytes: [UInt8] = []
    /// The tokens in the order the text produced them.
    public internal(set) var tokens: [Token] = []
    /// Scratch storage of ``forEachTerm(interning:_:)``.
    var scratch = TermGrouping()
    var scratchOccurrences: [Occurrence] = []

    /// An empty buffer.
    public init() {}

    /// Removes every token, keeping the capacity.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        tokens.removeAll(keepingCapacity: true)
    }

    /// The number of tokens.
    public var count: Int { tokens.count }

    /// Calls `body` with the term bytes of `token` (valid only inside `body`).
    public func withTermBytes<R, E: Error>(
        of token: Token, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        try bytes.withUnsafeBufferPointer { (all) throws(E) -> R in
            try body(UnsafeBufferPointer(rebasing: all[token.start..<(token.start + token.length)]))
        }
    }

    /// The term of `token` as a string (allocates; for tests and queries).
    public func term(of token: Token) -> String {
        String(decoding: bytes[token.start..<(token.start + token.length)], as: UTF8.self)
    }
}

/// Unicode-aware word breaking with case and diacritics folding; see docs/SEARCH.md for the rules.
///
/// A tokenizer is a value with a small cache of scalar classes outside the built-in table; keep one
/// per writing thread and reuse it.
public struct Tokenizer: Sendable {
    /// The options in effect.
    public let options: TokenizerOptions
    private var cache: [UInt32: ScalarClass] = [:]
    /// What a scalar and a combining mark after it compose into (0: nothing), by `base << 32 | mark`.
    private var compositions: [UInt64: UInt32] = [:]
    /// The reading of the scalars that revisions 3 and 4 read otherwise
    /// (``ScalarTable/revisedForm(_:revision:foldDiacritics:)``).
    private var revisions: [UInt32: [UInt32]] = [:]

    /// A tokenizer with `options`.
    public init(options: TokenizerOptions = TokenizerOptions()) {
        self.options = options
    }

    /// Appends the tokens of `text` to `buffer`, numbering positions from `position`, and returns
    /// the position after the last token (pass it back, plus a gap, to continue a field with a second
    /// value so that phrases do not span the two).
    @discardableResult
    public mutating func tokenize(
        _ text: String, field: UInt8 = 0, startingAt position: UInt32 = 0, into buffer: inout TokenBuffer
    ) -> UInt32 {
        var text = text
        return text.withUTF8 { tokenize(utf8: $0, field: field, startingAt: position, into: &buffer) }
    }

    /// ``tokenize(_:field:startingAt:into:)`` over UTF-8 bytes (a field read in place from a
    /// record). The bytes should be valid UTF-8; a malformed sequence separates words and never reads
    /// past the end.
    @discardableResult
    public mutating func tokenize(
        utf8 text: UnsafeBufferPointer<UInt8>, field: UInt8 = 0, startingAt position: UInt32 = 0,
        into buffer: inout TokenBuffer
    ) -> UInt32 {
        var state = State(position: position, field: field, options: options)
        guard let base = text.baseAddress else { return position }
        let revised = options.revision >= 2
        let compatible = options.revision >= 3
        let table = ScalarTable.pointer
        let limit = ScalarTable.tableLimit
        let count = text.count
        var i = 0
        while i < count {
            let b0 = base[i]
            if state.isInWord, Self.isASCIIWordByte(b0) {
                // The rest of an ASCII word (most of news text): copied at once, then lowercased.
                var end = i + 1
                var upper = b0 &- 0x41 < 26
                while end < count, Self.isASCIIWordByte(base[end]) {
                    upper = upper || base[end] &- 0x41 < 26
                    end += 1
                }
                state.appendASCII(UnsafeBufferPointer(start: base + i, count: end - i), lowercasing: upper, into: &buffer)
                state.source &+= UInt32(truncatingIfNeeded: end - i)
                i = end
                continue
            }
            var value = UInt32(b0)
            var width = 1
            if b0 >= 0x80 {
                if b0 < 0xE0 {
                    width = 2
                } else if b0 < 0xF0 {
                    width = 3
                } else {
                    width = 4
                }
                if b0 < 0xC0 || i + width > count {
                    value = 0xFFFF_FFFF  // a stray continuation byte or a cut sequence: a separator
                    width = 1
                } else if width == 2 {
                    value = UInt32(b0 & 0x1F) << 6 | UInt32(base[i + 1] & 0x3F)
                } else if width == 3 {
                    value = UInt32(b0 & 0x0F) << 12 | UInt32(base[i + 1] & 0x3F) << 6 | UInt32(base[i + 2] & 0x3F)
                } else {
                    value = UInt32(b0 & 0x07) << 18 | UInt32(base[i + 1] & 0x3F) << 12
                        | UInt32(base[i + 2] & 0x3F) << 6 | UInt32(base[i + 3] & 0x3F)
                }
            }
            var c = value < limit ? ScalarTable.unpack(table[Int(value)]) : classOf(value)
            // One test on the common path: a format character or a mark that may compose.
            if c.flags != 0 {
                if c.isRevised, compatible {
                    let w = UInt32(truncatingIfNeeded: width)
                    for form in revisedForm(value) { takeRevised(form, width: w, state: &state, buffer: &buffer) }
                    state.source &+= w
                    i += width
                    continue
                }
                if c.isFormat, !revised { c.kind = .separator }
                if c.combines, compatible, dropsFoldedMark(value, after: state.lastScalar) {
                    state.feed(c, width: UInt32(truncatingIfNeeded: width), into: &buffer)
                    state.source &+= UInt32(truncatingIfNeeded: width)
                    i += width
                    continue
                }
                if c.combines, revised, state.lastScalar != 0, let composed = composition(state.lastScalar, value) {
                    // Text in decomposed form (NFD) indexes as its composed form does.
                    state.replaceLast(with: composed, into: &buffer)
                    state.source &+= UInt32(truncatingIfNeeded: width)
                    i += width
                    continue
                }
            }
            state.feed(c, width: UInt32(truncatingIfNeeded: width), into: &buffer)
            state.source &+= UInt32(truncatingIfNeeded: width)
            i += width
        }
        state.finish(into: &buffer)
        return state.position
    }

    /// The class of the word character that `base` and `mark` compose into, if any (cached).
    private mutating func composition(_ base: UInt32, _ mark: UInt32) -> ScalarClass? {
        let value = composed(base, mark)
        guard value != 0 else { return nil }
        let c = scalarClass(value)
        return c.kind == .word ? c : nil
    }

    /// What `base` and `mark` compose into, 0 for nothing (cached).
    private mutating func composed(_ base: UInt32, _ mark: UInt32) -> UInt32 {
        let key = UInt64(base) << 32 | UInt64(mark)
        if let known = compositions[key] { return known }
        let value = ScalarTable.composed(base, mark) ?? 0
        if compositions.count < 4096 { compositions[key] = value }
        return value
    }

    /// The scalars the index's revision reads `value` as (cached).
    private mutating func revisedForm(_ value: UInt32) -> [UInt32] {
        if let known = revisions[value] { return known }
        let form =
            ScalarTable.revisedForm(value, revision: options.revision, foldDiacritics: options.foldDiacritics) ?? [value]
        if revisions.count < 4096 { revisions[value] = form }
        return form
    }

    /// Feeds one scalar of a revised form: a mark composes with the letter or the kana before it
    /// (`ｶﾞ` is `カ` and U+3099, which make `ガ`); a voiced sound mark after no kana is skipped.
    /// Every piece stands where the character does: a word it starts begins there, and one that a
    /// separator inside it ends (`⒚` is `19.`) spans the whole character.
    private mutating func takeRevised(_ value: UInt32, width: UInt32, state: inout State, buffer: inout TokenBuffer) {
        let c = scalarClass(value)
        if c.kind == .separator || c.kind == .hyphen {
            let start = state.source
            state.source = start &+ width
            state.feed(c, width: width, into: &buffer)
            state.source = start
            return
        }
        if c.combines {
            if dropsFoldedMark(value, after: state.lastScalar) {
                state.feed(c, width: width, into: &buffer)
                return
            }
            if state.lastScalar != 0, let letter = composition(state.lastScalar, value) {
                state.replaceLast(with: letter, into: &buffer)
                return
            }
            if state.lastIdeograph != 0 {
                let kana = composed(state.lastIdeograph, value)
                if kana != 0, ScalarTable.isIdeographic(kana) {
                    state.replaceLastIdeograph(with: kana, width: width, into: &buffer)
                    return
                }
            }
            if value == 0x3099 || value == 0x309A { return }
        }
        state.feed(c, width: width, into: &buffer)
    }

    /// Whether diacritics folding drops `mark` after `base` instead of composing them: Greek
    /// accents and breathings fold away as Latin ones do (revision 3: `Αθήνα` is `αθηνα`, as
    /// capitals are written without them), and so do the Arabic hamza and madda (revision 4: `أ`
    /// is `ا`, as the harakat are dropped).
    @inline(__always)
    private func dropsFoldedMark(_ mark: UInt32, after base: UInt32) -> Bool {
        options.foldDiacritics && base != 0 && ScalarTable.isFoldableMark(mark)
            && (ScalarTable.isGreek(base) || (options.revision >= 4 && ScalarTable.isArabic(base)))
    }

    /// The class of any scalar: from the table below its limit, else cached (the main loop
    /// inlines the same with the table's pointer and limit in locals).
    @inline(__always)
    private mutating func scalarClass(_ value: UInt32) -> ScalarClass {
        value < ScalarTable.tableLimit ? ScalarTable.unpack(ScalarTable.pointer[Int(value)]) : classOf(value)
    }

    /// The class of a scalar past the table, cached.
    @inline(__always)
    private mutating func classOf(_ value: UInt32) -> ScalarClass {
        if let cached = cache[value] { return cached }
        let c = ScalarTable.classify(value)
        if cache.count < 4096 { cache[value] = c }
        return c
    }

    /// ASCII letters and digits: word characters that fold to themselves but for case.
    @inline(__always)
    static func isASCIIWordByte(_ b: UInt8) -> Bool { (b | 0x20) &- 0x61 < 26 || b &- 0x30 < 10 }

    /// The folded terms of `text`, in order (allocates; for tests).
    public mutating func terms(_ text: String) -> [String] {
        var buffer = TokenBuffer()
        tokenize(text, into: &buffer)
        return buffer.tokens.map { buffer.term(of: $0) }
    }

    /// The terms a query looks for in `text`: its terms but a run's trailing character, which a
    /// document holds only where its run ends (`大雨` is the bigram alone, found inside `大雨です`).
    mutating func queryTerms(_ text: String) -> [String] {
        var buffer = TokenBuffer()
        tokenize(text, into: &buffer)
        return buffer.tokens.filter { $0.kind != .trailing }.map { buffer.term(of: $0) }
    }

    /// The word-breaking state machine over classified scalars.
    private struct State {
        var position: UInt32
        let field: UInt8
        let foldDiacritics: Bool
        let joinHyphenated: Bool
        let maximum: Int
        /// Revision 4: a run's last Han character is a term of its own too.
        let trailingHan: Bool

        /// The UTF-8 offset in the text of the scalar being fed.
        var source: UInt32 = 0
        /// The first byte of the word being built, or nil outside a word; where it starts in the text.
        var wordStart: Int? = nil
        var wordSource: UInt32 = 0
        /// Where the first part of the chain starts and the last one ends in the text.
        var chainSource: UInt32 = 0
        var chainSourceEnd: UInt32 = 0
        /// The last scalar of the word being built, as appended (0 when there is none, or when a
        /// mark was appended after it), and where its bytes start in the buffer.
        var lastScalar: UInt32 = 0
        var lastScalarStart = 0
        /// Where the previous ideograph of the run starts in the text.
        var ideographSource: UInt32 = 0
        var ideographSourceEnd: UInt32 = 0
        /// The first byte and position of the first part of the current hyphen chain.
        var chainStart = 0
        var chainPosition: UInt32 = 0
        var chainParts = 0
        /// A hyphen directly followed the last word: the next word continues the chain.
        var afterHyphen = false
        /// The bytes of the previous ideograph of the current run (its offset and length), and the run length.
        var ideographStart = 0
        var ideographLength = 0
        var ideographRun = 0
        var ideographEmitted = false
        /// The last ideograph of the run (0 outside a run), for a voiced sound mark to compose with.
        var lastIdeograph: UInt32 = 0

        init(position: UInt32, field: UInt8, options: TokenizerOptions) {
            self.position = position
            self.field = field
            foldDiacritics = options.foldDiacritics
            joinHyphenated = options.joinHyphenated
            maximum = options.maximumTermBytes
            trailingHan = options.revision >= 4
        }

        @inline(__always)
        mutating func feed(_ c: ScalarClass, width: UInt32, into buffer: inout TokenBuffer) {
            switch c.kind {
            case .word:
                endIdeographs(into: &buffer)
                if wordStart == nil {
                    if !afterHyphen { endChain(into: &buffer) }
                    afterHyphen = false
                    wordStart = buffer.bytes.count
                    wordSource = source
                }
                lastScalarStart = buffer.bytes.count
                lastScalar = foldDiacritics ? c.folded : c.lowered
                append(lastScalar, to: &buffer.bytes)
                return
            case .diacritic:
                if wordStart != nil, !foldDiacritics {
                    append(c.lowered, to: &buffer.bytes)
                    lastScalar = 0
                }
                return
            case .ignorable:
                return
            case .ideographic:
                endWord(into: &buffer)
                endChain(into: &buffer)
                afterHyphen = false
                let start = buffer.bytes.count
                if ideographRun > 0 {
                    // The bigram is the previous ideograph's bytes followed by this one's: copied
                    // byte by byte, as a slice of the array appended to itself would copy the whole
                    // array first (quadratic in a long run of ideographs).
                    for i in ideographStart..<(ideographStart + ideographLength) { buffer.bytes.append(buffer.bytes[i]) }
                    let bigramStart = start
                    append(c.lowered, to: &buffer.bytes)
                    let length = buffer.bytes.count - bigramStart
                    buffer.tokens.append(
                        Token(
                            start: bigramStart, length: length, position: position, field: field, kind: .bigram,
                            sourceStart: ideographSource, sourceEnd: source &+ width))
                    position &+= 1
                    ideographStart = bigramStart + ideographLength
                    ideographLength = length - ideographLength
                    ideographEmitted = true
                    ideographSource = source
                    ideographSourceEnd = source &+ width
                } else {
                    append(c.lowered, to: &buffer.bytes)
                    ideographStart = start
                    ideographLength = buffer.bytes.count - start
                    ideographEmitted = false
                    ideographSource = source
                    ideographSourceEnd = source &+ width
                }
                ideographRun += 1
                lastIdeograph = c.lowered
            case .hyphen:
                endIdeographs(into: &buffer)
                if wordStart != nil, !afterHyphen {
                    endWord(into: &buffer)
                    afterHyphen = true
                } else {
                    endWord(into: &buffer)
                    endChain(into: &buffer)
                    afterHyphen = false
                }
            case .separator:
                endIdeographs(into: &buffer)
                endWord(into: &buffer)
                endChain(into: &buffer)
                afterHyphen = false
            }
            lastScalar = 0
        }

        /// Puts the scalar `c` composes in place of the word's last one (its mark is not kept).
        mutating func replaceLast(with c: ScalarClass, into buffer: inout TokenBuffer) {
            buffer.bytes.removeLast(buffer.bytes.count - lastScalarStart)
            lastScalar = foldDiacritics ? c.folded : c.lowered
            append(lastScalar, to: &buffer.bytes)
        }

        /// Puts the kana that the run's last one and a voiced sound mark compose in its place, in
        /// the bigram that ends with it too.
        mutating func replaceLastIdeograph(with value: UInt32, width: UInt32, into buffer: inout TokenBuffer) {
            buffer.bytes.removeLast(ideographLength)
            append(value, to: &buffer.bytes)
            let length = buffer.bytes.count - ideographStart
            if ideographRun > 1 {
                buffer.tokens[buffer.tokens.count - 1].length += length - ideographLength
                buffer.tokens[buffer.tokens.count - 1].sourceEnd = source &+ width
            }
            ideographLength = length
            ideographSourceEnd = source &+ width
            lastIdeograph = value
        }

        /// Inside a word: a word character only extends it (no ideograph run is open then).
        var isInWord: Bool { wordStart != nil }

        /// Extends the current word with ASCII letters and digits.
        @inline(__always)
        mutating func appendASCII(_ bytes: UnsafeBufferPointer<UInt8>, lowercasing: Bool, into buffer: inout TokenBuffer) {
            let start = buffer.bytes.count
            buffer.bytes.append(contentsOf: bytes)
            lastScalarStart = buffer.bytes.count - 1
            let last = bytes[bytes.count - 1]
            lastScalar = UInt32(last &- 0x41 < 26 ? last | 0x20 : last)
            guard lowercasing else { return }
            buffer.bytes.withUnsafeMutableBufferPointer { all in
                for i in start..<all.count where all[i] &- 0x41 < 26 { all[i] |= 0x20 }
            }
        }

        mutating func finish(into buffer: inout TokenBuffer) {
            endIdeographs(into: &buffer)
            endWord(into: &buffer)
            endChain(into: &buffer)
        }

        /// Ends the word being built: cuts it to the maximum and emits it as one part of the chain.
        mutating func endWord(into buffer: inout TokenBuffer) {
            guard let start = wordStart else { return }
            wordStart = nil
            var length = buffer.bytes.count - start
            if length == 0 { return }
            if length > maximum {
                length = maximum
                while length > 0, buffer.bytes[start + length] & 0xC0 == 0x80 { length -= 1 }
                buffer.bytes.removeSubrange((start + length)...)
            }
            if chainParts == 0 {
                chainStart = start
                chainPosition = position
                chainSource = wordSource
            }
            chainParts += 1
            chainSourceEnd = source
            buffer.tokens.append(
                Token(
                    start: start, length: length, position: position, field: field, kind: .word,
                    sourceStart: wordSource, sourceEnd: source))
            position &+= 1
        }

        /// Ends a hyphen chain: emits the joined form when it had two parts or more.
        mutating func endChain(into buffer: inout TokenBuffer) {
            defer { chainParts = 0 }
            guard joinHyphenated, chainParts > 1 else { return }
            let length = buffer.bytes.count - chainStart
            guard length <= maximum else { return }
            buffer.tokens.append(
                Token(
                    start: chainStart, length: length, position: chainPosition, field: field, kind: .joined,
                    sourceStart: chainSource, sourceEnd: chainSourceEnd))
        }

        /// Ends a run of ideographs: a run of one character is emitted as a unigram, and (revision
        /// 4) the last character of a longer one as well when it is Han.
        mutating func endIdeographs(into buffer: inout TokenBuffer) {
            guard ideographRun > 0 else { return }
            if !ideographEmitted {
                buffer.tokens.append(
                    Token(
                        start: ideographStart, length: ideographLength, position: position, field: field, kind: .bigram,
                        sourceStart: ideographSource, sourceEnd: ideographSourceEnd))
                position &+= 1
            } else if trailingHan, ScalarTable.isHan(lastIdeograph) {
                buffer.tokens.append(
                    Token(
                        start: ideographStart, length: ideographLength, position: position &- 1, field: field,
                        kind: .trailing, sourceStart: ideographSource, sourceEnd: ideographSourceEnd))
            }
            ideographRun = 0
            ideographEmitted = false
            lastIdeograph = 0
        }

        @inline(__always)
        func append(_ value: UInt32, to bytes: inout [UInt8]) {
            switch value {
            case 0..<0x80:
                bytes.append(UInt8(truncatingIfNeeded: value))
            case 0x80..<0x800:
                bytes.append(UInt8(truncatingIfNeeded: 0xC0 | value >> 6))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value & 0x3F))
            case 0x800..<0x10000:
                bytes.append(UInt8(truncatingIfNeeded: 0xE0 | value >> 12))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value >> 6 & 0x3F))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value & 0x3F))
            default:
                bytes.append(UInt8(truncatingIfNeeded: 0xF0 | value >> 18))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value >> 12 & 0x3F))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value >> 6 & 0x3F))
                bytes.append(UInt8(truncatingIfNeeded: 0x80 | value & 0x3F))
            }
        }
    }
}
