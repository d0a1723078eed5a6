internal import QuireLMDB
import QuireText

/// Brings a full-text index's segments (``SearchSegments``) back into its main blocks at the end
/// of a bulk load: a reader sees the segments or the merged blocks, never a mix, and the same
/// postings either way.
///
/// In place, a batch of terms a transaction: the segments' blocks of the batch's terms are read
/// in term order, one cursor a segment, merged
/// (``collectBatch(_:_:segments:keys:from:after:bytes:isCancelled:)``), then deleted and
/// appended to each term's main blocks (``applyBatch(_:_:_:segments:keys:from:isCancelled:)``),
/// touching only the terms the segments have: a block at least half a leaf block long moves as
/// it is (a stored list starts from its first document), the smaller ones are packed again
/// (``SearchPostings/appendRun``).
/// A term with more blocks than a batch is merged a range of segments a batch. After each commit
/// every term's postings are whole, in its main blocks or still in the segments, so a reader
/// between batches sees them all, and a write routes by the merge's progress (``SegmentRouting``).
/// The pages one batch frees hold the next batch's blocks, so the file grows by about a batch;
/// copying every block into the other posting database instead (which the load's end still does
/// when the merged pages are mostly empty) left the segments' pages free: a third of the file
/// after a load of 1M articles.
enum SearchSegmentMerge {
    /// Writes `database`'s blocks in key order through `emit`, each term's blocks (the main
    /// ones when `includingMain`, then each segment's) as one run: cut again into blocks
    /// (``TermBlockCutter``) when `cutting`, else as they are, under their main keys.
    static func forEachMergedBlock<T: ReadableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, keys: SegmentKeys, includingMain: Bool, cutting: Bool, pageSize: Int,
        isCancelled: (() -> Bool)?, _ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var poll = CancellationPoll(every: 4_096)
        var sources: [TermBlockSource] = []
        if includingMain { sources.append(try TermBlockSource(try txn.cursor(in: database), segment: nil, keys: keys)) }
        for start in try keys.starts(try txn.cursor(in: database)) {
            sources.append(try TermBlockSource(try txn.cursor(in: database), segment: start, keys: keys))
        }
        var merger = TermBlockMerger(sources)
        var cutter = TermBlockCutter(pageSize: pageSize)
        var key: [UInt8] = []
        try merger.forEachTerm { term, bounds, values in
            for _ in values { try poll.step(isCancelled) }  // a step a block, as a copy polls
            if cutting {
                try cutter.write(term, bounds, values, emit)
                return true
            }
            for (bound, value) in zip(bounds, values) {
                SearchDatabases.setPostingKey(&key, term, bound)
                try key.withUnsafeBytes { try emit($0, value) }
            }
            return true
        }
        try txn.checkIntact()
    }

    /// Where a merge batch stopped: the next batch's first term, and when the batch stopped inside
    /// it, the first segment whose blocks of it are left (``SegmentMergeProgress/nextSegment``).
    typealias Stop = (term: [UInt8], segment: UInt32?)

    /// A merge batch's blocks read from the segments, copied out of the map: the deletes that
    /// apply it change the pages they were read from, and the next batch's may be read on
    /// another thread while this one is applied.
    struct Batch: Sendable {
        var terms: [UInt8] = []
        var termEnds: [Int] = []
        var blocks: [UInt8] = []
        var blockEnds: [Int] = []
        /// Each block's first document, its key's number.
        var blockBounds: [UInt32] = []
        /// Each term's last block + 1.
        var runEnds: [Int] = []
        /// Where the next batch starts; nil when the segments have no terms after this batch's.
        var next: Stop?
    }

    /// Reads a batch of terms' blocks of the segments starting at `starts`, from the first term at
    /// or after `from` until the blocks read pass `bytes`. A term whose blocks pass `bytes` stops
    /// the batch at the first segment boundary after them, so that a batch holds about `bytes`
    /// however common its words (a segment's blocks of one term stay together: they are
    /// documents of one range). `after` is the segment a batch before stopped at inside `from`,
    /// for a snapshot taken before that batch was applied: the segments below it hold blocks of
    /// `from` that it merged, left out here (in a later snapshot they are gone).
    static func collectBatch<T: ReadableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, segments starts: [UInt32], keys: SegmentKeys, from: [UInt8],
        after stopSegment: UInt32? = nil, bytes: Int, isCancelled: (() -> Bool)?
    ) throws -> Batch {
        var poll = CancellationPoll(every: 4_096)
        var batch = Batch()
        batch.blocks.reserveCapacity(bytes + bytes / 8)  // most batches end within an eighth past `bytes`
        do {
            // A cursor a segment, closed at the end of this scope: LMDB walks every cursor open on
            // a database at each delete and put in it, and a 1M load has 84 segments (with them
            // open during a batch's deletes and puts, its final merge took 13 s instead of 7.5).
            var merger = TermBlockMerger(
                try starts.map { start in
                    let past = stopSegment.map { start < $0 } ?? false
                    return try TermBlockSource(try txn.cursor(in: database), segment: start, keys: keys, from: from, past: past)
                })
            try merger.forEachTerm { term, bounds, values in
                guard batch.blocks.count < bytes else {
                    batch.next = (Array(term), nil)
                    return false
                }
                var segment = SearchSegments.owner(of: bounds[0], in: starts)
                for (value, bound) in zip(values, bounds) {
                    try poll.step(isCancelled)
                    let owner = SearchSegments.owner(of: bound, in: starts)
                    if owner != segment {
                        if batch.blocks.count >= bytes, let owner {
                            batch.next = (Array(term), owner)
                            break
                        }
                        segment = owner
                    }
                    batch.blocks.append(contentsOf: value)
                    batch.blockEnds.append(batch.blocks.count)
                    batch.blockBounds.append(bound)
                }
                batch.terms.append(contentsOf: term)
                batch.termEnds.append(batch.terms.count)
                batch.runEnds.append(batch.blockEnds.count)
                return batch.next == nil
            }
        }
        try txn.checkIntact()
        return batch
    }

    /// Deletes `batch`'s blocks (read from `from` on) from the segments starting at `starts`, and
    /// appends each term's run to its main blocks (with `MDB_APPEND` when its keys come after
    /// every stored key: a term the main blocks lack, below which the segments are keyed). Returns
    /// where the next batch starts.
    static func applyBatch<T: WritableTransaction & ~Copyable>(
        _ batch: Batch, _ database: Database, _ txn: borrowing T, segments starts: [UInt32], keys: SegmentKeys,
        from: [UInt8], isCancelled: (() -> Bool)?
    ) throws -> Stop? {
        var poll = CancellationPoll(every: 4_096)
        let next = batch.next
        // The batch's blocks out of every segment: keys from `prefix from` below `prefix next 0x00`,
        // or below `prefix next 0x01` (all of `next`) in a segment before the one a batch stopped at.
        let cursor = try txn.cursor(in: database)
        for start in starts {
            let prefix = keys.prefix(start)
            let end = next.map { prefix + $0.term + [$0.segment.map { start < $0 } == true ? 1 : 0] }
            var entry = try cursor.seek(atLeast: prefix + from)
            while let found = entry, found.key.starts(with: prefix),
                end.map({ $0.withUnsafeBytes { KeyRange.compare(found.key, $0) < 0 } }) ?? true
            {
                try poll.step(isCancelled)
                entry = try cursor.deleteCurrentAndFollow()
            }
        }
        var buffers = SearchPostings.RunBuffers(pageSize: try txn.statistics(of: database).pageSize)
        var key: [UInt8] = []
        // With the segments below the terms, a term past the main blocks' last one is appended
        // after every key: its greatest term, empty when they have none (a first load's).
        var appendsAfter: [UInt8]?
        if keys == .low {
            appendsAfter = try cursor.last().map { keys.isSegment($0.key) ? [] : Array($0.key.dropLast(5)) } ?? []
        }
        let (terms, termEnds, blockEnds, blockBounds, runEnds) =
            (batch.terms, batch.termEnds, batch.blockEnds, batch.blockBounds, batch.runEnds)
        try batch.blocks.withUnsafeBytes { all in
            func value(_ b: Int) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: all[(b == 0 ? 0 : blockEnds[b - 1])..<blockEnds[b]])
            }
            /// Appends blocks `range` of `term` as one run, their postings decoded and encoded again.
            func appendDecoded(_ term: ArraySlice<UInt8>, _ range: Range<Int>, appending: Bool) throws {
                guard !range.isEmpty else { return }
                let runBytes = blockEnds[range.upperBound - 1] - (range.lowerBound == 0 ? 0 : blockEnds[range.lowerBound - 1])
                try SearchPostings.appendRun(
                    term, runBytes: runBytes, in: database, txn, cursor: cursor, appending: appending, buffers: &buffers
                ) { emit in
                    for b in range { try PostingBlock.forEachPosting(in: value(b), emit) }
                }
            }
            var block = 0
            for t in termEnds.indices {
                let term = terms[(t == 0 ? 0 : termEnds[t - 1])..<termEnds[t]]
                let first = block
                block = runEnds[t]
                try poll.step(isCancelled)
                // A block at least half full moves as it is, under the term's main key: a stored
                // list starts from its first document, so it needs no decoding (a frequent term's
                // large blocks are most of the bytes). Runs of smaller ones are packed again.
                let moved = SearchPostings.blockLimit(term: term.count) / 2
                let appending = appendsAfter.map { $0.lexicographicallyPrecedes(term) } ?? false
                var small = first
                for b in first..<block where value(b).count >= moved {
                    try appendDecoded(term, small..<b, appending: appending)
                    SearchDatabases.setPostingKey(&key, term, blockBounds[b])
                    _ = try key.withUnsafeBytes {
                        try txn.put(value(b), forKey: $0, in: database, flags: appending ? .append : [])
                    }
                    small = b + 1
                }
                try appendDecoded(term, small..<block, appending: appending)
            }
        }
        return next
    }
}

