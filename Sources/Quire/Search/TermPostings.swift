import QuireText

/// One term's posting blocks inside one read, walked as a single list: `advance(to:)` jumps over
/// whole blocks by their keys' bounds without reading them, then within a block through its skip
/// table, so intersecting a rare term with a common one costs about the rare one's postings.
///
/// Holds pointers into the map: valid only inside the read that gathered the blocks.
struct TermPostings {
    let term: [UInt8]
    /// Each block's key bound (at most its first document) and value, in order.
    private let bounds: [UInt32]
    private let values: [UnsafeRawBufferPointer]
    /// The term's document frequency: the sum of its blocks' counts (their list headers).
    let documentCount: Int
    private var index = -1
    private var cursor: PostingCursor?
    /// Whether the cursors leave each document's occurrences for `readOccurrences(into:from:)`.
    private let defersGroups: Bool
    /// The current document, after `next()` or `advance(to:)` returned one.
    private(set) var document: UInt32?

    /// The term's blocks; `deferringGroups` for a walk that reads most documents' occurrences
    /// (see `PostingCursor.init(_:deferringGroups:)`).
    init(term: [UInt8], bounds: [UInt32], values: [UnsafeRawBufferPointer], deferringGroups: Bool = false) throws {
        self.term = term
        self.bounds = bounds
        self.values = values
        defersGroups = deferringGroups
        var count = 0
        for value in values { count += try SearchPostings.documentCount(value) }
        documentCount = count
    }

    private mutating func open(_ block: Int) throws {
        index = block
        do {
            cursor = try PostingCursor(values[block], deferringGroups: defersGroups)
        } catch { throw corrupted(error) }
    }

    private func corrupted(_ error: PostingFormatError) -> StoreError {
        StoreError(.corrupted, "search index: '\(String(decoding: term, as: UTF8.self))': \(error)")
    }

    /// The next document, or nil after the last.
    mutating func next() throws -> UInt32? {
        try walk { (cursor) throws(PostingFormatError) in try cursor.next() }
    }

    /// The first document at or after `target`, or nil; never moves backwards.
    mutating func advance(to target: UInt32) throws -> UInt32? {
        if let d = document, d >= target { return d }
        // The last block whose bound is at or below the target, if past the current one (most
        // targets fall in the current block: no search then).
        if index < 0 || (index + 1 < values.count && bounds[index + 1] <= target) {
            var low = max(0, index + 1)
            var high = values.count
            while low < high {
                let mid = (low + high) / 2
                if bounds[mid] <= target { low = mid + 1 } else { high = mid }
            }
            if low - 1 > index { try open(low - 1) }
        }
        return try walk { (cursor) throws(PostingFormatError) in try cursor.advance(to: target) }
    }

    /// The first document after `previous` (from the start when nil) that every list holds, by
    /// a leapfrog: each list in `order` (rarest first) advances to the largest document another
    /// one stopped at, so two common terms skip each other's blocks instead of the first being
    /// walked document by document. Nil when one list ends.
    static func nextCommon(_ lists: inout [TermPostings], order: [Int], after previous: UInt32?) throws -> UInt32? {
        guard let first = order.first else { return nil }
        var target: UInt32 = 0
        if let previous {
            guard previous < UInt32.max else { return nil }
            target = previous + 1
        }
        // Through the buffer: one uniqueness check a call, not one an advance.
        return try lists.withUnsafeMutableBufferPointer { lists in
            search: while true {
                guard let d = try lists[first].advance(to: target) else { return nil }
                target = d
                var k = 1
                while k < order.count {
                    guard let e = try lists[order[k]].advance(to: target) else { return nil }
                    if e != target {
                        target = e
                        continue search
                    }
                    k += 1
                }
                return target
            }
        }
    }

    /// Moves the current block's cursor with `step`, going on to the following blocks while one
    /// ends; the document found becomes the current one (nil past the last block).
    private mutating func walk(_ step: (inout PostingCursor) throws(PostingFormatError) -> UInt32?) throws -> UInt32? {
        while true {
            if cursor != nil {
                do {
                    if let d = try step(&cursor!) {
                        document = d
                        return d
                    }
                } catch { throw corrupted(error) }
                cursor = nil
            }
            guard index + 1 < values.count else {
                document = nil
                return nil
            }
            try open(index + 1)
        }
    }

    /// Each field of the current document and the term's count in it.
    func forEachField(_ body: (UInt8, UInt32) -> Void) {
        cursor?.forEachField(body)
    }

    /// Writes the current document's occurrences into `buffer` from `start` and returns the
    /// index after them, growing the buffer (a new allocation, the old one freed) when they do
    /// not fit.
    mutating func readOccurrences(into buffer: inout UnsafeMutableBufferPointer<Occurrence>, from start: Int) throws -> Int {
        guard cursor != nil else { return start }
        while true {
            do {
                if let end = try cursor!.readOccurrences(into: buffer, from: start) { return end }
            } catch { throw corrupted(error) }
            let grown = UnsafeMutableBufferPointer<Occurrence>.allocate(capacity: max(64, buffer.count * 2))
            grown.initialize(repeating: Occurrence(field: 0, position: 0))
            _ = grown.update(fromContentsOf: buffer)
            buffer.deallocate()
            buffer = grown
        }
    }
}
