/// Marks a query's matched terms in a text and cuts a snippet around them (search results show the
/// snippet, not the stored field).
///
/// Terms and prefixes are marked wherever they occur, a phrase only where its words stand in a
/// row (one mark from its first word to its last); negated terms and filter fields are not
/// marked. Given the field a text is from, a word the query looks for in other fields only
/// (`headline:storm`) is not marked in it. Matching uses the same folding as the index, so `cafe`
/// marks `Café`.
public struct Highlighter: Sendable {
    /// Each term with the fields it is looked for in (`.all`: any).
    private var terms: [String: FieldSet] = [:]
    private var prefixes: [(text: String, fields: FieldSet)] = []
    private var phrases: [(terms: [String], lastIsPrefix: Bool, fields: FieldSet)] = []
    private var tokenizer: Tokenizer

    /// A highlighter for `query`, tokenizing with `options` (use the index's options).
    public init(query: Query, options: TokenizerOptions = TokenizerOptions()) {
        tokenizer = Tokenizer(options: options)
        collect(query, negated: false)
    }

    private mutating func collect(_ query: Query, negated: Bool) {
        switch query {
        case .term(let t, let f):
            guard !negated else { return }
            // A term looked for in two places (`headline:storm storm`) is marked in both.
            terms[t] = terms[t].map { $0 == .all || f == .all ? .all : $0.union(f) } ?? f
        case .prefix(let p, let f): if !negated { prefixes.append((p, f)) }
        case .phrase(let ts, let lastIsPrefix, let f): if !negated, !ts.isEmpty { phrases.append((ts, lastIsPrefix, f)) }
        case .and(let cs), .or(let cs): for c in cs { collect(c, negated: negated) }
        case .not(let c): collect(c, negated: true)
        case .filter: break
        }
    }

    /// Whether the folded term `term` is one the query looks for (a word of a phrase included).
    public func matches(_ term: String) -> Bool {
        terms[term] != nil || prefixes.contains { term.utf8.starts(with: $0.text.utf8) }
            || phrases.contains { phrase in
                phrase.terms.indices.contains { phraseWord(phrase.terms[$0], isPrefix: phrase.lastIsPrefix && $0 == phrase.terms.count - 1, matches: term) }
            }
    }

    private func phraseWord(_ word: String, isPrefix: Bool, matches term: String) -> Bool {
        isPrefix ? term.utf8.starts(with: word.utf8) : term == word
    }

