import QuireCodec
internal import QuireLMDB
import QuireText

extension Store {
    /// Opens (creating when writable) the databases of a collection's full-text index.
    func openSearchDatabases(_ collection: String, _ definition: SearchDefinition) throws -> SearchDatabases {
        let flags: DatabaseFlags = options.readOnly ? [] : [.create]
        let names = SearchDatabases.names(collection)
        let dbs = try names.prefix(4).map { try environment.openDatabase($0, flags: flags) }
        // Absent from a read-only store written before it existed: then the postings are in the first.
        let second = try? environment.openDatabase(names[4], flags: flags)
        return SearchDatabases(
            definition: definition, postingDatabases: (dbs[0], second), documents: dbs[1], numbers: dbs[2], state: dbs[3])
    }

    /// Builds the full-text index of a collection from its records (its definition gained or
    /// changed its search index), in the registering transaction.
    func rebuildSearchIndex<V, T: WritableTransaction & ~Copyable>(
        _ collection: StoreCollection<V>, _ opened: RegisteredCollection, _ txn: borrowing T
    ) throws {
        guard let index = collection.search, let dbs = opened.search else { return }
        let postings = [dbs.postingDatabases.first] + (dbs.postingDatabases.second.map { [$0] } ?? [])
        for db in postings + [dbs.documents, dbs.numbers, dbs.state] { try txn.removeAll(in: db) }
        var writer = SearchIndexWriter(dbs, try SearchState.stored(dbs, txn))
        let table = fields
        var keys: [[UInt8]] = []
        var values: [V] = []
        func indexBatch() throws {
            let batch = values
            try writer.indexBatch(keys: keys, texts: { index.text(batch[$0]) }, indexed: { _ in nil }, txn)
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
        }
        for entry in txn.entries(in: opened.records) {
            values.append(try collection.coder.decode(entry.value, opened.decoder, table))
            keys.append(entry.keyBytes)
            if keys.count == 25_000 { try indexBatch() }
        }
        try indexBatch()
        try writer.flush(txn)
    }
}

/// Writes documents into one collection's full-text index inside one write transaction: one
/// document at a time (``index(key:_:_:)``, ``remove(key:_:)``: `put`, `insert`, `delete`,
/// changing the posting blocks they touch in place), or a batch at a time
/// (``indexBatch(keys:texts:_:)``: bulk chunks and rebuilds, tokenized on every core, the new
/// documents' postings appended term by term as merged blocks). ``flush(_:)`` writes the counters.
///
/// What an upsert or a delete removes are the terms of the text the document was indexed with:
/// listed in its `s:<c>:doc` entry by stores of an older format, else tokenized again from the
/// record being replaced (``IndexedText``), for an upsert only in the fields whose text changed.
/// Keeping every document's term list took about half of the index's bytes (745 of 1,385 bytes
/// an article).
struct SearchIndexWriter {
    /// The text a document was indexed with, by its physical key: the record a write is about
    /// to replace or delete, read before it is overwritten; nil when there is none.
    typealias IndexedText = (_ key: [UInt8]) throws -> [SearchText]?

    let dbs: SearchDatabases
    var state: SearchState
    var analyzer: SearchAnalyzer
    /// Which blocks hold which postings (``SegmentRouting``), read when first needed.
    private var routing: SegmentRouting?
    /// The terms of the document an upsert or a delete replaces (``forget(key:_:comparedWith:_:)``).
    private var oldTerms = SearchDocumentTerms()
    /// Compares a term's occurrences in the fields an upsert changed.
    private var occurrences = OccurrenceComparison()
    /// How many documents of a part re-indexed one by one have their terms copied out of it at
    /// once (``SearchBatchPart/documentTerms(_:sizes:into:)``, a pass over the whole part a slice).
    static let reindexSlice = 2_048

    init(_ dbs: SearchDatabases, _ state: SearchState) {
        self.dbs = dbs
        self.state = state
        analyzer = SearchAnalyzer(options: state.tokenizerOptions)
    }

