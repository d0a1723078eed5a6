public import Foundation
import QuireCodec
internal import QuireLMDB
import QuireText

/// How search results are ordered.
public enum SearchSort: String, Sendable, Hashable, CaseIterable {
    /// By BM25F score, best first (ties by key).
    case relevance
    /// By the collection's date field, newest first (undated last).
    case newest
    /// By the collection's date field, oldest first (undated last).
    case oldest
}

/// One search result.
public struct SearchHit: Sendable, Hashable {
    /// The record's identification key.
    public var key: StoreKey
    /// Its BM25F score (the same whatever the sort).
    public var score: Double
    /// Its date, when the collection has a date field and the sort or a date filter read it.
    public var date: Date?
}

/// A full-text query that could not be parsed, and where.
public struct SearchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, in words (`unterminated phrase (a " with no closing quote)`).
    public var reason: String
    /// The 0-based character (grapheme) offset in the query.
    public var position: Int
    /// `reason at character N` (1-based), as QuireText words it.
    public var description: String

    init(_ error: QueryError) {
        let text = error.description
        if let range = text.range(of: " at character ", options: .backwards) {
            reason = String(text[..<range.lowerBound])
        } else {
            reason = text
        }
        position = error.position
        description = text
    }
}

/// Marks a query's matched terms in a text (QuireText's `Highlighter`, with the index's folding).
public struct SearchHighlighter: Sendable {
    private var highlighter: Highlighter

    /// A highlighter for `query`, parsed against `definition` (the collection's search index).
    /// - Throws: ``SearchError`` for a malformed query.
    public init(query: String, definition: SearchDefinition) throws(SearchError) {
        do {
            highlighter = Highlighter(query: try QueryParser(schema: definition.textSchema).parse(query))
        } catch {
            throw SearchError(error)
        }
    }

    /// The text cut to at most `maximumTokens` tokens around the matches, each match wrapped in
    /// `open`…`close`; nil when nothing matches.
    public mutating func snippet(of text: String, maximumTokens: Int = 32, open: String = "«", close: String = "»")
        -> String?
    {
        highlighter.snippet(of: text, maximumTokens: maximumTokens, open: open, close: close)
    }
}

extension SearchDefinition {
    /// The query schema: the text fields and the filter fields.
    var textSchema: TextSchema {
        TextSchema(
            fields: fields.map { TextSchema.Field(name: $0.name, id: $0.id, weight: $0.weight) },
            filterFields: Set(filters.map(\.name)))
    }
}

extension StoreReading where Self: ~Copyable {
    /// The records of `collection` matching a full-text query (docs/SEARCH.md, "The query
    /// language"), at most `limit`, ranked by BM25F or ordered by date, dated in
    /// `since...until` when given (both inclusive; either bound alone works).
    ///
    /// - Throws: ``SearchError`` for a malformed query (with its position);
    ///   `StoreError.unknownCollection` when the collection has no search index.
    public func search<V>(
        _ query: String, in collection: StoreCollection<V>, limit: Int = 20, sort: SearchSort = .relevance,
        since: Date? = nil, until: Date? = nil
    ) throws -> [SearchHit] {
        try search(query, inCollectionNamed: collection.name, limit: limit, sort: sort, since: since, until: until)
    }

