import QuireCodec
internal import QuireLMDB

/// Mutable state of one write transaction: the field table it extends and what it changed.
final class WriteState {
    var fields: FieldTable
    let committedFieldCount: Int
    var changes = ChangeLog()
    /// Per collection: whether its index keys can be read from record fields (see
    /// `StoreTransaction.fieldKeysHold`).
    var fieldKeysHold: [String: Bool] = [:]
    /// Per collection: documents put but not yet in its full-text index (Search/Store+SearchWrite.swift).
    var pendingSearch: [String: PendingSearchDocuments] = [:]
    /// Raw writes made so far (records, index and relation entries): an operation that throws
    /// after one of them has written part of its work.
    var writes = 0
    /// The error of an operation that threw with part of its work written (or of a full-text
    /// flush): the transaction cannot commit, even when the body caught the error.
    var poisoned: (any Error)?

    init(fields: FieldTable) {
        self.fields = fields
        self.committedFieldCount = fields.count
    }
}

/// A write transaction on a store, valid inside `Store.write`; committed when the closure
/// returns, rolled back when it throws.
///
/// Records, their index entries, relation entries and new field names all commit together.
/// An operation that throws has written nothing, or it dooms the transaction: when it failed
/// after part of its work was written (a write of ``put(contentsOf:in:)`` after the first, a
/// storage error), the commit throws its error even if the body caught it, so no record is
/// ever committed without its index entries or postings.
public struct StoreTransaction: StoreReading, ~Copyable {
    public let _context: StoreViewContext
    let state: WriteState

    init(raw: TransactionHandle, store: Store, state: WriteState) {
        self.state = state
        self._context = StoreViewContext(store: store, raw: raw, writeState: state)
    }

    /// Stores `value`, replacing the value with the same identification key (an upsert), and
    /// moves its index entries. A value whose record is stored already, byte for byte, is left
    /// as it is and makes no change-feed entry.
    public func put<V>(_ value: V, in collection: StoreCollection<V>) throws(StoreError) {
        try operation("\(store.path): writing into '\(collection.name)'") {
            _ = try write(value, in: collection, replacing: true)
        }
    }

    /// Stores every value of `values` as ``put(_:in:)`` does one at a time (upserts, a later
    /// value replacing an earlier one with the same key). Like every put of a transaction, their
    /// full-text postings are built together before the commit, tokenized on every core.
    public func put<V>(contentsOf values: some Sequence<V>, in collection: StoreCollection<V>) throws(StoreError) {
        try operation("\(store.path): writing into '\(collection.name)'") {
            for value in values { _ = try write(value, in: collection, replacing: true) }
        }
    }

    /// Stores `value` only when its key is new.
    /// - Returns: false (and changes nothing) when the key is already present.
    @discardableResult
    public func insert<V>(_ value: V, in collection: StoreCollection<V>) throws(StoreError) -> Bool {
        try operation("\(store.path): writing into '\(collection.name)'") {
            try write(value, in: collection, replacing: false)
        }
    }

    /// Deletes the value under `key` and its index entries.
    /// - Returns: false when there was none.
    @discardableResult
    public func delete<V>(_ key: StoreKey, from collection: StoreCollection<V>) throws(StoreError) -> Bool {
        try operation("\(store.path): deleting \(key) from '\(collection.name)'") {
            let c = try registered(collection)
            guard let stored = try storedKey(key), let old = try get(stored, in: c.records) else { return false }
            // Everything that decodes the record comes before the first write: a record that no
            // longer decodes fails its delete with nothing written.
            let oldKeys = try indexKeys(of: old, collection, c)
            let oldText = try searchText(ofStored: old, collection, c)
            for (i, list) in oldKeys.enumerated() {
                for k in list { try delete(k, value: stored, in: c.indexes[i]) }
            }
            if let oldText { try removeFromSearch(storedKey: stored, text: oldText, collection, c) }  // Search/Store+SearchWrite.swift
            try delete(stored, in: c.records)
            state.changes.record(collection.name, .delete, key)
            return true
        }
    }

    /// Replaces the members of `owner` in a relation. Members themselves are never deleted.
    public func setMembers(_ members: [StoreKey], of owner: StoreKey, in relation: StoreRelation) throws(StoreError) {
        try operation("\(store.path): writing relation '\(relation.name)'") {
            let db = try store.relationDatabase(relation)
            let stored = try store.writableKey(owner.bytes, in: lmdb)
            // Every member is checked before the old ones go: a bad one leaves them as they were.
            for member in members { _ = try store.writableKey(member.bytes, in: lmdb) }
            // A list emptied is a change too (its members' removal was missing from the feed).
            if try delete(stored, in: db), members.isEmpty { state.changes.record(relation.name, .relation, owner) }
            try addMembers(members, to: owner, in: relation)
        }
    }

