internal import QuireLMDB
import QuireText

/// The posting blocks of `s:<c>:post` and the changes made to them in a write transaction
/// (docs/SEARCH.md, "Layout"): each entry is one term's postings for a range of document numbers,
/// keyed `term 0x00 lowerBound`, where `lowerBound` (big-endian `UInt32`) is at most the block's
/// first document and above the previous block's last one. A term's postings are one short key
/// range of blocks, each a self-contained QuireText posting list.
enum SearchPostings {
    /// The largest value a block grows to (a single document's occurrences may exceed it): below
    /// LMDB's largest node on a 4 KiB page (2,038 bytes with the node header and the key), so a
    /// block stays on its leaf page instead of taking whole overflow pages.
    static func blockLimit(term: Int) -> Int { 2_000 - 8 - (term + 5) }

    /// A bulk run of a term at least this long is written as large blocks on overflow pages:
    /// LMDB gives such a value whole pages of its own, where a leaf page that splits is left half
    /// empty. A frequent term's postings are packed that way.
    static let largeRun = 8 << 10
    /// The size of a large block: one overflow page, filled (``TermBlockCutter/largeLimit(pageSize:)``).
    /// Blocks of several pages (24 KiB until the thirty-fourth session) need runs of contiguous
    /// free pages, which LMDB searches its free list for at every allocation: at 10M articles that
    /// search was most of the time of a load's final merge.
    static let largeBlock = 4 << 10

    /// The block holding, or due to hold, `number`: the term's entry with the greatest key at or
    /// below `term 0x00 number`; nil when the term has none there.
    static func block<T: ReadableTransaction & ~Copyable>(
        _ term: [UInt8], at number: UInt32, in database: Database, _ txn: borrowing T
    ) throws -> (key: [UInt8], value: [UInt8])? {
        try block(term, at: number, cursor: try txn.cursor(in: database))
    }

    /// ``block(_:at:in:_:)`` through an open cursor of the postings.
    static func block(_ term: [UInt8], at number: UInt32, cursor: Cursor) throws -> (key: [UInt8], value: [UInt8])? {
        let target = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
        return try lastBlockEntry(term[...], below: target, cursor: cursor, maximumBytes: .max).map {
            ($0.keyBytes, $0.valueBytes)
        }
    }

    /// Where document `number`'s posting of `term` is, or is due to go: the term's block with the
    /// greatest key at or below it (nil when there is none: before the term's first block, or a
    /// term without blocks), and the bound of the term's next block (nil when there is none).
    static func place(of number: UInt32, _ term: [UInt8], cursor: Cursor) throws
        -> (block: (key: [UInt8], value: [UInt8])?, nextBound: UInt32?)
    {
        let target = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
        let atLeast = try cursor.seek(atLeast: target)
        var found: Entry?
        var next: Entry?
        if let exact = atLeast, exact.key.elementsEqual(target) {
            found = exact
            next = try cursor.next()
        } else {
            next = atLeast
            let before = atLeast == nil ? try cursor.last() : try cursor.previous()
            if let before, isBlockKey(before.key, of: term[...]) { found = before }
        }
        let nextBound = next.flatMap { isBlockKey($0.key, of: term[...]) ? SearchDatabases.postingNumber($0.key) : nil }
        return (found.map { ($0.keyBytes, $0.valueBytes) }, nextBound)
    }

    /// Writes `block` under `key`, or, when it grew past `cap`, cut into as many parts of equal
    /// document counts as it takes (each after the first keyed by its first document).
    static func store<T: WritableTransaction & ~Copyable>(
        _ block: PostingBlock, under key: [UInt8], term: [UInt8], cap: Int, in database: Database, _ txn: borrowing T
    ) throws {
        let value = block.encoded()
        let count = block.documents.count
        guard value.count > cap, count > 1 else {
            try txn.put(value, forKey: key, in: database)
            return
        }
        let parts = min(count, max(2, (value.count + cap - 1) / cap))
        for p in 0..<parts {
            let range = (p * count / parts)..<((p + 1) * count / parts)
            let partKey = p == 0 ? key : term.withUnsafeBufferPointer {
                SearchDatabases.postingKey($0, block.documents[range.lowerBound])
            }
            try txn.put(block.encoded(documents: range), forKey: partKey, in: database)
        }
    }

