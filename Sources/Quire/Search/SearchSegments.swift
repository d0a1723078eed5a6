internal import QuireLMDB

/// The posting segments of a full-text index: the postings of each bulk chunk, keyed apart from
/// the main blocks until the load ends and merges them in (``SearchSegmentMerge``).
///
/// A chunk's runs, written among the stored terms, touched the last block of most terms on most
/// leaf pages of `s:<c>:post`: each commit copied and wrote most of the tree again (≈ 300 MB a
/// commit at 1M articles), and the dirty pages of a commit grew with the index. A segment's keys
/// are `marker start term 0x00 bound` (``SegmentKeys``), `start` the big-endian number of the
/// segment's first document: apart from every term and above every older segment, so a chunk
/// writes its runs in one place and touches no stored block.
///
/// A segment holds the documents numbered from its start up to the next segment's start; the
/// main blocks hold those below the first segment's. Reading a term's main blocks and then each
/// segment's in order gives its postings in ascending document order, so a query walks them as
/// one list. Documents indexed later, one by one or in a group commit, go into the source that
/// owns their number (``owner(of:in:)``): new documents into the last segment.
enum SearchSegments {
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

/// How far a merge of the segments into the main blocks has come (the `merge` entry of
/// `s:<c>:stat`: `last` big-endian, then `next`'s bytes, then, when it stopped inside `next`,
/// `0x00` and `nextSegment` big-endian; a term has no `0x00`): it merges the segments starting at
/// or below `last`, a batch of terms a transaction in term order, and the terms below `next` are
/// merged. Their postings of those segments' documents are in the main blocks; the segments hold
/// blocks of the other terms only, and newer segments (a load that started meanwhile) all terms.
/// A batch may stop inside a term whose blocks are more than a batch (a common word's, at 10M
/// articles, hundreds of megabytes): then `next`'s postings of the documents below `nextSegment`
/// are in the main blocks, and the segments from `nextSegment` on hold the rest.
struct SegmentMergeProgress: Equatable {
    var last: UInt32
    var next: [UInt8]
    /// The first segment whose blocks of `next` are not merged yet; nil when none of them are.
    var nextSegment: UInt32? = nil

    var bytes: [UInt8] {
        var out: [UInt8] = []
        SearchDatabases.appendNumber(last, to: &out)
        out += next
        if let nextSegment {
            out.append(0)
            SearchDatabases.appendNumber(nextSegment, to: &out)
        }
        return out
    }

    /// The progress stored in `dbs`, nil when no merge is under way.
    static func stored<T: ReadableTransaction & ~Copyable>(_ dbs: SearchDatabases, _ txn: borrowing T) throws
        -> SegmentMergeProgress?
    {
        try txn.withValue(forKey: SearchDatabases.mergeKey, in: dbs.state) { bytes in
            guard let last = SearchDatabases.number(bytes, at: 0) else {
                throw StoreError(.corrupted, "search index: a merge entry of \(bytes.count) bytes")
            }
            let rest = bytes[4...]
            guard let zero = rest.firstIndex(of: 0) else { return SegmentMergeProgress(last: last, next: Array(rest)) }
            guard bytes.count - zero == 5, let nextSegment = SearchDatabases.number(bytes, at: zero + 1) else {
                throw StoreError(.corrupted, "search index: a malformed merge entry")
            }
            return SegmentMergeProgress(last: last, next: Array(bytes[4..<zero]), nextSegment: nextSegment)
        }
    }

    /// The merged segments that still own numbers for `term`'s postings: none for a term below
    /// `next`, those from `nextSegment` on for `next` itself, all of them after.
    func unmerged(_ starts: [UInt32], term: some Collection<UInt8>) -> [UInt32] {
        if term.lexicographicallyPrecedes(next) { return [] }
        guard let nextSegment, term.elementsEqual(next) else { return starts }
        return starts.filter { $0 >= nextSegment }
    }
}

/// How the keys of an index's segments start (``SearchState/segmentKeys``).
///
/// `0x00` (``low``, since 2026-12-04): below every term (a term has no `0x00`), so a load's end
/// that merges the segments of an index whose main blocks are empty — every chunk of a first load
/// writes a segment — appends each term's blocks after every other key with `MDB_APPEND`, which
/// fills each page, while the segments' freed pages take the next batch. Above the segments
/// (``high``, `0xFF`: UTF-8 never has it, the builds before), the merged blocks went in just
/// before the segments' keys, pages split in halves: at 100,000 articles the postings took 52.8
/// MB of pages instead of 43.6, and the copy that packed them again left 59 MB of the file free.
struct SegmentKeys: Equatable {
    /// The first byte of a segment's keys.
    let marker: UInt8

    static let low = SegmentKeys(marker: 0x00)
    static let high = SegmentKeys(marker: 0xFF)