    /// Adds members to `owner` in a relation (present ones are kept once; when all were
    /// present, nothing changes and no change-feed entry is made).
    public func addMembers(_ members: [StoreKey], to owner: StoreKey, in relation: StoreRelation) throws(StoreError) {
        try operation("\(store.path): writing relation '\(relation.name)'") {
            let db = try store.relationDatabase(relation)
            let stored = try store.writableKey(owner.bytes, in: lmdb)
            // Every key is checked (and a long one recorded) before the first entry is written.
            let storedMembers = try members.map { try store.writableKey($0.bytes, in: lmdb) }
            var added = false
            for member in storedMembers where try put(member, forKey: stored, in: db, flags: .noDuplicateData) {
                added = true
            }
            if added { state.changes.record(relation.name, .relation, owner) }
        }
    }

    /// Removes one member from `owner`. - Returns: false when it was not a member.
    @discardableResult
    public func removeMember(_ member: StoreKey, from owner: StoreKey, in relation: StoreRelation) throws(StoreError) -> Bool {
        try operation("\(store.path): writing relation '\(relation.name)'") {
            let db = try store.relationDatabase(relation)
            guard let storedOwner = try storedKey(owner), let storedMember = try storedKey(member) else { return false }
            let removed = try delete(storedOwner, value: storedMember, in: db)
            if removed { state.changes.record(relation.name, .relation, owner) }
            return removed
        }
    }

    /// Runs one public write operation, its errors wrapped as ``StoreError``. One that throws
    /// after writing part of its work dooms the transaction: its commit throws that error, so a
    /// body that catches it cannot commit half an operation (a record without its postings).
    private func operation<R>(_ what: @autoclosure () -> String, _ body: () throws -> R) throws(StoreError) -> R {
        let before = state.writes
        do {
            return try StoreError.boundary(what(), body)
        } catch {
            if state.writes != before, state.poisoned == nil { state.poisoned = error }
            throw error
        }
    }

    private func registered<V>(_ collection: StoreCollection<V>) throws -> RegisteredCollection {
        try store.resolvedForWrite(collection)
    }

    /// Writes one record, its key-path index entries, and queues its full-text postings;
    /// false when `replacing` is false and the key was present.
    private func write<V>(_ value: V, in collection: StoreCollection<V>, replacing: Bool) throws -> Bool {
        let c = try registered(collection)
        let key = collection.key(value)
        try Self.validate(key)
        let bytes: [UInt8]
        do {
            bytes = try collection.coder.encode(value, c.encoder, &state.fields)
        } catch {
            throw StoreError(.codec, "cannot encode a value of '\(collection.name)' with key \(key)", underlying: error)
        }
        // Index keys are computed and checked before anything is written; long ones are recorded.
        let newKeys = try collection.indexes.map { index in
            try index.keys(value).map { try store.writableKey($0.bytes, in: lmdb) }
        }
        let stored = try store.writableKey(key.bytes, in: lmdb)
        // The text the replaced record was indexed with, decoded before anything is written.
        var replaced: [SearchText]?
        // Try as a new key first: the common case costs one B-tree descent, not two. A value
        // stored already byte for byte is left as it is, out of the change feed: writing it
        // would change nothing (a dump loaded twice, a page fetched again).
        if try !put(bytes, forKey: stored, in: c.records, flags: .noOverwrite) {
            guard replacing else { return false }
            if let old = try get(stored, in: c.records) {
                if old == bytes { return true }
                let oldKeys = try indexKeys(of: old, collection, c, newValue: value, newBytes: bytes)
                replaced = try searchText(ofStored: old, collection, c)
                for (i, list) in oldKeys.enumerated() {
                    for k in list where !newKeys[i].contains(k) { try delete(k, value: stored, in: c.indexes[i]) }
                }
            }
            try put(bytes, forKey: stored, in: c.records)
        }
        for (i, list) in newKeys.enumerated() {
            for k in list { try put(stored, forKey: k, in: c.indexes[i], flags: .noDuplicateData) }
        }
        try indexForSearch(value, storedKey: stored, replacing: replaced, collection, c)  // full-text index (Search/Store+SearchWrite.swift)
        state.changes.record(collection.name, .upsert, key)
        return true
    }

