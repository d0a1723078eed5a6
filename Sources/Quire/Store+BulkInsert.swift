import Foundation
import Dispatch
import QuireCodec
import QuireLMDB
import Synchronization

/// How a bulk insert commits.
public struct BulkInsertOptions: Sendable {
    /// Records per transaction; when keys arrive in order, memory holds about two chunks at a
    /// time (about 60 MB of encoded news articles at the default). Bigger chunks sync less often.
    public var chunkSize: Int = 25_000
    /// Sort by key before writing: LMDB writes sorted keys faster, and sorted keys above the
    /// store's last key are appended with `MDB_APPEND`. Each chunk is sorted, and chunks that
    /// arrive out of order are also merged across the sort window.
    public var sortChunks: Bool = true
    /// Bytes of encoded records (about the records' stored size) held back and merged into one
    /// sorted run when keys arrive out of order; 0 sorts each chunk on its own. Keys that
    /// arrive in order are written as they come, whatever this is. Held chunks are committed
    /// only when the window fills or the input ends; while held, their values stay in memory
    /// too (the caller's own array when it gave one, else copies). The default, 256 MiB, holds
    /// about 240,000 news articles: 100,000 articles with random ids load faster than raw
    /// `mdb_put`s of the same bytes in random order.
    public var sortWindow: Int = 256 << 20
    /// Skip the fsync of each chunk's commit and sync once at the end. A killed process loses
    /// nothing committed; a system crash during the load may lose the chunks not yet synced, or
    /// (on file systems that reorder writes: LMDB's `MDB_NOSYNC` caveat) damage the store.
    public var relaxedDurability: Bool = false

    /// The defaults: chunks of 25,000, sorted across a 256 MiB window, durable.
    public init(
        chunkSize: Int = 25_000, sortChunks: Bool = true, sortWindow: Int = 256 << 20, relaxedDurability: Bool = false
    ) {
        self.chunkSize = max(1, chunkSize)
        self.sortChunks = sortChunks
        self.sortWindow = max(0, sortWindow)
        self.relaxedDurability = relaxedDurability
    }
}

/// Progress of a bulk insert, reported after each committed chunk.
public struct BulkInsertProgress: Sendable, Hashable {
    /// Input values committed so far (a key given twice counts twice).
    public var records: Int
    /// Chunks committed so far.
    public var chunks: Int
    /// Seconds since the insert began.
    public var elapsed: Double
}

/// What a bulk insert did.
public struct BulkInsertReport: Sendable, Hashable {
    /// Input values committed (including replacements; a key given twice counts twice).
    public var records: Int
    /// Transactions committed.
    public var chunks: Int
    /// Chunks written with `MDB_APPEND`.
    public var appendedChunks: Int
    /// Seconds from start to the last commit (and sync).
    public var seconds: Double
}

extension Store {
    /// Inserts (or replaces, by key) every value of `values`, in chunked transactions.
    ///
    /// Values are encoded on the calling task while the writer commits the previous chunk, so
    /// encoding and writing overlap. Memory stays bounded, whatever the sequence's length: by
    /// about two chunks when keys arrive in order, by the sort window when they don't (see
    /// `BulkInsertOptions.sortWindow`). Each chunk commits atomically; after a crash, a rerun
    /// upserts the same values again without duplicates. When a key is given more than once,
    /// the value given last is the one kept.
    @discardableResult
    public func bulkInsert<V, S: Sequence>(
        _ values: S, into collection: StoreCollection<V>, options: BulkInsertOptions = BulkInsertOptions(),
        progress: (@Sendable (BulkInsertProgress) -> Void)? = nil
    ) async throws -> BulkInsertReport where S.Element == V {
        // An array is cut into slices of itself: copying each value into a chunk would retain
        // every string of it, a cost as large as the value's encoding.
        if let array = values as? [V] {
            return try await bulkInsert(slicing: array[...], into: collection, options: options, progress: progress)
        }
        if let slice = values as? ArraySlice<V> {
            return try await bulkInsert(slicing: slice, into: collection, options: options, progress: progress)
        }
        var iterator = values.makeIterator()
        return try await bulkInsert(into: collection, options: options, progress: progress) { iterator.next() }
    }