    /// What ``appendRun(_:runBytes:in:_:cursor:appending:buffers:_:)`` reuses from one term to
    /// the next (a bulk chunk appends a run for each of its hundred thousand terms or so).
    struct RunBuffers {
        var encoder = PostingListEncoder()
        var value: [UInt8] = []
        var key: [UInt8] = []
        var target: [UInt8] = []
        /// The most bytes of a large block on the database's pages.
        let largeLimit: Int

        init(pageSize: Int) { largeLimit = TermBlockCutter.largeLimit(pageSize: pageSize) }
    }

    /// Appends a bulk run of `term`'s postings (about `runBytes` long), all above every
    /// document the term has: a long run in large blocks, a short one first into the term's
    /// last block while that is small, then in leaf-sized blocks. `forEach` yields the run's
    /// documents in ascending order with their groups.
    ///
    /// `cursor` is a cursor of the postings (reused across runs: opening one costs more than a
    /// seek); with `appending`, the run's keys are above every stored key (the term sorts after
    /// every stored term): they are put with `MDB_APPEND`, which fills pages instead of splitting
    /// them in halves.
    static func appendRun<T: WritableTransaction & ~Copyable>(
        _ term: ArraySlice<UInt8>, runBytes: Int, in database: Database, _ txn: borrowing T, cursor: Cursor,
        appending: Bool, buffers: inout RunBuffers,
        _ forEach: ((UInt32, UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        var limit = blockLimit(term: term.count)
        buffers.encoder.removeAll()
        var hasKey = false
        if runBytes >= largeRun {
            limit = buffers.largeLimit  // each block fills its page; the run's last may be shorter
        } else if !appending {
            SearchDatabases.setPostingKey(&buffers.target, term, .max)
            if let last = try lastBlockEntry(term, below: buffers.target, cursor: cursor, maximumBytes: limit / 2) {
                // Continued as stored: its bytes copied, not its postings decoded and encoded again.
                do {
                    try buffers.encoder.resume(from: last.value)
                } catch {
                    throw StoreError(.corrupted, "search index: posting block of a term: \(error)")
                }
                buffers.key.removeAll(keepingCapacity: true)
                buffers.key.append(contentsOf: last.key)
                hasKey = true
            }
        }
        func flush() throws {
            guard hasKey, buffers.encoder.documentCount > 0 else { return }
            buffers.value.removeAll(keepingCapacity: true)
            buffers.encoder.finish(into: &buffers.value)
            try txn.put(buffers.value, forKey: buffers.key, in: database, flags: appending ? .append : [])
            hasKey = false
        }
        try forEach { number, groups in
            if buffers.encoder.documentCount > 0, buffers.encoder.byteCount + groups.count + 5 > limit { try flush() }
            if !hasKey {
                SearchDatabases.setPostingKey(&buffers.key, term, number)
                hasKey = true
            }
            buffers.encoder.append(document: number, encodedGroups: groups)
        }
        try flush()
    }

    static func isBlockKey(_ key: UnsafeRawBufferPointer, of term: ArraySlice<UInt8>) -> Bool {
        key.count == term.count + 5 && key[term.count] == 0 && key.prefix(term.count).elementsEqual(term)
    }

    /// The term's block with the greatest key at or below `target` (the key of `term` at the
    /// last number), in place, when its value is shorter than `maximumBytes`.
    private static func lastBlockEntry(
        _ term: ArraySlice<UInt8>, below target: [UInt8], cursor: Cursor, maximumBytes: Int
    ) throws -> Entry? {
        let atLeast = try cursor.seek(atLeast: target)
        if let exact = atLeast, exact.key.elementsEqual(target) { return exact.value.count < maximumBytes ? exact : nil }
        let before = atLeast == nil ? try cursor.last() : try cursor.previous()
        guard let entry = before, isBlockKey(entry.key, of: term), entry.value.count < maximumBytes else { return nil }
        return entry
    }

    /// The number of documents in a stored block (its list header), without decoding it.
    static func documentCount(_ value: UnsafeRawBufferPointer) throws -> Int {
        var at = 0
        let count = try SearchVarint.read(value, &at)
        // Document numbers are UInt32: a larger count is damage (and could overflow a sum).
        guard count <= UInt64(UInt32.max) + 1 else { throw StoreError(.corrupted, "search index: a block of \(count) documents") }
        return Int(count)
    }
}
