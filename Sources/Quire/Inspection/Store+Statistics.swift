import Foundation
internal import QuireLMDB
import Synchronization

/// Sizes and counts of one collection.
public struct CollectionStatistics: Sendable, Hashable, Codable {
    /// Sizes and counts of one index.
    public struct Index: Sendable, Hashable, Codable {
        public var name: String
        public var entries: Int
        public var bytes: Int
    }

    public var name: String
    public var records: Int
    /// Bytes in the pages of the records' B-tree.
    public var bytes: Int
    public var depth: Int
    public var indexes: [Index]
    /// How new records are stored: `none`, `zstd` (no dictionary yet) or `zstd+dictionary`.
    public var compression: String
    /// The size of the collection's zstd dictionary (0 when it has none).
    public var dictionaryBytes: Int

    /// Bytes of the records' pages per record, rounded (0 for an empty collection).
    public var bytesPerRecord: Int
    /// The full-text index's posting segments that a bulk load's end has still to merge (a load
    /// that was interrupted, or one under way); nil for a collection without a full-text index.
    public var searchSegments: Int? = nil
    /// Whether a merge of those segments is under way (or was stopped part way, and goes on at the
    /// next load's end); nil for a collection without a full-text index.
    public var searchMerging: Bool? = nil
}

/// Sizes and counts of one relation.
public struct RelationStatistics: Sendable, Hashable, Codable {
    public var name: String
    public var entries: Int
    public var bytes: Int
}

/// What `Store.statistics()` reports: the collections, relations, and the environment's map.
public struct StoreStatistics: Sendable, Hashable, Codable {
    public var path: String
    public var formatVersion: Int
    /// Field names in the codec's table.
    public var fieldNames: Int
    /// Interned string values in the codec's table.
    public var internedValues: Int
    public var collections: [CollectionStatistics]
    public var relations: [RelationStatistics]
    /// The size of `data.mdb` on disk.
    public var fileBytes: Int
    public var mapBytes: Int
    public var usedBytes: Int
    /// Bytes of the file's pages that nothing uses now (freed by earlier writes, reused by
    /// later ones); a compacting copy (`backup(to:compact:)`, `quire copy --compact`) leaves
    /// them out.
    public var freeBytes: Int
    /// Bytes of the change feed's entries (a commit each, the last `StoreOptions.changeRetention` kept).
    public var changeFeedBytes: Int = 0
    /// Entries of the change feed.
    public var changeFeedEntries: Int = 0
    /// Bytes of the store's own tables: metadata, the field table, long keys' whole forms.
    public var metadataBytes: Int = 0
    /// Bytes of the sub-trees in which LMDB keeps one key's many duplicates (an index key with
    /// thousands of records, a relation owner with thousands of members). LMDB's statistics of
    /// an index or relation count only its main tree, so these are counted here, for all of them.
    public var duplicateBytes: Int = 0
    public var pageSize: Int
    public var lastTransactionID: Int
    public var maxReaders: Int
    public var readerSlotsUsed: Int
    public var activeReaders: Int
}

extension Store {
    /// The id of the last committed write transaction, by this or any other process: it
    /// changes on every commit, so a result computed from a snapshot can be reused while it
    /// stays the same (a server's response cache). Cheap: no read transaction.
    public func lastTransactionID() throws(StoreError) -> Int {
        try StoreError.boundary("\(path): reading the environment") { try environment.lastTransactionID() }
    }

    /// Why the store's data file cannot be read now, or nil (see `Environment.dataFileProblem`):
    /// a server asks before each request, so a file cut short or overwritten in place while it
    /// is open is a refusal, not a fault that ends the process.
    package func dataFileProblem() -> StoreError? {
        environment.dataFileProblem().map { StoreError(.corrupted, "\(path): the data file", underlying: $0) }
    }

    /// Whether the store at `path` has a data file that is empty or cut short of what its meta
    /// pages need: what a whole file renamed over it mends (`quire serve` starts on it anyway,
    /// answering 503 until then).
    package static func dataFileIsCutShort(at path: String) -> Bool {
        Environment.dataFileIsCutShort(directory: path)
    }

