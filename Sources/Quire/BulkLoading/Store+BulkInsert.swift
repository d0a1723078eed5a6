import Foundation
import QuireCodec
internal import QuireLMDB
import Synchronization

/// How a bulk insert commits.
public struct BulkInsertOptions: Sendable {
    /// Records per transaction (at most ``searchChunkSize`` into a collection with a full-text
    /// index); when keys arrive in order, memory holds about two chunks of encoded records at a
    /// time (about 60 MB of news articles at the default). Bigger chunks sync less often. A merged sort window that
    /// lands among stored keys commits at most 12,000 records a transaction (LMDB keeps a copy
    /// of every page a transaction touched until it commits, and such a transaction touches
    /// about a page a record). Values below 1 count as 1.
    public var chunkSize: Int = 25_000 {
        didSet { if chunkSize < 1 { chunkSize = 1 } }
    }
    /// Sort by key before writing: LMDB writes sorted keys faster, and sorted keys above the
    /// store's last key are appended with `MDB_APPEND`. Each chunk is sorted, and chunks that
    /// arrive out of order are also merged across the sort window.
    public var sortChunks: Bool = true
    /// Bytes of encoded records (their stored size, with their keys and index keys) held back
    /// and merged into one sorted run when keys arrive out of order; 0 sorts each chunk on its
    /// own. Keys that arrive in order are written as they come, whatever this is. Held chunks
    /// are committed only when the window fills or the input ends; only their bytes are held,
    /// not the values. The default, 96 MiB, holds about 85,000 news articles (150,000
    /// compressed): 100,000 articles with random ids load about as fast as raw `mdb_put`s of
    /// the same bytes in random order, and a load of any size stays under about 256 MiB.
    /// Negative values count as 0.
    public var sortWindow: Int = 96 << 20 {
        didSet { if sortWindow < 0 { sortWindow = 0 } }
    }
    /// When the input outgrows the sort window, write each full window as a sorted run to an
    /// unnamed temporary file in the store's directory and merge all of them once at the end,
    /// so that the store's tree is written in one ascending pass (appended, when the keys are
    /// beyond the stored ones) instead of one pass per window. It costs disk about the size of
    /// the encoded records until the load ends (the file is gone once the load ends or the process
    /// dies), and nothing of the spilled windows is committed before the final merge. False
    /// merges and commits each window on its own.
    public var externalSort: Bool = true
    /// Skip the fsync of each chunk's commit (committed chunks are flushed in the background
    /// instead, while the next ones encode) and sync once at the end. A killed process loses
    /// nothing committed; a system crash during the load may lose the chunks not yet synced, or
    /// (on file systems that reorder writes: LMDB's `MDB_NOSYNC` caveat) damage the store.
    /// Other commits of the store meanwhile are synced one by one before they return.
    public var relaxedDurability: Bool = false

    /// The defaults: chunks of 25,000, sorted across a 96 MiB window and across windows through
    /// a temporary file, durable.
    public init(
        chunkSize: Int = 25_000, sortChunks: Bool = true, sortWindow: Int = 96 << 20, externalSort: Bool = true,
        relaxedDurability: Bool = false
    ) {
        self.chunkSize = max(1, chunkSize)
        self.sortChunks = sortChunks
        self.sortWindow = max(0, sortWindow)
        self.externalSort = externalSort
        self.relaxedDurability = relaxedDurability
    }

    /// The largest chunk written into a collection with a full-text index. A chunk's analysis
    /// (its postings sorted by term, before the writer merges them) takes about 2.5 KB a news
    /// article, and LMDB's copies of the pages a chunk's document entries touch grow with it:
    /// `--scale --search` insert peaked at 288 MiB of anonymous memory at 100k and 333 MiB at
    /// 1M with chunks of 25,000.
    public static let searchChunkSize = 12_000

