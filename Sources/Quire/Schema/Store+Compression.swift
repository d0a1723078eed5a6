import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

extension Store {
    /// The largest dictionary a collection trains (zstd's own default size). On the generated
    /// news corpus (records of 1,077 bytes before compression, level 3) 32 KiB gave 574 bytes a
    /// record and 112 KiB 548, compressing as fast and decompressing no slower; it stays ahead
    /// when only 300 records are there to train on (556 against 583).
    public static let dictionaryCapacity = 112 << 10

    /// The records a dictionary is trained on, at most (the first ones): 4,000 gave 548 bytes a
    /// record, 2,000 gave 551, 8,000 543 for twice the training time.
    public static let dictionarySamples = 4_000

    /// Trains a zstd dictionary on a sample of a compressed collection's records and keeps it
    /// in the store; records written afterwards use it (typically 2–4× smaller than zstd alone
    /// for short articles). Readers, including the CLI, pick it up transparently.
    ///
    /// Stores train it by themselves once a compressed collection holds
    /// ``StoreOptions/dictionaryTrainingThreshold`` records; call this to train earlier.
    /// A collection has at most one dictionary, fixed once trained: records compressed with it
    /// must stay readable.
    /// - Returns: the dictionary's size in bytes.
    /// - Throws: `StoreError` when the collection is not compressed, already has a dictionary, or
    ///   has too few records to train on.
    @discardableResult
    public func trainCompressionDictionary<V>(
        for collection: StoreCollection<V>, sampleSize: Int = dictionarySamples, capacity: Int = dictionaryCapacity
    ) async throws(StoreError) -> Int {
        _ = try StoreError.boundary("\(path): training '\(collection.name)'") { try resolvedForWrite(collection) }
        return try await StoreError.boundary("\(path): training '\(collection.name)'") {
            try await writer.run {
                try self.trainDictionary(collection.name, sampleSize: sampleSize, capacity: capacity)
            }
        }
    }

    /// Trains and stores the dictionary of the compressed collection `name` from the plain
    /// bodies of its first records (what the compressor sees). Runs on the writer.
    @discardableResult
    func trainDictionary(_ name: String, sampleSize: Int = dictionarySamples, capacity: Int = dictionaryCapacity) throws -> Int {
        let c = try resolved(name)
        guard c.definition.compressed else {
            throw StoreError(.definitionMismatch, "collection '\(name)' is not compressed")
        }
        let stored = try storedDictionary(name)
        if c.hasDictionary || stored != nil {
            throw StoreError(.definitionMismatch, "collection '\(name)' already has a compression dictionary")
        }
        let decoder = c.decoder
        let samples: [[UInt8]] = try read { snap in
            var out: [[UInt8]] = []
            for entry in snap.entries(in: c.records) {
                out.append(try decoder.plainBody(entry.value))
                if out.count >= sampleSize { break }
            }
            try snap.checkIntact()
            return out
        }
        return try storeDictionary(name, trainedOn: samples, capacity: capacity)
    }

    /// Trains the dictionary of the compressed collection `name`, which has none, on the plain
    /// record bodies `samples`, stores it and has the collection's new records use it. Runs on
    /// the writer.
    ///
    /// The store keeps the first dictionary stored: another process may have trained one since
    /// this one looked (two loads into a new store train at the same time), and replacing it
    /// made the records it had compressed with it unreadable (1,000 of 300,000 in a test of two
    /// concurrent 150k loads). Then the stored one is used here too, and this one dropped.
    private func storeDictionary(_ name: String, trainedOn samples: [[UInt8]], capacity: Int) throws -> Int {
        let c = try resolved(name)
        guard samples.count >= 8 else {
            throw StoreError(.codec, "collection '\(name)' has \(samples.count) records; at least 8 are needed to train")
        }
        let dictionary: [UInt8]
        do {
            dictionary = try ZstdDictionary.train(samples: samples, capacity: capacity)
        } catch {
            throw StoreError(.codec, "training a dictionary for '\(name)' failed", underlying: error)
        }
        let key = StoreLayout.dictionaryKey(name)
        let meta = metaDB
        let kept = try writeNow { txn in
            if let stored = try Self.checkedDictionary(name, txn.lmdb, meta, path) { return stored }
            try txn.put(dictionary, forKey: key, in: meta)
            try txn.put(StoreLayout.dictionaryChecksum(dictionary), forKey: StoreLayout.dictionaryChecksumKey(name), in: meta)
            return dictionary
        }
        let updated = c.with(dictionary: kept, verifyChecksums: options.verifyChecksums)
        registry.withLock { $0[name] = updated }
        return kept.count
    }

