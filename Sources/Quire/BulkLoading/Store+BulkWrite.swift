import QuireCodec
internal import QuireLMDB

extension Store {
    /// Writes encoded chunks, in order, in one transaction; returns whether each was appended.
    /// `relaxed`: the load's durability is relaxed (its commits are not synced one by one).
    @available(*, noasync)
    func writeChunks<V>(_ chunks: [EncodedChunk], _ collection: StoreCollection<V>, relaxed: Bool = false) throws -> [Bool] {
        let c = try resolvedForWrite(collection)
        return try writeNow(relaxed: relaxed) { txn in try chunks.map { try writeChunk($0, in: txn, collection, c) } }
    }

    /// Writes one chunk in `txn`; returns whether it was appended.
    private func writeChunk<V>(
        _ chunk: EncodedChunk, in txn: borrowing StoreTransaction, _ collection: StoreCollection<V>,
        _ c: RegisteredCollection
    ) throws -> Bool {
        // Encoded against an older table that has since diverged (new names interned by
        // someone else meanwhile): re-encode here, with the transaction's table.
        let chunk = try reconcile(chunk, with: txn.state, c, collection.coder)
        defer { withExtendedLifetime(chunk.arenas) {} }  // the entries point into them
        for pair in chunk.longKeys { try registerLongKey(pair.physical, pair.logical, in: txn.lmdb) }
        let canAppend = try isAppendable(chunk.entries, after: txn.cursor(in: c.records).last()?.keyBytes)
        let unchanged = canAppend ? nil : try unchangedRecords(chunk.entries, in: c.records, txn)
        // The full-text index first, while the records the chunk replaces are still there to
        // give the terms to remove (Search/Store+SearchWrite.swift).
        try txn.indexChunkForSearch(chunk, collection, c, unchanged: unchanged)
        var (entries, indexKeys) = (chunk.entries, chunk.indexKeys)
        if let unchanged {
            entries = entries.indices.filter { !unchanged[$0] }.map { entries[$0] }
            indexKeys = indexKeys.indices.filter { !unchanged[$0] }.map { indexKeys[$0] }
        }
        if c.indexes.isEmpty {
            try txn.putRecords(entries, in: c.records, appending: canAppend)  // no old value to read
        } else if canAppend {
            // Keys beyond the last one: no record is replaced, no index entry moves.
            try txn.putRecords(entries, in: c.records, appending: true)
            for i in entries.indices {
                try txn.putIndexEntries(indexKeys[i], pointingTo: entries[i].key.buffer, in: c.indexes)
            }
        } else {
            try writeIndexed(entries, indexKeys, txn, collection, c)
        }
        if options.changeRetention > 0, !entries.isEmpty {
            var logical: [[UInt8]: [UInt8]] = [:]
            for pair in chunk.longKeys { logical[pair.physical] = pair.logical }
            var keys: [StoreKey] = []
            keys.reserveCapacity(entries.count)
            for entry in entries {
                let key = entry.key.array
                keys.append(StoreKey(bytes: logical.isEmpty ? key : logical[key] ?? key))
            }
            txn.state.changes.record(collection.name, .upsert, keys: keys)
        }
        return canAppend
    }

    /// Which of a chunk's records are stored already, byte for byte (a load of records it has):
    /// those are left as they are, with their index entries and postings, and out of the change
    /// feed, since writing them would change nothing. Nil when none is, or when a key comes
    /// twice (the chunk's order then decides which record stays).
    private func unchangedRecords(
        _ entries: [EncodedEntry], in records: Database, _ txn: borrowing StoreTransaction
    ) throws -> [Bool]? {
        guard KeyOrdering.isAscending(entries.lazy.map(\.key), strictly: true) else { return nil }
        var unchanged = [Bool](repeating: false, count: entries.count)
        var any = false
        for (i, entry) in entries.enumerated() {
            let stored = try txn.lmdb.withValue(forKey: entry.key.buffer, in: records) {
                KeyOrdering.equal($0, entry.record.buffer)
            }
            unchanged[i] = stored == true
            any = any || unchanged[i]
        }
        return any ? unchanged : nil
    }

