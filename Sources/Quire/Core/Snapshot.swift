import QuireCodec
internal import QuireLMDB

/// What store snapshots and store write transactions both read.
public protocol StoreReading: ~Copyable {
    /// The transaction under the view; opaque outside Quire (an implementation detail).
    var _context: StoreViewContext { get }
}

extension StoreReading where Self: ~Copyable {
    /// The store this view belongs to. Not public: a view handed out by a holder of the store
    /// (a cluster node's replica) must not give the store itself away, with its writes.
    package var store: Store { _context.store }
}

/// A consistent, read-only view of a store, valid inside `Store.read`.
public struct Snapshot: StoreReading, ~Copyable {
    public let _context: StoreViewContext

    init(raw: TransactionHandle, store: Store) {
        self._context = StoreViewContext(store: store, raw: raw, writeState: nil)
    }
}

@available(*, unavailable)
extension Snapshot: Sendable {}

extension StoreReading where Self: ~Copyable {
    /// The value stored under `key`, or nil.
    public func get<V>(_ key: StoreKey, from collection: StoreCollection<V>) throws(StoreError) -> V? {
        try StoreError.boundary("\(store.path): reading \(key) of '\(collection.name)'") {
            let c = try store.resolved(for: collection)
            guard let stored = try storedKey(key) else { return nil }
            return try withValue(forKey: stored, in: c.records) { bytes in try decode(collection, bytes, c, key: key) }
        }
    }

    /// The values stored under `keys`, in the same order (nil where none is stored): one
    /// resolution of the collection and one field table for the whole batch.
    public func get<V>(_ keys: [StoreKey], from collection: StoreCollection<V>) throws(StoreError) -> [V?] {
        try StoreError.boundary("\(store.path): reading \(keys.count) keys of '\(collection.name)'") {
            let c = try store.resolved(for: collection)
            var table: FieldTable?
            return try keys.map { key in
                guard let stored = try storedKey(key) else { return nil }
                return try withValue(forKey: stored, in: c.records) { bytes in
                    try Self.naming(collection, key) {
                        try withFieldRetry(&table) { table in try collection.coder.decode(bytes, c.decoder, table) }
                    }
                }
            }
        }
    }

    /// True when a value is stored under `key`.
    public func contains<V>(_ key: StoreKey, in collection: StoreCollection<V>) throws(StoreError) -> Bool {
        try StoreError.boundary("\(store.path): looking up \(key) in '\(collection.name)'") {
            let records = try store.resolved(for: collection).records
            guard let stored = try storedKey(key) else { return false }
            return try contains(stored, in: records)
        }
    }

    /// The number of values in the collection.
    public func count<V>(of collection: StoreCollection<V>) throws(StoreError) -> Int {
        try StoreError.boundary("\(store.path): counting '\(collection.name)'") {
            try count(of: store.resolved(for: collection).records)
        }
    }

    /// The records whose keys are in `range`, in key order (or reverse), decoded one at a time
    /// as the loop asks for them: memory stays flat on big collections.
    ///
    /// ```swift
    /// try store.read { snapshot in
    ///     for record in snapshot.records(in: articles, range: .prefix("2024")) {
    ///         let (key, article) = try record.get()
    ///     }
    /// }
    /// ```
    /// Each element is a `Result`, because a record may fail to decode; the walk itself stops
    /// at the first error (which is its last element). The sequence belongs to the snapshot's
    /// read: iterating it after `read` returned traps.
    public func records<V>(
        in collection: StoreCollection<V>, range: StoreKeyRange = .all, reverse: Bool = false
    ) -> StoreRecords<V> {
        StoreRecords(collection: collection, range: range, reverse: reverse, view: self)
    }

    /// The values whose keys are in `range`, in key order (or reverse), at most `limit`.
    public func values<V>(
        of collection: StoreCollection<V>, range: StoreKeyRange = .all, reverse: Bool = false, limit: Int = .max
    ) throws(StoreError) -> [V] {
        var out: [V] = []
        guard limit > 0 else { return out }
        for record in records(in: collection, range: range, reverse: reverse) {
            out.append(try record.get().value)
            if out.count >= limit { break }
        }
        return out
    }

    /// The identification keys an index maps to, for index keys in `range` (index order, or
    /// reverse: for a date index, newest first).
    public func keys<V>(
        in index: StoreIndex<V>, of collection: StoreCollection<V>, range: StoreKeyRange = .all, reverse: Bool = false,
        limit: Int = .max
    ) throws(StoreError) -> [StoreKey] {
        try StoreError.boundary("\(store.path): reading index '\(index.name)' of '\(collection.name)'") {
            try indexKeys(collection.name, index.name, range: range, reverse: reverse, limit: limit)
        }
    }

    /// The values an index range resolves to, in index order (or reverse).
    /// - Throws: ``StoreError/Code/corrupted`` when an entry names a record the collection does
    ///   not hold: the two are written in one transaction, so that is damage (such a record was
    ///   left out, and counted against `limit`).
    public func values<V>(
        in index: StoreIndex<V>, of collection: StoreCollection<V>, range: StoreKeyRange = .all, reverse: Bool = false,
        limit: Int = .max
    ) throws(StoreError) -> [V] {
        let keys = try keys(in: index, of: collection, range: range, reverse: reverse, limit: limit)
        let values = try get(keys, from: collection)
        if let missing = values.firstIndex(where: { $0 == nil }) {
            throw StoreError(
                .corrupted,
                "\(store.path): collection '\(collection.name)': index '\(index.name)' names record \(keys[missing].clippedDescription), which the collection does not hold (a damaged index: run quire verify)")
        }
        return values.map { $0! }
    }