    /// After a commit on the writer: trains the dictionary of each compressed collection among
    /// `names` that has none and now holds enough records. A failed training changes nothing
    /// (records stay compressed without a dictionary) and is not retried in this process.
    func trainDueDictionaries(_ names: some Sequence<String>) {
        let threshold = options.dictionaryTrainingThreshold
        guard threshold > 0, !options.readOnly else { return }
        for name in Set(names) {
            guard let c = registry.withLock({ $0[name] }), c.definition.compressed, !c.hasDictionary,
                !dictionaryTrainingFailed.withLock({ $0.contains(name) })
            else { continue }
            guard let count = try? read({ snap in try snap.count(of: c.records) }), count >= threshold else { continue }
            do {
                try trainDictionary(name)
            } catch {
                dictionaryTrainingFailed.withLock { _ = $0.insert(name) }
            }
        }
    }

    /// Before a bulk load's first chunk: trains the dictionary of a compressed collection that
    /// has none from the load's own first values, when they and the stored records reach
    /// ``StoreOptions/dictionaryTrainingThreshold``, so that the load writes its records with
    /// it. Training after a commit would come too late for a load held in its sort window or
    /// spilled to sorted runs: every record is encoded before the first commit. A failed
    /// training changes nothing (the load compresses without a dictionary) and is not retried.
    func trainDictionaryBeforeLoad<V>(
        _ values: ArraySlice<V>, _ collection: StoreCollection<V>, previous: FieldTable?,
        sampleSize: Int = dictionarySamples
    ) async throws {
        let threshold = options.dictionaryTrainingThreshold
        guard threshold > 0, !options.readOnly, !values.isEmpty else { return }
        let c = try resolvedForWrite(collection)
        guard c.definition.compressed, !c.hasDictionary,
            !dictionaryTrainingFailed.withLock({ $0.contains(collection.name) })
        else { return }
        let stored = try read { snap in try snap.count(of: c.records) }
        guard stored + values.count >= threshold else { return }
        let bodies = try plainBodies(values.prefix(sampleSize), collection, previous: previous)
        let name = collection.name
        do {
            try await writer.run {
                // Trained meanwhile, here or by another process: use it.
                try self.environment.read { txn in try self.adoptStoredDictionaries(txn) }
                guard try !self.resolved(name).hasDictionary else { return }
                _ = try self.storeDictionary(name, trainedOn: bodies, capacity: Self.dictionaryCapacity)
            }
        } catch let error as StoreError where error.code == .codec {
            dictionaryTrainingFailed.withLock { _ = $0.insert(name) }
        }
    }

    /// Rewrites the records of every compressed collection that are not compressed with its
    /// dictionary (written before it was trained, or while the collection was uncompressed).
    /// Values, keys and index entries are unchanged. For a private copy only (`backup`): the
    /// records go through a scratch database and come back appended in key order, so their
    /// pages end full (rewriting in place would keep every page and shrink none).
    /// - Returns: how many records were rewritten.
    func recompressRecords(batch: Int = 2_000, isCancelled: (() -> Bool)? = nil) throws -> Int {
        var rewritten = 0
        for name in registry.withLock({ $0.keys.sorted() }) {
            guard let c = registry.withLock({ $0[name] }), c.definition.compressed, c.hasDictionary else { continue }
            let needing = try read { snap in
                var count = 0
                for entry in snap.entries(in: c.records) where c.encoder.mayRecompress(entry.value) { count += 1 }
                try snap.checkIntact()
                return count
            }
            guard needing > 0 else { continue }
            let scratch = try environment.openDatabase(StoreLayout.recompressScratch(name), flags: [.create])
            try copyRecords(from: c.records, to: scratch, batch: batch, isCancelled: isCancelled) { value in
                try c.encoder.recompressed(value, decompressor: c.decoder.options) ?? Array(value)
            }
            _ = try writeNow { txn in try txn.removeAll(in: c.records) }
            try copyRecords(from: scratch, to: c.records, batch: batch, isCancelled: isCancelled) { Array($0) }
            _ = try writeNow { txn in try txn.lmdb.dropDatabase(scratch) }
            rewritten += needing
        }
        return rewritten
    }

