internal import QuireLMDB

/// The posting segments of a full-text index: the postings of each bulk chunk written into an
/// index that already had postings, keyed apart from the main blocks until the load ends and
/// merges them in (``SearchSegmentMerge``).
///
/// A chunk's runs, written among the stored terms, touched the last block of most terms on most
/// leaf pages of `s:<c>:post`: each commit copied and wrote most of the tree again (≈ 300 MB a
/// commit at 1M articles), and the dirty pages of a commit grew with the index. A segment's keys
/// are `0xFF start term 0x00 bound`, `start` the big-endian number of the segment's first
/// document: above every term (UTF-8 never has the byte `0xFF`) and above every older segment,
/// so a chunk appends its runs with `MDB_APPEND` and touches no stored page.
///
/// A segment holds the documents numbered from its start up to the next segment's start; the
/// main blocks hold those below the first segment's. Reading a term's main blocks and then each
/// segment's in order gives its postings in ascending document order, so a query walks them as
/// one list. Documents indexed later, one by one or in a group commit, go into the source that
/// owns their number (``owner(of:in:)``): new documents into the last segment.
enum SearchSegments {
    /// The first byte of a segment's keys.
    static let marker: UInt8 = 0xFF

    /// The `0xFF start` prefix of a segment's keys.
    static func prefix(_ start: UInt32) -> [UInt8] {
        var out: [UInt8] = [marker]
        SearchDatabases.appendNumber(start, to: &out)
        return out
    }

    /// The key term of `term` in the segment starting at `start`, or `term` itself in the main
    /// blocks (`start` nil): the bytes before `0x00 bound` in its blocks' keys.
    static func keyTerm(_ term: some Collection<UInt8>, in start: UInt32?) -> [UInt8] {
        guard let start else { return Array(term) }
        var out = prefix(start)
        out.append(contentsOf: term)
        return out
    }

    /// The segment and term of a block key's term part (the key without `0x00 bound`); nil for a
    /// segment key too short to hold a start.
    static func split(_ keyTerm: UnsafeRawBufferPointer) -> (start: UInt32?, term: UnsafeRawBufferPointer)? {
        guard keyTerm.first == marker else { return (nil, keyTerm) }
        guard let start = SearchDatabases.number(keyTerm, at: 1) else { return nil }
        return (start, UnsafeRawBufferPointer(rebasing: keyTerm[5...]))
    }

    /// The starts of the segments that have blocks, ascending: a seek a segment.
    static func starts(_ cursor: Cursor) throws -> [UInt32] {
        var starts: [UInt32] = []
        var target: [UInt8] = [marker]
        while let entry = try cursor.seek(atLeast: target), entry.key.first == marker,
            let start = SearchDatabases.number(entry.key, at: 1)
        {
            starts.append(start)
            guard start < .max else { break }
            target = prefix(start + 1)
        }
        return starts
    }

    /// The segment that owns document `number` (the one with the greatest start at or below it),
    /// nil when the main blocks do.
    static func owner(of number: UInt32, in starts: [UInt32]) -> UInt32? {
        var low = 0
        var high = starts.count
        while low < high {
            let mid = (low + high) / 2
            if starts[mid] <= number { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : starts[low - 1]
    }
}