    /// Indexes (or re-indexes) the record stored under the physical `key`.
    mutating func index<T: WritableTransaction & ~Copyable>(
        key: [UInt8], _ texts: [SearchText], indexed: IndexedText, _ txn: borrowing T
    ) throws {
        var document = SearchDocumentTerms()
        let lengths = analyzer.analyze(texts, into: &document)
        let check = SearchDocumentCheck(SearchPostingDigest(document), texts: texts)
        var changes = PostingChanges()
        let entry = try SearchDocumentEntries(dbs, state).entry(of: key, txn)
        try document.withTerms { terms in
            try upsert(
                key: key, entry: entry, terms, texts: texts, lengths: lengths[...], check: check, indexed, txn, into: &changes)
        }
        try changes.apply(in: try dbs.postings(state), txn)
    }

    /// Writes one document's entries, and its postings into `changes`: a known document (its
    /// `entry`) keeps its number, loses the postings of terms its old text had and the new one
    /// lacks, and has set those that are new or changed (all of them when its entry listed its
    /// terms only). With its new `texts`, only the fields whose text changed are tokenized
    /// again from the old record (``changedFields(_:_:)``).
    private mutating func upsert<T: WritableTransaction & ~Copyable>(
        key: [UInt8], entry: SearchDocumentEntry?, _ document: SearchDocumentTerms.View, texts: [SearchText]?,
        lengths: ArraySlice<UInt32>, check: SearchDocumentCheck, _ indexed: IndexedText, _ txn: borrowing T,
        into changes: inout PostingChanges
    ) throws {
        guard let entry else {
            let number = try nextNumber()
            let routing = try self.routing(txn)
            for t in 0..<document.count {
                let term = document.term(t)
                changes.set(routing.keyTerm(term, of: number), number, groups: document.groups(t))
            }
            return try putEntries(key: key, number: number, lengths: lengths, check: check, txn, appending: false)
        }
        let number = entry.number
        // The fields whose text changed: a term's occurrences in the others are the same as before.
        let changed = try forget(key: key, entry, comparedWith: texts, indexed)
        try undoCounts(of: entry, txn)
        let routing = try self.routing(txn)
        // Both term lists walked in byte order: an edit changes the occurrences of a few
        // terms, and the others' postings stay as they are.
        let after = document
        oldTerms.withTerms { before in
            var (b, a) = (0, 0)
            while b < before.count || a < after.count {
                let order = b == before.count ? 1 : a == after.count ? -1 : KeyRange.compare(before.term(b), after.term(a))
                if order < 0 {
                    let term = before.term(b)
                    changes.remove(routing.keyTerm(term, of: number), number)
                    b += 1
                    continue
                }
                if order == 0 {
                    b += 1
                    let same = changed == .max
                        ? oldTerms.hasGroups && KeyOrdering.equal(before.groups(b - 1), after.groups(a))
                        : occurrences.same(before.groups(b - 1), after.groups(a), in: changed)
                    if same {
                        a += 1
                        continue
                    }
                } else if changed != .max, !Self.occurs(after.groups(a), inAnyOf: changed) {
                    a += 1  // only in fields whose text is the same: its postings are too
                    continue
                }
                let term = after.term(a)
                changes.set(routing.keyTerm(term, of: number), number, groups: after.groups(a))
                a += 1
            }
        }
        try putEntries(key: key, number: number, lengths: lengths, check: check, txn, appending: false, newNumber: false)
    }

    /// The fields (a bit a field id) whose pieces of text differ between `old` and `new`, in
    /// content or order.
    static func changedFields(_ old: [SearchText], _ new: [SearchText]) -> UInt16 {
        var changed: UInt16 = 0
        for f in UInt8(0)..<16 {
            let before = old.lazy.filter { $0.field & 15 == f }.map(\.text)
            let after = new.lazy.filter { $0.field & 15 == f }.map(\.text)
            if !before.elementsEqual(after) { changed |= 1 << f }
        }
        return changed
    }

    /// Compares a term's occurrences before and after an upsert in the fields whose text
    /// changed, in arrays kept from term to term.
    struct OccurrenceComparison {
        private var before: [Occurrence] = []
        private var after: [Occurrence] = []

        /// Whether `old` (groups of the changed `fields` only) and `new` (groups of every
        /// field) have the same occurrences in `fields`: then the term's postings are unchanged.
        mutating func same(_ old: UnsafeRawBufferPointer, _ new: UnsafeRawBufferPointer, in fields: UInt16) -> Bool {
            before.removeAll(keepingCapacity: true)
            after.removeAll(keepingCapacity: true)
            do {
                try SearchOccurrences.decode(old, into: &before)
                try SearchOccurrences.decode(new, into: &after)
            } catch {
                return false  // written again: that is always right
            }
            after.removeAll { fields & 1 << $0.field == 0 }
            return before == after
        }
    }

