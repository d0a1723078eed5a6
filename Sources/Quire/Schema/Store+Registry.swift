import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

/// A collection's databases and codec, resolved once per process.
///
/// A class, immutable once made: every read takes one out of the store's registry, and a copy
/// of a struct would count references on each of its databases' and coders' storage, shared by
/// every reading thread.
final class RegisteredCollection: Sendable {
    let definition: CollectionDefinition
    let records: Database
    /// In the order of `definition.indexes`.
    let indexes: [Database]
    let encoder: CompactEncoder
    /// One encoder per core for parallel bulk encoding: an encoder keeps its key caches between
    /// calls only when calls don't overlap, so concurrent slices each need their own.
    let sliceEncoders: [CompactEncoder]
    let decoder: CompactDecoder
    /// The full-text index's databases, when the definition has one.
    let search: SearchDatabases?

    /// Whether the collection has a trained zstd dictionary.
    let hasDictionary: Bool

    /// Coders for the definition: zstd (with the collection's dictionary, once trained) when
    /// the collection is compressed; the decoder has the dictionary whenever one is stored, so
    /// records written while the collection was compressed stay readable if it no longer is.
    init(
        definition: CollectionDefinition, records: Database, indexes: [Database], dictionary: [UInt8]?,
        verifyChecksums: Bool, search: SearchDatabases?
    ) {
        self.definition = definition
        self.search = search
        self.records = records
        self.indexes = indexes
        hasDictionary = dictionary != nil
        // Records carry a CRC-32C (format version 2), checked by `Store.verify()`.
        var encoderOptions = CompactEncoder.Options(checksum: true)
        if definition.compressed { encoderOptions.compression = .init(dictionary: dictionary) }
        encoder = CompactEncoder(options: encoderOptions)
        sliceEncoders = (0..<max(1, ProcessInfo.processInfo.activeProcessorCount)).map { _ in
            CompactEncoder(options: encoderOptions)
        }
        decoder = CompactDecoder(options: .init(dictionary: dictionary, verifyChecksums: verifyChecksums))
    }

    /// The same collection with the compression dictionary the store keeps for it.
    func with(dictionary: [UInt8], verifyChecksums: Bool) -> RegisteredCollection {
        RegisteredCollection(
            definition: definition, records: records, indexes: indexes, dictionary: dictionary,
            verifyChecksums: verifyChecksums, search: search)
    }
}

extension Store {
    /// Declares a collection: opens its databases and records its definition in the store.
    ///
    /// Call once per collection before writing to it (reads of a stored collection work
    /// without it), or declare it in ``init(path:schema:options:)``. When the stored definition
    /// has other indexes, they are rebuilt from the records in one transaction, and the
    /// databases of indexes no longer declared are deleted.
    ///
    /// The definition is written on the writer's thread, like every write. Calling this inside
    /// a write transaction, or inside a read of the same store (the writer may have to wait
    /// for that read to end, to grow the map), is a programming error and traps (it would wait
    /// for itself). A name that is another spelling of a registered one (the same text in
    /// another Unicode normalization: Swift's strings compare equal, stored names are bytes)
    /// is refused with ``StoreError/Code/definitionMismatch``. When a
    /// registration that drops indexes fails, the collection is left unregistered (register it
    /// again): the dropped databases' handles may be closed.
    public func register<V>(_ collection: StoreCollection<V>) throws(StoreError) {
        try StoreError.boundary("\(path): registering '\(collection.name)'") {
            let definition = collection.definition
            if let existing = registry.withLock({ $0[collection.name] }) {
                try Self.requireSameSpelling(collection.name, existing.definition.name, path: environment.path)
                if existing.definition == definition { return }
            }
            precondition(!isInsideWrite, "Quire: store.register(_:) inside a write transaction would wait for itself; declare collections before writing, or in Store(path:schema:)")
            precondition(!environment.isInsideRead, "Quire: store.register(_:) inside a read of the same store would wait for itself; register after the read returns, or in Store(path:schema:)")
            try writer.runSync { try registerNow(collection, definition) }
        }
    }