    /// These options as they apply to `collection`.
    func fitted<V>(to collection: StoreCollection<V>) -> BulkInsertOptions {
        guard collection.search != nil else { return self }
        var fitted = self
        fitted.chunkSize = min(chunkSize, Self.searchChunkSize)
        return fitted
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
    /// Input values sorted into runs in a temporary file (``BulkInsertOptions/externalSort``)
    /// and not committed yet: they are written by the final merge.
    public var pending: Int = 0
    /// What the insert is doing: a long load spends its last part merging its sorted runs and
    /// packing its full-text index, with no input left to read.
    public var phase: BulkInsertPhase = .inserting
    /// Records committed so far, a key given twice counted once (as ``BulkInsertReport/distinctRecords``).
    public var distinctRecords: Int = 0
}

/// The parts of a bulk insert, in order (each but the first only when it has work).
public enum BulkInsertPhase: Sendable, Hashable {
    /// Taking the input: chunks committed, sort windows written to the temporary file.
    case inserting
    /// The input has ended: the sorted runs of the temporary file are merged and committed
    /// (``BulkInsertProgress/pending`` falls as ``BulkInsertProgress/records`` rises).
    case mergingSortedRuns
    /// Every record is committed: the full-text index's posting blocks are packed.
    case compactingSearchIndex
}

/// What a bulk insert did.
public struct BulkInsertReport: Sendable, Hashable {
    /// Input values committed (including replacements; a key given twice counts twice).
    public var records: Int
    /// Records written, a key given twice counted once: equal keys meet where the load sorts (a
    /// window in memory, the merge of the temporary file's runs) or next to each other in input
    /// that arrives in order, and only the last is kept.
    public var distinctRecords: Int = 0
    /// Chunks committed.
    public var chunks: Int
    /// Transactions that committed them: one a chunk (``BulkInsertOptions/chunkSize``).
    public var transactions: Int = 0
    /// Chunks written with `MDB_APPEND`.
    public var appendedChunks: Int
    /// Seconds from start to the last commit (and sync).
    public var seconds: Double
    /// The full-text index's pages, when the load rewrote them packed at its end (a load that
    /// split most of their pages, and wrote at least a quarter of the index).
    public var searchCompaction: SearchCompaction? = nil

    /// A rewrite of the full-text index's databases in key order: their bytes in pages before
    /// and after.
    public struct SearchCompaction: Sendable, Hashable {
        public var bytesBefore: Int
        public var bytesAfter: Int
    }
}

extension Store {
    /// Inserts (or replaces, by key) every value of `values`, in chunked transactions.
    ///
    /// Values are encoded on the calling task while the writer commits the previous chunk, so
    /// encoding and writing overlap. Memory stays bounded, whatever the sequence's length: by
    /// about two chunks when keys arrive in order, by the sort window when they don't (see
    /// `BulkInsertOptions.sortWindow`). Each chunk commits atomically; after a crash, a rerun
    /// upserts the same values again without duplicates. When a key is given more than once,
    /// the value given last is the one kept. A value whose record is stored already, byte for
    /// byte, is left as it is: not written, and not in the change feed.
    @discardableResult
    public func bulkInsert<V, S: Sequence>(
        _ values: S, into collection: StoreCollection<V>, options: BulkInsertOptions = BulkInsertOptions(),
        progress: (@Sendable (BulkInsertProgress) -> Void)? = nil
    ) async throws(StoreError) -> BulkInsertReport where S.Element == V {
        let options = options.fitted(to: collection)
        do {
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
        } catch {
            throw StoreError.wrap(error, "\(path): bulk insert into '\(collection.name)'")
        }
    }

    /// Inserts every value of an async sequence, like `bulkInsert(_:into:options:progress:)`.
    @discardableResult
    public func bulkInsert<V, S: AsyncSequence>(
        _ values: S, into collection: StoreCollection<V>, options: BulkInsertOptions = BulkInsertOptions(),
        progress: (@Sendable (BulkInsertProgress) -> Void)? = nil
    ) async throws -> BulkInsertReport where S.Element == V {
        let options = options.fitted(to: collection)
        var iterator = values.makeAsyncIterator()
        return try await bulkInsert(into: collection, options: options, progress: progress) { try await iterator.next() }
    }