    /// Counts and sizes of every stored collection, index and relation, from one snapshot.
    public func storeStatistics() throws(StoreError) -> StoreStatistics {
        try StoreError.boundary("\(path): reading statistics") {
            let info = try environment.info()
            let attributes = try? FileManager.default.attributesOfItem(atPath: environment.path + "/data.mdb")
            let fileBytes = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            let registered = registry.withLock { $0 }
            let relationDBs = relations.withLock { $0 }
            return try read { snap in
                let collections = try registered.keys.sorted().map { name -> CollectionStatistics in
                    let c = registered[name]!
                    let st = try snap.statistics(of: c.records)
                    let indexes = try zip(c.definition.indexes, c.indexes).map { definition, db in
                        let ist = try snap.statistics(of: db)
                        return CollectionStatistics.Index(name: definition.name, entries: ist.entries, bytes: ist.bytes)
                    }
                    let search = try searchStatistics(snap, c)  // Search/Store+SearchVerify.swift
                    // Through this snapshot: a read of its own inside it could meet another
                    // process's map growth it cannot adopt while this one is open.
                    let dictionary = try Self.checkedDictionary(name, snap.lmdb, metaDB, path)?.count ?? 0
                    let compression = !c.definition.compressed ? "none" : dictionary > 0 ? "zstd+dictionary" : "zstd"
                    return CollectionStatistics(
                        name: name, records: st.entries, bytes: st.bytes, depth: st.depth, indexes: indexes + search.indexes,
                        compression: compression, dictionaryBytes: dictionary,
                        bytesPerRecord: st.entries > 0 ? (st.bytes + st.entries / 2) / st.entries : 0,
                        searchSegments: search.segments, searchMerging: search.merging)
                }
                let relations = try relationDBs.keys.sorted().map { name -> RelationStatistics in
                    let st = try snap.statistics(of: relationDBs[name]!)
                    return RelationStatistics(name: name, entries: st.entries, bytes: st.bytes)
                }
                let freePages = try snap.lmdb.freePageCount()
                let freeBytes = freePages * info.pageSize
                let changes = try changesDatabase.map { try snap.statistics(of: $0) }
                let metadata = try ([metaDB, fieldsDB] + (longKeysDatabase.map { [$0] } ?? [])).reduce(0) { sum, db in
                    sum + (try snap.statistics(of: db)).bytes
                }
                // Two meta pages start the file; what no count holds is in duplicates' sub-trees.
                // Wrapping, and clamped: damage may make the counts disagree with the last page.
                let counted = try snap.lmdb.countedPages()
                let duplicatePages = max(0, info.lastPageNumber &+ 1 &- 2 &- freePages &- counted)
                var statistics = StoreStatistics(
                    path: environment.path, formatVersion: StoreLayout.formatVersion,
                    fieldNames: fields.count - fields.internedValueCount, internedValues: fields.internedValueCount,
                    collections: collections, relations: relations, fileBytes: fileBytes, mapBytes: info.mapSize,
                    // The snapshot's own transaction, not the environment's last: a commit after
                    // the snapshot began would pair its id with the counts before it.
                    usedBytes: info.usedBytes, freeBytes: freeBytes, pageSize: info.pageSize, lastTransactionID: snap.lmdb.id,
                    maxReaders: info.maxReaders, readerSlotsUsed: info.readerSlotsUsed, activeReaders: info.activeReaders)
                statistics.changeFeedBytes = changes?.bytes ?? 0
                statistics.changeFeedEntries = changes?.entries ?? 0
                statistics.metadataBytes = metadata
                statistics.duplicateBytes = max(0, duplicatePages) * info.pageSize
                return statistics
            }
        }
    }
}

extension StoreStatistics {
    /// Every collection's records together.
    public var records: Int { collections.reduce(0) { $0 + $1.records } }

    /// The statistics as `quire stats --json` and `quire serve`'s `/api/stats` write them:
    /// snake_case keys in order, with ``records`` beside the stored fields.
    public func jsonBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return Array(try encoder.encode(WithTotals(statistics: self)))
    }

    /// The stored fields, then the totals, in one JSON object.
    private struct WithTotals: Encodable {
        let statistics: StoreStatistics
        enum Keys: String, CodingKey { case records }
        func encode(to encoder: any Encoder) throws {
            try statistics.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(statistics.records, forKey: .records)
        }
    }
}