    private func registerNow<V>(_ collection: StoreCollection<V>, _ definition: CollectionDefinition) throws {
        let key = StoreLayout.collectionKey(collection.name)
        let stored = try environment.read { txn in try txn.get(key, in: metaDB) }
        let storedDefinition = stored.flatMap { try? JSONDecoder().decode(CollectionDefinition.self, from: Data($0)) }
        // Read-only too: a typed read through another type's declaration decoded its records
        // into garbage, and the right declaration was refused after it.
        if let storedType = storedDefinition?.valueType, storedType != definition.valueType {
            throw StoreError(
                .definitionMismatch,
                "\(environment.path): collection '\(collection.name)' holds \(storedType) values; this declaration stores \(definition.valueType ?? "?") (use another name, or the type it holds)"
            )
        }
        if options.readOnly {
            let opened = try openStoredCollection(definition)
            registry.withLock { $0[collection.name] = opened }
            return
        }
        let opened = try openStoredCollection(definition)
        let encodedDefinition = try JSONEncoder().encode(definition)
        if storedDefinition != definition {
            let rebuild = storedDefinition.map { $0.indexes != definition.indexes } ?? false
            let dropped = (storedDefinition?.indexes ?? []).filter { old in !definition.indexes.contains { $0.name == old.name } }
            // By name, opened in the transaction (not through the environment, whose open is a
            // write of its own): a run again after the map grew drops them afresh.
            let droppedNames = dropped.map { StoreLayout.index(definition.name, $0.name) }
                + (storedDefinition?.search != nil && definition.search == nil ? SearchDatabases.names(collection.name) : [])
            do {
                try environment.write { txn in
                    try txn.put(Array(encodedDefinition), forKey: key, in: metaDB)
                    if rebuild {
                        try rebuildIndexes(collection, opened, txn)
                    }
                    if storedDefinition != nil, storedDefinition?.search != definition.search, definition.search != nil {
                        try rebuildSearchIndex(collection, opened, txn)
                    }
                    for name in droppedNames { try txn.dropDatabase(named: name) }
                }
            } catch {
                // LMDB closes a dropped database's handle even when the transaction aborts: the
                // registration before this one may hold it, and must not write through it.
                if !droppedNames.isEmpty { registry.withLock { $0[collection.name] = nil } }
                throw error
            }
        }
        registry.withLock { $0[collection.name] = opened }
    }

    /// Refuses `name` when it is another spelling of the registered `registered`: equal as
    /// Swift strings (canonical equivalence) but not byte for byte, so LMDB would name another
    /// database while every lookup here found the registered collection's.
    static func requireSameSpelling(_ name: String, _ registered: String, path: String) throws {
        guard !name.utf8.elementsEqual(registered.utf8) else { return }
        throw StoreError(
            .definitionMismatch,
            "\(path): '\(name)' is another spelling (Unicode normalization) of the collection '\(registered)' the store has: names are told apart by their bytes; use that spelling, or a name that differs in its letters")
    }

    /// Declares a to-many relation and opens its database.
    public func register(_ relation: StoreRelation) throws(StoreError) {
        try StoreError.boundary("\(path): registering '\(relation.name)'") {
            if relations.withLock({ $0[relation.name] }) != nil, try storedMembers(of: relation.name) == relation.memberCollection {
                return
            }
            precondition(!isInsideWrite, "Quire: store.register(_:) inside a write transaction would wait for itself; declare relations before writing, or in Store(path:schema:)")
            try writer.runSync { try registerNow(relation) }
        }
    }

    private func registerNow(_ relation: StoreRelation) throws {
        let db = try openRelationDatabase(relation.name)
        if options.readOnly {
            try environment.read { txn in try checkMembers(of: relation, db, txn) }
        } else {
            let encoded = Array(try JSONEncoder().encode(["name": relation.name, "members": relation.memberCollection]))
            try environment.write { txn in
                try checkMembers(of: relation, db, txn)
                try txn.put(encoded, forKey: StoreLayout.relationKey(relation.name), in: metaDB)
            }
        }
        relations.withLock { $0[relation.name] = db }
    }

    /// The collection a stored relation's members belong to (nil when it is not stored).
    private func storedMembers(of name: String) throws -> String? {
        try environment.read { txn in try storedMembers(of: name, txn) }
    }

    private func storedMembers<T: ReadableTransaction & ~Copyable>(of name: String, _ txn: borrowing T) throws -> String? {
        guard let stored = try txn.get(StoreLayout.relationKey(name), in: metaDB) else { return nil }
        return (try? JSONDecoder().decode([String: String].self, from: Data(stored)))?["members"]
    }

    /// Refuses a declaration whose members are of another collection than the stored entries':
    /// their keys would be read as keys of the wrong records. An empty relation may change.
    private func checkMembers<T: ReadableTransaction & ~Copyable>(of relation: StoreRelation, _ db: Database, _ txn: borrowing T)
        throws
    {
        guard let members = try storedMembers(of: relation.name, txn), members != relation.memberCollection,
            try txn.count(of: db) > 0
        else { return }
        throw StoreError(
            .definitionMismatch,
            "\(environment.path): relation '\(relation.name)' holds members of '\(members)', not of '\(relation.memberCollection)': declare it as it was, or under another name")
    }

    /// The definitions of every collection stored, whether or not this process registered it.
    public func storedCollections() throws(StoreError) -> [CollectionDefinition] {
        try StoreError.boundary("\(path): reading the collections") {
            try environment.read { txn in
                var out: [CollectionDefinition] = []
                for entry in txn.entries(in: metaDB, range: .prefix(Array("collection:".utf8))) {
                    guard let def = try? JSONDecoder().decode(CollectionDefinition.self, from: Data(entry.value)) else {
                        throw StoreError(.corrupted, "\(environment.path): unreadable collection definition")
                    }
                    out.append(def)
                }
                return out
            }
        }
    }

