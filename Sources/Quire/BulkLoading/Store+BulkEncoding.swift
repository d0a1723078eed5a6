import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

extension Store {
    /// Encodes one chunk against the newer of the committed field table and `previous` (the
    /// table the bulk insert's previous chunk was encoded with, maybe not committed yet).
    ///
    /// Starting from the previous chunk's table keeps ids consistent from chunk to chunk: a chunk
    /// encoded against the committed table alone would give the names and interned values the
    /// previous chunk brought other ids, and the writer would have to encode it again. A chunk
    /// in key order is tokenized for the full-text index too, in arrays from `searchBuffers`.
    func encodeChunk<V>(
        _ values: ArraySlice<V>, _ collection: StoreCollection<V>, sort: Bool, previous: FieldTable?,
        searchBuffers: SearchAnalysisBuffers? = nil
    ) throws -> EncodedChunk {
        let c = try resolvedForWrite(collection)
        let encoded = try encodeInParallel(values, c, collection, encodingBase(previous), sort: sort)
        let ascending = KeyOrdering.isAscending(encoded.entries.lazy.map(\.key))
        var chunk = EncodedChunk(
            entries: encoded.entries, arenas: encoded.arenas, indexKeys: encoded.indexKeys, fields: encoded.fields,
            arrivedSorted: ascending, inputCount: values.count, byteCount: encoded.byteCount,
            longKeys: encoded.longKeys)
        if ascending, let search = analysableSearchIndex(of: chunk, collection, c) {
            // Tokenized now, from the values, since the chunk may be written as it came: later
            // the text would have to be decoded back from the records.
            let skipped = try recordsStoredAlready(chunk, c)
            chunk.searchSkipped = skipped
            chunk.searchParts = SearchBatchPart.analyse(
                count: values.count, parts: Parallelism.parts, buffers: searchBuffers, rules: try searchRules(c)
            ) {
                skipped?[$0] == true ? [] : search.text(values[values.startIndex + $0])
            }
        }
        // Equal keys keep their input order, so the last value given for a key wins.
        guard sort && !ascending, let order = encoded.order else { return chunk }
        chunk.entries = order.map { encoded.entries[$0] }
        if !encoded.indexKeys.isEmpty { chunk.indexKeys = order.map { encoded.indexKeys[$0] } }
        return chunk
    }

    /// The plain (uncompressed) record bodies of `values`, as the compressor sees them: what a
    /// dictionary trains on. No search analysis, nothing kept.
    func plainBodies<V>(_ values: ArraySlice<V>, _ collection: StoreCollection<V>, previous: FieldTable?) throws
        -> [[UInt8]]
    {
        let c = try resolvedForWrite(collection)
        let encoded = try encodeInParallel(values, c, collection, encodingBase(previous), sort: false)
        return try encoded.entries.map { try c.decoder.plainBody($0.record.buffer) }
    }

    /// The table to encode against: the previous chunk's when it extends the committed one.
    private func encodingBase(_ previous: FieldTable?) -> FieldTable {
        let committed = fields
        if let previous, previous.count > committed.count, previous.names.starts(with: committed.names) {
            return previous
        }
        return committed
    }

    /// Gives all `chunks` the ids of one field table and returns it: a chunk encoded against a
    /// table that isn't a prefix of the newest one (another writer interned names meanwhile)
    /// is encoded again. With `base` (the table of a run spilled before), the table returned
    /// extends it, so that the spilled runs' tables each extend the one before.
    func harmonizeFields<V>(
        _ chunks: inout [EncodedChunk], extending base: FieldTable? = nil, _ collection: StoreCollection<V>
    ) throws -> FieldTable {
        guard var table = chunks.last?.fields else { return base ?? fields }
        if let base, !table.names.starts(with: base.names) { table = base }
        let c = try resolvedForWrite(collection)
        for i in chunks.indices where !table.names.starts(with: chunks[i].fields.names) {
            chunks[i] = try chunks[i].reencoded(with: &table, collection.coder, c)
        }
        for i in chunks.indices { chunks[i].fields = table }
        return table
    }

    /// What a chunk's values become, in the chunk's input order.
    private struct EncodedValues {
        var entries: [EncodedEntry] = []
        var arenas: [RecordArena] = []
        /// Empty when the collection has no index.
        var indexKeys: [IndexKeyBytes] = []
        var fields: FieldTable
        var byteCount = 0
        /// The keys over 510 bytes among the entries' and index keys, with their stored forms.
        var longKeys: [LongKeyPair] = []
        /// When sorting: the positions of `entries` in ascending key order, equal keys in order.
        var order: [Int]?

        /// The stored form of a key over 510 bytes, noted with the key for `_longkeys`.
        mutating func storedForm(_ logical: [UInt8], _ scheme: LongKeys) -> [UInt8] {
            let physical = scheme.physical(logical)
            longKeys.append(LongKeyPair(physical: physical, logical: logical))
            return physical
        }

        mutating func append(contentsOf other: EncodedValues) {
            let offset = entries.count
            entries += other.entries
            arenas += other.arenas
            indexKeys += other.indexKeys
            byteCount += other.byteCount
            longKeys += other.longKeys
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
        let longKeys = self.longKeys
        @Sendable func encode(_ range: Range<Int>, _ table: FieldTable, _ encoder: CompactEncoder) throws -> EncodedValues {
            var out = EncodedValues(fields: table)
            out.entries.reserveCapacity(range.count)
            if hasIndexes { out.indexKeys.reserveCapacity(range.count) }
            let arena = RecordArena(firstBlock: range.count * Self.expectedRecordSize)
            out.arenas = [arena]
            var scratch: [UInt8] = []  // one record's index keys
            // One value for the key, the record and the index keys, never copied (a copy of an
            // article retains all of its strings). `inout` because unspecialised code passes an
            // inout argument by address, where it copies a borrowed `pointee` first.
            func add(_ value: inout V) throws {
                let key = collection.key(value)
                try StoreTransaction.validate(key)
                let keyBytes: ArenaBytes
                if LongKeys.isLong(key.bytes.count) {
                    keyBytes = try arena.append(out.storedForm(key.bytes, longKeys))
                } else {
                    keyBytes = try arena.append(key.bytes)
                }
                let record: ArenaBytes
                do {
                    record = try coder.encodeInto(value, encoder, &out.fields, arena)
                } catch let error as StoreError {
                    throw error  // the arena's
                } catch {
                    throw StoreError(.codec, "cannot encode a value of '\(name)'", underlying: error)
                }
                out.entries.append(EncodedEntry(key: keyBytes, record: record))
                out.byteCount += keyBytes.count + record.count + EncodedChunk.overheadPerRecord
                if hasIndexes {
                    // A loop, not `map`: a closure capturing `value` passed it on as a copy.
                    scratch.removeAll(keepingCapacity: true)
                    for index in collection.indexes {
                        var list: [[UInt8]] = []
                        for k in index.keys(value) {
                            try StoreTransaction.validate(k)
                            list.append(LongKeys.isLong(k.bytes.count) ? out.storedForm(k.bytes, longKeys) : k.bytes)
                        }
                        IndexKeyBytes.appendList(list, to: &scratch)
                    }
                    out.indexKeys.append(IndexKeyBytes(bytes: try arena.append(scratch)))
                    out.byteCount += scratch.count
                }
            }
            try values.withUnsafeBufferPointer { buffer in
                let base = UnsafeMutablePointer(mutating: buffer.baseAddress!)  // never written through
                for i in range { try add(&base[i]) }
            }
            arena.trim()  // the slice is held as long as its chunk: keep only what it used
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
}
