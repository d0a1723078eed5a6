internal import QuireLMDB
import QuireText

/// Rewrites a full-text index's databases in key order, packed, when their pages have come to
/// be mostly empty.
///
/// A bulk chunk's entries land among the stored ones (document entries keyed by hashes, and
/// postings before segments: a 100,000-article bulk insert in 25,000-record chunks left 363
/// bytes of posting entries an article on 572 bytes of pages). Written again in key order with
/// `MDB_APPEND`, LMDB fills each page before it starts the next. `compact`
/// goes through a temporary file (the entries are copied out, the database is emptied, the
/// entries appended back), in one write transaction: a reader sees the old pages or the new
/// ones, never a mix, and the keys and values are the same bytes. The postings are rewritten
/// into the other posting database instead, in batches (`Store.rewritePostings`).
enum SearchCompaction {
    /// Compacted when packed pages would be at most this share of the pages used now.
    static let worthwhileShare = 0.8

    /// What a compaction found and did: the database's bytes in pages before and after (equal
    /// when it was packed enough to leave alone).
    struct Outcome: Equatable {
        var bytesBefore: Int
        var bytesAfter: Int
        /// Batches of a merge in place read on another thread while the one before was applied.
        var batchesReadAhead = 0
        var rewritten: Bool { bytesAfter != bytesBefore }
    }

    /// The largest database ``compact(_:_:directory:isCancelled:)`` rewrites: LMDB holds a copy
    /// of every page a transaction writes until it commits, so a larger one (the document
    /// entries of 10M articles take 320 MB) would cost its size in memory, for a few tens of
    /// percent of its disk.
    static let largestCompacted = 64 << 20

    /// Compacts `database` when worthwhile and no larger than ``largestCompacted``; `directory`
    /// holds the temporary file. `isCancelled`, polled every few thousand entries, stops it with
    /// `CancellationError`: the caller's transaction is then aborted, and the database stays as it was.
    static func compact<T: WritableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, directory: String, isCancelled: (() -> Bool)? = nil
    ) throws -> Outcome {
        var poll = CancellationPoll(every: 4_096)
        let before = try txn.statistics(of: database)
        var outcome = Outcome(bytesBefore: before.bytes, bytesAfter: before.bytes)
        guard before.bytes <= largestCompacted, try isWorthwhile(database, txn, before) else { return outcome }
        let file = try SpillFile(directory: directory)
        try file.appendPairs { emit in
            for entry in txn.entries(in: database) {
                try poll.step(isCancelled)
                try emit(entry.key, entry.value)
            }
        }
        try txn.checkIntact()
        try txn.removeAll(in: database)
        let arena = try file.mapped()
        try SpillFile.forEachPair(in: arena, size: file.size) { key, value in
            try poll.step(isCancelled)
            try txn.put(value, forKey: key, in: database, flags: .append)
        }
        outcome.bytesAfter = try txn.statistics(of: database).bytes
        return outcome
    }

    /// Whether `database`'s entries packed would take at most ``worthwhileShare`` of its pages.
    static func isWorthwhile<T: ReadableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, _ statistics: DatabaseStatistics
    ) throws -> Bool {
        let packed = try packedPages(database, txn, pageSize: statistics.pageSize)
        let used = statistics.branchPages + statistics.leafPages + statistics.overflowPages
        return Double(packed) <= worthwhileShare * Double(used)
    }

    /// The largest node LMDB keeps on a leaf page (header, key and value); a larger value goes
    /// to overflow pages of its own (2,038 bytes on 4 KiB pages).
    static func largestLeafNode(pageSize: Int) -> Int { ((pageSize - 16) / 2) & ~1 - 2 }

    /// About the pages `database`'s entries take when written in key order: leaf nodes (an
    /// 8-byte header, the key and the value, or an overflow page number for a value too large
    /// for a leaf, and a 2-byte slot) packed into pages, overflow values in pages of their own,
    /// and a branch page per hundred leaves.
    static func packedPages<T: ReadableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, pageSize: Int
    ) throws -> Int {
        let header = 16
        let largestNode = largestLeafNode(pageSize: pageSize)
        var leafBytes = 0
        var overflowPages = 0
        for entry in txn.entries(in: database) {
            let node = 8 + entry.key.count + entry.value.count
            if node > largestNode {
                leafBytes += 8 + entry.key.count + 8 + 2
                overflowPages += (header + entry.value.count + pageSize - 1) / pageSize
            } else {
                leafBytes += (node + 1) & ~1 + 2
            }
        }
        try txn.checkIntact()
        let leaves = (leafBytes + pageSize - header - 1) / (pageSize - header)
        return leaves + overflowPages + leaves / 100 + 1
    }
}