    /// Inserts every value of an async sequence, like `bulkInsert(_:into:options:progress:)`.
    @discardableResult
    public func bulkInsert<V, S: AsyncSequence>(
        _ values: S, into collection: StoreCollection<V>, options: BulkInsertOptions = BulkInsertOptions(),
        progress: (@Sendable (BulkInsertProgress) -> Void)? = nil
    ) async throws -> BulkInsertReport where S.Element == V {
        var iterator = values.makeAsyncIterator()
        return try await bulkInsert(into: collection, options: options, progress: progress) { try await iterator.next() }
    }

    /// Writes consecutive slices of `values` as the chunks.
    private func bulkInsert<V>(
        slicing values: ArraySlice<V>, into collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?
    ) async throws -> BulkInsertReport {
        try await withBulkRun(into: collection, options: options, progress: progress) { run in
            var start = values.startIndex
            while start < values.endIndex {
                let end = min(values.endIndex, start + options.chunkSize)
                try await run.submit(values[start..<end])
                start = end
            }
        }
    }

    /// Chunks whatever `next` yields and writes the chunks, one in flight while the next encodes.
    private func bulkInsert<V>(
        into collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?, next: () async throws -> V?
    ) async throws -> BulkInsertReport {
        try await withBulkRun(into: collection, options: options, progress: progress) { run in
            var chunk: [V] = []
            chunk.reserveCapacity(options.chunkSize)
            while let value = try await next() {
                chunk.append(value)
                if chunk.count == options.chunkSize {
                    try await run.submit(chunk[...])
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try await run.submit(chunk[...]) }
        }
    }

    /// Begins a bulk run, lets `submitChunks` submit its chunks, and finishes the run (waiting for
    /// the last chunk and restoring durability), or abandons it when anything throws: the
    /// chunks held for sorting are still written (they came before the failure) unless the
    /// task was cancelled.
    private func withBulkRun<V>(
        into collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?, _ submitChunks: (BulkRun<V>) async throws -> Void
    ) async throws -> BulkInsertReport {
        let run = BulkRun(store: self, collection: collection, options: options, progress: progress)
        try await run.begin()
        do {
            try await submitChunks(run)
            return try await run.finish()
        } catch {
            await run.abandon(writingHeld: !(error is CancellationError) && !Task.isCancelled)
            throw error
        }
    }

    /// Encodes one chunk against the newer of the committed field table and `previous` (the
    /// table the bulk insert's previous chunk was encoded with, maybe not committed yet).
    ///
    /// Starting from the previous chunk's table keeps ids consistent from chunk to chunk: a chunk
    /// encoded against the committed table alone would give the names and interned values the
    /// previous chunk brought other ids, and the writer would have to encode it again.
    func encodeChunk<V>(
        _ values: ArraySlice<V>, _ collection: StoreCollection<V>, sort: Bool, previous: FieldTable?
    ) throws -> EncodedChunk<V> {
        let c = try resolvedForWrite(collection)
        let committed = fields
        var base = committed
        if let previous, previous.count > committed.count, previous.names.starts(with: committed.names) {
            base = previous
        }
        let encoded = try encodeInParallel(values, c, collection, base, sort: sort)
        let ascending = KeyOrdering.isAscending(encoded.entries.lazy.map(\.key))
        var chunk = EncodedChunk(
            sources: [values], origins: (0..<values.count).map { ValueOrigin(source: 0, position: $0) },
            entries: encoded.entries, arenas: encoded.arenas, indexKeys: encoded.indexKeys, fields: encoded.fields,
            arrivedSorted: ascending, inputCount: values.count, byteCount: encoded.byteCount)
        // Equal keys keep their input order, so the last value given for a key wins.
        guard sort && !ascending, let order = encoded.order else { return chunk }
        chunk.origins = order.map { ValueOrigin(source: 0, position: $0) }
        chunk.entries = order.map { encoded.entries[$0] }
        if !encoded.indexKeys.isEmpty { chunk.indexKeys = order.map { encoded.indexKeys[$0] } }
        return chunk
    }

    /// Gives all `chunks` the ids of one field table and returns it: a chunk encoded against a
    /// table that isn't a prefix of the newest one (another writer interned names meanwhile)
    /// is encoded again.
    func harmonizeFields<V>(_ chunks: inout [EncodedChunk<V>], _ collection: StoreCollection<V>) throws -> FieldTable {
        guard var table = chunks.last?.fields else { return fields }
        let c = try resolvedForWrite(collection)
        for i in chunks.indices where !table.names.starts(with: chunks[i].fields.names) {
            chunks[i] = try chunks[i].reencoded(with: &table) { try collection.coder.encodeInto($0, c.encoder, &$1, $2) }
        }
        for i in chunks.indices { chunks[i].fields = table }
        return table
    }

    /// What a chunk's values become, in the chunk's input order.
    private struct EncodedValues {
        var entries: [EncodedEntry] = []
        var arenas: [RecordArena] = []
        /// Empty when the collection has no index.
        var indexKeys: [[[[UInt8]]]] = []
        var fields: FieldTable
        var byteCount = 0
        /// When sorting: the positions of `entries` in ascending key order, equal keys in order.
        var order: [Int]?

        mutating func append(contentsOf other: EncodedValues) {
            let offset = entries.count
            entries += other.entries
            arenas += other.arenas
            indexKeys += other.indexKeys
            byteCount += other.byteCount
            if let mine = order, let theirs = other.order {
                order = KeyOrdering.mergeStable(mine, theirs.map { $0 + offset }, keys: entries.map(\.key))
            }
        }
    }

    /// Computes the key, record and index keys of every value (and, with `sort`, their key
    /// order), split over the machine's cores when the chunk is big, touching each value once.
    ///
    /// Each slice encodes with its own copy of the field table, into its own arena. When a
    /// slice had to intern a new name (a new store's first chunk), slices could have given one
    /// name different ids, so the chunk is encoded again serially with one table.
    private func encodeInParallel<V: Encodable & Sendable>(
        _ values: ArraySlice<V>, _ c: RegisteredCollection, _ collection: StoreCollection<V>, _ table: FieldTable,
        sort: Bool
    ) throws -> EncodedValues {
        let coder = collection.coder
        let name = collection.name
        let hasIndexes = !collection.indexes.isEmpty
        @Sendable func encode(_ range: Range<Int>, _ table: FieldTable, _ encoder: CompactEncoder) throws -> EncodedValues {
            var out = EncodedValues(fields: table)
            out.entries.reserveCapacity(range.count)
            if hasIndexes { out.indexKeys.reserveCapacity(range.count) }
            let arena = RecordArena(firstBlock: range.count * Self.expectedRecordSize)
            out.arenas = [arena]
            // One value for the key, the record and the index keys, never copied (a copy of an
            // article retains all of its strings). `inout` because unspecialised code passes an
            // inout argument by address, where it copies a borrowed `pointee` first.
            func add(_ value: inout V) throws {
                let key = collection.key(value)
                try StoreTransaction.validate(key)
                let keyBytes = try arena.append(key.bytes)
                let record: ArenaBytes
                do {
                    record = try coder.encodeInto(value, encoder, &out.fields, arena)
                } catch let error as StoreError {
                    throw error  // the arena's
                } catch {
                    throw StoreError(.codec, "cannot encode a value of '\(name)'", underlying: error)
                }
                out.entries.append(EncodedEntry(key: keyBytes, record: record))
                out.byteCount += keyBytes.count + record.count
                if hasIndexes {
                    out.indexKeys.append(collection.indexes.map { index in index.keys(value).map { IndexKey.clamp($0.bytes) } })
                }
            }
            try values.withUnsafeBufferPointer { buffer in
                let base = UnsafeMutablePointer(mutating: buffer.baseAddress!)  // never written through
                for i in range { try add(&base[i]) }
            }
            if sort {
                // Each slice sorts its own part, in parallel; parts are merged as they are joined.
                let keys = out.entries.map(\.key)
                out.order = KeyOrdering.isAscending(keys) ? Array(keys.indices) : KeyOrdering.stableSortedOrder(keys)
            }
            return out
        }
        // A serial head first: it interns the names a new store's first records bring, so the
        // parallel slices after it rarely meet a new one.
        let head = 0..<min(values.count, 256)
        var result = try encode(head, table, c.encoder)
        let rest = head.upperBound..<values.count
        let parts = min(ProcessInfo.processInfo.activeProcessorCount, max(1, rest.count / 1024))
        if parts > 1 {
            let base = result.fields
            let size = (rest.count + parts - 1) / parts
            let results = Locked<[Int: Result<EncodedValues, any Error>]>([:])
            let grew = Atomic<Bool>(false)
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let start = rest.lowerBound + min(rest.count, part * size)
                let end = rest.lowerBound + min(rest.count, (part + 1) * size)
                let encoder = c.sliceEncoders[part % c.sliceEncoders.count]
                // A table of its own: counting references to storage both slices share would
                // bounce its cache line between the cores for every record.
                let table = FieldTable(names: base.names.map { $0 })
                let slice = Result { try encode(start..<end, table, encoder) }
                if case .success(let done) = slice, done.fields.count != base.count { grew.store(true, ordering: .relaxed) }
                results.withLock { $0[part] = slice }
            }
            if !grew.load(ordering: .relaxed) {
                let all = results.withLock { $0 }
                for part in 0..<parts { result.append(contentsOf: try all[part]!.get()) }
                return result
            }
        }
        let tail = try encode(rest, result.fields, c.encoder)
        result.append(contentsOf: tail)
        result.fields = tail.fields
        return result
    }

