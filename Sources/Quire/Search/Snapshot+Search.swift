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

/// A full-text query that could not be parsed (and where), or one too broad to rank.
public struct SearchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong: the query text, or the query's cost.
    public enum Kind: Sendable, Hashable {
        /// The query cannot be parsed (docs/SEARCH.md has the language).
        case malformed
        /// The query asks for more than one search may do: more words than the
        /// parser takes (`QueryParser.maximumTerms`), or ranking it would hold more postings
        /// than ``StoreOptions/searchPostingLimit``.
        case tooBroad
    }

    /// What went wrong.
    public var kind: Kind
    /// Why, in words (`unterminated phrase (a " with no closing quote)`).
    public var reason: String
    /// The 0-based character (grapheme) offset in the query.
    public var position: Int
    /// `reason at character N` (1-based), as QuireText words it.
    public var description: String

    init(_ error: QueryError) {
        if case .tooManyTerms = error.reason { kind = .tooBroad } else { kind = .malformed }
        let text = error.description
        if let range = text.range(of: " at character ", options: .backwards) {
            reason = String(text[..<range.lowerBound])
        } else {
            reason = text
        }
        position = error.position
        description = text
    }

    /// The description as a tool shows it: `malformed query: …` for a query it cannot parse.
    public var message: String { kind == .malformed ? "malformed query: \(description)" : description }

    init(tooBroad limit: Int) {
        kind = .tooBroad
        reason =
            "the query is too broad to rank: its words match more than \(limit) postings (searchPostingLimit); "
            + "leave out the commonest words or add rarer ones"
        position = 0
        description = reason
    }
}

/// Marks a query's matched terms in a text (QuireText's `Highlighter`, with the index's folding).
public struct SearchHighlighter: Sendable {
    private var highlighter: Highlighter
    /// The text field id of each record field path the index reads (`leadParagraph` → `lead`'s).
    private var fieldIDs: [String: UInt8] = [:]

    /// A highlighter for `query`, parsed against `definition` (the collection's search index).
    /// Its tokenizer rules are those of new indexes; ``StoreReading/searchHighlighter(for:inCollectionNamed:)``
    /// takes the rules of the index a search ran on (an index made before 2026-12-06 keeps older ones).
    /// - Throws: ``SearchError`` for a malformed query.
    public init(query: String, definition: SearchDefinition) throws(SearchError) {
        try self.init(query: query, definition: definition, rules: TokenizerOptions())
    }

    init(query: String, definition: SearchDefinition, rules: TokenizerOptions) throws(SearchError) {
        do {
            let parsed = try QueryParser(schema: definition.textSchema, revision: rules.revision).parse(query)
            highlighter = Highlighter(query: parsed, options: rules)
            for field in definition.fields { if let path = field.path { fieldIDs[path] = field.id } }
        } catch {
            throw SearchError(error)
        }
    }