    /// ``search(_:in:limit:sort:since:until:)`` by collection name (for tools without the Swift types).
    public func search(
        _ query: String, inCollectionNamed name: String, limit: Int = 20, sort: SearchSort = .relevance,
        since: Date? = nil, until: Date? = nil
    ) throws -> [SearchHit] {
        let c = try store.resolved(name)
        guard let dbs = c.search else {
            throw StoreError(.unknownCollection, "collection '\(name)' has no search index")
        }
        let parsed: Query
        do {
            parsed = try QueryParser(schema: dbs.definition.textSchema).parse(query)
        } catch {
            throw SearchError(error)
        }
        guard limit > 0 else { return [] }
        let state = try withValue(forKey: SearchDatabases.stateKey, in: dbs.state) { try SearchState($0) } ?? SearchState()
        var evaluation = SearchEvaluation(dbs: dbs, state: state)
        let matched = try evaluate(parsed, negated: false, &evaluation, c)
        let scorer = BM25(weights: evaluation.weights)
        let averages = state.averageLengths(count: evaluation.weights.count)
        let needDates = sort != .relevance || since != nil || until != nil
        let dateField = dbs.definition.dateField
        if needDates && dateField == nil {
            throw StoreError(.unknownCollection, "collection '\(name)' has no date field for search by date")
        }
        var hits: [(physical: [UInt8], score: Double, date: Date?)] = []
        hits.reserveCapacity(matched.count)
        var frequencies = [UInt32](repeating: 0, count: evaluation.weights.count)
        var lengths = [UInt32](repeating: 0, count: evaluation.weights.count)
        for number in matched {
            var numberKey = [UInt8]()
            SearchDatabases.appendNumber(number, to: &numberKey)
            guard
                let physical = try withValue(forKey: numberKey, in: dbs.numbers, { bytes -> [UInt8] in
                    var offset = 0
                    for f in 0..<16 {
                        let l = UInt32(truncatingIfNeeded: try SearchVarint.read(bytes, &offset))
                        if f < lengths.count { lengths[f] = l }
                    }
                    return Array(bytes[offset...])
                })
            else { continue }
            var date: Date?
            if needDates, let dateField {
                let value = try withValue(forKey: physical, in: c.records) { bytes in
                    try withFieldRetry { table in
                        try CompactField.value(at: dateField, in: bytes, fields: table, options: c.decoder.options)
                    }
                }
                if case .date(let d)?? = value { date = d }
                if since != nil || until != nil {
                    guard let d = date else { continue }
                    if let since, d < since { continue }
                    if let until, d > until { continue }
                }
            }
            var score = 0.0
            for leaf in evaluation.leaves {
                guard let at = leaf.index(of: number) else { continue }
                let stride = evaluation.weights.count
                for f in 0..<stride { frequencies[f] = leaf.frequencies[at * stride + f] }
                score += frequencies.withUnsafeBufferPointer { fr in
                    lengths.withUnsafeBufferPointer { le in
                        averages.withUnsafeBufferPointer { av in
                            scorer.termScore(
                                idf: leaf.idf, weightedFrequency: scorer.weightedFrequency(frequencies: fr, lengths: le, averageLengths: av))
                        }
                    }
                }
            }
            hits.append((physical, score, date))
        }
        switch sort {
        case .relevance:
            hits.sort { $0.score != $1.score ? $0.score > $1.score : $0.physical.lexicographicallyPrecedes($1.physical) }
        case .newest, .oldest:
            let newest = sort == .newest
            hits.sort { a, b in
                switch (a.date, b.date) {
                case let (x?, y?) where x != y: return newest ? x > y : x < y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return a.score != b.score ? a.score > b.score : a.physical.lexicographicallyPrecedes(b.physical)
                }
            }
        }
        return try hits.prefix(limit).map { hit in
            SearchHit(key: try hit.physical.withUnsafeBytes { try logicalKey($0) }, score: hit.score, date: hit.date)
        }
    }

    /// The sorted document numbers matching `query`; records the scoring leaves (those not under a NOT).
    private func evaluate(_ query: Query, negated: Bool, _ e: inout SearchEvaluation, _ c: RegisteredCollection) throws
        -> [UInt32]
    {
        switch query {
        case .term(let term, let fields):
            let leaf = try termLeaf(Array(term.utf8), fields: fields, &e)
            if !negated { e.leaves.append(leaf) }
            return leaf.documents
        case .prefix(let prefix, let fields):
            var union: [UInt32] = []
            try forEachExpansion(of: Array(prefix.utf8), e) { term in
                let leaf = try termLeaf(term, fields: fields, &e)
                if !negated { e.leaves.append(leaf) }
                union = SearchSets.union(union, leaf.documents)
            }
            return union
        case .phrase(let terms, let lastIsPrefix, let fields):
            let leaf = try phraseLeaf(terms.map { Array($0.utf8) }, lastIsPrefix: lastIsPrefix, fields: fields, &e)
            if !negated { e.leaves.append(leaf) }
            return leaf.documents
        case .and(let children):
            var result: [UInt32]?
            var excluded: [[UInt32]] = []
            for child in children {
                if case .not(let inner) = child {
                    excluded.append(try evaluate(inner, negated: true, &e, c))
                } else {
                    let docs = try evaluate(child, negated: negated, &e, c)
                    result = result.map { SearchSets.intersection($0, docs) } ?? docs
                }
            }
            var out = result ?? []
            for docs in excluded { out = SearchSets.difference(out, docs) }
            return out
        case .or(let children):
            var out: [UInt32] = []
            for child in children { out = SearchSets.union(out, try evaluate(child, negated: negated, &e, c)) }
            return out
        case .not(let inner):
            // Only reached outside an AND, which the parser refuses; matches nothing.
            _ = try evaluate(inner, negated: true, &e, c)
            return []
        case .filter(let name, let value):
            return try filterDocuments(name, value, e, c)
        }
    }

