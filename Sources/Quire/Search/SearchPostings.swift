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

    /// A bulk run of a term at least this long is written as large blocks (of about
    /// ``largeBlock`` bytes) on overflow pages: LMDB gives such a value whole pages of its own,
    /// filled but for the last, where a leaf page that splits is left half empty. A frequent
    /// term's postings, most of the index's bytes, are packed that way.
    static let largeRun = 8 << 10
    static let largeBlock = 24 << 10

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

    /// Sets `number`'s occurrences of `term` (adding the posting or replacing it); a block
    /// that grows past ``blockLimit(term:)`` is split in two.
    static func set<T: WritableTransaction & ~Copyable>(
        _ term: [UInt8], _ number: UInt32, groups: UnsafeRawBufferPointer, in database: Database,
        _ txn: borrowing T
    ) throws {
        let limit = blockLimit(term: term.count)
        guard let found = try block(term, at: number, in: database, txn) else {
            // Before the term's first block, or the term's first posting: a block of its own.
            var writer = PostingListEncoder()
            writer.append(document: number, encodedGroups: groups)
            var value: [UInt8] = []
            writer.finish(into: &value)
            let key = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
            try txn.put(value, forKey: key, in: database)
            return
        }
        var block = try found.value.withUnsafeBytes { try PostingBlock($0) }
        if let last = block.documents.last, number > last, found.value.count >= limit {
            // Past a full block: start the next one (it ends below the following block's key,
            // since `found` is the greatest key at or below `number`).
            var writer = PostingListEncoder()
            writer.append(document: number, encodedGroups: groups)
            var value: [UInt8] = []
            writer.finish(into: &value)
            let key = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, number) }
            try txn.put(value, forKey: key, in: database)
            return
        }
        block.set(number, groups: groups)
        // A large block splits when it doubles; a leaf-sized one when it leaves its leaf.
        let cap = found.value.count > limit ? 2 * largeBlock : limit
        try store(block, under: found.key, term: term, cap: cap, in: database, txn)
    }

    /// Removes `number`'s posting of `term`; returns whether there was one.
    @discardableResult
    static func remove<T: WritableTransaction & ~Copyable>(
        _ term: [UInt8], _ number: UInt32, in database: Database, _ txn: borrowing T
    ) throws -> Bool {
        guard let found = try block(term, at: number, in: database, txn) else { return false }
        var block = try found.value.withUnsafeBytes { try PostingBlock($0) }
        guard block.remove(number) else { return false }
        if block.isEmpty {
            try txn.delete(found.key, in: database)
        } else {
            try txn.put(block.encoded(), forKey: found.key, in: database)
        }
        return true
    }

    /// Writes `block` under `key`, or as two halves when it grew past the limit (the second half
    /// keyed by its first document).
    private static func store<T: WritableTransaction & ~Copyable>(
        _ block: PostingBlock, under key: [UInt8], term: [UInt8], cap: Int, in database: Database, _ txn: borrowing T
    ) throws {
        let value = block.encoded()
        guard value.count > cap, block.documents.count > 1 else {
            try txn.put(value, forKey: key, in: database)
            return
        }
        var first = block
        var second = block
        let middle = block.documents.count / 2
        for d in block.documents[middle...] { first.remove(d) }
        for d in block.documents[..<middle] { second.remove(d) }
        try txn.put(first.encoded(), forKey: key, in: database)
        let secondKey = term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, second.documents[0]) }
        try txn.put(second.encoded(), forKey: secondKey, in: database)
    }

    /// What ``appendRun(_:runBytes:in:_:cursor:appending:buffers:_:)`` reuses from one term to
    /// the next (a bulk chunk appends a run for each of its hundred thousand terms or so).
    struct RunBuffers {
        var encoder = PostingListEncoder()
        var value: [UInt8] = []
        var key: [UInt8] = []
        var target: [UInt8] = []
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
            // Blocks of equal size, each at least largeBlock / 2 when there are several.
            let count = max(1, runBytes / largeBlock)
            limit = runBytes / count + 64
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