    /// The names of every relation stored.
    public func storedRelations() throws(StoreError) -> [String] {
        try StoreError.boundary("\(path): reading the relations") {
            try environment.read { txn in
                txn.entries(in: metaDB, range: .prefix(Array("relation:".utf8))).map {
                    String(decoding: $0.key.dropFirst("relation:".utf8.count), as: UTF8.self)
                }
            }
        }
    }

    func openStoredCollection(_ definition: CollectionDefinition) throws -> RegisteredCollection {
        let records = try openCollectionDatabase(StoreLayout.records(definition.name), [], definition.name)
        let indexes = try definition.indexes.map {
            try openCollectionDatabase(StoreLayout.index(definition.name, $0.name), [.duplicateSort], definition.name)
        }
        let dictionary = try storedDictionary(definition.name)
        let search = try definition.search.map { try openSearchDatabases(definition.name, $0) }
        return RegisteredCollection(
            definition: definition, records: records, indexes: indexes, dictionary: dictionary,
            verifyChecksums: options.verifyChecksums, search: search)
    }

    private func openCollectionDatabase(_ name: String, _ flags: DatabaseFlags, _ collection: String) throws -> Database {
        do {
            return try environment.openDatabase(name, flags: options.readOnly ? flags : flags.union(.create))
        } catch {
            if error == LMDBError.notFound {
                throw StoreError(.unknownCollection, "\(environment.path): no collection named '\(collection)'")
            }
            throw error
        }
    }

    /// Opens the databases of every stored collection and relation, so reads can use them.
    ///
    /// LMDB database handles opened after a transaction began are invalid inside it, so handles
    /// are opened here (at open, or on `refreshCollections()`), never in the middle of a read.
    func openStoredDatabases() throws {
        for definition in try storedCollections() where registry.withLock({ $0[definition.name] }) == nil {
            let opened = try openStoredCollection(definition)
            registry.withLock { $0[definition.name] = opened }
        }
        for name in try storedRelations() where relations.withLock({ $0[name] }) == nil {
            let db = try openRelationDatabase(name)
            relations.withLock { $0[name] = db }
        }
        openLongKeysIfCreated()
        try openChangeFeed()
    }

    private func openRelationDatabase(_ name: String) throws -> Database {
        let flags: DatabaseFlags = options.readOnly ? [.duplicateSort] : [.create, .duplicateSort]
        return try environment.openDatabase(StoreLayout.relation(name), flags: flags)
    }

    /// The database of index `index` of collection `collection`.
    func indexDatabase(_ collection: String, _ index: String) throws -> Database {
        let c = try resolved(collection)
        guard let position = c.definition.indexes.firstIndex(where: { $0.name == index }) else {
            throw StoreError(.unknownCollection, "collection '\(collection)' has no index '\(index)'")
        }
        return c.indexes[position]
    }

    /// Picks up collections and relations that another process created since this store opened.
    /// Call it outside of reads and writes.
    public func refreshCollections() throws(StoreError) {
        precondition(!isInsideWrite, "Quire: store.refreshCollections() inside a write transaction would wait for itself; call it after the write returns")
        try StoreError.boundary("\(path): reading the collections") {
            try openStoredDatabases()
        }
    }

    /// The collection `collection` names, checked against the registered definition: a typed read
    /// through a declaration of another value type is refused, not decoded into garbage.
    func resolved<V>(for collection: StoreCollection<V>) throws -> RegisteredCollection {
        let c = try resolved(collection.name)
        if let stored = c.definition.valueType, stored != collection.valueTypeName {
            throw StoreError(
                .definitionMismatch, "collection '\(collection.name)' holds \(stored) values, not \(collection.valueTypeName)")
        }
        return c
    }

    /// The collection `name`, registered or stored when the store opened.
    func resolved(_ name: String) throws -> RegisteredCollection {
        if let found = registry.withLock({ $0[name] }) { return found }
        throw StoreError(
            .unknownCollection,
            "no collection named '\(name)' in \(environment.path) (register it, or call refreshCollections() if another process created it)"
        )
    }

    func relationDatabase(_ relation: StoreRelation) throws -> Database {
        try relationDatabase(named: relation.name)
    }

    func relationDatabase(named name: String) throws -> Database {
        if let db = relations.withLock({ $0[name] }) { return db }
        throw StoreError(.unknownCollection, "relation '\(name)' is not registered: call store.register(_:) first")
    }

    private func rebuildIndexes<V>(
        _ collection: StoreCollection<V>, _ opened: RegisteredCollection, _ txn: borrowing WriteTransaction
    ) throws {
        for db in opened.indexes { try txn.removeAll(in: db) }
        let table = fields
        for entry in txn.entries(in: opened.records) {
            let value = try collection.coder.decode(entry.value, opened.decoder, table)
            for (i, index) in collection.indexes.enumerated() {
                for k in index.keys(value) {
                    let stored = try writableKey(k.bytes, in: txn)
                    try txn.put(entry.keyBytes, forKey: stored, in: opened.indexes[i], flags: .noDuplicateData)
                }
            }
        }
    }
}
