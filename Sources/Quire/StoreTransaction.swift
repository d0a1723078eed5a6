import QuireCodec
import QuireLMDB

/// Mutable state of one write transaction: the field table it extends and what it changed.
final class WriteState {
    var fields: FieldTable
    let committedFieldCount: Int
    var changes = ChangeLog()

    init(fields: FieldTable) {
        self.fields = fields
        self.committedFieldCount = fields.count
    }
}

/// A write transaction on a store, valid inside `Store.write`; committed when the closure
/// returns, rolled back when it throws.
///
/// Records, their index entries, relation entries and new field names all commit together.
public struct StoreTransaction: StoreReading, WritableTransaction, ~Copyable {
    public let raw: TransactionHandle
    public let store: Store
    let state: WriteState

    public var writingFields: FieldTable? { state.fields }

    /// Stores `value`, replacing the value with the same identification key (an upsert), and
    /// moves its index entries.
    public func put<V>(_ value: V, in collection: StoreCollection<V>) throws {
        _ = try write(value, in: collection, replacing: true)
    }

    /// Stores `value` only when its key is new.
    /// - Returns: false (and changes nothing) when the key is already present.
    @discardableResult
    public func insert<V>(_ value: V, in collection: StoreCollection<V>) throws -> Bool {
        try write(value, in: collection, replacing: false)
    }

    /// Deletes the value under `key` and its index entries.
    /// - Returns: false when there was none.
    @discardableResult
    public func delete<V>(_ key: StoreKey, from collection: StoreCollection<V>) throws -> Bool {
        let c = try registered(collection)
        guard let old = try get(key.bytes, in: c.records) else { return false }
        let oldKeys = try indexKeys(of: old, collection, c)
        for (i, list) in oldKeys.enumerated() {
            for k in list { try delete(k, value: key.bytes, in: c.indexes[i]) }
        }
        try delete(key.bytes, in: c.records)
        state.changes.record(collection.name, .delete, key)
        return true
    }

    /// Replaces the members of `owner` in a relation. Members themselves are never deleted.
    public func setMembers(_ members: [StoreKey], of owner: StoreKey, in relation: StoreRelation) throws {
        let db = try store.relationDatabase(relation)
        try Self.validate(owner)
        _ = try delete(owner.bytes, in: db)
        try addMembers(members, to: owner, in: relation)
    }

    /// Adds members to `owner` in a relation (present ones are kept once).
    public func addMembers(_ members: [StoreKey], to owner: StoreKey, in relation: StoreRelation) throws {
        let db = try store.relationDatabase(relation)
        try Self.validate(owner)
        for member in members {
            try Self.validate(member)
            try put(member.bytes, forKey: owner.bytes, in: db, flags: .noDuplicateData)
        }
        state.changes.record(relation.name, .relation, owner)
    }

    /// Removes one member from `owner`. - Returns: false when it was not a member.
    @discardableResult
    public func removeMember(_ member: StoreKey, from owner: StoreKey, in relation: StoreRelation) throws -> Bool {
        let db = try store.relationDatabase(relation)
        let removed = try delete(owner.bytes, value: member.bytes, in: db)
        if removed { state.changes.record(relation.name, .relation, owner) }
        return removed
    }

    private func registered<V>(_ collection: StoreCollection<V>) throws -> RegisteredCollection {
        try store.resolvedForWrite(collection)
    }

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
        let newKeys = collection.indexes.map { index in index.keys(value).map { IndexKey.clamp($0.bytes) } }
        // Try as a new key first: the common case costs one B-tree descent, not two.
        if replacing && c.indexes.isEmpty {
            try put(bytes, forKey: key.bytes, in: c.records)
        } else if try !put(bytes, forKey: key.bytes, in: c.records, flags: .noOverwrite) {
            guard replacing else { return false }
            if let old = try get(key.bytes, in: c.records) {
                let oldKeys = try indexKeys(of: old, collection, c)
                for (i, list) in oldKeys.enumerated() {
                    for k in list where !newKeys[i].contains(k) { try delete(k, value: key.bytes, in: c.indexes[i]) }
                }
            }
            try put(bytes, forKey: key.bytes, in: c.records)
        }
        for (i, list) in newKeys.enumerated() {
            for k in list { try put(key.bytes, forKey: k, in: c.indexes[i], flags: .noDuplicateData) }
        }
        state.changes.record(collection.name, .upsert, key)
        return true
    }

    /// The index keys an old record had, from its decoded value.
    private func indexKeys<V>(of bytes: [UInt8], _ collection: StoreCollection<V>, _ c: RegisteredCollection) throws
        -> [[[UInt8]]]
    {
        guard !collection.indexes.isEmpty else { return [] }
        let old = try bytes.withUnsafeBytes { try decode(collection, $0, c) }
        return collection.indexes.map { index in index.keys(old).map { IndexKey.clamp($0.bytes) } }
    }

    static func validate(_ key: StoreKey) throws {
        guard !key.bytes.isEmpty, key.bytes.count <= 511 else {
            throw StoreError(
                .invalidKey,
                key.bytes.isEmpty ? "empty key" : "key of \(key.bytes.count) bytes is longer than LMDB's 511-byte limit")
        }
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
