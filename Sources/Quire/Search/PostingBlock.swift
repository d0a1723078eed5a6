import QuireText

/// One stored posting block of a term, decoded for a change in place (an upsert or a delete
/// touching a document inside it): the documents and each one's raw occurrence groups.
struct PostingBlock {
    private(set) var documents: [UInt32] = []
    /// `groups[ranges[i]]` are document `i`'s `group+` bytes.
    private var groups: [UInt8] = []
    private var ranges: [Range<Int>] = []

    init() {}

    /// Decodes a stored list; throws `StoreError.corrupted` on malformed bytes.
    init(_ bytes: UnsafeRawBufferPointer) throws {
        var documents: [UInt32] = []
        var groups: [UInt8] = []
        var ranges: [Range<Int>] = []
        try Self.forEachPosting(in: bytes) { document, bytes in
            documents.append(document)
            ranges.append(groups.count..<(groups.count + bytes.count))
            groups.append(contentsOf: bytes)
        }
        self.documents = documents
        self.groups = groups
        self.ranges = ranges
    }

    /// Reads a stored list in place, checking it as ``init(_:)`` does: calls `body` with each
    /// document and its `group+` bytes (a slice of `bytes`), in order, and returns how many
    /// there were. What `body` saw before a throw came from the sound part of the list.
    @discardableResult
    static func forEachPosting(
        in bytes: UnsafeRawBufferPointer, _ body: (UInt32, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        var at = 0
        let count = try SearchVarint.read(bytes, &at)
        let blockCount = try SearchVarint.read(bytes, &at)
        guard count < 1 << 32, blockCount <= count else { throw Self.corrupt("a count of \(count) in \(blockCount) blocks") }
        // The skip entries come first; the blocks' bytes follow them. Read side by side.
        var skipAt = at
        for _ in 0..<blockCount {
            _ = try SearchVarint.read(bytes, &at)
            let length = try SearchVarint.read(bytes, &at)
            guard length <= UInt64(bytes.count) else { throw Self.corrupt("a block of \(length) bytes") }
        }
        var previousLast: UInt64 = 0
        var document: UInt64 = 0
        var seen = 0
        var last: UInt32?
        for _ in 0..<blockCount {
            let skipLast = try SearchVarint.read(bytes, &skipAt)
            let end = at + Int(try SearchVarint.read(bytes, &skipAt))
            guard end <= bytes.count else { throw Self.corrupt("a block past the end") }
            var first = true
            while at < end {
                let delta = try SearchVarint.read(bytes, &at)
                // Damaged bytes can hold any varint: checked before the sum can overflow.
                guard delta <= UInt64(UInt32.max) else { throw Self.corrupt("a document delta of \(delta)") }
                document = (first ? previousLast : document) + delta
                guard document <= UInt64(UInt32.max), last.map({ UInt32(document) > $0 }) ?? true
                else { throw Self.corrupt("documents out of order") }
                first = false
                let start = at
                while true {
                    let header = try SearchVarint.read(bytes, &at)
                    let n = header >> 5
                    guard n > 0, at <= end, n <= UInt64(end - at) else { throw Self.corrupt("an occurrence group of \(n)") }
                    for _ in 0..<n { _ = try SearchVarint.read(bytes, &at) }
                    if header & 1 == 1 { break }
                }
                guard at <= end else { throw Self.corrupt("a posting across blocks") }
                last = UInt32(document)
                seen += 1
                try body(UInt32(document), UnsafeRawBufferPointer(rebasing: bytes[start..<at]))
            }
            guard skipLast <= UInt64(UInt32.max), document == previousLast + skipLast else {
                throw Self.corrupt("a skip entry that disagrees")
            }
            previousLast = document
        }
        guard at == bytes.count, seen == Int(count) else { throw Self.corrupt("a wrong document count") }
        return seen
    }

    private static func corrupt(_ what: String) -> StoreError {
        StoreError(.corrupted, "search index: posting block with \(what)")
    }

    var isEmpty: Bool { documents.isEmpty }

    /// The position of `document`, or where it would go.
    private func slot(_ document: UInt32) -> (index: Int, found: Bool) {
        var low = 0
        var high = documents.count
        while low < high {
            let mid = (low + high) / 2
            if documents[mid] < document { low = mid + 1 } else { high = mid }
        }
        return (low, low < documents.count && documents[low] == document)
    }

    /// Adds `document` with its groups, or replaces its groups when present.
    mutating func set(_ document: UInt32, groups bytes: UnsafeRawBufferPointer) {
        let (index, found) = slot(document)
        let range = groups.count..<(groups.count + bytes.count)
        groups.append(contentsOf: bytes)  // old bytes stay as garbage until encoded
        if found {
            ranges[index] = range
        } else {
            documents.insert(document, at: index)
            ranges.insert(range, at: index)
        }
    }

    /// Removes `document`; returns whether it was there.
    @discardableResult
    mutating func remove(_ document: UInt32) -> Bool {
        let (index, found) = slot(document)
        guard found else { return false }
        documents.remove(at: index)
        ranges.remove(at: index)
        return true
    }

    /// The groups of `document`, when present.
    func groups(of document: UInt32) -> ArraySlice<UInt8>? {
        let (index, found) = slot(document)
        return found ? groups[ranges[index]] : nil
    }

    /// Calls `body` with each document and its groups, in order.
    func forEach(_ body: (UInt32, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try groups.withUnsafeBytes { all in
            for (document, range) in zip(documents, ranges) { try body(document, UnsafeRawBufferPointer(rebasing: all[range])) }
        }
    }

    /// The encoded list.
    func encoded() -> [UInt8] { encoded(documents: documents.indices) }

    /// The encoded list of the documents at positions `positions`.
    func encoded(documents positions: Range<Int>) -> [UInt8] {
        var writer = PostingListEncoder()
        groups.withUnsafeBytes { all in
            for i in positions {
                writer.append(document: documents[i], encodedGroups: UnsafeRawBufferPointer(rebasing: all[ranges[i]]))
            }
        }
        var out: [UInt8] = []
        writer.finish(into: &out)
        return out
    }
}