    /// A guess at a key and record's bytes, to size a slice's first arena block (news articles
    /// take about 1.1 KB).
    private static var expectedRecordSize: Int { 1_200 }

    func resolvedForWrite<V>(_ collection: StoreCollection<V>) throws -> RegisteredCollection {
        guard let c = registry.withLock({ $0[collection.name] }) else {
            throw StoreError(
                .unknownCollection, "collection '\(collection.name)' is not registered: call store.register(_:) first")
        }
        return c
    }

    /// Writes one encoded chunk in one transaction; returns whether it was appended.
    @available(*, noasync)
    func writeChunk<V>(_ chunk: EncodedChunk<V>, _ collection: StoreCollection<V>) throws -> Bool {
        let c = try resolvedForWrite(collection)
        return try writeNow { txn in
            // Encoded against an older table that has since diverged (new names interned by
            // someone else meanwhile): re-encode here, with the transaction's table.
            let chunk = try reconcile(chunk, with: txn.state, c, collection.coder)
            defer { withExtendedLifetime(chunk.arenas) {} }  // the entries point into them
            let canAppend = try isAppendable(chunk.entries, after: txn.cursor(in: c.records).last()?.keyBytes)
            if c.indexes.isEmpty {
                try txn.putRecords(chunk.entries, in: c.records, appending: canAppend)  // no old value to read
            } else if canAppend {
                // Keys beyond the last one: no record is replaced, no index entry moves.
                try txn.putRecords(chunk.entries, in: c.records, appending: true)
                for i in chunk.entries.indices {
                    try txn.putIndexEntries(chunk.indexKeys[i], pointingTo: chunk.entries[i].key.buffer, in: c.indexes)
                }
            } else {
                try writeIndexed(chunk.entries, chunk.indexKeys, txn, collection, c)
            }
            if changeHub.hasSubscribers {
                for entry in chunk.entries { txn.state.changes.record(collection.name, .upsert, StoreKey(bytes: entry.key.array)) }
            }
            return canAppend
        }
    }