    /// Which records of a chunk in strictly ascending key order are stored already, byte for
    /// byte, as of now (a reload of records the store has): their text need not be tokenized
    /// for the full-text index, a third of a reload's work. Read in a snapshot a part on every
    /// core, not in the writer's transaction, so a record may change before the chunk is
    /// written: the writer looks again (``unchangedRecords(_:in:_:)``). Nil when none is, or
    /// when every key is beyond the stored ones (a load into a new store looks nothing up).
    func recordsStoredAlready(_ chunk: EncodedChunk, _ c: RegisteredCollection) throws -> [Bool]? {
        let (entries, records) = (chunk.entries, c.records)
        guard let first = entries.first,
            let last = try read({ snapshot throws in try snapshot.cursor(in: records).last()?.keyBytes }),
            !KeyOrdering.follows(first.key, last)
        else { return nil }
        let parts = try Parallelism.inParts(count: entries.count) { range in
            Result { () throws -> [Bool] in
                try self.read { snapshot throws in
                    try range.map { i in
                        try snapshot.withValue(forKey: entries[i].key.buffer, in: records) {
                            KeyOrdering.equal($0, entries[i].record.buffer)
                        } == true
                    }
                }
            }
        }.map { try $0.get() }
        let stored = Array(parts.joined())
        return stored.contains(true) ? stored : nil
    }

    /// Writes records with index entries, moving the index entries of the records they replace.
    private func writeIndexed<V>(
        _ entries: [EncodedEntry], _ indexKeys: [IndexKeyBytes], _ txn: borrowing StoreTransaction,
        _ collection: StoreCollection<V>, _ c: RegisteredCollection
    ) throws {
        for i in entries.indices {
            let (key, record) = (entries[i].key.buffer, entries[i].record.buffer)
            if try !txn.put(record, forKey: key, in: c.records, flags: .noOverwrite) {
                // The key existed: move its index entries, then replace the record.
                let keyBytes = Array(key)
                if let old = try txn.get(keyBytes, in: c.records) {
                    try txn.replaceIndexEntries(of: old, key: keyBytes, with: indexKeys[i], collection, c)
                }
                try txn.put(record, forKey: key, in: c.records)
            }
            try txn.putIndexEntries(indexKeys[i], pointingTo: key, in: c.indexes)
        }
    }

    /// The chunk, its records re-encoded with the transaction's field table when the table the
    /// chunk was encoded with has diverged from it (new names interned elsewhere meanwhile).
    private func reconcile<V>(
        _ chunk: EncodedChunk, with state: WriteState, _ c: RegisteredCollection, _ coder: RecordCoder<V>
    ) throws -> EncodedChunk {
        let committed = state.fields.names
        if chunk.fields.names.starts(with: committed) {
            state.fields = chunk.fields  // same ids, maybe more names: they get persisted with the chunk
            return chunk
        }
        var table = state.fields
        let reencoded = try chunk.reencoded(with: &table, coder, c)
        state.fields = table
        return reencoded
    }

    /// The largest stored key of a collection's records (its stored form), nil when it has none:
    /// the committed one, so while a chunk of the same load is in flight it may grow.
    func lastRecordKey<V>(_ collection: StoreCollection<V>) throws -> [UInt8]? {
        let c = try resolvedForWrite(collection)
        return try read { snapshot throws in try snapshot.cursor(in: c.records).last()?.keyBytes }
    }

    /// Keys strictly ascending and all above the current last key.
    private func isAppendable(_ entries: [EncodedEntry], after last: [UInt8]?) -> Bool {
        guard let first = entries.first, KeyOrdering.follows(first.key, last) else { return false }
        return KeyOrdering.isAscending(entries.lazy.map(\.key), strictly: true)
    }
}

extension StoreTransaction {
    /// Puts encoded records in order (with `MDB_APPEND` when `appending`) without reading what
    /// they replace.
    func putRecords(_ entries: [EncodedEntry], in database: Database, appending: Bool) throws {
        try putEach(count: entries.count, in: database, flags: appending ? .append : []) { i in
            (entries[i].record.buffer, entries[i].key.buffer)
        }
    }

    /// Adds one record's index entries.
    func putIndexEntries(_ keys: IndexKeyBytes, pointingTo key: UnsafeRawBufferPointer, in indexes: [Database]) throws {
        try keys.forEach { j, k in _ = try put(key, forKey: k, in: indexes[j], flags: .noDuplicateData) }
    }

    /// Removes an old record's index entries that its replacement doesn't have.
    func replaceIndexEntries<V>(
        of old: [UInt8], key: [UInt8], with newKeys: IndexKeyBytes, _ collection: StoreCollection<V>,
        _ c: RegisteredCollection
    ) throws {
        guard !collection.indexes.isEmpty else { return }
        let value = try old.withUnsafeBytes { try decode(collection, $0, c) }
        for (i, index) in collection.indexes.enumerated() {
            for k in index.keys(value).map({ store.longKeys.physical($0.bytes) }) where !newKeys.contains(k, inIndex: i) {
                try delete(k, value: key, in: c.indexes[i])
            }
        }
    }
}