/// One source of posting blocks in key order, the main blocks or one segment's, with the term of
/// its current block (without the segment's prefix). Its entries point into the map: valid while
/// the transaction writes nothing.
struct TermBlockSource {
    private let cursor: Cursor
    private let keys: SegmentKeys
    private let prefix: [UInt8]?
    private(set) var entry: Entry?

    /// The source's blocks from the first of `term` on (all of them when `term` is empty), or
    /// from the first after it when `past` (a segment's only: its keys of a term end `0x00 ‖ bound`).
    init(_ cursor: Cursor, segment: UInt32?, keys: SegmentKeys, from term: [UInt8] = [], past: Bool = false) throws {
        self.cursor = cursor
        self.keys = keys
        prefix = segment.map(keys.prefix)
        let start = prefix.map { $0 + term + (past ? [1] : []) } ?? keys.mainKey(from: term)
        entry = try within(start.isEmpty ? try cursor.first() : try cursor.seek(atLeast: start))
    }

    /// The current block's term, nil past the source's last block.
    var term: UnsafeRawBufferPointer? {
        entry.map { UnsafeRawBufferPointer(rebasing: $0.key[(prefix?.count ?? 0)..<($0.key.count - 5)]) }
    }

    /// The current block's bound.
    var bound: UInt32 { entry.flatMap { SearchDatabases.postingNumber($0.key) } ?? 0 }

