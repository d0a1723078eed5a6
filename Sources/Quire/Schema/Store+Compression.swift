import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

extension Store {
    /// Trains a zstd dictionary on a sample of a compressed collection's records and keeps it
    /// in the store; records written afterwards use it (typically 2–4× smaller than zstd alone
    /// for short articles). Readers, including the CLI, pick it up transparently.
    ///
    /// A collection has at most one dictionary, fixed once trained: records compressed with it
    /// must stay readable.
    /// - Returns: the dictionary's size in bytes.
    /// - Throws: `StoreError` when the collection is not compressed, already has a dictionary, or
    ///   has too few records to train on.
    @discardableResult
    public func trainCompressionDictionary<V>(
        for collection: StoreCollection<V>, sampleSize: Int = 2_000, capacity: Int = 32 << 10
    ) async throws -> Int {
        let c = try resolvedForWrite(collection)
        guard c.definition.compressed else {
            throw StoreError(.definitionMismatch, "collection '\(collection.name)' is not compressed")
        }
        if try storedDictionary(collection.name) != nil {
            throw StoreError(.definitionMismatch, "collection '\(collection.name)' already has a compression dictionary")
        }
        // Samples are the uncompressed payloads, as the dictionary will see them.
        let plain = CompactEncoder()
        let samples: [[UInt8]] = try read { snap in
            var table = fields
            var out: [[UInt8]] = []
            for record in snap.records(in: collection) {
                out.append(try plain.encode(record.get().value, fields: &table))
                if out.count >= sampleSize { break }
            }
            return out
        }
        guard samples.count >= 8 else {
            throw StoreError(.codec, "collection '\(collection.name)' has \(samples.count) records; at least 8 are needed to train")
        }
        let dictionary: [UInt8]
        do {
            dictionary = try ZstdDictionary.train(samples: samples, capacity: capacity)
        } catch {
            throw StoreError(.codec, "training a dictionary for '\(collection.name)' failed", underlying: error)
        }
        let key = StoreLayout.dictionaryKey(collection.name)
        let meta = metaDB
        try await write { txn in try txn.put(dictionary, forKey: key, in: meta) }
        let updated = RegisteredCollection(
            definition: c.definition, records: c.records, indexes: c.indexes, dictionary: dictionary,
            verifyChecksums: options.verifyChecksums)
        registry.withLock { $0[collection.name] = updated }
        return dictionary.count
    }

    /// The dictionary stored for a collection, if any.
    func storedDictionary(_ name: String) throws -> [UInt8]? {
        try environment.read { txn in try txn.get(StoreLayout.dictionaryKey(name), in: metaDB) }
    }
}