    /// Whether occurrence groups (``SearchOccurrences``) have one in a field of `fields`.
    private static func occurs(_ groups: UnsafeRawBufferPointer, inAnyOf fields: UInt16) -> Bool {
        var found = false
        // The groups come from this write's own analysis: they parse (a failure counts as found).
        do { try SearchOccurrences.forEachField(groups) { field, _ in found = found || fields & 1 << field != 0 } } catch {
            return true
        }
        return found
    }

    /// The index's routing of postings to blocks, read when first needed.
    private mutating func routing<T: WritableTransaction & ~Copyable>(_ txn: borrowing T) throws -> SegmentRouting {
        if let routing { return routing }
        let stored = try SegmentRouting.stored(dbs, state, txn)
        routing = stored
        return stored
    }

    private mutating func nextNumber() throws -> UInt32 {
        guard state.nextNumber < UInt32.max else {
            throw StoreError(.corrupted, "search index: document numbers exhausted (rebuild the index)")
        }
        defer { state.nextNumber += 1 }
        return state.nextNumber
    }

    /// Puts a document's `s:<c>:doc` and `s:<c>:num` entries and counts it.
    private mutating func putEntries<T: WritableTransaction & ~Copyable>(
        key: [UInt8], number: UInt32, lengths: ArraySlice<UInt32>, check: SearchDocumentCheck, _ txn: borrowing T,
        appending: Bool, newNumber: Bool = true
    ) throws {
        try SearchDocumentEntries(dbs, state).put(key, number, appending: appending, txn)
        var numValue = [UInt8]()
        for (f, length) in lengths.prefix(state.lengthFields).enumerated() {
            SearchVarint.append(UInt64(length), to: &numValue)
            state.totals[f] &+= UInt64(length)  // a damaged total stays wrong (verify says so), never traps
        }
        if state.checkedDocuments { SearchDocumentCheck.append(check.stored(withText: dbs.definition.isRecomputable), to: &numValue) }
        numValue.append(contentsOf: key)
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(number, to: &numberKey)
        if newNumber {
            // A new number is above every stored one: appended.
            try txn.put(numValue, forKey: numberKey, in: dbs.numbers, flags: .append)
        } else if try txn.withValue(forKey: numberKey, in: dbs.numbers, { $0.elementsEqual(numValue) }) != true {
            try txn.put(numValue, forKey: numberKey, in: dbs.numbers)  // unchanged, it is left unwritten
        }
        state.documents += 1
    }

    /// Removes the record under the physical `key` from the index; returns whether it was there.
    @discardableResult
    mutating func remove<T: WritableTransaction & ~Copyable>(key: [UInt8], indexed: IndexedText, _ txn: borrowing T)
        throws -> Bool
    {
        guard let entry = try SearchDocumentEntries(dbs, state).entry(of: key, txn) else { return false }
        _ = try forget(key: key, entry, indexed)
        try undoCounts(of: entry, txn)
        let routing = try self.routing(txn)
        var changes = PostingChanges()
        oldTerms.withTerms { terms in
            for t in 0..<terms.count {
                let term = terms.term(t)
                changes.remove(routing.keyTerm(term, of: entry.number), entry.number)
            }
        }
        try changes.apply(in: try dbs.postings(state), txn)
        try SearchDocumentEntries(dbs, state).remove(key, entry.number, txn)
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(entry.number, to: &numberKey)
        try txn.delete(numberKey, in: dbs.numbers)
        return true
    }

