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
    /// again as one run (``LargeBlockRun``).
    static func compact<T: WritableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, directory: String, reblocking: Bool = false
    ) throws -> Outcome {
        let before = try txn.statistics(of: database)
        var outcome = Outcome(bytesBefore: before.bytes, bytesAfter: before.bytes)
        let packed = try packedPages(database, txn, pageSize: before.pageSize)
        guard Double(packed) <= worthwhileShare * Double(before.branchPages + before.leafPages + before.overflowPages)
        else { return outcome }
        let file = try SpillFile(directory: directory)
        try file.appendPairs { emit in
            guard reblocking else {
                for entry in txn.entries(in: database) { try emit(entry.key, entry.value) }
                return
            }
            var run = LargeBlockRun()
            for entry in txn.entries(in: database) {
                if try !run.add(entry.key, entry.value, pageSize: before.pageSize) {
                    try run.flush(pageSize: before.pageSize, emit)
                    if try !run.add(entry.key, entry.value, pageSize: before.pageSize) { try emit(entry.key, entry.value) }
                }
            }
            try run.flush(pageSize: before.pageSize, emit)
        }
        try txn.checkIntact()
        try txn.removeAll(in: database)
        let arena = try file.mapped()
        try SpillFile.forEachPair(in: arena, size: file.size) { key, value in
            try txn.put(value, forKey: key, in: database, flags: .append)
        }
        outcome.bytesAfter = try txn.statistics(of: database).bytes
        return outcome
    }

    /// About the pages `database`'s entries take when written in key order: leaf nodes (an
    /// 8-byte header, the key and the value, or an overflow page number for a value too large
    /// for a leaf, and a 2-byte slot) packed into pages, overflow values in pages of their own,
    /// and a branch page per hundred leaves.
    static func packedPages<T: ReadableTransaction & ~Copyable>(
        _ database: Database, _ txn: borrowing T, pageSize: Int
    ) throws -> Int {
        let header = 16
        let largestNode = ((pageSize - header) / 2) & ~1 - 2
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
struct LargeBlockRun {
    private var term: [UInt8] = []
    private var firstKey: [UInt8] = []
    private var blocks: [[UInt8]] = []

    /// The pages a re-cut block fills.
    static let blockPages = SearchPostings.largeBlock / 4096

    /// Adds a block of the run (a large block of its term, or the first large one when the run
    /// is empty); false when it is not one (then the caller flushes and writes it as it is).
    mutating func add(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, pageSize: Int) throws -> Bool {
        guard value.count + 8 + key.count > ((pageSize - 16) / 2) & ~1 - 2, key.count > 5, key[key.count - 5] == 0 else {
            return false
        }
        let blockTerm = key.prefix(key.count - 5)
        if blocks.isEmpty {
            term = Array(blockTerm)
            firstKey = Array(key)
        } else if !blockTerm.elementsEqual(term) {
            return false
        }
        blocks.append(Array(value))
        return true
    }

    /// Writes the run: one block as it was; several as one list cut into blocks of
    /// ``blockPages`` overflow pages (the first keeps its key, the others are keyed by their
    /// first document).
    mutating func flush(pageSize: Int, _ emit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        defer { blocks.removeAll() }
        guard blocks.count > 1 else {
            if let only = blocks.first { try firstKey.withUnsafeBytes { k in try only.withUnsafeBytes { try emit(k, $0) } } }
            return
        }
        // The encoder's byte count is at least the list's size; an overflow value has a 16-byte
        // page header before it.
        let limit = Self.blockPages * pageSize - 16
        var writer = PostingListEncoder()
        writer.reserve(limit)
        var key = firstKey
        var value: [UInt8] = []
        func write() throws {
            value.removeAll(keepingCapacity: true)
            writer.finish(into: &value)
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { try emit(k, $0) } }
        }
        for bytes in blocks {
            let block = try bytes.withUnsafeBytes { try PostingBlock($0) }
            try block.forEach { document, groups in
                if writer.documentCount > 0, writer.byteCount + groups.count + 5 > limit {
                    try write()
                    key = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, document) }
                }
                writer.append(document: document, encodedGroups: groups)
            }
        }
        if writer.documentCount > 0 { try write() }
    }
}

extension Store {
    /// Compacts `collection`'s posting blocks, and its document and number entries (their pages
    /// split too, a chunk's new entries landing among the stored ones), when worthwhile
    /// (``SearchCompaction``) and when a bulk load that
    /// wrote `written` records is a large enough part of its index: at least a quarter of the
    /// indexed documents, so that a load's compaction costs a bounded share of what it wrote
    /// (a small load into a large store neither scans nor rewrites the large index). Returns
    /// nil when it did not look.
    @available(*, noasync)
    func compactSearchPostingsAfterLoad<V>(_ collection: StoreCollection<V>, written: Int) throws
        -> SearchCompaction.Outcome?
    {
        guard collection.search != nil, written > 0 else { return nil }
        let c = try resolvedForWrite(collection)
        guard let dbs = c.search else { return nil }
        return try writeNow { txn -> SearchCompaction.Outcome? in
            let state = try SearchIndexWriter.loadState(dbs, txn.lmdb)
            guard UInt64(written) * 4 >= state.documents else { return nil }
            var total = SearchCompaction.Outcome(bytesBefore: 0, bytesAfter: 0)
            for database in [dbs.postings, dbs.documents, dbs.numbers] {
                let outcome = try SearchCompaction.compact(
                    database, txn.lmdb, directory: path, reblocking: database == dbs.postings)
                total.bytesBefore += outcome.bytesBefore
                total.bytesAfter += outcome.bytesAfter
            }
            return total
        }
    }
}