    mutating func advance() throws { entry = try within(try cursor.next()) }

    /// The entry when it belongs to this source; a malformed key there is damage.
    private func within(_ found: Entry?) throws -> Entry? {
        guard let found else { return nil }
        if let prefix {
            guard found.key.starts(with: prefix) else { return nil }
        } else if keys.isSegment(found.key) {
            return nil
        }
        guard found.key.count >= (prefix?.count ?? 0) + 6, SearchDatabases.postingNumber(found.key) != nil else {
            throw StoreError(.corrupted, "search index: malformed posting key")
        }
        return found
    }
}

/// The blocks of several sources, term by term in byte order: each term's blocks from the first
/// source that has it, then the next… (the main blocks, then the segments in order, which is
/// ascending document order). A binary heap of the sources by (current term, source).
struct TermBlockMerger {
    private var sources: [TermBlockSource]
    private var heap = IndexHeap()

    init(_ sources: [TermBlockSource]) {
        self.sources = sources
        for s in sources.indices where sources[s].entry != nil { heap.push(s, sources, by: Self.precedes) }
    }

    /// Calls `body` with each term and its blocks' bounds and values, until it returns false.
    mutating func forEachTerm(
        _ body: (UnsafeRawBufferPointer, [UInt32], [UnsafeRawBufferPointer]) throws -> Bool
    ) throws {
        var bounds: [UInt32] = []
        var values: [UnsafeRawBufferPointer] = []
        while let first = heap.first, let term = sources[first].term {
            bounds.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            while let top = heap.first, isTerm(top, term) {
                repeat {
                    bounds.append(sources[top].bound)
                    values.append(sources[top].entry!.value)
                    try sources[top].advance()
                } while isTerm(top, term)
                if sources[top].entry == nil {
                    heap.removeFirst(sources, by: Self.precedes)
                } else {
                    heap.firstMoved(sources, by: Self.precedes)
                }
            }
            guard try body(term, bounds, values) else { return }
        }
    }