    /// Puts in `oldTerms` the terms the indexed document under `key` (its `entry`) was indexed
    /// with: the entry's list (without groups), or those of the text it was indexed with (a
    /// record missing meanwhile gives none: `verify` reports what is left). Given the document's
    /// new `texts`, only the fields of the old text that differ from them are tokenized. Returns
    /// the fields tokenized (a bit a field id): all of them for a whole text or a listed one.
    private mutating func forget(
        key: [UInt8], _ entry: SearchDocumentEntry, comparedWith texts: [SearchText]? = nil, _ indexed: IndexedText
    ) throws -> UInt16 {
        if let listed = entry.terms {
            oldTerms.removeAll(hasGroups: false)
            for term in listed { term.withUnsafeBytes { oldTerms.append(term: $0, groups: EmptyCollection()) } }
            oldTerms.sortByTerm()
            return .max
        }
        let old = try indexed(key) ?? []
        oldTerms.removeAll()
        guard let texts else {
            analyzer.analyze(old, into: &oldTerms)
            return .max
        }
        let changed = Self.changedFields(old, texts)
        if changed != 0 { analyzer.analyze(old.filter { changed & 1 << ($0.field & 15) != 0 }, into: &oldTerms) }
        return changed
    }

    /// Undoes a document's lengths and count in the counters (it is replaced or deleted).
    private mutating func undoCounts<T: WritableTransaction & ~Copyable>(of entry: SearchDocumentEntry, _ txn: borrowing T)
        throws
    {
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(entry.number, to: &numberKey)
        if let lengths = try txn.get(numberKey, in: dbs.numbers) {
            try lengths.withUnsafeBytes { bytes in
                var offset = 0
                for f in 0..<state.lengthFields {
                    let l = try SearchVarint.read(bytes, &offset)
                    state.totals[f] = state.totals[f] >= l ? state.totals[f] - l : 0
                }
            }
        }
        if state.documents > 0 { state.documents -= 1 }
    }

    /// Indexes a batch of records (physical keys, the text of each by index), the bulk way:
    /// tokenized on every core; records already indexed are re-indexed one by one; the new
    /// ones get consecutive numbers and their postings are appended term by term, in term
    /// order, as blocks (extending each term's last block while it is small). With
    /// `newSegment` (a bulk chunk), the new postings go into a segment of their own
    /// (``SearchSegments``), which the load's end merges.
    mutating func indexBatch<T: WritableTransaction & ~Copyable>(
        keys: [[UInt8]], texts: @Sendable (Int) -> [SearchText], indexed: IndexedText, newSegment: Bool = false,
        unchanged: [Bool]? = nil, _ txn: borrowing T
    ) throws {
        guard !keys.isEmpty else { return }
        if Set(keys).count != keys.count {
            // The same key twice (an unsorted chunk): the last text is the record that stays.
            let kept = Self.lastOccurrences(keys)
            return try indexBatch(
                keys: kept.map { keys[$0] }, texts: { texts(kept[$0]) }, indexed: indexed, newSegment: newSegment,
                unchanged: unchanged.map { mask in kept.map { mask[$0] } }, txn)
        }
        let parts = SearchBatchPart.analyse(count: keys.count, parts: Parallelism.parts, rules: state.tokenizerOptions, texts)
        try withoutActuallyEscaping(texts) { texts in
            try indexBatch(
                keys: keys, analysed: parts, texts: texts, indexed: indexed, newSegment: newSegment, unchanged: unchanged, txn)
        }
    }

    /// The positions of each key's last occurrence in `keys`, in order.
    static func lastOccurrences(_ keys: [[UInt8]]) -> [Int] {
        var last: [[UInt8]: Int] = [:]
        for (i, key) in keys.enumerated() { last[key] = i }
        return keys.indices.filter { last[keys[$0]] == $0 }
    }

