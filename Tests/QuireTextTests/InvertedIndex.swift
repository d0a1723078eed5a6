import QuireNews
import QuireText

/// An in-memory inverted index built from QuireText tokens, with posting lists in QuireText's
/// encoding, and an evaluator of parsed queries over it: the store's future index in miniature.
struct InvertedIndex {
    /// Encoded posting lists by term.
    var lists: [String: [UInt8]] = [:]
    /// The terms in byte order, for prefix lookups.
    var sortedTerms: [String] = []
    var sections: [String?] = []
    var documentCount = 0

    init(articles: [Article], options: TokenizerOptions = TokenizerOptions(joinHyphenated: false)) {
        var tokenizer = Tokenizer(options: options)
        var buffer = TokenBuffer()
        var occurrences: [String: [(UInt32, Occurrence)]] = [:]
        for (index, article) in articles.enumerated() {
            buffer.removeAll()
            for column in oracleColumns {
                if let text = column.text(article) { tokenizer.tokenize(text, field: column.id, into: &buffer) }
            }
            for token in buffer.tokens {
                occurrences[buffer.term(of: token), default: []].append(
                    (UInt32(index), Occurrence(field: token.field, position: token.position)))
            }
            sections.append(article.section)
        }
        documentCount = articles.count
        var encoder = PostingListEncoder()
        for (term, list) in occurrences {
            // Tokens arrive by document; sort each document's occurrences by field then position.
            let sorted = list.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            var start = 0
            while start < sorted.count {
                var end = start
                while end < sorted.count, sorted[end].0 == sorted[start].0 { end += 1 }
                encoder.append(document: sorted[start].0, occurrences: sorted[start..<end].lazy.map(\.1))
                start = end
            }
            var bytes: [UInt8] = []
            encoder.finish(into: &bytes)
            lists[term] = bytes
        }
        sortedTerms = lists.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Each document holding `term` with its occurrences in `fields`, decoded through a cursor.
    func postings(_ term: String, fields: FieldSet) -> [UInt32: [Occurrence]] {
        guard let bytes = lists[term] else { return [:] }
        var out: [UInt32: [Occurrence]] = [:]
        bytes.withUnsafeBytes { raw in
            guard var cursor = try? PostingCursor(raw) else { return }
            while let document = try? cursor.next() {
                var kept: [Occurrence] = []
                cursor.forEachOccurrence { if fields.allows($0.field) { kept.append($0) } }
                if !kept.isEmpty { out[document] = kept }
            }
        }
        return out
    }

    /// The terms starting with `prefix` (byte-wise), by binary search over the sorted terms.
    func terms(withPrefix prefix: String) -> ArraySlice<String> {
        var low = 0
        var high = sortedTerms.count
        while low < high {
            let mid = (low + high) / 2
            if sortedTerms[mid].utf8.lexicographicallyPrecedes(prefix.utf8) { low = mid + 1 } else { high = mid }
        }
        var end = low
        while end < sortedTerms.count, sortedTerms[end].utf8.starts(with: prefix.utf8) { end += 1 }
        return sortedTerms[low..<end]
    }

    /// Occurrences of a term, or of every term with a prefix, merged by document.
    func occurrences(_ term: String, prefix: Bool, fields: FieldSet) -> [UInt32: Set<Occurrence>] {
        var out: [UInt32: Set<Occurrence>] = [:]
        for t in prefix ? Array(terms(withPrefix: term)) : [term] {
            for (document, list) in postings(t, fields: fields) { out[document, default: []].formUnion(list) }
        }
        return out
    }

    /// The documents matching `query`.
    func evaluate(_ query: Query) -> Set<UInt32> {
        switch query {
        case .term(let t, let fields):
            return Set(occurrences(t, prefix: false, fields: fields).keys)
        case .prefix(let p, let fields):
            return Set(occurrences(p, prefix: true, fields: fields).keys)
        case .phrase(let terms, let lastIsPrefix, let fields):
            // Candidates hold every term; PhraseMatcher checks the positions.
            let lists = terms.enumerated().map { index, term in
                occurrences(term, prefix: lastIsPrefix && index == terms.count - 1, fields: fields)
            }
            var candidates = Set(lists[0].keys)
            for list in lists.dropFirst() { candidates.formIntersection(list.keys) }
            return candidates.filter { document in
                let sorted = lists.map { $0[document]!.sorted() }
                return withBuffers(sorted) { buffers in
                    var found = false
                    PhraseMatcher.forEachMatch(buffers, fields: fields) { _ in found = true }
                    return found
                }
            }
        case .and(let children):
            var result: Set<UInt32>? = nil
            for child in children {
                if case .not = child { continue }
                let matched = evaluate(child)
                result = result.map { $0.intersection(matched) } ?? matched
            }
            for child in children {
                if case .not(let negated) = child { result?.subtract(evaluate(negated)) }
            }
            return result ?? []
        case .or(let children):
            return children.reduce(into: Set<UInt32>()) { $0.formUnion(evaluate($1)) }
        case .not(let child):
            return Set(0..<UInt32(documentCount)).subtracting(evaluate(child))
        case .filter(let name, let value):
            guard name == "section" else { return [] }
            return Set(sections.indices.filter { sections[$0] == value }.map { UInt32($0) })
        }
    }
}

/// Calls `body` with buffer pointers to each array of `arrays` (valid only inside `body`).
func withBuffers<R>(_ arrays: [[Occurrence]], _ body: ([UnsafeBufferPointer<Occurrence>]) -> R) -> R {
    func recurse(_ index: Int, _ acc: [UnsafeBufferPointer<Occurrence>]) -> R {
        if index == arrays.count { return body(acc) }
        return arrays[index].withUnsafeBufferPointer { recurse(index + 1, acc + [$0]) }
    }
    return recurse(0, [])
}