    /// Appends every entry of `source` (in key order) to the empty `target`, transformed, in
    /// transactions of `batch` entries.
    private func copyRecords(
        from source: Database, to target: Database, batch: Int, isCancelled: (() -> Bool)?,
        _ transform: (UnsafeRawBufferPointer) throws -> [UInt8]
    ) throws {
        var after: [UInt8]?
        repeat {
            if isCancelled?() == true { throw CancellationError() }
            let (entries, last) = try read { snap in
                var entries: [(key: [UInt8], value: [UInt8])] = []
                let range: KeyRange = after.map { KeyRange(lower: .exclusive($0), upper: nil) } ?? .all
                for entry in snap.entries(in: source, range: range) {
                    entries.append((entry.keyBytes, try transform(entry.value)))
                    if entries.count >= batch { break }
                }
                try snap.checkIntact()
                return (entries, entries.count < batch ? nil : entries.last?.key)
            }
            if !entries.isEmpty {
                _ = try writeNow { txn in
                    for entry in entries { try txn.put(entry.value, forKey: entry.key, in: target, flags: .append) }
                }
            }
            after = last
        } while after != nil
    }

    /// Takes up the dictionaries another process stored since this one opened its collections,
    /// at the start of each read and write: the records compressed with one are unreadable
    /// without it (a `quire serve` started before a `quire load` trained one answered 503 to
    /// every request for the new records until restarted). Storing one adds an entry to
    /// `_meta`, so a transaction that finds as many as last time looks no further (an
    /// `mdb_stat`, no lock).
    func adoptStoredDictionaries<T: ReadableTransaction & ~Copyable>(_ txn: borrowing T) throws(LMDBError) {
        let entries = try txn.count(of: metaDB)
        guard metaEntriesSeen.load(ordering: .relaxed) != entries else { return }
        let waiting = registry.withLock { registry in
            registry.values.filter { $0.definition.compressed && !$0.hasDictionary }.map(\.definition.name)
        }
        for name in waiting {
            guard let dictionary = try Self.checkedDictionary(name, txn, metaDB, path) else { continue }
            registry.withLock { registry in
                guard let c = registry[name], !c.hasDictionary else { return }
                registry[name] = c.with(dictionary: dictionary, verifyChecksums: options.verifyChecksums)
            }
        }
        metaEntriesSeen.store(entries, ordering: .relaxed)
    }

    /// The dictionary stored for a collection, if any.
    func storedDictionary(_ name: String) throws -> [UInt8]? {
        try environment.read { txn in try Self.checkedDictionary(name, txn, metaDB, path) }
    }

    /// The dictionary stored for `name`, checked against its checksum when it has one.
    static func checkedDictionary<T: ReadableTransaction & ~Copyable>(
        _ name: String, _ txn: borrowing T, _ meta: Database, _ path: String
    ) throws(LMDBError) -> [UInt8]? {
        guard let dictionary = try txn.get(StoreLayout.dictionaryKey(name), in: meta) else { return nil }
        if let stored = try txn.get(StoreLayout.dictionaryChecksumKey(name), in: meta),
            stored != StoreLayout.dictionaryChecksum(dictionary)
        {
            // LMDB's corruption code: every caller reports it as a damaged store.
            throw LMDBError(
                code: LMDBError.corrupted.code, operation: "reading the compression dictionary", path: path,
                hint: "the compression dictionary of '\(name)' does not match its checksum: its records would decompress to other text")
        }
        return dictionary
    }
}