    private func termLeaf(_ term: [UInt8], fields: FieldSet, _ e: inout SearchEvaluation) throws -> SearchLeaf {
        var leaf = SearchLeaf()
        let stride = e.weights.count
        var count = 0
        var row = [UInt32](repeating: 0, count: stride)
        try forEachBlock(of: term, e) { cursor in
            count += cursor.documentCount
            while let number = try cursor.next() {
                for f in 0..<stride { row[f] = 0 }
                var any = false
                cursor.forEachField { field, n in
                    if fields.allows(field), Int(field) < stride {
                        row[Int(field)] += n
                        any = true
                    }
                }
                if any {
                    leaf.documents.append(number)
                    leaf.frequencies.append(contentsOf: row)
                }
            }
        }
        leaf.idf = BM25.idf(documentCount: Int(e.state.documents), documentFrequency: count)
        return leaf
    }

    /// Calls `body` with a cursor over each of `term`'s posting blocks, in document order.
    private func forEachBlock(of term: [UInt8], _ e: SearchEvaluation, _ body: (inout PostingCursor) throws -> Void) throws {
        var prefix = term
        prefix.append(0)
        for entry in entries(in: e.dbs.postings, range: .prefix(prefix)) where entry.key.count == prefix.count + 4 {
            do {
                var cursor = try PostingCursor(entry.value)
                try body(&cursor)
            } catch let error as PostingFormatError {
                throw StoreError(.corrupted, "search index: '\(String(decoding: term, as: UTF8.self))': \(error)")
            }
        }
        try checkIntact()
    }

    /// Each distinct stored term starting with `prefix`, in order.
    private func forEachExpansion(of prefix: [UInt8], _ e: SearchEvaluation, _ body: ([UInt8]) throws -> Void) throws {
        var last: [UInt8]?
        var terms: [[UInt8]] = []
        for entry in entries(in: e.dbs.postings, range: .prefix(prefix)) {
            guard let zero = entry.key.firstIndex(of: 0) else { continue }
            let term = entry.key[..<zero]
            if let l = last, l.elementsEqual(term) { continue }
            let t = Array(term)
            last = t
            terms.append(t)
        }
        for t in terms { try body(t) }
    }

    /// The occurrences of `term` per document, in document order.
    private func occurrences(of term: [UInt8], _ e: SearchEvaluation) throws -> (numbers: [UInt32], lists: [[Occurrence]], count: Int) {
        var numbers: [UInt32] = []
        var lists: [[Occurrence]] = []
        try forEachBlock(of: term, e) { cursor in
            while let number = try cursor.next() {
                var list: [Occurrence] = []
                cursor.forEachOccurrence { list.append($0) }
                numbers.append(number)
                lists.append(list)
            }
        }
        return (numbers, lists, numbers.count)
    }

    private func phraseLeaf(_ terms: [[UInt8]], lastIsPrefix: Bool, fields: FieldSet, _ e: inout SearchEvaluation) throws
        -> SearchLeaf
    {
        let stride = e.weights.count
        var perTerm: [(numbers: [UInt32], lists: [[Occurrence]])] = []
        var idf = 0.0
        let documentCount = Int(e.state.documents)
        for (i, term) in terms.enumerated() {
            if lastIsPrefix && i == terms.count - 1 {
                var merged: [UInt32: [Occurrence]] = [:]
                try forEachExpansion(of: term, e) { expanded in
                    let found = try occurrences(of: expanded, e)
                    for (n, list) in zip(found.numbers, found.lists) { merged[n, default: []].append(contentsOf: list) }
                }
                let numbers = merged.keys.sorted()
                perTerm.append((numbers, numbers.map { merged[$0]!.sorted() }))
                idf += BM25.idf(documentCount: documentCount, documentFrequency: numbers.count)
            } else {
                let found = try occurrences(of: term, e)
                perTerm.append((found.numbers, found.lists))
                idf += BM25.idf(documentCount: documentCount, documentFrequency: found.count)
            }
        }
        var leaf = SearchLeaf()
        leaf.idf = idf
        guard !perTerm.isEmpty else { return leaf }
        var candidates = perTerm[0].numbers
        for t in perTerm.dropFirst() { candidates = SearchSets.intersection(candidates, t.numbers) }
        var cursors = [Int](repeating: 0, count: perTerm.count)
        var counts: [UInt32] = []
        for number in candidates {
            var lists: [[Occurrence]] = []
            for (i, t) in perTerm.enumerated() {
                while t.numbers[cursors[i]] < number { cursors[i] += 1 }
                lists.append(t.lists[cursors[i]])
            }
            counts.removeAll(keepingCapacity: true)
            withBuffers(lists) { buffers in PhraseMatcher.frequencies(buffers, fields: fields, into: &counts) }
            guard counts.contains(where: { $0 > 0 }) else { continue }
            leaf.documents.append(number)
            for f in 0..<stride { leaf.frequencies.append(f < counts.count ? counts[f] : 0) }
        }
        return leaf
    }

