import QuireCodec
internal import QuireLMDB

/// The by-name, type-free reads of a store that tools use (`quire dump`, `get`, `verify`,
/// `quire serve`): collections, indexes and fields named by strings, records as generic
/// values. Typed programs use the typed reads of ``StoreReading`` instead.
extension StoreReading where Self: ~Copyable {
    /// Index lookups by collection and index name (for tools that don't know the Swift types).
    public func indexKeys(
        _ collection: String, _ index: String, range: StoreKeyRange = .all, reverse: Bool = false, limit: Int = .max
    ) throws(StoreError) -> [StoreKey] {
        try StoreError.boundary("\(store.path): reading index \(index) of \(collection)") {
            let db = try store.indexDatabase(collection, index)
            var out: [StoreKey] = []
            guard limit > 0 else { return out }
            // In reverse, duplicates of one index key come back in descending order too.
            // Index keys are mapped back only to filter by a long bound: the walk hands out values.
            let (physical, filter) = LongKeys.physicalRange(range.lmdb)
            for entry in entries(in: db, range: physical, reverse: reverse) {
                if let filter, !LongKeys.contains(try logicalKey(entry.key).bytes, in: filter) { continue }
                out.append(try logicalKey(entry.value))
                if out.count >= limit { break }
            }
            return out
        }
    }

    /// `field(_:of:in:)` by collection name.
    public func field(_ path: String, of key: StoreKey, inCollectionNamed name: String) throws(StoreError) -> CompactValue? {
        try StoreError.boundary("\(store.path): reading \(key) of \(name)") {
            let c = try store.resolved(name)
            guard let stored = try storedKey(key) else { return nil }
            let found: CompactValue?? = try withValue(forKey: stored, in: c.records) { bytes in
                try withFieldRetry { table in
                    try CompactField.value(at: path, in: bytes, fields: table, options: c.decoder.options)
                }
            }
            return found ?? nil
        }
    }

    /// Several fields or paths of one record, read in one pass: nil for a missing record, a
    /// nil value where the record has none (``field(_:of:inCollectionNamed:)`` for each,
    /// without opening the record again for each).
    public func fields(_ paths: [String], of key: StoreKey, inCollectionNamed name: String) throws(StoreError)
        -> [CompactValue?]?
    {
        try StoreError.boundary("\(store.path): reading \(key) of \(name)") {
            let c = try store.resolved(name)
            guard let stored = try storedKey(key) else { return nil }
            let components = paths.map(CompactField.components(of:))
            return try withValue(forKey: stored, in: c.records) { bytes in
                try withFieldRetry { table in
                    try CompactField.values(at: components, in: bytes, fields: table, options: c.decoder.options)
                }
            }
        }
    }

    /// A stored record as a generic value tree, by collection name (no Swift type needed).
    public func genericValue(_ key: StoreKey, inCollectionNamed name: String) throws(StoreError) -> CompactValue? {
        try StoreError.boundary("\(store.path): reading \(key) of \(name)") {
            let c = try store.resolved(name)
            guard let stored = try storedKey(key) else { return nil }
            return try withValue(forKey: stored, in: c.records) { bytes in
                try genericValue(bytes, options: c.decoder.options)
            }
        }
    }

