import QuireCodec
internal import QuireLMDB

/// Merges the sorted runs of a ``SpillFile`` into chunks ascending across all of them, read
/// straight from the mapped file: the entries of each chunk point into the mapping.
///
/// A key given in more than one run comes out once, with the latest run's value, and stands for
/// the input values of all of them (as `SortedRunMerger` does within a window). A binary heap of
/// the runs' current keys picks the next one: a load of ten million records spills about seventy.
struct SpilledRunMerger {
    private struct RunCursor {
        var offset: Int
        let end: Int
        /// How far the run's pages were dropped.
        var dropped: Int
        var key: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
        var recordCount = 0
        var indexCount = 0
        var consumed = 0
    }

    private let mapping: RecordArena
    private let file: SpillFile
    /// Where each run stood when the previous chunk began.
    private var marks: [Int]
    private let base: UnsafeRawPointer?
    private var cursors: [RunCursor]
    /// Runs with records left, as a min-heap ordered by (current key, run).
    private var heap: [Int]
    private let fields: FieldTable
    private let longKeys: [[UInt8]: [[UInt8]]]
    private let indexed: Bool

    /// The runs of `file`, which must each be sorted with keys once; later runs hold later input
    /// and tables that extend the earlier runs'.
    init(_ file: SpillFile, indexed: Bool) throws {
        mapping = try file.mapped()
        self.file = file
        base = mapping.firstBlockStart
        fields = file.runs.last?.fields ?? FieldTable()
        self.indexed = indexed
        longKeys = SortedRunMerger.longKeyMap(file.runs.lazy.flatMap(\.longKeys))
        cursors = file.runs.map {
            RunCursor(offset: $0.offset, end: $0.offset + $0.byteCount, dropped: $0.offset)
        }
        marks = cursors.map(\.offset)
        heap = []
        for run in cursors.indices where load(run) { push(run) }
    }

    /// The next merged chunk of at most `maxCount` records, or nil when every run is merged.
    mutating func next(maxCount: Int) -> EncodedChunk? {
        releaseCommitted()
        guard !heap.isEmpty, let base else { return nil }
        var chunk = EncodedChunk(
            entries: [], arenas: [mapping], indexKeys: [], fields: fields, arrivedSorted: true, inputCount: 0,
            byteCount: 0)
        chunk.entries.reserveCapacity(min(maxCount, 1 << 16))
        while chunk.entries.count < maxCount, !heap.isEmpty {
            // The smallest key; equal keys of later runs replace it (they pop after it).
            var run = popMin()
            var consumed = cursors[run].consumed
            while let top = heap.first, KeyRange.compare(cursors[top].key, cursors[run].key) == 0 {
                advance(run)
                run = popMin()
                consumed += cursors[run].consumed
            }
            let c = cursors[run]
            let keyStart = c.offset + SpillFile.headerSize
            let entry = EncodedEntry(
                key: ArenaBytes(start: base + keyStart, count: c.key.count),
                record: ArenaBytes(start: base + keyStart + c.key.count, count: c.recordCount))
            chunk.entries.append(entry)
            chunk.byteCount += entry.key.count + entry.record.count + EncodedChunk.overheadPerRecord + c.indexCount
            if indexed {
                chunk.indexKeys.append(
                    IndexKeyBytes(bytes: ArenaBytes(start: base + keyStart + c.key.count + c.recordCount, count: c.indexCount)))
            }
            chunk.inputCount += consumed
            advance(run)
        }
        if !longKeys.isEmpty { chunk.longKeys = SortedRunMerger.longKeysUsed(by: chunk, longKeys) }
        return chunk
    }

    /// Drops the pages of records committed by now: those before where each run stood when
    /// the previous chunk began (that chunk may still be committing; the one before it is
    /// committed, since the loader waits for it before asking for this one).
    private mutating func releaseCommitted() {
        for run in cursors.indices {
            let committed = marks[run]
            marks[run] = cursors[run].offset
            guard committed - cursors[run].dropped >= Self.releaseStep else { continue }
            let range = cursors[run].dropped..<committed
            mapping.releasePages(range)
            file.dropCachedPages(range)
            cursors[run].dropped = committed
        }
    }

    /// Bytes of a run released at a time.
    private static var releaseStep: Int { 8 << 20 }

    /// Moves `run` past its current record and back into the heap when it has more.
    private mutating func advance(_ run: Int) {
        let c = cursors[run]
        cursors[run].offset += SpillFile.headerSize + c.key.count + c.recordCount + c.indexCount
        if load(run) { push(run) }
    }

    /// Reads the header of `run`'s current record; false when the run is used up.
    private mutating func load(_ run: Int) -> Bool {
        guard let base, cursors[run].offset < cursors[run].end else { return false }
        let at = base + cursors[run].offset
        func length(_ i: Int) -> Int { Int(UInt32(littleEndian: at.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))) }
        cursors[run].key = UnsafeRawBufferPointer(start: at + SpillFile.headerSize, count: length(0))
        cursors[run].recordCount = length(1)
        cursors[run].indexCount = length(2)
        cursors[run].consumed = length(3)
        return true
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        let c = KeyRange.compare(cursors[a].key, cursors[b].key)
        return c != 0 ? c < 0 : a < b
    }

    private mutating func push(_ run: Int) {
        heap.append(run)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popMin() -> Int {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var i = 0
        while true {
            let (l, r) = (2 * i + 1, 2 * i + 2)
            var smallest = i
            if l < heap.count && less(heap[l], heap[smallest]) { smallest = l }
            if r < heap.count && less(heap[r], heap[smallest]) { smallest = r }
            if smallest == i { return top }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}
