internal import QuireLMDB
import Synchronization

extension Store {
    /// The `_longkeys` database, when the store has one (a read-only store that never held a
    /// long key has none).
    var longKeysDatabase: Database? { longKeysStore.withLock { $0 } }

    /// Opens `_longkeys` in a read-only store that had none when it opened (another process may
    /// have written the first long key since).
    func openLongKeysIfCreated() {
        guard longKeysDatabase == nil, let db = try? environment.openDatabase(StoreLayout.longKeys, flags: []) else {
            return
        }
        longKeysStore.withLock { $0 = $0 ?? db }
    }

    /// The physical form of a key about to be written: the key itself up to 510 bytes; else its
    /// hashed form, recorded in `_longkeys` in the same transaction.
    ///
    /// - Throws: `StoreError.invalidKey` for an empty key, `StoreError.keyCollision` when the
    ///   hashed form already stands for another key.
    func writableKey<T: WritableTransaction & ~Copyable>(_ logical: [UInt8], in txn: borrowing T) throws -> [UInt8] {
        guard !logical.isEmpty else { throw StoreError(.invalidKey, "empty key") }
        guard LongKeys.isLong(logical.count) else { return logical }
        let physical = longKeys.physical(logical)
        try registerLongKey(physical, logical, in: txn)
        return physical
    }

    /// Records that `physical` stands for `logical`, unless it already does.
    ///
    /// - Throws: `StoreError.keyCollision` when `physical` stands for another key.
    func registerLongKey<T: WritableTransaction & ~Copyable>(
        _ physical: [UInt8], _ logical: [UInt8], in txn: borrowing T
    ) throws {
        guard let db = longKeysDatabase else {
            throw StoreError(.readOnly, "\(environment.path): the store is open read-only")
        }
        let same: Bool? = try txn.withValue(forKey: physical, in: db) { $0.elementsEqual(logical) }
        switch same {
        case true?:
            return
        case false?:
            let other = try txn.get(physical, in: db) ?? []
            throw StoreError(
                .keyCollision,
                "key \(Self.describe(logical)) (\(logical.count) bytes) has the same stored form as key "
                    + "\(Self.describe(other)) (\(other.count) bytes); refusing to overwrite it")
        case nil:
            try txn.put(logical, forKey: physical, in: db, flags: .noOverwrite)
        }
    }

    /// A long key shortened for messages: its first bytes as text (or hex), and an ellipsis.
    static func describe(_ key: [UInt8]) -> String {
        let head = StoreKey(bytes: Array(key.prefix(40))).description
        return key.count > 40 ? "'\(head)…'" : "'\(head)'"
    }
}

extension StoreReading where Self: ~Copyable {
    /// The physical key under which the logical `key` would be stored; nil when it is a long key
    /// that the store does not hold (its hashed form is unknown, or stands for another key).
    ///
    /// A 511-byte key with no `_longkeys` entry may be a literal one written before long keys
    /// existed, so it is looked up as itself; unless it is the stored form of another key
    /// (anyone can compute one: read as itself, it would answer, and delete, for that key).
    func storedKey(_ key: StoreKey) throws -> [UInt8]? {
        let logical = key.bytes
        guard LongKeys.isLong(logical.count) else { return logical }
        let legacy = LongKeys.isPhysicalLong(logical.count) ? logical : nil
        guard let db = store.longKeysDatabase else { return legacy }
        let physical = store.longKeys.physical(logical)
        let same: Bool? = try withValue(forKey: physical, in: db) { $0.elementsEqual(logical) }
        switch same {
        case true?: return physical
        case false?: return nil
        case nil:
            guard let legacy, try withValue(forKey: legacy, in: db, { _ in true }) == nil else { return nil }
            return legacy
        }
    }

    /// The logical key of a stored (physical) key: a long key's whole bytes from `_longkeys`,
    /// any other key as itself.
    @inline(__always)
    func logicalKey(_ physical: UnsafeRawBufferPointer) throws -> StoreKey {
        guard LongKeys.isPhysicalLong(physical.count) else { return StoreKey(bytes: Array(physical)) }
        return try longLogicalKey(physical)
    }

    private func longLogicalKey(_ physical: UnsafeRawBufferPointer) throws -> StoreKey {
        guard let db = store.longKeysDatabase, let logical = try withValue(forKey: physical, in: db, { Array($0) })
        else {
            return StoreKey(bytes: Array(physical))  // a literal 511-byte key from before long keys
        }
        return StoreKey(bytes: logical)
    }

    /// ``logicalKey(_:)``, and whether a long key's stored form is the hashed form of the key
    /// `_longkeys` maps it to (what `Store.verify()` checks).
    func verifiedLogicalKey(_ physical: UnsafeRawBufferPointer) throws -> (key: StoreKey, sound: Bool) {
        let key = try logicalKey(physical)
        guard LongKeys.isPhysicalLong(physical.count), !key.bytes.elementsEqual(physical) else { return (key, true) }
        return (key, store.longKeys.physical(key.bytes).elementsEqual(physical))
    }

    /// Walks `database` over the logical keys in `range`, in physical key order (the logical
    /// order up to byte 495), handing each entry and its logical key until `body` returns false.
    func forEachEntry(
        in database: Database, range: KeyRange, reverse: Bool, _ body: (StoreKey, Entry) throws -> Bool
    ) throws {
        let (physical, filter) = LongKeys.physicalRange(range)
        for entry in entries(in: database, range: physical, reverse: reverse) {
            let key = try logicalKey(entry.key)
            if let filter, !LongKeys.contains(key.bytes, in: filter) { continue }
            if try !body(key, entry) { return }
        }
    }
}

extension StoreReading where Self: ~Copyable {
    /// `key` in at most 511 bytes, for a client to hand back later (a page cursor): a long key's
    /// stored form, any other key as itself. A cursor holding a key of 7,000 bytes was longer
    /// than a request target may be, so the walk could not go past that record.
    package func compactForm(of key: StoreKey) -> [UInt8] { store.longKeys.physical(key.bytes) }

    /// The key whose ``compactForm(of:)`` is `bytes`, as a walk of the store would name it.
    package func key(fromCompactForm bytes: [UInt8]) throws -> StoreKey {
        try bytes.withUnsafeBytes { try logicalKey($0) }
    }

    /// Walks the keys of the collection `name` after the key whose ``compactForm(of:)`` is
    /// `compact`, in the store's own order (a long key by its stored form), until `body` returns
    /// false: where a page cursor resumes. Resumed after the logical key, a walk lost or
    /// repeated long keys, which sort by their stored form past byte 495.
    package func forEachKey(
        inCollectionNamed name: String, afterCompactForm compact: [UInt8], _ body: (StoreKey) throws -> Bool
    ) throws {
        let c = try StoreError.boundary("\(store.path): reading \(name)") { try store.resolved(name) }
        for entry in entries(in: c.records, range: KeyRange(lower: .exclusive(compact))) {
            if try !body(try logicalKey(entry.key)) { return }
        }
    }
}