    private func withBuffers(_ lists: [[Occurrence]], _ body: ([UnsafeBufferPointer<Occurrence>]) -> Void) {
        func step(_ i: Int, _ acc: inout [UnsafeBufferPointer<Occurrence>]) {
            if i == lists.count { return body(acc) }
            lists[i].withUnsafeBufferPointer { buffer in
                acc.append(buffer)
                step(i + 1, &acc)
                acc.removeLast()
            }
        }
        var acc: [UnsafeBufferPointer<Occurrence>] = []
        step(0, &acc)
    }

    /// The documents whose filter field `name` is exactly `value`, through the collection's index.
    private func filterDocuments(_ name: String, _ value: String, _ e: SearchEvaluation, _ c: RegisteredCollection) throws
        -> [UInt32]
    {
        guard let filter = e.dbs.definition.filters.first(where: { $0.name == name }),
            let position = c.definition.indexes.firstIndex(where: { $0.name == filter.index })
        else {
            throw StoreError(.unknownCollection, "search filter '\(name)' has no index in '\(c.definition.name)'")
        }
        var numbers: [UInt32] = []
        guard let indexKey = try storedKey(.string(value)) else { return [] }
        for entry in duplicates(of: indexKey, in: c.indexes[position]) {
            if let n = try withValue(forKey: entry.value, in: e.dbs.documents, { SearchDatabases.number($0, at: 0) }), let n {
                numbers.append(n)
            }
        }
        numbers.sort()
        return numbers
    }
}

/// What one query evaluation carries: the index, its counts and the leaves that score.
struct SearchEvaluation {
    let dbs: SearchDatabases
    let state: SearchState
    let weights: [Double]
    var leaves: [SearchLeaf] = []

    init(dbs: SearchDatabases, state: SearchState) {
        self.dbs = dbs
        self.state = state
        var w = [Double](repeating: 0, count: Int(dbs.definition.fields.map(\.id).max() ?? 0) + 1)
        for field in dbs.definition.fields { w[Int(field.id)] = field.weight }
        weights = w
    }
}

/// One scoring term (an expanded prefix term, or a phrase): the documents it matches, their
/// per-field frequencies (`weights.count` a document) and its idf.
struct SearchLeaf {
    var documents: [UInt32] = []
    var frequencies: [UInt32] = []
    var idf = 0.0

    func index(of number: UInt32) -> Int? {
        var low = 0
        var high = documents.count
        while low < high {
            let mid = (low + high) / 2
            if documents[mid] < number { low = mid + 1 } else { high = mid }
        }
        return low < documents.count && documents[low] == number ? low : nil
    }
}

/// Set operations on sorted, distinct document numbers.
enum SearchSets {
    static func intersection(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var out: [UInt32] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] { i += 1 } else if a[i] > b[j] { j += 1 } else {
                out.append(a[i])
                i += 1
                j += 1
            }
        }
        return out
    }

    static func union(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [UInt32] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                out.append(a[i])
                i += 1
            } else if i == a.count || b[j] < a[i] {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
                j += 1
            }
        }
        return out
    }

    static func difference(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var out: [UInt32] = []
        var j = 0
        for x in a {
            while j < b.count && b[j] < x { j += 1 }
            if j < b.count && b[j] == x { continue }
            out.append(x)
        }
        return out
    }
}