extension Store {
    /// Merges the segments the load's chunks wrote into the main blocks, in place
    /// (``SearchSegmentMerge``), then compacts `collection`'s posting blocks, and its document and
    /// number entries (their pages split too, a chunk's new entries landing among the stored
    /// ones), when worthwhile (``SearchCompaction``: mostly empty pages; a copy leaves the pages
    /// it copied free) and when a bulk load that wrote `written` records is a large enough part
    /// of its index: at least a quarter of the indexed documents, so that a load's compaction
    /// costs a bounded share of what it wrote (a small load into a large store neither scans nor
    /// rewrites the large index, unless its segments hold a quarter of the documents, as an
    /// interrupted large load's may). Returns nil when it did not look at compacting.
    /// `isCancelled` true stops it between entries: what committed stays, sound (a merge goes on
    /// from there next time), and the rest as it was.
    @available(*, noasync)
    func compactSearchIndexAfterLoad<V>(
        _ collection: StoreCollection<V>, written: Int, isCancelled: (() -> Bool)? = nil,
        betweenBatches: (() throws -> Void)? = nil, betweenMergeBatches: (() throws -> Void)? = nil,
        mergeBatchBytes: Int = mergeBatchBytes, segmentsMergedInPlace: Int = segmentsMergedInPlace
    ) throws -> SearchCompaction.Outcome? {
        guard collection.search != nil, written > 0 else { return nil }
        let c = try resolvedForWrite(collection)
        guard let dbs = c.search else { return nil }
        let (whole, inPlace) = try writeNow { txn -> (Bool, Bool) in
            let state = try SearchState.stored(dbs, txn.lmdb)
            // The segments may hold more than this load wrote (an interrupted load's before it).
            let postings = try dbs.postings(state)
            let starts = state.segmented ? try state.segmentKeys.starts(try txn.lmdb.cursor(in: postings)) : []
            let segmentDocuments = starts.first.map { UInt64(state.nextNumber - min($0, state.nextNumber)) } ?? 0
            let whole = max(UInt64(written), segmentDocuments) * 4 >= state.documents
            // Many segments are copied with the rest when the load is large enough to copy.
            return (whole, state.segmented && (!whole || state.merging || starts.count <= segmentsMergedInPlace))
        }
        let merged = inPlace
            ? try mergeSegments(dbs, batchBytes: mergeBatchBytes, isCancelled: isCancelled, betweenBatches: betweenMergeBatches)
            : nil
        guard whole else { return nil }
        // Packed again only when its pages are mostly empty: a copy leaves the pages it copied free.
        var total = try rewritePostings(dbs, isCancelled: isCancelled, betweenBatches: betweenBatches)
        if let merged { (total.bytesBefore, total.batchesReadAhead) = (merged.bytesBefore, merged.batchesReadAhead) }
        let entries = try writeNow { txn in
            try [dbs.documents, dbs.numbers].map {
                try SearchCompaction.compact($0, txn.lmdb, directory: path, isCancelled: isCancelled)
            }
        }
        for outcome in entries {
            total.bytesBefore += outcome.bytesBefore
            total.bytesAfter += outcome.bytesAfter
        }
        return total
    }

    /// Bytes of blocks appended a transaction when a compaction writes the other posting database.
    static let compactionBatchBytes = 16 << 20

    /// Bytes of blocks read from the segments a transaction when they are merged in place: a
    /// batch of rare terms touches a main leaf page every few dozen terms, so its transaction
    /// dirties more pages than it moves bytes (a 1M load's end peaked at 270 MiB with 16 MiB,
    /// 230 with 8, 214 with 4: as its chunks).
    static let mergeBatchBytes = 4 << 20

    /// The most segments a large load's end merges in place (above, it copies every block into
    /// the other posting database). A batch touches a page of every segment it reads from, so
    /// the merge writes about segments × batches pages, the square of their number. A 1M load has
    /// about 83 segments, a 10M load about 830: merged in place, its end leaves the file near its
    /// packed size (1.05× its JSON Lines against 1.2× after the copy, which leaves the segments'
    /// pages free), in about as long. Its memory stays that of a batch since batches stop inside
    /// a term (a common word's blocks at 10M articles are hundreds of megabytes; with whole
    /// terms, the load peaked at 271–277 MiB of anonymous memory during the merge).
    static let segmentsMergedInPlace = 1_024