    /// By current term, then by source (the main blocks, then the segments in order).
    private static func precedes(_ sources: [TermBlockSource], _ a: Int, _ b: Int) -> Bool {
        let order = KeyRange.compare(sources[a].term!, sources[b].term!)
        return order < 0 || (order == 0 && a < b)
    }

    private func isTerm(_ source: Int, _ term: UnsafeRawBufferPointer) -> Bool {
        sources[source].term.map { KeyRange.compare($0, term) == 0 } ?? false
    }
}

/// A term's blocks written again as one run: a single block as it is; several (a chunk's each,
/// the segments', a small last one) cut into blocks that end just short of a page boundary when
/// the run is long (``SearchPostings/largeRun``: LMDB puts each on overflow pages of its own,
/// filled but for the last), else into leaf-sized blocks.
struct TermBlockCutter {
    let pageSize: Int
    private var encoder = PostingListEncoder()
    private var key: [UInt8] = []
    private var value: [UInt8] = []

    init(pageSize: Int) { self.pageSize = pageSize }

    /// The size a large block ends below: whole overflow pages of about
    /// ``SearchPostings/largeBlock`` bytes (one page), less the first page's 16-byte header.
    static func largeLimit(pageSize: Int) -> Int { max(1, SearchPostings.largeBlock / pageSize) * pageSize - 16 }

    mutating func write(
        _ term: UnsafeRawBufferPointer, _ bounds: [UInt32], _ values: [UnsafeRawBufferPointer],
        _ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if values.count == 1 {
            SearchDatabases.setPostingKey(&key, term, bounds[0])
            return try key.withUnsafeBytes { try emit($0, values[0]) }
        }
        let total = values.reduce(0) { $0 + $1.count }
        let limit = total >= SearchPostings.largeRun
            ? Self.largeLimit(pageSize: pageSize) : SearchPostings.blockLimit(term: term.count)
        encoder.removeAll()
        for block in values {
            try PostingBlock.forEachPosting(in: block) { document, groups in
                // The encoder's byte count is at least the finished list's size.
                if encoder.documentCount > 0, encoder.byteCount + groups.count + 5 > limit { try flush(emit) }
                if encoder.documentCount == 0 { SearchDatabases.setPostingKey(&key, term, document) }
                encoder.append(document: document, encodedGroups: groups)
            }
        }
        try flush(emit)
    }

    private mutating func flush(_ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        guard encoder.documentCount > 0 else { return }
        value.removeAll(keepingCapacity: true)
        encoder.finish(into: &value)
        encoder.removeAll()
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { try emit(k, $0) } }
    }
}