    /// ``indexBatch(keys:texts:indexed:_:)`` of a batch tokenized beforehand (off the writer),
    /// `parts` covering `keys` in order; the keys must be distinct. The documents `unchanged`
    /// marks are indexed already with the text they have: left alone.
    mutating func indexBatch<T: WritableTransaction & ~Copyable>(
        keys: [[UInt8]], analysed parts: [SearchBatchPart], texts: ((Int) -> [SearchText])? = nil, indexed: IndexedText,
        newSegment: Bool = false, unchanged: [Bool]? = nil, _ txn: borrowing T
    ) throws {
        // Numbers of the new documents (UInt32.max: already indexed, done in place).
        var numbers = [UInt32](repeating: .max, count: keys.count)
        // Keys in order past the last indexed one (a load in key order): all new, appended, so
        // the documents' pages are filled instead of split in halves. Hashed entries are in no
        // key order: there only an empty index is known to hold none of the keys.
        let ascending = zip(keys, keys.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }
        let appending: Bool
        if state.hashedDocuments {
            appending = ascending && state.documents == 0 && state.nextNumber == 0
        } else {
            let lastKey = try txn.cursor(in: dbs.documents).last()?.keyBytes
            appending = ascending && lastKey.map { $0.lexicographicallyPrecedes(keys[0]) } ?? true
        }
        let entries = SearchDocumentEntries(dbs, state)
        var changes = PostingChanges()  // of the documents indexed already, written after the batch
        // The terms of the part's documents `slice`, copied out for those indexed already.
        var sliceTerms = SearchDocumentTermSlice()
        for part in parts {
            var slice = 0..<0
            var sizes: (entries: [Int], bytes: [Int])?
            for j in 0..<part.range.count {
                let i = part.range.lowerBound + j
                if unchanged?[i] == true { continue }
                let lengths = part.lengths[(j * 16)..<(j * 16 + 16)]
                if !appending, let entry = try entries.entry(of: keys[i], txn) {
                    if !slice.contains(j) {
                        slice = j..<min(part.range.count, j + Self.reindexSlice)
                        if sizes == nil { sizes = part.documentSizes() }
                        part.documentTerms(slice, sizes: sizes!, into: &sliceTerms)
                    }
                    try sliceTerms.withDocument(j - slice.lowerBound) { document in
                        try upsert(
                            key: keys[i], entry: entry, document, texts: texts?(i), lengths: lengths, check: part.checks[j],
                            indexed, txn, into: &changes)
                    }
                    continue
                }
                let number = try nextNumber()
                numbers[i] = number
                try putEntries(
                    key: keys[i], number: number, lengths: lengths, check: part.checks[j], txn, appending: appending)
            }
        }
        try changes.apply(in: try dbs.postings(state), txn)
        guard let first = numbers.first(where: { $0 != .max }) else { return }
        let routing: SegmentRouting
        if newSegment {
            // A load's first segment, even into an empty index: its end then appends the merged
            // blocks after the segments' keys (``SegmentKeys/low``).
            if !state.segmented { state.lowSegments = true }
            routing = try self.routing(txn).adding(first, keys: state.segmentKeys)
            self.routing = routing
            state.segmented = true
        } else {
            routing = try self.routing(txn)
        }
        // The new documents are numbered from `first` on: the blocks that own `first` own them all.
        try appendRuns(parts, numbers, routing: routing, first: first, txn)
    }

    /// Merges the parts' term lists (each in byte order) and appends each term's new postings,
    /// to the blocks `routing` gives for the term and the batch's `first` new document (the main
    /// blocks or a segment's).
    private func appendRuns<T: WritableTransaction & ~Copyable>(
        _ parts: [SearchBatchPart], _ numbers: [UInt32], routing: SegmentRouting, first: UInt32, _ txn: borrowing T
    ) throws {
        var next = [Int](repeating: 0, count: parts.count)  // each part's current term
        var keyTerm: [UInt8] = []
        let postings = try dbs.postings(state)
        var buffers = SearchPostings.RunBuffers(pageSize: try txn.statistics(of: postings).pageSize)
        let cursor = try txn.cursor(in: postings)
        // Terms after the last stored one are appended (all of them in a first load).
        let lastTerm = try cursor.last().map { Array($0.key.prefix(max(0, $0.key.count - 5))) }
        var holders: [Int] = []
        while true {
            // The smallest current term, and the parts that have it.
            var smallest: ArraySlice<UInt8>?
            holders.removeAll(keepingCapacity: true)
            for p in parts.indices where next[p] < parts[p].termCount {
                let term = parts[p].term(next[p])
                if let s = smallest, !term.lexicographicallyPrecedes(s) {
                    if term.elementsEqual(s) { holders.append(p) }
                } else {
                    smallest = term
                    holders.removeAll(keepingCapacity: true)
                    holders.append(p)
                }
            }
            guard let term = smallest else { return }
            var runBytes = 0
            for p in holders {
                let slots = parts[p].termSlots(next[p])
                runBytes += 2 * slots.count + parts[p].groupBytes(of: slots)  // a delta byte and slack a posting
            }
            keyTerm.removeAll(keepingCapacity: true)
            if let start = routing.owner(of: first, term: term) { keyTerm += routing.keys.prefix(start) }
            keyTerm.append(contentsOf: term)
            let appending = lastTerm.map { $0.lexicographicallyPrecedes(keyTerm) } ?? true
            try SearchPostings.appendRun(
                keyTerm[...], runBytes: runBytes, in: postings, txn, cursor: cursor, appending: appending, buffers: &buffers
            ) { emit in
                for p in holders {
                    let part = parts[p]
                    let base = part.range.lowerBound
                    try part.forEachPosting(in: part.termSlots(next[p])) { document, groups in
                        let number = numbers[base + document]
                        guard number != .max else { return }  // re-indexed in place already
                        try emit(number, groups)
                    }
                }
            }
            for p in holders { next[p] += 1 }
        }
    }

