import QuireCodec
internal import QuireLMDB
import QuireText

extension Store {
    /// Opens (creating when writable) the databases of a collection's full-text index.
    func openSearchDatabases(_ collection: String, _ definition: SearchDefinition) throws -> SearchDatabases {
        let flags: DatabaseFlags = options.readOnly ? [] : [.create]
        let dbs = try SearchDatabases.names(collection).map { try environment.openDatabase($0, flags: flags) }
        return SearchDatabases(definition: definition, postings: dbs[0], documents: dbs[1], numbers: dbs[2], state: dbs[3])
    }

    /// Builds the full-text index of a collection from its records (its definition gained or
    /// changed its search index), in the registering transaction; drops it when no longer declared.
    func rebuildSearchIndex<V, T: WritableTransaction & ~Copyable>(
        _ collection: StoreCollection<V>, _ opened: RegisteredCollection, previous: SearchDefinition?, _ txn: borrowing T
    ) throws {
        if previous != nil, collection.search == nil {
            for name in SearchDatabases.names(collection.name) {
                if let db = try? environment.openDatabase(name, flags: []) { try txn.dropDatabase(db) }
            }
            return
        }
        guard let index = collection.search, let dbs = opened.search else { return }
        for db in [dbs.postings, dbs.documents, dbs.numbers, dbs.state] { try txn.removeAll(in: db) }
        var writer = SearchIndexWriter(dbs, try SearchIndexWriter.loadState(dbs, txn))
        let table = fields
        for entry in txn.entries(in: opened.records) {
            let value = try collection.coder.decode(entry.value, opened.decoder, table)
            try writer.index(key: entry.keyBytes, index.text(value), txn)
        }
        try writer.flush(txn)
    }
}

/// Writes documents into one collection's full-text index inside one write transaction:
/// postings are buffered and put in key order at ``flush(_:)``, with the state entry.
struct SearchIndexWriter {
    let dbs: SearchDatabases
    var state: SearchState
    var analyzer = SearchAnalyzer()
    /// Posting puts not yet written, and the documents they belong to.
    private var pending: [(key: [UInt8], value: [UInt8])] = []
    private var pendingNumbers: Set<UInt32> = []

    init(_ dbs: SearchDatabases, _ state: SearchState) {
        self.dbs = dbs
        self.state = state
    }

    static func loadState<T: ReadableTransaction & ~Copyable>(_ dbs: SearchDatabases, _ txn: borrowing T) throws -> SearchState {
        try txn.withValue(forKey: SearchDatabases.stateKey, in: dbs.state) { try SearchState($0) } ?? SearchState()
    }

    /// Indexes (or re-indexes) the record stored under the physical `key`: removes the postings
    /// of terms its old text had and the new one lacks, and writes the new postings.
    mutating func index<T: WritableTransaction & ~Copyable>(key: [UInt8], _ texts: [SearchText], _ txn: borrowing T) throws {
        let document = analyzer.analyze(texts)
        let old = try remove(key: key, txn, keepNumber: true)
        let number: UInt32
        if let old {
            number = old.number
            if pendingNumbers.contains(number) { try writePending(txn) }  // the same key twice in a batch
            let kept = Set(document.terms)
            for term in old.terms where !kept.contains(term) {
                let postingKey = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
                try txn.delete(postingKey, in: dbs.postings)
            }
        } else {
            guard state.nextNumber < UInt32.max else {
                throw StoreError(.corrupted, "search index: document numbers exhausted (rebuild the index)")
            }
            number = state.nextNumber
            state.nextNumber += 1
        }
        state.documents += 1
        var docValue = [UInt8]()
        SearchDatabases.appendNumber(number, to: &docValue)
        for term in document.terms {
            SearchVarint.append(UInt64(term.count), to: &docValue)
            docValue.append(contentsOf: term)
        }
        try txn.put(docValue, forKey: key, in: dbs.documents)
        var numValue = [UInt8]()
        for f in 0..<16 {
            SearchVarint.append(UInt64(document.lengths[f]), to: &numValue)
            state.totals[f] += UInt64(document.lengths[f])
        }
        numValue.append(contentsOf: key)
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(number, to: &numberKey)
        try txn.put(numValue, forKey: numberKey, in: dbs.numbers)
        for (term, value) in zip(document.terms, document.values) {
            let postingKey = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
            pending.append((postingKey, value))
        }
        pendingNumbers.insert(number)
        if pending.count > 200_000 { try writePending(txn) }
    }