    /// One field of a stored value, read without decoding the rest (a path like
    /// `keywords.0.value`), or nil when the record or the field is absent.
    public func field<V>(_ path: String, of key: StoreKey, in collection: StoreCollection<V>) throws(StoreError)
        -> CompactValue?
    {
        try field(path, of: key, inCollectionNamed: collection.name)
    }

    /// Calls `body` with the stored bytes of a record, zero-copy from the memory map; nil when absent.
    ///
    /// The bytes are a `RawSpan`, which cannot outlive `body`: returning it, storing it or
    /// capturing it in an escaping closure does not compile, so no one reads the map after the
    /// snapshot ends (when LMDB may reuse the page). Inside a write transaction they are a copy:
    /// `body` may write there, which moves, rewrites or frees the transaction's own pages.
    ///
    /// - Throws: a ``StoreError`` of the store, or what `body` throws.
    public func withRecordBytes<V, R>(
        _ key: StoreKey, in collection: StoreCollection<V>, _ body: (RawSpan) throws -> R
    ) throws -> R? {
        let what = "\(store.path): reading \(key) of '\(collection.name)'"
        let (records, stored) = try StoreError.boundary(what) { (try store.resolved(for: collection).records, try storedKey(key)) }
        guard let stored else { return nil }
        do {
            if _context.writeState != nil {
                guard let copy = try withValue(forKey: stored, in: records, { Array($0) }) else { return nil }
                return try copy.withUnsafeBytes { buffer in try body(buffer.bytes) }
            }
            return try withValue(forKey: stored, in: records) { buffer in try body(buffer.bytes) }
        } catch let error as LMDBError {
            throw StoreError.wrap(error, what)
        }
    }

    /// The member keys of `owner` in a to-many relation, in member key order.
    public func members(of owner: StoreKey, in relation: StoreRelation) throws(StoreError) -> [StoreKey] {
        try StoreError.boundary("\(store.path): reading relation '\(relation.name)'") {
            let db = try store.relationDatabase(relation)
            guard let stored = try storedKey(owner) else { return [] }
            return try duplicates(of: stored, in: db).map { try logicalKey($0.value) }
        }
    }

    func decode<V>(
        _ collection: StoreCollection<V>, _ bytes: UnsafeRawBufferPointer, _ c: RegisteredCollection, key: StoreKey? = nil
    ) throws -> V {
        try Self.naming(collection, key) { try withFieldRetry { table in try collection.coder.decode(bytes, c.decoder, table) } }
    }

    /// Runs a decode; a codec error comes back as a store error naming the collection and key.
    static func naming<V, R>(_ collection: StoreCollection<V>, _ key: StoreKey?, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            let which = key.map { " record \($0)" } ?? " a record"
            throw StoreError(
                .codec, "cannot decode\(which) of '\(collection.name)' as \(String(reflecting: V.self))",
                underlying: error)
        }
    }

    /// Runs a decode with this process's field table; when a record uses a field id the table
    /// lacks (written after it was loaded, maybe by another process), reloads the table from
    /// this snapshot — which contains every id its records use — and tries once more.
    func withFieldRetry<R>(_ body: (FieldTable) throws -> R) throws -> R {
        // Not through the walk's version: keeping the table in a variable would copy it, and every
        // copy counts references on storage that all reading threads share.
        let current = writingFields ?? store.fields
        do {
            return try body(current)
        } catch {
            return try retryWithFreshFields(after: error, current, body)
        }
    }

    /// ``withFieldRetry(_:)`` starting from `table` (the process's table when nil), which is
    /// left holding the table that worked: a walk passes one variable to every record's decode,
    /// so the table is fetched once (fetching takes the store's lock and counts references on
    /// storage that every reading thread shares).
    func withFieldRetry<R>(_ table: inout FieldTable?, _ body: (FieldTable) throws -> R) throws -> R {
        // A write transaction reads its own records with its own, newer table.
        let current = table ?? writingFields ?? store.fields
        table = current
        do {
            return try body(current)
        } catch {
            return try retryWithFreshFields(after: error, current, body) { table = $0 }
        }
    }

    /// After `error` from a decode with `current`: when the record has a field id the table
    /// lacks, runs `body` once more with the table reloaded from this snapshot (handed to
    /// `adopt` too); else rethrows `error`.
    private func retryWithFreshFields<R>(
        after error: any Error, _ current: FieldTable, _ body: (FieldTable) throws -> R,
        adopt: (FieldTable) -> Void = { _ in }
    ) throws -> R {
        guard let decoding = error as? CompactDecodingError, decoding.unknownFieldID != nil else { throw error }
        let fresh = try Store.loadFieldTable(lmdb, store.fieldsDB, meta: store.metaDB, path: store.environment.path)
        guard fresh.count > current.count else { throw error }
        store.adoptFields(fresh)
        adopt(fresh)
        return try body(fresh)
    }
}