    /// The `marker start` prefix of a segment's keys.
    func prefix(_ start: UInt32) -> [UInt8] {
        var out: [UInt8] = [marker]
        SearchDatabases.appendNumber(start, to: &out)
        return out
    }

    /// The key term of `term` in the segment starting at `start`, or `term` itself in the main
    /// blocks (`start` nil): the bytes before `0x00 bound` in its blocks' keys.
    func keyTerm(_ term: some Collection<UInt8>, in start: UInt32?) -> [UInt8] {
        guard let start else { return Array(term) }
        var out = prefix(start)
        out.append(contentsOf: term)
        return out
    }

    /// Whether `key` (a block key or its term part) is a segment's.
    func isSegment(_ key: some Collection<UInt8>) -> Bool { key.first == marker }

    /// Where a walk of the main blocks from `term` on starts: at `term`, and with no term past
    /// the segments when they sort first (empty: the first key).
    func mainKey(from term: [UInt8]) -> [UInt8] { marker == 0 && term.isEmpty ? [1] : term }

    /// The segment and term of a block key's term part (the key without `0x00 bound`); nil for a
    /// segment key too short to hold a start.
    func split(_ keyTerm: UnsafeRawBufferPointer) -> (start: UInt32?, term: UnsafeRawBufferPointer)? {
        guard isSegment(keyTerm) else { return (nil, keyTerm) }
        guard let start = SearchDatabases.number(keyTerm, at: 1) else { return nil }
        return (start, UnsafeRawBufferPointer(rebasing: keyTerm[5...]))
    }

    /// The starts of the segments that have blocks, ascending: a seek a segment.
    func starts(_ cursor: Cursor) throws -> [UInt32] {
        var starts: [UInt32] = []
        var target: [UInt8] = [marker]
        while let entry = try cursor.seek(atLeast: target), isSegment(entry.key),
            let start = SearchDatabases.number(entry.key, at: 1)
        {
            starts.append(start)
            guard start < .max else { break }
            target = prefix(start + 1)
        }
        return starts
    }
}

/// Which blocks hold a term's posting of a document: the segment that owns the document's
/// number (``SearchSegments/owner(of:in:)``), or the main blocks; while a merge is under way
/// (``SegmentMergeProgress``), a term it has passed has the merged segments' documents in the
/// main blocks, and only the newer segments own numbers (a term it stopped inside: those below
/// the segment it stopped at in the main blocks, and that segment and the later ones own the rest).
struct SegmentRouting {
    let starts: [UInt32]
    let merge: SegmentMergeProgress?
    let keys: SegmentKeys
    /// The starts of the segments the merge merges, and of those newer than the merge's.
    private let merged: [UInt32]
    private let newer: [UInt32]

    init(starts: [UInt32], merge: SegmentMergeProgress?, keys: SegmentKeys) {
        self.starts = starts
        self.merge = merge
        self.keys = keys
        merged = merge.map { m in starts.filter { $0 <= m.last } } ?? []
        newer = merge.map { m in starts.filter { $0 > m.last } } ?? starts
    }

    /// The routing read from the index (a seek a segment).
    static func stored<T: ReadableTransaction & ~Copyable>(
        _ dbs: SearchDatabases, _ state: SearchState, _ txn: borrowing T
    ) throws -> SegmentRouting {
        let keys = state.segmentKeys
        guard state.segmented else { return SegmentRouting(starts: [], merge: nil, keys: keys) }
        let starts = try keys.starts(try txn.cursor(in: try dbs.postings(state)))
        return SegmentRouting(
            starts: starts, merge: state.merging ? try SegmentMergeProgress.stored(dbs, txn) : nil, keys: keys)
    }

    /// The segments that own numbers for `term`'s postings, ascending.
    func starts(for term: some Collection<UInt8>) -> [UInt32] {
        guard let merge else { return starts }
        return merge.unmerged(merged, term: term) + newer
    }

    /// The segment whose blocks of `term` hold (or are to hold) document `number`; nil for the
    /// main blocks.
    func owner(of number: UInt32, term: some Collection<UInt8>) -> UInt32? {
        SearchSegments.owner(of: number, in: starts(for: term))
    }

    /// The key term of `term`'s blocks that hold (or are to hold) document `number`.
    func keyTerm(_ term: some Collection<UInt8>, of number: UInt32) -> [UInt8] {
        keys.keyTerm(term, in: owner(of: number, term: term))
    }

    /// With a segment started at `start` added (a bulk chunk's, the newest), keyed by `keys`
    /// (the first segment of a load chooses them).
    func adding(_ start: UInt32, keys: SegmentKeys) -> SegmentRouting {
        SegmentRouting(starts: starts + [start], merge: merge, keys: keys)
    }
}