    /// Removes the record under the physical `key` from the index; returns its number and terms.
    /// With `keepNumber`, only its counts and length totals are undone (it is about to be
    /// re-indexed under the same number).
    @discardableResult
    mutating func remove<T: WritableTransaction & ~Copyable>(key: [UInt8], _ txn: borrowing T, keepNumber: Bool = false) throws
        -> (number: UInt32, terms: [[UInt8]])?
    {
        guard let doc = try txn.get(key, in: dbs.documents) else { return nil }
        let parsed = try doc.withUnsafeBytes { bytes -> (UInt32, [[UInt8]]) in
            guard let number = SearchDatabases.number(bytes, at: 0) else {
                throw StoreError(.corrupted, "search index: short document entry")
            }
            var offset = 4
            var terms: [[UInt8]] = []
            while offset < bytes.count {
                let length = Int(try SearchVarint.read(bytes, &offset))
                guard length <= bytes.count - offset else { throw StoreError(.corrupted, "search index: short term") }
                terms.append(Array(bytes[offset..<(offset + length)]))
                offset += length
            }
            return (number, terms)
        }
        var numberKey = [UInt8]()
        SearchDatabases.appendNumber(parsed.0, to: &numberKey)
        if let lengths = try txn.get(numberKey, in: dbs.numbers) {
            try lengths.withUnsafeBytes { bytes in
                var offset = 0
                for f in 0..<16 {
                    let l = try SearchVarint.read(bytes, &offset)
                    state.totals[f] = state.totals[f] >= l ? state.totals[f] - l : 0
                }
            }
        }
        if state.documents > 0 { state.documents -= 1 }
        if !keepNumber {
            if pendingNumbers.contains(parsed.0) { try writePending(txn) }
            for term in parsed.1 {
                let postingKey = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, parsed.0) }
                try txn.delete(postingKey, in: dbs.postings)
            }
            try txn.delete(key, in: dbs.documents)
            try txn.delete(numberKey, in: dbs.numbers)
        }
        return (parsed.0, parsed.1)
    }

    private mutating func writePending<T: WritableTransaction & ~Copyable>(_ txn: borrowing T) throws {
        guard !pending.isEmpty else { return }
        pending.sort { $0.key.lexicographicallyPrecedes($1.key) }
        for (key, value) in pending { try txn.put(value, forKey: key, in: dbs.postings) }
        pending.removeAll(keepingCapacity: true)
        pendingNumbers.removeAll(keepingCapacity: true)
    }

    /// Writes the buffered postings (in key order) and the state entry.
    mutating func flush<T: WritableTransaction & ~Copyable>(_ txn: borrowing T) throws {
        try writePending(txn)
        try txn.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
    }
}

extension StoreTransaction {
    /// Indexes one written value (the hook of `put`/`insert`).
    func indexForSearch<V>(_ value: V, storedKey: [UInt8], _ collection: StoreCollection<V>, _ c: RegisteredCollection)
        throws
    {
        guard let index = collection.search, let dbs = c.search else { return }
        var writer = SearchIndexWriter(dbs, try SearchIndexWriter.loadState(dbs, lmdb))
        try writer.index(key: storedKey, index.text(value), lmdb)
        try writer.flush(lmdb)
    }

    /// Removes one deleted record from the index (the hook of `delete`).
    func removeFromSearch(storedKey: [UInt8], _ c: RegisteredCollection) throws {
        guard let dbs = c.search else { return }
        var writer = SearchIndexWriter(dbs, try SearchIndexWriter.loadState(dbs, lmdb))
        try writer.remove(key: storedKey, lmdb)
        try writer.flush(lmdb)
    }

    /// Indexes a bulk chunk's records in the chunk's transaction, postings sorted per chunk.
    func indexChunkForSearch<V>(_ chunk: EncodedChunk<V>, _ collection: StoreCollection<V>, _ c: RegisteredCollection)
        throws
    {
        guard let index = collection.search, let dbs = c.search else { return }
        var writer = SearchIndexWriter(dbs, try SearchIndexWriter.loadState(dbs, lmdb))
        writer.analyzer = SearchAnalyzer(capacity: 1 << 14)
        for (i, origin) in chunk.origins.enumerated() {
            let texts = chunk.sources[origin.source].withUnsafeBufferPointer { index.text($0[origin.position]) }
            try writer.index(key: chunk.entries[i].key.array, texts, lmdb)
        }
        try writer.flush(lmdb)
    }
}