    /// Writes the state entry (the counters), and voids a compaction's copy in progress
    /// (``SearchDatabases/rewriteKey``): it no longer holds every posting.
    mutating func flush<T: WritableTransaction & ~Copyable>(_ txn: borrowing T) throws {
        try txn.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
        try txn.delete(SearchDatabases.rewriteKey, in: dbs.state)
    }
}

/// The full-text postings a write transaction owes: the documents its puts wrote, indexed
/// together before the commit (``SearchIndexWriter/indexBatch(keys:texts:_:)``) instead of one
/// put at a time, so each term's posting block is rewritten once a transaction, not once a
/// record. A group commit of 64 single puts or a replica's batch pays one merge.
struct PendingSearchDocuments {
    let dbs: SearchDatabases
    var keys: [[UInt8]] = []
    /// Each document's text, extracted when indexed (on the cores that tokenize it).
    var texts: [@Sendable () -> [SearchText]] = []
    /// For the keys whose record the transaction replaced: the text of the record they had
    /// before it (the one indexed), read from the replaced bytes when it is needed.
    var replaced: [[UInt8]: () throws -> [SearchText]] = [:]
    private var queued: Set<[UInt8]> = []

    init(dbs: SearchDatabases) { self.dbs = dbs }

    /// Documents held before they are indexed anyway (bounds a huge transaction's memory).
    static let limit = 25_000

    /// Queues one document, and what it replaces unless the key was queued before (then the
    /// record it replaced is the one that is not indexed yet); returns how many are queued.
    mutating func append(
        key: [UInt8], texts: @escaping @Sendable () -> [SearchText], replacing old: (() throws -> [SearchText])?
    ) -> Int {
        keys.append(key)
        self.texts.append(texts)
        if queued.insert(key).inserted, let old { replaced[key] = old }
        return keys.count
    }
}

extension WriteState {
    /// Indexes every document this transaction still owes to its collection's index. Runs
    /// before the commit, and before anything in the transaction reads or removes postings
    /// (a search, a delete, a bulk chunk). Of a key put twice the last text is indexed.
    func flushPendingSearch<T: WritableTransaction & ~Copyable>(_ txn: borrowing T) throws {
        guard !pendingSearch.isEmpty else { return }
        let owed = pendingSearch
        pendingSearch.removeAll()
        do {
            try index(owed, txn)
        } catch {
            // The documents are out of the queue and some postings may be written: the
            // transaction must not commit without them.
            if poisoned == nil { poisoned = error }
            throw error
        }
    }

    private func index<T: WritableTransaction & ~Copyable>(_ owed: [String: PendingSearchDocuments], _ txn: borrowing T) throws {
        for name in owed.keys.sorted() {
            let documents = owed[name]!
            let kept = SearchIndexWriter.lastOccurrences(documents.keys)
            let texts = kept.map { documents.texts[$0] }
            var writer = SearchIndexWriter(documents.dbs, try SearchState.stored(documents.dbs, txn))
            let indexed: SearchIndexWriter.IndexedText = { key in try documents.replaced[key]?() }
            if kept.count == 1 {
                try writer.index(key: documents.keys[kept[0]], texts[0](), indexed: indexed, txn)
            } else {
                try writer.indexBatch(keys: kept.map { documents.keys[$0] }, texts: { texts[$0]() }, indexed: indexed, txn)
            }
            try writer.flush(txn)
        }
    }
}

