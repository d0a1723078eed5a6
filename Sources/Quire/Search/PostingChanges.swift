internal import QuireLMDB
import QuireText

/// Changes to the postings of stored blocks — a document's occurrences of a term set or
/// removed — gathered over a write and then written block by block: each block that holds
/// changed documents is decoded, changed and encoded once, whatever the number of its documents
/// the write changed.
///
/// A batch that re-indexes documents already in the index (a load of records that are stored
/// already) changed every block of every term of each document one document at a time: a
/// frequent term's 24 KiB block was decoded and encoded again for each of them (2.4 ms a
/// document).
struct PostingChanges {
    private struct Change {
        var term: Range<Int>
        var number: UInt32
        /// The document's groups in ``PostingChanges/groupBytes``; nil removes its posting.
        var groups: Range<Int>?
    }

    private var changes: [Change] = []
    private var termBytes: [UInt8] = []
    private var groupBytes: [UInt8] = []

    /// Sets document `number`'s occurrences of the term keyed `keyTerm` (a segment's prefix and
    /// the term, or the term): added, or replacing the ones it had.
    mutating func set(_ keyTerm: some Collection<UInt8>, _ number: UInt32, groups: some Collection<UInt8>) {
        let start = groupBytes.count
        groupBytes.append(contentsOf: groups)
        changes.append(Change(term: appendTerm(keyTerm), number: number, groups: start..<groupBytes.count))
    }

    /// Removes document `number`'s posting of the term keyed `keyTerm`, if it has one.
    mutating func remove(_ keyTerm: some Collection<UInt8>, _ number: UInt32) {
        changes.append(Change(term: appendTerm(keyTerm), number: number, groups: nil))
    }

    private mutating func appendTerm(_ keyTerm: some Collection<UInt8>) -> Range<Int> {
        let start = termBytes.count
        termBytes.append(contentsOf: keyTerm)
        return start..<termBytes.count
    }

    /// Writes the changes into `database`'s blocks, a block at a time in key order, and forgets them.
    mutating func apply<T: WritableTransaction & ~Copyable>(in database: Database, _ txn: borrowing T) throws {
        guard !changes.isEmpty else { return }
        defer {
            changes.removeAll(keepingCapacity: true)
            termBytes.removeAll(keepingCapacity: true)
            groupBytes.removeAll(keepingCapacity: true)
        }
        let order = sortedOrder()
        let cursor = try txn.cursor(in: database)
        var block: [Change] = []
        var i = 0
        while i < order.count {
            let first = changes[order[i]]
            let term = Array(termBytes[first.term])
            let place = try SearchPostings.place(of: first.number, term, cursor: cursor)
            block.removeAll(keepingCapacity: true)
            // This block's changes: the same term, numbers below the term's next block.
            while i < order.count {
                let change = changes[order[i]]
                guard change.term == first.term || termBytes[change.term].elementsEqual(term),
                    place.nextBound.map({ change.number < $0 }) ?? true
                else { break }
                block.append(change)
                i += 1
            }
            try write(block, into: place.block, term: term, in: database, txn)
        }
    }

    /// The changes' positions by term, then document number, then the order they were made in.
    private func sortedOrder() -> [Int] {
        termBytes.withUnsafeBytes { bytes in
            changes.indices.sorted { a, b in
                let (x, y) = (changes[a], changes[b])
                if x.term != y.term {
                    let order = KeyRange.compare(
                        UnsafeRawBufferPointer(rebasing: bytes[x.term]), UnsafeRawBufferPointer(rebasing: bytes[y.term]))
                    if order != 0 { return order < 0 }
                }
                return x.number != y.number ? x.number < y.number : a < b
            }
        }
    }

    /// Applies `block`'s changes (one term's, all within one stored block's range, or below
    /// the term's first block when `stored` is nil) and writes the result.
    private func write<T: WritableTransaction & ~Copyable>(
        _ block: [Change], into stored: (key: [UInt8], value: [UInt8])?, term: [UInt8], in database: Database,
        _ txn: borrowing T
    ) throws {
        let limit = SearchPostings.blockLimit(term: term.count)
        var postings = try stored.map { found in try found.value.withUnsafeBytes { try PostingBlock($0) } } ?? PostingBlock()
        var key = stored?.key
        var cap = (stored?.value.count ?? 0) > limit ? 2 * SearchPostings.largeBlock : limit
        if let stored, stored.value.count >= limit, let last = postings.documents.last,
            block.allSatisfy({ $0.groups != nil && $0.number > last })
        {
            // Past a full block: the new documents start a block of their own, the full one stays packed.
            (postings, key, cap) = (PostingBlock(), nil, limit)
        }
        groupBytes.withUnsafeBytes { groups in
            for change in block {
                if let range = change.groups {
                    postings.set(change.number, groups: UnsafeRawBufferPointer(rebasing: groups[range]))
                } else {
                    postings.remove(change.number)
                }
            }
        }
        guard let firstDocument = postings.documents.first else {
            if let key { try txn.delete(key, in: database) }
            return
        }
        let blockKey = key ?? term.withUnsafeBufferPointer { SearchDatabases.postingKey($0, firstDocument) }
        try SearchPostings.store(postings, under: blockKey, term: term, cap: cap, in: database, txn)
    }
}