    /// Merges the segments into the main blocks in place, a batch of terms a transaction
    /// (``SearchSegmentMerge/collectBatch(_:_:segments:keys:from:after:bytes:isCancelled:)`` and
    /// ``SearchSegmentMerge/applyBatch(_:_:_:segments:keys:from:isCancelled:)``), recording
    /// how far it came (``SegmentMergeProgress``: writes meanwhile route by it, and a merge that
    /// was stopped goes on from there); segments a load wrote meanwhile are merged after. The last
    /// batch clears the state's segment flag. `betweenBatches` runs before each batch.
    ///
    /// While a batch is applied, the next one is read on another thread from the snapshot before
    /// it (``PendingMergeBatch``): reading the segments' blocks is about a third of a merge.
    @available(*, noasync)
    private func mergeSegments(
        _ dbs: SearchDatabases, batchBytes: Int, isCancelled: (() -> Bool)?, betweenBatches: (() throws -> Void)?
    ) throws -> SearchCompaction.Outcome {
        var before: Int?
        var pending: PendingMergeBatch?
        var readAhead = 0
        // No thread reads the map past the merge's end (the store may close then).
        defer { _ = pending?.work.wait() }
        while true {
            try betweenBatches?()
            let batch = try writeNow { txn -> (done: Bool, bytes: Int) in
                var state = try SearchState.stored(dbs, txn.lmdb)
                let postings = try dbs.postings(state)
                let bytes = try txn.lmdb.statistics(of: postings).bytes
                let starts = state.segmented ? try state.segmentKeys.starts(try txn.lmdb.cursor(in: postings)) : []
                guard let newest = starts.last else {
                    if state.segmented || state.merging || state.lowSegments || state.mergingInsideTerm {
                        (state.segmented, state.merging, state.lowSegments, state.mergingInsideTerm) = (false, false, false, false)
                        try txn.lmdb.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
                    }
                    try txn.lmdb.delete(SearchDatabases.mergeKey, in: dbs.state)
                    return (true, bytes)
                }
                let progress = try SegmentMergeProgress.stored(dbs, txn.lmdb) ?? SegmentMergeProgress(last: newest, next: [])
                let segments = starts.filter { $0 <= progress.last }
                let ahead = pending.flatMap { $0.batch(for: progress, segments: segments, transaction: txn.lmdb.id) }
                if ahead != nil { readAhead += 1 }
                let batch = try ahead
                    ?? SearchSegmentMerge.collectBatch(
                        postings, txn.lmdb, segments: segments, keys: state.segmentKeys, from: progress.next,
                        bytes: batchBytes, isCancelled: isCancelled)
                pending = batch.next.map {
                    PendingMergeBatch(
                        store: self, postings, segments: segments, keys: state.segmentKeys, from: $0, last: progress.last,
                        bytes: batchBytes, during: txn.lmdb.id)
                }
                let next = try SearchSegmentMerge.applyBatch(
                    batch, postings, txn.lmdb, segments: segments, keys: state.segmentKeys, from: progress.next,
                    isCancelled: isCancelled)
                if let next {
                    try txn.lmdb.put(
                        SegmentMergeProgress(last: progress.last, next: next.term, nextSegment: next.segment).bytes,
                        forKey: SearchDatabases.mergeKey, in: dbs.state)
                } else {
                    try txn.lmdb.delete(SearchDatabases.mergeKey, in: dbs.state)  // the next pass: newer segments
                }
                if state.merging != (next != nil) || state.mergingInsideTerm != (next?.segment != nil) {
                    state.merging = next != nil
                    state.mergingInsideTerm = next?.segment != nil
                    try txn.lmdb.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
                }
                // Moved, not changed; but as with every write to the index, a copy in progress is void.
                try txn.lmdb.delete(SearchDatabases.rewriteKey, in: dbs.state)
                return (false, bytes)
            }
            if before == nil { before = batch.bytes }
            if batch.done { break }
        }
        let after = try read { snap in
            try snap.lmdb.statistics(of: try dbs.postings(try SearchState.stored(dbs, snap.lmdb))).bytes
        }
        return SearchCompaction.Outcome(bytesBefore: before ?? after, bytesAfter: after, batchesReadAhead: readAhead)
    }