extension StoreTransaction {
    /// Queues one written value for the full-text index (the hook of `put`/`insert`, given the
    /// bytes of the record it replaced); it is indexed with the transaction's other puts
    /// (``WriteState/flushPendingSearch(_:)``).
    func indexForSearch<V>(
        _ value: V, storedKey: [UInt8], replacing old: [SearchText]?, _ collection: StoreCollection<V>,
        _ c: RegisteredCollection
    ) throws {
        guard let index = collection.search, let dbs = c.search else { return }
        let replaced = old.map { texts in { () throws -> [SearchText] in texts } }
        // Changed in place (a copy out of the dictionary would copy the queue on every put).
        let queued = state.pendingSearch[collection.name, default: PendingSearchDocuments(dbs: dbs)].append(
            key: storedKey, texts: { index.text(value) }, replacing: replaced)
        if queued >= PendingSearchDocuments.limit { try state.flushPendingSearch(lmdb) }
    }

    /// The text a stored record was indexed with, decoded from its bytes when asked for (with
    /// the transaction's field table, which holds every id a stored record uses).
    private func indexedText<V>(
        of bytes: [UInt8], _ index: StoreSearchIndex<V>, _ collection: StoreCollection<V>, _ c: RegisteredCollection
    ) -> () throws -> [SearchText] {
        let (coder, decoder, fields) = (collection.coder, c.decoder, state.fields)
        return { try bytes.withUnsafeBytes { index.text(try coder.decode($0, decoder, fields)) } }
    }

    /// The text a stored record of `collection` was indexed with (nil without a full-text
    /// index), decoded now: an upsert or a delete reads it before it writes anything.
    func searchText<V>(ofStored record: [UInt8], _ collection: StoreCollection<V>, _ c: RegisteredCollection) throws
        -> [SearchText]?
    {
        guard let index = collection.search, c.search != nil else { return nil }
        return try indexedText(of: record, index, collection, c)()
    }

    /// Removes a record about to be deleted from the index (the hook of `delete`, given the
    /// text it was indexed with).
    func removeFromSearch<V>(storedKey: [UInt8], text: [SearchText], _ collection: StoreCollection<V>, _ c: RegisteredCollection)
        throws
    {
        guard let dbs = c.search else { return }
        try state.flushPendingSearch(lmdb)  // the record may have been put in this transaction
        var writer = SearchIndexWriter(dbs, try SearchState.stored(dbs, lmdb))
        try writer.remove(key: storedKey, indexed: { _ in text }, lmdb)
        try writer.flush(lmdb)
    }

    /// Indexes a bulk chunk's records in the chunk's transaction, the bulk way
    /// (``SearchIndexWriter/indexBatch(keys:texts:_:)``): tokenized on every core, postings
    /// appended as merged blocks term by term. The text comes from the records' bytes, decoded
    /// with the chunk's field table on the tokenizing threads (a chunk keeps no values). Runs
    /// before the chunk's records are written: a record it replaces gives the terms to remove.
    func indexChunkForSearch<V>(
        _ chunk: EncodedChunk, _ collection: StoreCollection<V>, _ c: RegisteredCollection, unchanged: [Bool]? = nil
    ) throws {
        guard let index = collection.search, let dbs = c.search else { return }
        try state.flushPendingSearch(lmdb)
        var writer = SearchIndexWriter(dbs, try SearchState.stored(dbs, lmdb))
        let keys = chunk.entries.map { $0.key.array }
        // The records' texts, decoded when asked for: by the tokenizing threads when the chunk has
        // no analysis, else only for the records that replace others (their old texts are
        // tokenized only where they differ).
        let texts = try Store.chunkTexts(chunk, index, collection, c)
        if let parts = chunk.searchParts, Self.leavesAlone(chunk.searchSkipped, unchanged),
            parts.allSatisfy({ $0.rules == writer.state.tokenizerOptions })
        {
            try writer.indexBatch(
                keys: keys, analysed: parts, texts: texts.text, indexed: { try storedText($0, index, collection, c) },
                newSegment: true, unchanged: unchanged, lmdb)
        } else {
            try writer.indexBatch(
                keys: keys, texts: texts.text, indexed: { try storedText($0, index, collection, c) }, newSegment: true,
                unchanged: unchanged, lmdb)
        }
        try texts.check()
        try writer.flush(lmdb)
    }