    /// Writes records with index entries, moving the index entries of the records they replace.
    private func writeIndexed<V>(
        _ entries: [EncodedEntry], _ indexKeys: [[[[UInt8]]]], _ txn: borrowing StoreTransaction,
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
        _ chunk: EncodedChunk<V>, with state: WriteState, _ c: RegisteredCollection, _ coder: RecordCoder<V>
    ) throws -> EncodedChunk<V> {
        let committed = state.fields.names
        if chunk.fields.names.starts(with: committed) {
            state.fields = chunk.fields  // same ids, maybe more names: they get persisted with the chunk
            return chunk
        }
        var table = state.fields
        let reencoded = try chunk.reencoded(with: &table) { try coder.encodeInto($0, c.encoder, &$1, $2) }
        state.fields = table
        return reencoded
    }

    /// Relaxes durability for a bulk load: commits skip their fsync until the matching
    /// ``endRelaxedLoad()``. Loads may overlap; the first relaxes, the last restores. A store
    /// opened relaxed stays as it is.
    @available(*, noasync)
    func beginRelaxedLoad() throws {
        guard options.durability != .relaxed else { return }
        try relaxedBulkLoads.withLock { (loads: inout Int) throws(LMDBError) in
            if loads == 0 { try environment.setRelaxedDurability(true) }
            loads += 1
        }
    }