    /// The text with each matched token wrapped in `open`…`close`, cut to the window of at most
    /// `maximumTokens` tokens holding the most matches and at most `maximumBytes` bytes of the
    /// text (a single word of a megabyte, or a long run of characters that are no tokens, made a
    /// snippet of that size), with `ellipsis` where text was cut; nil when nothing matches. When
    /// the window is longer than `maximumBytes`, the snippet starts shortly before its first match.
    /// `field`: the id of the text field `text` is from (nil: any field's words are marked).
    public mutating func snippet(
        of text: String, field: UInt8? = nil, maximumTokens: Int = 32, maximumBytes: Int = 1_024, open: String = "«",
        close: String = "»", ellipsis: String = "…"
    ) -> String? {
        var buffer = TokenBuffer()
        tokenizer.tokenize(text, into: &buffer)
        // Words and bigrams make the window; a matched joined form marks the span of its parts,
        // a run's trailing character its character.
        let units = buffer.tokens.filter { $0.kind != .joined && $0.kind != .trailing }
        guard !units.isEmpty else { return nil }
        let bytes = Array(text.utf8)
        let tokenTerms = buffer.tokens.map { buffer.term(of: $0) }
        func wanted(_ fields: FieldSet) -> Bool { field.map { fields.allows($0) } ?? true }
        // A bigram found by its first character alone (a lone ideograph's prefix, `雨`) marks
        // that character, not the one after it.
        func end(of token: Token, firstCharacterOnly: Bool) -> UInt32 {
            guard firstCharacterOnly, token.kind == .bigram, Int(token.sourceStart) < bytes.count else { return token.sourceEnd }
            let lead = bytes[Int(token.sourceStart)]
            return min(token.sourceEnd, token.sourceStart + (lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4))
        }
        var marked: [(UInt32, UInt32)] = []
        for (token, term) in zip(buffer.tokens, tokenTerms) {
            let byTerm = terms[term].map(wanted) ?? false
            let byPrefix = prefixes.filter { wanted($0.fields) && term.utf8.starts(with: $0.text.utf8) }
            guard byTerm || !byPrefix.isEmpty else { continue }
            let whole = byTerm || byPrefix.contains { $0.text.unicodeScalars.count > 1 }
            marked.append((token.sourceStart, end(of: token, firstCharacterOnly: !whole)))
        }
        if phrases.contains(where: { wanted($0.fields) }) {
            // The index matches a phrase by positions (a joined form shares its first part's, a
            // run's trailing character its last bigram's): so does the mark.
            var atPosition: [UInt32: [Int]] = [:]
            for (i, token) in buffer.tokens.enumerated() { atPosition[token.position, default: []].append(i) }
            for phrase in phrases where wanted(phrase.fields) {
                let last = phrase.terms.count - 1
                for (first, term) in zip(buffer.tokens, tokenTerms) where phraseWord(phrase.terms[0], isPrefix: phrase.lastIsPrefix && last == 0, matches: term) {
                    var stop = first.sourceEnd
                    var found = true
                    for i in phrase.terms.indices.dropFirst() {
                        let isPrefix = phrase.lastIsPrefix && i == last
                        let (position, overflow) = first.position.addingReportingOverflow(UInt32(i))
                        guard !overflow,
                            let next = atPosition[position]?.first(where: { phraseWord(phrase.terms[i], isPrefix: isPrefix, matches: tokenTerms[$0]) })
                        else {
                            found = false
                            break
                        }
                        let oneCharacter = isPrefix && phrase.terms[i].unicodeScalars.count == 1
                        stop = max(stop, end(of: buffer.tokens[next], firstCharacterOnly: oneCharacter))
                    }
                    if found { marked.append((first.sourceStart, stop)) }
                }
            }
        }
        guard !marked.isEmpty else { return nil }
        marked.sort { $0.0 < $1.0 }
        var merged: [(UInt32, UInt32)] = []
        for range in marked {
            if let last = merged.last, range.0 <= last.1 {
                merged[merged.count - 1].1 = max(last.1, range.1)
            } else {
                merged.append(range)
            }
        }
        // The window of `maximumTokens` units with the most marked starts (earliest on ties).
        let width = max(1, min(maximumTokens, units.count))
        // Units and marked ranges both ascend: one merge pass (a scan of the ranges for each unit
        // was quadratic, minutes for a document of a million matches).
        var hits = [Int](repeating: 0, count: units.count)
        var range = 0
        for (i, unit) in units.enumerated() {
            while range < merged.count && merged[range].1 <= unit.sourceStart { range += 1 }
            if range < merged.count && unit.sourceStart >= merged[range].0 { hits[i] = 1 }
        }
        var best = 0
        var bestCount = hits[0..<width].reduce(0, +)
        var running = bestCount
        if units.count > width {
            for start in 1...(units.count - width) {
                running += hits[start + width - 1] - hits[start - 1]
                if running > bestCount {
                    best = start
                    bestCount = running
                }
            }
        }
        var from = best == 0 ? 0 : Int(units[best].sourceStart)
        let to = best + width == units.count ? bytes.count : Int(units[best + width - 1].sourceEnd)
        var budget = max(1, min(maximumBytes, bytes.count))  // `.max` must not overflow `start + budget`
        // A window longer than the budget (long tokens: Thai clauses, a huge word) was cut before
        // its marks: start it at the unit that leaves about a quarter of the budget before the first.
        if to - from > budget, let first = merged.first(where: { Int($0.1) > from }), Int(first.0) < to,
            Int(first.0) - from > budget / 2
        {
            let target = Int(first.0) - budget / 4
            let window = units[best..<(best + width)]
            from = min(window.first { Int($0.sourceStart) >= target }.map { Int($0.sourceStart) } ?? Int(first.0), Int(first.0))
        }
        var out = from == 0 ? "" : ellipsis
        // Appends the text from `start` towards `end` while the budget lasts, cut at a character
        // boundary; returns where it stopped.
        func take(_ start: Int, _ end: Int) -> Int {
            var stop = min(end, start + budget)
            while stop > start, stop < end, bytes[stop] & 0xC0 == 0x80 { stop -= 1 }
            out += String(decoding: bytes[start..<stop], as: UTF8.self)
            budget -= stop - start
            return stop
        }
        var cursor = from
        var cut = false
        for (start, end) in merged where Int(end) > from && Int(start) < to {
            let s = max(Int(start), from)
            let e = min(Int(end), to)
            if take(cursor, s) < s {
                cut = true
                break
            }
            out += open
            cursor = take(s, e)
            out += close
            if cursor < e {
                cut = true
                break
            }
        }
        if !cut { cut = take(cursor, to) < to }
        if cut || to < bytes.count { out += ellipsis }
        return out
    }
}