    /// Whether every record a chunk's analysis left out (`skipped`) is one the writer leaves
    /// alone (`unchanged`: stored byte for byte in the chunk's transaction).
    private static func leavesAlone(_ skipped: [Bool]?, _ unchanged: [Bool]?) -> Bool {
        guard let skipped else { return true }
        return skipped.indices.allSatisfy { !skipped[$0] || unchanged?[$0] == true }
    }

    /// The text of the record stored under the physical `key` (before the chunk replaces it).
    private func storedText<V>(
        _ key: [UInt8], _ index: StoreSearchIndex<V>, _ collection: StoreCollection<V>, _ c: RegisteredCollection
    ) throws -> [SearchText]? {
        guard let old = try get(key, in: c.records) else { return nil }
        return try indexedText(of: old, index, collection, c)()
    }
}

extension Store {
    /// A bulk chunk's records tokenized for the full-text index, to be written with the chunk
    /// (``EncodedChunk/searchParts``): done on every core while the chunk before it commits,
    /// so the writer's transaction only merges the postings in. Nil when the collection has no
    /// full-text index, or when the chunk has a key twice (then the writer tokenizes it). Arrays
    /// come from `buffers` (a bulk load's pool) when given.
    func searchAnalysis<V>(
        of chunk: EncodedChunk, _ collection: StoreCollection<V>, buffers: SearchAnalysisBuffers? = nil
    ) throws -> (parts: [SearchBatchPart], skipped: [Bool]?)? {
        guard collection.search != nil else { return nil }
        let c = try resolvedForWrite(collection)
        guard let index = analysableSearchIndex(of: chunk, collection, c) else { return nil }
        let skipped = try recordsStoredAlready(chunk, c)
        let (text, check) = try Self.chunkTexts(chunk, index, collection, c)
        let rules = try searchRules(c)
        let parts = SearchBatchPart.analyse(count: chunk.entries.count, parts: Parallelism.parts, buffers: buffers, rules: rules) {
            skipped?[$0] == true ? [] : text($0)
        }
        try check()
        return (parts, skipped)
    }

    /// The tokenizer rules of `c`'s full-text index as stored now (a new index's when it has none
    /// yet): what a chunk tokenized before the writer uses (the writer checks them again).
    func searchRules(_ c: RegisteredCollection) throws -> TokenizerOptions {
        guard let dbs = c.search else { return TokenizerOptions() }
        return try read { snapshot throws in try SearchState.stored(dbs, snapshot.lmdb).tokenizerOptions }
    }

    /// The collection's full-text index when a chunk of it can be tokenized before the writer:
    /// the index is open, and the chunk's keys strictly ascend (a key twice leaves it to the writer).
    func analysableSearchIndex<V>(
        of chunk: EncodedChunk, _ collection: StoreCollection<V>, _ c: RegisteredCollection
    ) -> StoreSearchIndex<V>? {
        guard let index = collection.search, !chunk.entries.isEmpty, c.search != nil,
            KeyOrdering.isAscending(chunk.entries.lazy.map(\.key), strictly: true)
        else { return nil }
        return index
    }

    /// The text of a chunk's records by position, decoded from their bytes with the chunk's
    /// field table (a chunk keeps no values), and the check that every record decoded.
    static func chunkTexts<V>(
        _ chunk: EncodedChunk, _ index: StoreSearchIndex<V>, _ collection: StoreCollection<V>, _ c: RegisteredCollection
    ) throws -> (text: @Sendable (Int) -> [SearchText], check: () throws -> Void) {
        let (entries, fields, coder, decoder) = (chunk.entries, chunk.fields, collection.coder, c.decoder)
        let failure = Locked<(any Error)?>(nil)
        let text: @Sendable (Int) -> [SearchText] = { i in
            do {
                return index.text(try coder.decode(entries[i].record.buffer, decoder, fields))
            } catch {
                failure.withLock { $0 = $0 ?? error }
                return []
            }
        }
        let name = collection.name
        return (
            text,
            {
                // Then the chunk is abandoned with the error: nothing of it is written.
                if let error = failure.withLock({ $0 }) {
                    throw StoreError(.codec, "cannot read back a record of '\(name)' to index its text", underlying: error)
                }
            }
        )
    }
}