    /// Syncs what a relaxed bulk load committed and, for the last load, restores durability.
    @available(*, noasync)
    func endRelaxedLoad() throws {
        guard options.durability != .relaxed else { return }
        try relaxedBulkLoads.withLock { (loads: inout Int) throws(LMDBError) in
            loads -= 1
            var failure: LMDBError?
            do throws(LMDBError) { try environment.sync() } catch { failure = error }  // restored even so
            if loads == 0 { try environment.setRelaxedDurability(false) }
            if let failure { throw failure }
        }
    }

    /// Keys strictly ascending and all above the current last key.
    private func isAppendable(_ entries: [EncodedEntry], after last: [UInt8]?) -> Bool {
        guard let first = entries.first else { return false }
        if let last, last.withUnsafeBytes({ KeyRange.compare($0, first.key.buffer) }) >= 0 { return false }
        return KeyOrdering.isAscending(entries.lazy.map(\.key), strictly: true)
    }
}

extension StoreTransaction {
    /// Puts encoded records in order (with `MDB_APPEND` when `appending`) without reading what
    /// they replace.
    func putRecords(_ entries: [EncodedEntry], in database: Database, appending: Bool) throws {
        let flags: WriteFlags = appending ? .append : []
        for entry in entries { try put(entry.record.buffer, forKey: entry.key.buffer, in: database, flags: flags) }
    }

    /// Adds one record's index entries, one list of index keys per index.
    func putIndexEntries(_ keys: [[[UInt8]]], pointingTo key: UnsafeRawBufferPointer, in indexes: [Database]) throws {
        for (j, list) in keys.enumerated() {
            for k in list { _ = try k.withUnsafeBytes { k in try put(key, forKey: k, in: indexes[j], flags: .noDuplicateData) } }
        }
    }

    /// Removes an old record's index entries that its replacement doesn't have.
    func replaceIndexEntries<V>(
        of old: [UInt8], key: [UInt8], with newKeys: [[[UInt8]]], _ collection: StoreCollection<V>,
        _ c: RegisteredCollection
    ) throws {
        guard !collection.indexes.isEmpty else { return }
        let value = try old.withUnsafeBytes { try decode(collection, $0, c) }
        for (i, index) in collection.indexes.enumerated() {
            for k in index.keys(value).map({ IndexKey.clamp($0.bytes) }) where !newKeys[i].contains(k) {
                try delete(k, value: key, in: c.indexes[i])
            }
        }
    }
}