    /// Writes the postings again, packed — the main blocks and the segments, each term's blocks
    /// cut again as one run — into the other posting database, ``compactionBatchBytes`` a
    /// transaction (one transaction's dirty pages, its anonymous memory, stay bounded whatever the
    /// index's size; LMDB holds a copy of each until the commit), then switches to it and empties
    /// the old one in one transaction. Readers see the old postings until the switch. When the
    /// index has no segments and its pages are packed enough, nothing is written.
    @available(*, noasync)
    private func rewritePostings(
        _ dbs: SearchDatabases, isCancelled: (() -> Bool)?, betweenBatches: (() throws -> Void)?
    ) throws -> SearchCompaction.Outcome {
        let file = try SpillFile(directory: path)
        // Marks this copy; a write to the index in between deletes the mark.
        let token = withUnsafeBytes(of: UInt64.random(in: .min ... .max)) { Array($0) }
        let copied = try writeNow { txn -> (bytes: Int, target: Database?) in
            let state = try SearchState.stored(dbs, txn.lmdb)
            let current = try dbs.postings(state)
            let before = try txn.lmdb.statistics(of: current)
            guard let target = dbs.otherPostings(state),
                try state.segmented || SearchCompaction.isWorthwhile(current, txn.lmdb, before)
            else { return (before.bytes, nil) }
            try file.appendPairs { emit in
                try SearchSegmentMerge.forEachMergedBlock(
                    current, txn.lmdb, keys: state.segmentKeys, includingMain: true, cutting: true, pageSize: before.pageSize,
                    isCancelled: isCancelled, emit)
            }
            try txn.lmdb.removeAll(in: target)  // what a compaction stopped part way left
            try txn.lmdb.put(token, forKey: SearchDatabases.rewriteKey, in: dbs.state)
            return (before.bytes, target)
        }
        let unchanged = SearchCompaction.Outcome(bytesBefore: copied.bytes, bytesAfter: copied.bytes)
        guard let target = copied.target else { return unchanged }
        let arena = try file.mapped()
        var poll = CancellationPoll(every: 4_096)
        var offset = 0
        /// Whether no write to the index came between this copy's transactions.
        func isCurrent(_ txn: borrowing StoreTransaction) throws -> Bool {
            try txn.lmdb.withValue(forKey: SearchDatabases.rewriteKey, in: dbs.state) { $0.elementsEqual(token) } == true
        }
        /// Empties the target: the postings stay where they are, as they were (still sound).
        /// Unless another compaction (another process's load end) finished in between and
        /// switched to the target: then it holds the postings, and the copy just stops.
        func abandon(_ txn: borrowing StoreTransaction) throws {
            guard try dbs.postings(try SearchState.stored(dbs, txn.lmdb)) != target else { return }
            try txn.lmdb.removeAll(in: target)
            try txn.lmdb.delete(SearchDatabases.rewriteKey, in: dbs.state)
        }
        do {
            while offset < file.size {
                try betweenBatches?()
                let next = try writeNow { txn -> Int? in
                    guard try isCurrent(txn) else {
                        try abandon(txn)
                        return nil
                    }
                    return try SpillFile.forEachPair(in: arena, size: file.size, from: offset, bytes: Self.compactionBatchBytes) {
                        key, value in
                        try poll.step(isCancelled)
                        try txn.lmdb.put(value, forKey: key, in: target, flags: .append)
                    }
                }
                guard let next else { return unchanged }
                offset = next
            }
            try betweenBatches?()
        } catch {
            _ = try? writeNow { txn in try abandon(txn) }
            throw error
        }
        return try writeNow { txn in
            guard try isCurrent(txn) else {
                try abandon(txn)
                return unchanged
            }
            var state = try SearchState.stored(dbs, txn.lmdb)
            let old = try dbs.postings(state)
            state.secondPostings.toggle()
            (state.segmented, state.lowSegments) = (false, false)
            try txn.lmdb.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
            try txn.lmdb.delete(SearchDatabases.rewriteKey, in: dbs.state)
            try txn.lmdb.removeAll(in: old)
            return .init(bytesBefore: copied.bytes, bytesAfter: try txn.lmdb.statistics(of: target).bytes)
        }
    }
}