    /// The index keys an old record had, in their stored form: read from its indexed fields
    /// when every index is a field's value (the record is not decoded), else from its decoded
    /// value.
    private func indexKeys<V>(
        of bytes: [UInt8], _ collection: StoreCollection<V>, _ c: RegisteredCollection, newValue: V? = nil,
        newBytes: [UInt8]? = nil
    ) throws -> [[[UInt8]]] {
        guard !collection.indexes.isEmpty else { return [] }
        let longKeys = store.longKeys
        if try fieldKeysHold(collection, c, newValue, newBytes) {
            let keys = try fieldIndexKeys(of: bytes, collection, c)
            return keys.map { list in list.map { longKeys.physical($0.bytes) } }
        }
        let old = try bytes.withUnsafeBytes { try decode(collection, $0, c) }
        return collection.indexes.map { index in index.keys(old).map { longKeys.physical($0.bytes) } }
    }

    /// The keys of every index read from a record's fields (for indexes that are a field's value).
    private func fieldIndexKeys<V>(of bytes: [UInt8], _ collection: StoreCollection<V>, _ c: RegisteredCollection)
        throws -> [[StoreKey]]
    {
        let table = state.fields
        return try bytes.withUnsafeBytes { raw in
            try collection.indexes.map { index in
                let value = try CompactField.value(
                    at: [.key(index.field ?? "")], in: raw, fields: table, options: c.decoder.options)
                return Store.indexKeys(of: value, kind: index.kind)
            }
        }
    }

    /// Whether old index keys can be read from fields: every index is a key-path index, and
    /// in this transaction a written value's fields gave the keys its index closures give (a
    /// type whose coding renames a property fails this and keeps decoding old records).
    private func fieldKeysHold<V>(
        _ collection: StoreCollection<V>, _ c: RegisteredCollection, _ value: V?, _ bytes: [UInt8]?
    ) throws -> Bool {
        guard collection.indexes.allSatisfy(\.keysAreFieldValue) else { return false }
        if let known = state.fieldKeysHold[collection.name] { return known }
        guard let value, let bytes else { return false }
        let expected = collection.indexes.map { $0.keys(value) }
        // A sample with no keys at all says nothing about the field names: decide on a later one.
        guard expected.contains(where: { !$0.isEmpty }) else { return false }
        let holds = try fieldIndexKeys(of: bytes, collection, c) == expected
        state.fieldKeysHold[collection.name] = holds
        return holds
    }

    /// Refuses empty keys (keys of any length are stored: see `LongKeys`).
    static func validate(_ key: StoreKey) throws {
        guard !key.bytes.isEmpty else { throw StoreError(.invalidKey, "empty key") }
    }

    /// Writes the field names this transaction added (same transaction as the records that use them).
    func persistNewFields() throws {
        let names = state.fields.names
        guard names.count > state.committedFieldCount else { return }
        for id in state.committedFieldCount..<names.count {
            let stored = try put(Array(names[id].utf8), forKey: StoreLayout.fieldKey(id), in: store.fieldsDB, flags: .noOverwrite)
            if !stored {
                // Another writer's id: only possible if the table was not reloaded; refuse to fork.
                throw StoreError(.corrupted, "field table: id \(id) already taken; refusing to fork the table")
            }
        }
        try put(StoreLayout.fieldsChecksum(names), forKey: StoreLayout.fieldsChecksumKey, in: store.metaDB)
    }
}

@available(*, unavailable)
extension StoreTransaction: Sendable {}

import Synchronization

/// The raw writes of Quire's own write paths (records, index and relation entries, field names).
extension StoreTransaction {
    @discardableResult
    func put(_ value: [UInt8], forKey key: [UInt8], in database: Database, flags: WriteFlags = []) throws(LMDBError)
        -> Bool
    {
        // Counted when something was written (a failed LMDB call dooms the transaction anyway).
        let written = try lmdb.put(value, forKey: key, in: database, flags: flags)
        if written { state.writes += 1 }
        return written
    }

    @discardableResult
    func put(
        _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in database: Database,
        flags: WriteFlags = []
    ) throws(LMDBError) -> Bool {
        let written = try lmdb.put(value, forKey: key, in: database, flags: flags)
        if written { state.writes += 1 }
        return written
    }

    func putEach(
        count: Int, in database: Database, flags: WriteFlags = [],
        _ pair: (Int) -> (value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer)
    ) throws(LMDBError) {
        try lmdb.putEach(count: count, in: database, flags: flags, pair)
        state.writes += 1
    }

    @discardableResult
    func delete(_ key: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        let deleted = try lmdb.delete(key, in: database)
        if deleted { state.writes += 1 }
        return deleted
    }

    @discardableResult
    func delete(_ key: [UInt8], value: [UInt8], in database: Database) throws(LMDBError) -> Bool {
        let deleted = try lmdb.delete(key, value: value, in: database)
        if deleted { state.writes += 1 }
        return deleted
    }

    func removeAll(in database: Database) throws(LMDBError) {
        try lmdb.removeAll(in: database)
        state.writes += 1
    }
}