    /// The text cut to at most `maximumTokens` tokens around the matches, each match wrapped in
    /// `open`…`close`; nil when nothing matches. A phrase is marked where its words stand in a row.
    /// `recordField`: the path of the record field the text is from (a ``StoreSearchField/path``,
    /// such as `leadParagraph`), so that a word the query looks for in other fields only
    /// (`headline:storm`) is not marked; nil, or a field the index does not read: any field's words.
    public mutating func snippet(
        of text: String, fromRecordField recordField: String? = nil, maximumTokens: Int = 32, open: String = "«",
        close: String = "»"
    ) -> String? {
        highlighter.snippet(
            of: text, field: recordField.flatMap { fieldIDs[$0] }, maximumTokens: maximumTokens, open: open, close: close)
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
    /// `since...until` when given (both inclusive; either bound alone works), and with each
    /// filter field in `filters` (such as `["section": "Science"]`) exactly the value given, as
    /// `section:"Science"` in the query would, whatever the query's text.
    ///
    /// - Throws: ``SearchError`` for a malformed query (with its position) or a filter the
    ///   index does not have; `StoreError.unknownCollection` when the collection has no search index.
    public func search<V>(
        _ query: String, in collection: StoreCollection<V>, limit: Int = 20, sort: SearchSort = .relevance,
        since: Date? = nil, until: Date? = nil, filters: [String: String] = [:]
    ) throws -> [SearchHit] {
        try search(
            query, inCollectionNamed: collection.name, limit: limit, sort: sort, since: since, until: until, filters: filters)
    }

    /// The named collection and its full-text index's databases.
    /// - Throws: `StoreError.unknownCollection` when there is no such collection or it has no search index.
    private func searchIndex(ofCollectionNamed name: String) throws -> (RegisteredCollection, SearchDatabases) {
        let c = try store.resolved(name)
        guard let dbs = c.search else {
            throw StoreError(.unknownCollection, "collection '\(name)' has no search index")
        }
        return (c, dbs)
    }

    /// A highlighter for `query` with the tokenizer rules of the named collection's full-text
    /// index, so that a snippet marks what the search matched.
    /// - Throws: ``SearchError`` for a malformed query; `StoreError` when the collection has no
    ///   search index.
    public func searchHighlighter(for query: String, inCollectionNamed name: String) throws -> SearchHighlighter {
        let (_, dbs) = try searchIndex(ofCollectionNamed: name)
        let rules = try SearchState.stored(dbs, lmdb).tokenizerOptions
        return try SearchHighlighter(query: query, definition: dbs.definition, rules: rules)
    }

    /// ``search(_:in:limit:sort:since:until:filters:)`` by collection name (for tools without the Swift types).
    public func search(
        _ query: String, inCollectionNamed name: String, limit: Int = 20, sort: SearchSort = .relevance,
        since: Date? = nil, until: Date? = nil, filters: [String: String] = [:]
    ) throws -> [SearchHit] {
        let (c, dbs) = try searchIndex(ofCollectionNamed: name)
        try _context.writeState?.flushPendingSearch(lmdb)  // inside a write: see its own puts
        var parsed: Query
        let schema = dbs.definition.textSchema
        let state = try SearchState.stored(dbs, lmdb)
        do {
            // The index's tokenizer rules: an index made before revision 2 is queried by its own.
            parsed = try QueryParser(schema: schema, revision: state.tokenizerOptions.revision).parse(query)
        } catch {
            throw SearchError(error)
        }
        if !filters.isEmpty {
            // Joined to the parsed query, not pasted into its text: a value needs no quoting,
            // and no text of the query can escape the filter (`a) OR (b`).
            var restricted = [parsed]
            for (field, value) in filters.sorted(by: { $0.key < $1.key }) {
                guard schema.filterFields.contains(field.lowercased()) else {
                    throw SearchError(QueryError(.unknownField(field), at: 0))
                }
                restricted.append(.filter(name: field.lowercased(), value: value))
            }
            parsed = .and(restricted)
        }
        guard limit > 0 else { return [] }
        let buffers = store.searchQueryBuffers
        var evaluation = try SearchEvaluation(dbs: dbs, state: state, buffers: buffers)
        evaluation.postingLimit = store.options.searchPostingLimit
        if state.segmented { evaluation.segments = try state.segmentKeys.starts(try lmdb.cursor(in: evaluation.postings)) }
        let matched = try evaluate(parsed, negated: false, &evaluation, c)
        let scorer = BM25(weights: evaluation.weights)
        let averages = state.averageLengths(count: evaluation.weights.count)
        let needDates = sort != .relevance || since != nil || until != nil
        let dateField = dbs.definition.dateField
        if needDates && dateField == nil {
            throw StoreError(.unknownCollection, "collection '\(name)' has no date field for search by date")
        }
        // Each match's field lengths (`stride` a kept match, in `lengths`) and, when needed, its
        // date; those outside the dates dropped. Sized once: a common term matches most documents.
        let stride = evaluation.weights.count
        let inDates = try withinDates(matched, since: since, until: until, SearchDocumentEntries(dbs, state), c)
        // By date, many matches: those the date index gives first (and every match again in the
        // rare case that they fill no page: a boundary date outside the bounds by less than a
        // millisecond, an entry without its number entry).
        var narrowed = sort == .relevance ? nil : try dateOrderedCandidates(
            inDates, newest: sort == .newest, limit: limit, since: since, until: until, SearchDocumentEntries(dbs, state),
            c)
        while true {
            let candidates = narrowed ?? inDates
            var kept = buffers.numbers(capacity: candidates.count)
            var dates: [Date?] = []
            var lengths = buffers.numbers(capacity: candidates.count * stride)
            lengths.append(contentsOf: repeatElement(0, count: candidates.count * stride))
            if needDates { dates.reserveCapacity(candidates.count) }
            var numberKey = [UInt8](repeating: 0, count: 4)
            // One cursor for the ascending numbers: LMDB looks for a key on the cursor's current
            // page before descending from the root (a prefix's matches are most of the documents).
            let numbers = try cursor(in: dbs.numbers)
            for number in candidates {
                SearchDatabases.setNumber(number, in: &numberKey)
                // A dropped match's lengths are overwritten by the next one's (the same fields).
                let start = kept.count * stride
                var date: Date?
                let inRange = try numbers.seek(exactly: numberKey).map { entry -> Bool in
                    let bytes = entry.value
                    var offset = 0
                    for f in 0..<state.lengthFields {
                        let l = UInt32(truncatingIfNeeded: try SearchVarint.read(bytes, &offset))
                        if f < stride { lengths[start + f] = l }
                    }
                    guard needDates, let dateField else { return true }
                    guard bytes.count >= offset + state.checkBytes else {
                        throw StoreError(.corrupted, "search index: short number entry")
                    }
                    let physical = UnsafeRawBufferPointer(rebasing: bytes[(offset + state.checkBytes)...])
                    let value = try withValue(forKey: physical, in: c.records) { record in
                        try withFieldRetry { table in
                            try CompactField.value(at: dateField, in: record, fields: table, options: c.decoder.options)
                        }
                    }
                    if case .date(let d)?? = value { date = d }
                    guard since != nil || until != nil else { return true }
                    guard let d = date else { return false }
                    if let since, d < since { return false }
                    if let until, d > until { return false }
                    return true
                }
                guard inRange == true else { continue }
                kept.append(number)
                if needDates { dates.append(date) }
            }
            // Scores leaf by leaf: each leaf's documents are found among the kept ones by galloping
            // forward from the last one found, so a leaf costs about its postings whether it matches
            // most kept documents (a common term) or a few (one expansion of a prefix).
            var scores = buffers.reals(capacity: kept.count)
            scores.append(contentsOf: repeatElement(0, count: kept.count))
            var frequencies = [UInt32](repeating: 0, count: stride)
            averages.withUnsafeBufferPointer { av in
                lengths.withUnsafeBufferPointer { allLengths in
                    kept.withUnsafeBufferPointer { kept in
                        for leaf in evaluation.leaves {
                            var at = 0
                            for (k, number) in leaf.documents.enumerated() {
                                at = SearchSets.firstIndex(atLeast: number, in: kept, from: at)
                                guard at < kept.count else { break }
                                guard kept[at] == number else { continue }
                                for f in 0..<stride { frequencies[f] = leaf.frequencies[k * stride + f] }
                                let le = UnsafeBufferPointer(
                                    rebasing: allLengths[(at * stride)..<(at * stride + stride)])
                                scores[at] += leaf.weight * frequencies.withUnsafeBufferPointer { fr in
                                    scorer.termScore(
                                        idf: leaf.idf,
                                        weightedFrequency: scorer.weightedFrequency(
                                            frequencies: fr, lengths: le, averageLengths: av))
                                }
                            }
                        }
                    }
                }
            }
            // Record keys only for the hits that can make the page: by relevance, those scoring at
            // least the limit-th best score (ties are ordered by key); by date, all of them.
            var shortlist: [Int]
            if sort == .relevance, kept.count > limit {
                let threshold = SearchSets.largest(limit, of: scores)
                shortlist = []
                for i in kept.indices where scores[i] >= threshold { shortlist.append(i) }
            } else {
                shortlist = Array(kept.indices)
            }
            var hits: [(physical: [UInt8], score: Double, date: Date?)] = []
            hits.reserveCapacity(shortlist.count)
            for i in shortlist {
                SearchDatabases.setNumber(kept[i], in: &numberKey)
                let physical = try withValue(forKey: numberKey, in: dbs.numbers) { bytes -> [UInt8] in
                    Array(bytes[try state.keyOffset(inNumberEntry: bytes)...])
                }
                guard let physical else { continue }
                hits.append((physical, scores[i], needDates ? dates[i] : nil))
            }
            switch sort {
            case .relevance:
                hits.sort {
                    $0.score != $1.score ? $0.score > $1.score : $0.physical.lexicographicallyPrecedes($1.physical)
                }
            case .newest, .oldest:
                let newest = sort == .newest
                hits.sort { a, b in
                    switch (a.date, b.date) {
                    case let (x?, y?) where x != y: return newest ? x > y : x < y
                    case (nil, _?): return false
                    case (_?, nil): return true
                    default:
                        return a.score != b.score ? a.score > b.score : a.physical.lexicographicallyPrecedes(b.physical)
                    }
                }
            }
            let page = try hits.prefix(limit).map { hit in
                SearchHit(
                    key: try hit.physical.withUnsafeBytes { try logicalKey($0) }, score: hit.score, date: hit.date)
            }
            buffers.give(kept)
            buffers.give(lengths)
            buffers.give(scores)
            if narrowed != nil && page.count < limit {
                narrowed = nil
                continue
            }
            for leaf in evaluation.leaves {
                buffers.give(leaf.documents)
                buffers.give(leaf.frequencies)
            }
            buffers.give(matched)
            return page
        }
    }

    /// `matched` narrowed to the documents the collection's date index holds in `since...until`,
    /// when the collection has a date index on the date field and that range holds fewer entries
    /// than `matched` (it is read up to that count only); else `matched`. The exact dates are
    /// still checked per hit (index keys are whole milliseconds).
    private func withinDates(
        _ matched: [UInt32], since: Date?, until: Date?, _ documents: SearchDocumentEntries, _ c: RegisteredCollection
    ) throws -> [UInt32] {
        guard since != nil || until != nil, let dateIndex = SearchDateIndex(documents.dbs, c) else { return matched }
        var inRange: [UInt32] = []
        for entry in entries(in: dateIndex.database, range: SearchDateIndex.range(since: since, until: until)) {
            guard inRange.count < matched.count else { return matched }  // the words are more selective
            if let found = try documents.entry(of: entry.valueBytes, indexed: true, lmdb) { inRange.append(found.number) }
        }
        try checkIntact()
        inRange.sort()
        return SearchSets.intersection(matched, inRange)
    }

    /// The sorted document numbers matching `query`; records the scoring leaves (those not under a NOT).
    private func evaluate(_ query: Query, negated: Bool, _ e: inout SearchEvaluation, _ c: RegisteredCollection) throws
        -> [UInt32]
    {
        e.depth += 1
        defer { e.depth -= 1 }
        switch query {
        case .term(let term, let fields):
            let leaf = try termLeaf(Array(term.utf8), fields: fields, &e)
            if !negated { e.leaves.append(leaf) }
            return leaf.documents
        case .prefix(let prefix, let fields):
            let all = try expansions(of: Array(prefix.utf8), e)
            let total = all.reduce(0) { $0 + $1.documentCount }
            try e.hold(total)
            var documents = e.buffers.numbers(capacity: total)
            for var postings in all {
                let leaf = try leaf(&postings, fields: fields, e)
                documents.append(contentsOf: leaf.documents)
                if !negated { e.leaves.append(leaf) }
            }
            // One sort of all the expansions' documents, not a merge per expansion.
            documents.sort()
            var distinct = 0
            for d in documents where distinct == 0 || documents[distinct - 1] != d {
                documents[distinct] = d
                distinct += 1
            }
            documents.removeLast(documents.count - distinct)
            return documents
        case .phrase(let terms, let lastIsPrefix, let fields):
            let leaf = try phraseLeaf(terms.map { Array($0.utf8) }, lastIsPrefix: lastIsPrefix, fields: fields, &e)
            if !negated { e.leaves.append(leaf) }
            return leaf.documents
        case .and(let children):
            let firstLeaf = e.leaves.count
            var result: [UInt32]?
            var excluded: [[UInt32]] = []
            let counted = SearchLeaf.counted(children)
            let terms = counted.compactMap { child, repeats -> (String, FieldSet, Int)? in
                if case .term(let t, let fields) = child { return (t, fields, repeats) }
                return nil
            }
            if terms.count >= 2 { result = try intersectTerms(terms, negated: negated, &e) }
            for (child, repeats) in counted {
                if terms.count >= 2, case .term = child { continue }  // intersected above
                if case .not(let inner) = child {
                    excluded.append(try evaluate(inner, negated: true, &e, c))
                } else {
                    let docs = try evaluateRepeated(child, repeats, negated: negated, &e, c)
                    result = result.map { SearchSets.intersection($0, docs) } ?? docs
                }
            }
            var out = result ?? []
            for docs in excluded { out = SearchSets.difference(out, docs) }
            // A leaf scores only where its AND matched: under an OR, a document that matched
            // another branch must not gain from a phrase or a word of this one (the outermost AND
            // needs no such pass: the final scoring reads the matches only).
            if e.depth > 1 {
                for i in firstLeaf..<e.leaves.count { e.leaves[i].restrict(to: out, stride: e.weights.count) }
            }
            return out
        case .or(let children):
            var out: [UInt32] = []
            for (child, repeats) in SearchLeaf.counted(children) {
                out = SearchSets.union(out, try evaluateRepeated(child, repeats, negated: negated, &e, c))
            }
            return out
        case .not(let inner):
            // Only reached outside an AND, which the parser refuses; matches nothing.
            _ = try evaluate(inner, negated: true, &e, c)
            return []
        case .filter(let name, let value):
            return try filterDocuments(name, value, e, c)
        }
    }

    /// A child that occurs `repeats` times in its AND or OR, evaluated once: its leaves count
    /// `repeats` times in the scores, as each copy would, without holding a copy each.
    private func evaluateRepeated(
        _ child: Query, _ repeats: Int, negated: Bool, _ e: inout SearchEvaluation, _ c: RegisteredCollection
    ) throws -> [UInt32] {
        let first = e.leaves.count
        let documents = try evaluate(child, negated: negated, &e, c)
        for i in first..<e.leaves.count { e.leaves[i].weight *= Double(repeats) }
        return documents
    }

    private func termLeaf(_ term: [UInt8], fields: FieldSet, _ e: inout SearchEvaluation) throws -> SearchLeaf {
        var postings = try termPostings(term, e)
        try e.hold(postings.documentCount)
        return try leaf(&postings, fields: fields, e)
    }

    /// The scoring leaf of one term's postings: its documents with a count in `fields`, their
    /// per-field counts and its idf.
    private func leaf(_ postings: inout TermPostings, fields: FieldSet, _ e: SearchEvaluation) throws -> SearchLeaf {
        var leaf = SearchLeaf()
        let stride = e.weights.count
        var row = [UInt32](repeating: 0, count: stride)
        leaf.documents = e.buffers.numbers(capacity: postings.documentCount)
        leaf.frequencies = e.buffers.numbers(capacity: postings.documentCount * stride)
        while let number = try postings.next() {
            for f in 0..<stride { row[f] = 0 }
            var any = false
            postings.forEachField { field, n in
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
        leaf.idf = BM25.idf(documentCount: Int(e.state.documents), documentFrequency: postings.documentCount)
        return leaf
    }

    /// The documents holding every one of `terms` (each in its fields), by a leapfrog from the
    /// rarest (`TermPostings.nextCommon`: every list advances past the others, skipping blocks); each term's scoring
    /// leaf keeps only those documents (the only ones an AND can match).
    private func intersectTerms(_ terms: [(String, FieldSet, Int)], negated: Bool, _ e: inout SearchEvaluation) throws
        -> [UInt32]
    {
        var postings = try terms.map { try termPostings(Array($0.0.utf8), e) }
        let stride = e.weights.count
        var leaves = postings.indices.map { i -> SearchLeaf in
            var leaf = SearchLeaf()
            leaf.idf = BM25.idf(documentCount: Int(e.state.documents), documentFrequency: postings[i].documentCount)
            leaf.weight = Double(terms[i].2)
            return leaf
        }
        let order = postings.indices.sorted { postings[$0].documentCount < postings[$1].documentCount }
        // Every leaf holds the intersection, at most the rarest term's documents.
        try e.hold(postings[order[0]].documentCount * postings.count)
        var result: [UInt32] = []
        var rows = [UInt32](repeating: 0, count: stride * terms.count)
        var candidate: UInt32?
        candidates: while let common = try TermPostings.nextCommon(&postings, order: order, after: candidate) {
            candidate = common
            for i in postings.indices {
                var any = false
                for f in 0..<stride { rows[i * stride + f] = 0 }
                let fields = terms[i].1
                postings[i].forEachField { field, n in
                    if fields.allows(field), Int(field) < stride {
                        rows[i * stride + Int(field)] += n
                        any = true
                    }
                }
                guard any else { continue candidates }
            }
            result.append(common)
            for i in postings.indices {
                leaves[i].documents.append(common)
                leaves[i].frequencies.append(contentsOf: rows[(i * stride)..<(i * stride + stride)])
            }
        }
        if !negated { e.leaves.append(contentsOf: leaves) }
        return result
    }

    /// `term`'s posting blocks: the main ones, then each segment's.
    private func termPostings(_ term: [UInt8], _ e: SearchEvaluation, deferringGroups: Bool = false) throws -> TermPostings {
        var bounds: [UInt32] = []
        var values: [UnsafeRawBufferPointer] = []
        for segment in [nil] + e.segments.map(Optional.some) {
            var prefix = e.state.segmentKeys.keyTerm(term, in: segment)
            prefix.append(0)
            for entry in entries(in: e.postings, range: .prefix(prefix)) where entry.key.count == prefix.count + 4 {
                guard let bound = SearchDatabases.postingNumber(entry.key) else { continue }
                bounds.append(bound)
                values.append(entry.value)
            }
        }
        try checkIntact()
        return try TermPostings(term: term, bounds: bounds, values: values, deferringGroups: deferringGroups)
    }

    /// The posting blocks of each distinct stored term starting with `prefix`, in term order, in
    /// one pass over the prefix's key range (and one over each segment's).
    private func expansions(of prefix: [UInt8], _ e: SearchEvaluation, deferringGroups: Bool = false) throws -> [TermPostings] {
        // Each term's blocks, in the order of the sources (main, then the segments).
        var found: [(term: [UInt8], bounds: [UInt32], values: [UnsafeRawBufferPointer])] = []
        var position: [[UInt8]: Int] = [:]  // of each term in `found`, when there are segments
        for segment in [nil] + e.segments.map(Optional.some) {
            let skipped = segment == nil ? 0 : 5
            for entry in entries(in: e.postings, range: .prefix(e.state.segmentKeys.keyTerm(prefix, in: segment))) {
                guard entry.key.count >= 5 + skipped, entry.key[entry.key.count - 5] == 0,
                    let bound = SearchDatabases.postingNumber(entry.key)
                else { continue }
                let entryTerm = entry.key[skipped..<(entry.key.count - 5)]
                var at = found.count - 1
                if at < 0 || !found[at].term.elementsEqual(entryTerm) {
                    if !position.isEmpty, let known = position[Array(entryTerm)] {
                        at = known
                    } else {
                        at = found.count
                        found.append((Array(entryTerm), [], []))
                        if !e.segments.isEmpty { position[found[at].term] = at }
                    }
                }
                found[at].bounds.append(bound)
                found[at].values.append(entry.value)
            }
        }
        try checkIntact()
        if !e.segments.isEmpty { found.sort { $0.term.lexicographicallyPrecedes($1.term) } }
        return try found.map {
            try TermPostings(term: $0.term, bounds: $0.bounds, values: $0.values, deferringGroups: deferringGroups)
        }
    }

    /// A phrase: the documents where its terms occur at consecutive positions (the last one
    /// may be a prefix, standing for any of its expansions). Candidates come from a leapfrog of
    /// the terms' postings, rarest first (`advance(to:)` skips blocks); only they are read for
    /// occurrences.
    private func phraseLeaf(_ terms: [[UInt8]], lastIsPrefix: Bool, fields: FieldSet, _ e: inout SearchEvaluation) throws
        -> SearchLeaf
    {
        let stride = e.weights.count
        let documentCount = Int(e.state.documents)
        var leaf = SearchLeaf()
        guard !terms.isEmpty else { return leaf }
        let exactCount = lastIsPrefix ? terms.count - 1 : terms.count
        // A term repeated in the phrase ("the … the") is read once: `slot[i]` is term i's list.
        var distinct: [[UInt8]] = []
        var slot: [Int] = []
        for term in terms.prefix(exactCount) {
            if let at = distinct.firstIndex(of: term) {
                slot.append(at)
            } else {
                slot.append(distinct.count)
                distinct.append(term)
            }
        }
        // Deferring: a candidate's occurrences are read once, passing them as they are read.
        var exact = try distinct.map { try termPostings($0, e, deferringGroups: true) }
        var expanded: [TermPostings] = []
        var expandedDocuments: [UInt32] = []  // the union of the expansions' documents
        if lastIsPrefix {
            expanded = try expansions(of: terms[terms.count - 1], e, deferringGroups: true)
            for var postings in expanded {
                while let d = try postings.next() { expandedDocuments.append(d) }
            }
            expandedDocuments.sort()
            var distinct = 0
            for d in expandedDocuments where distinct == 0 || expandedDocuments[distinct - 1] != d {
                expandedDocuments[distinct] = d
                distinct += 1
            }
            expandedDocuments.removeLast(expandedDocuments.count - distinct)
        }
        var expansionHeap = try PostingListHeap(&expanded)
        leaf.idf = slot.reduce(0) { $0 + BM25.idf(documentCount: documentCount, documentFrequency: exact[$1].documentCount) }
        if lastIsPrefix { leaf.idf += BM25.idf(documentCount: documentCount, documentFrequency: expandedDocuments.count) }
        let order = exact.indices.sorted { exact[$0].documentCount < exact[$1].documentCount }
        // A candidate's occurrences, one run a distinct term (then the expansions' sorted union),
        // and each phrase term's run as the matcher reads it.
        var occurrences = UnsafeMutableBufferPointer<Occurrence>.allocate(capacity: 1024)
        occurrences.initialize(repeating: Occurrence(field: 0, position: 0))
        defer { occurrences.deallocate() }
        var runs = [Range<Int>](repeating: 0..<0, count: distinct.count + 1)
        var lists = [UnsafeBufferPointer<Occurrence>](repeating: UnsafeBufferPointer(start: nil, count: 0), count: terms.count)
        let runOfTerm = terms.indices.map { $0 < exactCount ? slot[$0] : distinct.count }
        var counts: [UInt32] = []
        var expandedAt = -1
        var previous: UInt32?
        while true {
            // The candidates: the documents every exact term holds, or the expansions' union.
            let candidate: UInt32
            if !order.isEmpty {
                guard let d = try TermPostings.nextCommon(&exact, order: order, after: previous) else { break }
                candidate = d
                previous = d
            } else {
                expandedAt += 1
                guard expandedAt < expandedDocuments.count else { break }
                candidate = expandedDocuments[expandedAt]
            }
            if lastIsPrefix {
                guard SearchSets.index(of: candidate, in: expandedDocuments) != nil else { continue }
            }
            var used = 0
            for s in exact.indices {
                let start = used
                used = try exact[s].readOccurrences(into: &occurrences, from: used)
                runs[s] = start..<used
            }
            if lastIsPrefix {
                let start = used
                try expansionHeap.forEachList(holding: candidate, in: &expanded) { list in
                    used = try list.readOccurrences(into: &occurrences, from: used)
                }
                var union = UnsafeMutableBufferPointer(rebasing: occurrences[start..<used])
                union.sort()
                runs[distinct.count] = start..<used
            }
            for f in counts.indices { counts[f] = 0 }
            for i in lists.indices { lists[i] = UnsafeBufferPointer(rebasing: occurrences[runs[runOfTerm[i]]]) }
            PhraseMatcher.frequencies(lists, fields: fields, into: &counts)
            guard counts.contains(where: { $0 > 0 }) else { continue }
            leaf.documents.append(candidate)
            for f in 0..<stride { leaf.frequencies.append(f < counts.count ? counts[f] : 0) }
        }
        try e.hold(leaf.documents.count)
        return leaf
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
        let documents = SearchDocumentEntries(e.dbs, e.state)
        for entry in duplicates(of: indexKey, in: c.indexes[position]) {
            if let found = try documents.entry(of: entry.valueBytes, indexed: true, lmdb) { numbers.append(found.number) }
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
    /// Where large arrays come from and go back to.
    let buffers: SearchQueryBuffers
    /// The database that holds the postings.
    let postings: Database
    /// The starts of the index's segments (``SearchSegments``), whose blocks follow the main ones.
    var segments: [UInt32] = []
    var leaves: [SearchLeaf] = []
    /// How deep in the query tree the evaluation is (1 at the query itself).
    var depth = 0
    /// The most postings the query's leaves may hold (``StoreOptions/searchPostingLimit``).
    var postingLimit = Int.max
    /// The postings the leaves hold so far (or will, counted before they are read).
    private(set) var heldPostings = 0

    /// Counts `postings` more held by the leaves, or throws when that passes the limit.
    mutating func hold(_ postings: Int) throws(SearchError) {
        heldPostings += postings
        if heldPostings > postingLimit { throw SearchError(tooBroad: postingLimit) }
    }

    init(dbs: SearchDatabases, state: SearchState, buffers: SearchQueryBuffers) throws {
        self.dbs = dbs
        self.state = state
        self.buffers = buffers
        postings = try dbs.postings(state)
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
    /// How many times the query names this leaf (`storm storm` scores storm twice).
    var weight = 1.0

    /// The distinct `children` in first-seen order, each with how often it occurs.
    static func counted(_ children: [Query]) -> [(Query, Int)] {
        var order: [Query] = []
        var counts: [Query: Int] = [:]
        for child in children {
            if counts[child] == nil { order.append(child) }
            counts[child, default: 0] += 1
        }
        return order.map { ($0, counts[$0]!) }
    }

    /// Keeps only the documents also in `matched` (sorted), with their frequencies (`stride` a
    /// document), in place.
    mutating func restrict(to matched: [UInt32], stride: Int) {
        var kept = 0
        var at = 0
        matched.withUnsafeBufferPointer { matched in
            for k in documents.indices {
                at = SearchSets.firstIndex(atLeast: documents[k], in: matched, from: at)
                guard at < matched.count else { break }
                guard matched[at] == documents[k] else { continue }
                if kept != k {
                    documents[kept] = documents[k]
                    for f in 0..<stride { frequencies[kept * stride + f] = frequencies[k * stride + f] }
                }
                kept += 1
            }
        }
        documents.removeLast(documents.count - kept)
        frequencies.removeLast(frequencies.count - kept * stride)
    }

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
    /// The `k`-th largest of `values` (`k` ≥ 1, at most the count), through a min-heap of `k`.
    static func largest(_ k: Int, of values: [Double]) -> Double {
        var heap: [Double] = []
        heap.reserveCapacity(k)
        func siftDown(_ start: Int) {
            var i = start
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var m = i
                if l < heap.count && heap[l] < heap[m] { m = l }
                if r < heap.count && heap[r] < heap[m] { m = r }
                if m == i { return }
                heap.swapAt(i, m)
                i = m
            }
        }
        for v in values {
            if heap.count < k {
                heap.append(v)
                var i = heap.count - 1
                while i > 0 && heap[(i - 1) / 2] > heap[i] {
                    heap.swapAt(i, (i - 1) / 2)
                    i = (i - 1) / 2
                }
            } else if v > heap[0] {
                heap[0] = v
                siftDown(0)
            }
        }
        return heap.first ?? -.infinity
    }

    /// The first index at or after `start` whose number is at least `number` (`numbers.count`
    /// when none is): a gallop forward from `start`, then a binary search in the last step, so
    /// the cost grows with the log of the distance moved.
    static func firstIndex(atLeast number: UInt32, in numbers: UnsafeBufferPointer<UInt32>, from start: Int) -> Int {
        guard start < numbers.count, numbers[start] < number else { return start }
        var low = start + 1  // numbers[low - 1] < number
        var step = 1
        while low + step - 1 < numbers.count, numbers[low + step - 1] < number {
            low += step
            step *= 2
        }
        var high = min(low + step - 1, numbers.count)  // numbers[high] >= number, or the end
        while low < high {
            let mid = (low + high) / 2
            if numbers[mid] < number { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position of `number` in the sorted `numbers`, if there.
    static func index(of number: UInt32, in numbers: [UInt32]) -> Int? {
        var low = 0
        var high = numbers.count
        while low < high {
            let mid = (low + high) / 2
            if numbers[mid] < number { low = mid + 1 } else { high = mid }
        }
        return low < numbers.count && numbers[low] == number ? low : nil
    }

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

extension StoreError {
    /// A search hit whose record the collection does not hold: the index and the records are
    /// written in one transaction, so this is damage (a part of the records' tree unreadable),
    /// never a hit to leave out silently.
    package static func hitWithoutRecord(_ key: StoreKey, collection: String) -> StoreError {
        StoreError(
            .corrupted,
            "collection '\(collection)': the search index names record \(key.clippedDescription), which the collection does not hold (a damaged store: run quire verify)")
    }
}
