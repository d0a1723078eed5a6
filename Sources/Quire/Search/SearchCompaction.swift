internal import QuireLMDB
import QuireText

/// Rewrites a full-text index's posting blocks in key order, packed, when their pages have
/// come to be mostly empty.
///
/// A bulk chunk's postings land between the stored ones of every term it has (a term's new
/// documents go after its old ones, before the next term), so after a few chunks most leaf
/// pages have been split in halves: a 100,000-article bulk insert in 25,000-record chunks
/// leaves 363 bytes of entries an article on 572 bytes of pages. Written again in key order
/// with `MDB_APPEND`, LMDB fills each page before it starts the next. The rewrite goes through a
/// temporary file (the blocks are copied out, the database is emptied, the blocks appended
/// back), in one write transaction: a reader sees the old pages or the new ones, never a mix,
/// and the keys and values are the same bytes, so nothing else of the index changes.
enum SearchCompaction {
    /// Compacted when packed pages would be at most this share of the pages used now.
    static let worthwhileShare = 0.8

    /// What a compaction found and did: the database's bytes in pages before and after (equal
    /// when it was packed enough to leave alone).
    struct Outcome: Equatable {
        var bytesBefore: Int
        var bytesAfter: Int
        var rewritten: Bool { bytesAfter != bytesBefore }
    }

    /// Compacts `database` when worthwhile; `directory` holds the temporary file. With
    /// `reblocking` (the postings), a term's consecutive blocks on overflow pages are cut
    /// again as one run (``LargeBlockRun``). `isCancelled`, polled every few thousand entries,
    /// stops it with `CancellationError`: the caller's transaction is then aborted, and the
    /// database stays as it was.
    static func compact<T: WritableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, directory: String, reblocking: Bool = false,
        isCancelled: (() -> Bool)? = nil
    ) throws -> Outcome {
        var poll = CancellationPoll(every: 4_096)
        let before = try txn.statistics(of: database)
        var outcome = Outcome(bytesBefore: before.bytes, bytesAfter: before.bytes)
        let packed = try packedPages(database, txn, pageSize: before.pageSize)
        guard Double(packed) <= worthwhileShare * Double(before.branchPages + before.leafPages + before.overflowPages)
        else { return outcome }
        let file = try SpillFile(directory: directory)
        try file.appendPairs { emit in
            guard reblocking else {
                for entry in txn.entries(in: database) {
                    try poll.step(isCancelled)
                    try emit(entry.key, entry.value)
                }
                return
            }
            var run = LargeBlockRun(pageSize: before.pageSize)
            for entry in txn.entries(in: database) {
                try poll.step(isCancelled)
                if try !run.add(entry.key, entry.value, emit) {
                    try run.flush(emit)
                    if try !run.add(entry.key, entry.value, emit) { try emit(entry.key, entry.value) }
                }
            }
            try run.flush(emit)
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

/// A term's consecutive posting blocks too large for a leaf page, cut again as one run into
/// blocks that end just short of a page boundary. Each chunk of a load writes a frequent term's
/// new postings as blocks of their own, and each of those leaves its last overflow page part
/// empty (12 bytes an article on the news corpus); cut again, only the run's last block does.
/// Streamed: it holds the first block (a run of one is written as it was) and the block being
/// cut, whatever the term's length.
struct LargeBlockRun {
    let pageSize: Int
    private var term: [UInt8] = []
    private var key: [UInt8] = []
    private var first: [UInt8]?
    private var writer = PostingListEncoder()
    private var value: [UInt8] = []
    private var cutting = false

    init(pageSize: Int) { self.pageSize = pageSize }

    /// The size a re-cut block ends below: whole overflow pages of about ``SearchPostings/largeBlock``
    /// bytes, less the first page's 16-byte header.
    private var limit: Int { max(1, SearchPostings.largeBlock / pageSize) * pageSize - 16 }

    /// Adds a block to the run, writing what it completes; false when the block is not one of
    /// the run (not on overflow pages, or another term's): then the caller flushes the run and
    /// adds it again (a start of a new run) or writes it as it is.
    mutating func add(
        _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer,
        _ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        guard value.count + 8 + key.count > SearchCompaction.largestLeafNode(pageSize: pageSize), key.count > 5,
            key[key.count - 5] == 0
        else { return false }
        let blockTerm = key.prefix(key.count - 5)
        guard first != nil || cutting else {
            term = Array(blockTerm)
            self.key = Array(key)
            first = Array(value)
            return true
        }
        guard blockTerm.elementsEqual(term) else { return false }
        if let held = first {
            first = nil
            cutting = true
            writer.reserve(limit)
            try held.withUnsafeBytes { try cut($0, emit) }
        }
        try cut(value, emit)
        return true
    }

    /// Feeds one block's documents to the writer, writing each block it fills.
    private mutating func cut(
        _ bytes: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try PostingBlock(bytes).forEach { document, groups in
            // The encoder's byte count is at least the finished list's size.
            if writer.documentCount > 0, writer.byteCount + groups.count + 5 > limit {
                try write(emit)
                key = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, document) }
            }
            writer.append(document: document, encodedGroups: groups)
        }
    }

    private mutating func write(_ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        value.removeAll(keepingCapacity: true)
        writer.finish(into: &value)
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { try emit(k, $0) } }
    }

    /// Ends the run: a single block as it was (under its key), else the last cut block.
    mutating func flush(_ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        if let held = first {
            try key.withUnsafeBytes { k in try held.withUnsafeBytes { try emit(k, $0) } }
        } else if cutting, writer.documentCount > 0 {
            try write(emit)
        }
        first = nil
        cutting = false
    }
}

extension Store {
    /// Compacts `collection`'s posting blocks, and its document and number entries (their pages
    /// split too, a chunk's new entries landing among the stored ones), when worthwhile
    /// (``SearchCompaction``) and when a bulk load that
    /// wrote `written` records is a large enough part of its index: at least a quarter of the
    /// indexed documents, so that a load's compaction costs a bounded share of what it wrote
    /// (a small load into a large store neither scans nor rewrites the large index). Returns
    /// nil when it did not look. `isCancelled` true stops it, the index left as it was.
    @available(*, noasync)
    func compactSearchIndexAfterLoad<V>(
        _ collection: StoreCollection<V>, written: Int, isCancelled: (() -> Bool)? = nil
    ) throws -> SearchCompaction.Outcome? {
        guard collection.search != nil, written > 0 else { return nil }
        let c = try resolvedForWrite(collection)
        guard let dbs = c.search else { return nil }
        return try writeNow { txn -> SearchCompaction.Outcome? in
            let state = try SearchState.stored(dbs, txn.lmdb)
            guard UInt64(written) * 4 >= state.documents else { return nil }
            var total = SearchCompaction.Outcome(bytesBefore: 0, bytesAfter: 0)
            for database in [dbs.postings, dbs.documents, dbs.numbers] {
                let outcome = try SearchCompaction.compact(
                    database, txn.lmdb, directory: path, reblocking: database == dbs.postings, isCancelled: isCancelled)
                total.bytesBefore += outcome.bytesBefore
                total.bytesAfter += outcome.bytesAfter
            }
            return total
        }
    }
}