    /// Writes consecutive slices of `values` as the chunks.
    private func bulkInsert<V>(
        slicing values: ArraySlice<V>, into collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?
    ) async throws -> BulkInsertReport {
        try await withBulkLoader(into: collection, options: options, progress: progress) { run in
            var start = values.startIndex
            while start < values.endIndex {
                // `chunkSize: .max` means one chunk; `start + .max` would overflow.
                let end = values.index(start, offsetBy: options.chunkSize, limitedBy: values.endIndex) ?? values.endIndex
                try await run.submit(values[start..<end])
                start = end
            }
        }
    }

    /// Encodes whatever `next` yields in pieces and writes them in chunks, one in flight while
    /// the next encodes.
    private func bulkInsert<V>(
        into collection: StoreCollection<V>, options: BulkInsertOptions,
        progress: (@Sendable (BulkInsertProgress) -> Void)?, next: () async throws -> V?
    ) async throws -> BulkInsertReport {
        try await withBulkLoader(into: collection, options: options, progress: progress) { run in
            // Pieces, not chunks: the loader gathers them into chunks, holding only their bytes.
            // Each chunk's last piece ends it exactly, so chunks keep `chunkSize` records.
            let pieceSize = min(options.chunkSize, BulkLoader<V>.pieceSize)
            var piece: [V] = []
            piece.reserveCapacity(pieceSize)
            var inChunk = 0
            while let value = try await next() {
                piece.append(value)
                inChunk += 1
                if piece.count == pieceSize || inChunk == options.chunkSize {
                    try await run.submit(piece[...])
                    piece.removeAll(keepingCapacity: true)
                    if inChunk == options.chunkSize { inChunk = 0 }
                }
            }
            if !piece.isEmpty { try await run.submit(piece[...]) }
        }
    }

    /// Runs a bulk load whose chunks `submitChunks` makes itself, through the machinery of
    /// `bulkInsert` (parallel encoding, one chunk committing while the next encodes, sorting
    /// across the window, `MDB_APPEND`).
    ///
    /// When `submitChunks` returns, the load finishes: the last chunk is committed and durability
    /// restored. When it throws, the chunks it submitted before are still written (they came
    /// before the failure) unless the task was cancelled, and the error goes up. (A loader told
    /// to stop, `BulkLoader.stops(when:)`, writes them only when they are all in memory.)
    /// Each submitted array is encoded as one piece; pieces that arrive in key order are written
    /// as chunks of at least `options.chunkSize` records (one piece, when it is that big), and
    /// `options.chunkSize` also sizes the chunks written from a merged sort window.
    @discardableResult
    public func withBulkLoader<V>(
        into collection: StoreCollection<V>, options: BulkInsertOptions = BulkInsertOptions(),
        progress: (@Sendable (BulkInsertProgress) -> Void)? = nil,
        _ submitChunks: (BulkLoader<V>) async throws -> Void
    ) async throws -> BulkInsertReport {
        let run = BulkLoader(store: self, collection: collection, options: options.fitted(to: collection), progress: progress)
        try await run.begin()
        do {
            try await submitChunks(run)
            return try await run.finish()
        } catch {
            await run.abandon(after: error)
            throw error
        }
    }

    func resolvedForWrite<V>(_ collection: StoreCollection<V>) throws -> RegisteredCollection {
        guard let c = registry.withLock({ $0[collection.name] }) else {
            throw StoreError(
                .unknownCollection, "collection '\(collection.name)' is not registered: call store.register(_:) first")
        }
        // A stale or foreign declaration (other indexes, in another order, another value type)
        // would write entries into the wrong index: refuse it before anything is written.
        guard c.definition == collection.definition else {
            throw StoreError(
                .definitionMismatch,
                "collection '\(collection.name)': this declaration (\(Self.summary(collection.definition))) differs from the registered one (\(Self.summary(c.definition))); write through the declaration the store registered"
            )
        }
        return c
    }

    /// `indexes [publishedAt:date(publishedAt), section:string(section)], compressed, QuireNews.Article`.
    static func summary(_ definition: CollectionDefinition) -> String {
        let indexes = definition.indexes.map { "\($0.name):\($0.kind.rawValue)(\($0.field ?? "-"))" }.joined(separator: ", ")
        return "indexes [\(indexes)]" + (definition.compressed ? ", compressed" : "") + ", " + (definition.valueType ?? "untyped")
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
}