    /// Walks a collection by name as generic values, in key order, until `body` returns false.
    public func forEachGeneric(
        inCollectionNamed name: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey, CompactValue) throws -> Bool
    ) throws {
        let c = try store.resolved(name)
        var table: FieldTable?  // fetched once for the walk, not per record
        try forEachEntry(in: c.records, range: range.lmdb, reverse: reverse) { key, entry in
            let value = try withFieldRetry(&table) { table in
                try CompactValue.decode(from: entry.value, fields: table, options: c.decoder.options)
            }
            return try body(key, value)
        }
    }

    /// A stored record as JSON (what `CompactValue.jsonBytes()` writes), by collection name,
    /// written straight from its bytes without a value tree.
    public func jsonValue(_ key: StoreKey, inCollectionNamed name: String) throws(StoreError) -> [UInt8]? {
        try StoreError.boundary("\(store.path): reading \(key) of \(name)") {
            let c = try store.resolved(name)
            guard let stored = try storedKey(key) else { return nil }
            return try withValue(forKey: stored, in: c.records) { bytes in
                try withFieldRetry { table in
                    var out: [UInt8] = []
                    try CompactValue.appendJSON(from: bytes, fields: table, options: c.decoder.options, to: &out)
                    return out
                }
            }
        }
    }

    /// Walks the keys of a collection by name, in key order (or reverse), until `body` returns
    /// false; no record is decoded.
    public func forEachKey(
        inCollectionNamed name: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (StoreKey) throws -> Bool
    ) throws {
        let c = try StoreError.boundary("\(store.path): reading \(name)") { try store.resolved(name) }
        try forEachEntry(in: c.records, range: range.lmdb, reverse: reverse) { key, _ in try body(key) }
    }

    /// Decodes record bytes into a generic value tree with the store's field table (and the
    /// collection's decoder options, which carry its compression dictionary).
    public func genericValue(_ bytes: UnsafeRawBufferPointer, options: CompactDecoder.Options = .init()) throws(StoreError)
        -> CompactValue
    {
        try StoreError.boundary("\(store.path): decoding a record") {
            try withFieldRetry { table in try CompactValue.decode(from: bytes, fields: table, options: options) }
        }
    }

    /// The number of records in the collection named `name`.
    public func count(ofCollectionNamed name: String) throws(StoreError) -> Int {
        try StoreError.boundary("\(store.path): counting \(name)") {
            try count(of: store.resolved(name).records)
        }
    }

    /// Walks an index by collection and index name in index order (or reverse), handing each
    /// index key and the identification key it points to, until `body` returns false.
    /// Streams: nothing is collected in memory.
    public func forEachIndexEntry(
        _ collection: String, _ index: String, range: StoreKeyRange = .all, reverse: Bool = false,
        _ body: (_ indexKey: StoreKey, _ key: StoreKey) throws -> Bool
    ) throws {
        try forEachEntry(in: try store.indexDatabase(collection, index), range: range.lmdb, reverse: reverse) { key, entry in
            try body(key, try logicalKey(entry.value))
        }
    }

    /// Whether the index has an entry of `indexKey` for the record `key`: one exact lookup
    /// (`MDB_GET_BOTH`), where reading the record's field would decompress and decode it.
    public func indexHasEntry(_ collection: String, _ index: String, indexKey: StoreKey, key: StoreKey) throws -> Bool {
        guard let stored = try storedKey(indexKey), let record = try storedKey(key) else { return false }
        return try contains(stored, value: record, in: try store.indexDatabase(collection, index))
    }

    /// Each distinct key of an index, in index order, with the number of records it points to:
    /// a step per distinct key (`MDB_NEXT_NODUP`, `mdb_cursor_count`), not per record, so a
    /// facet list (`quire serve`'s sections) costs the same at 10M records as at 1,000.
    public func indexKeyCounts(_ collection: String, _ index: String) throws -> [(key: StoreKey, count: Int)] {
        let cursor = try lmdb.cursor(in: try store.indexDatabase(collection, index))
        var counts: [(key: StoreKey, count: Int)] = []
        var entry = try cursor.first()
        while let current = entry {
            counts.append((try logicalKey(current.key), try cursor.duplicateCount()))
            entry = try cursor.nextKey()
        }
        return counts
    }

    /// How many records an index key points to: one lookup and `mdb_cursor_count`, however
    /// many keys the index has.
    public func indexKeyCount(_ collection: String, _ index: String, indexKey: StoreKey) throws -> Int {
        guard let stored = try storedKey(indexKey) else { return 0 }
        let cursor = try lmdb.cursor(in: try store.indexDatabase(collection, index))
        return try cursor.seek(exactly: stored) == nil ? 0 : cursor.duplicateCount()
    }

    /// Walks a to-many relation by name in owner order, handing each owner and one of its
    /// members (members in key order), until `body` returns false: what a whole-store dump
    /// writes. Streams: nothing is collected in memory.
    public func forEachRelationEntry(
        named name: String, _ body: (_ owner: StoreKey, _ member: StoreKey) throws -> Bool
    ) throws {
        try forEachEntry(in: try store.relationDatabase(named: name), range: StoreKeyRange.all.lmdb, reverse: false) {
            owner, entry in
            try body(owner, try logicalKey(entry.value))
        }
    }

    /// The definition of a stored collection.
    public func definition(ofCollectionNamed name: String) throws(StoreError) -> CollectionDefinition {
        try StoreError.boundary("\(store.path): reading \(name)") {
            try store.resolved(name).definition
        }
    }
}
