// The posting list format (docs/SEARCH.md, "Posting lists"): all integers are unsigned LEB128
// varints.
//
//   list   := documentCount blockCount skip{blockCount} block{blockCount}
//   skip   := lastDocumentDelta byteLength      (delta from the previous block's last document, or 0)
//   block  := posting{1…blockSize}
//   posting:= documentDelta group+              (delta from the previous document, or 0)
//   group  := header position{count}            header = count << 5 | field << 1 | isLastGroup
//   position: the first absolute, the next ones as deltas from the previous one
//
// Groups are in ascending field order; positions ascend within a group.

/// Where a term occurs in a document: a field id (below 16) and a token position in that field.
public struct Occurrence: Sendable, Hashable, Comparable {
    /// The field id (``Token/field``).
    public var field: UInt8
    /// The token position in the field (``Token/position``).
    public var position: UInt32

    /// An occurrence.
    public init(field: UInt8, position: UInt32) {
        self.field = field
        self.position = position
    }

    public static func < (a: Occurrence, b: Occurrence) -> Bool { a.order < b.order }

    /// Field then position as one number: one comparison, no branch on the field.
    @inline(__always)
    var order: UInt64 { UInt64(field) << 32 | UInt64(position) }
}

/// One document of a posting list, with where the term occurs in it (a convenience for tests and
/// tools; the cursor reads without building these).
public struct Posting: Sendable, Hashable {
    /// The document number.
    public var document: UInt32
    /// The occurrences, sorted by field then position.
    public var occurrences: [Occurrence]

    /// A posting.
    public init(document: UInt32, occurrences: [Occurrence]) {
        self.document = document
        self.occurrences = occurrences
    }
}

/// Why bytes are not a valid posting list.
public struct PostingFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset where decoding failed.
    public var offset: Int
    /// What was wrong there.
    public var message: String

    /// An error at `offset`.
    public init(offset: Int, _ message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "invalid posting list at byte \(offset): \(message)" }
}

/// Builds one term's posting list from documents appended in ascending order.
///
/// The encoder reuses its buffers across lists: call ``finish(into:)`` and go on with the next term.
public struct PostingListEncoder: Sendable {
    /// Documents per block (and per skip entry).
    public let blockSize: Int
    private var blocks: [UInt8] = []
    private var skips: [UInt8] = []
    private var blockCount = 0
    private var inBlock = 0
    private var blockStart = 0
    private var previousDocument: UInt32 = 0
    private var previousBlockLast: UInt32 = 0
    /// The documents appended since the last ``finish(into:)``.
    public private(set) var documentCount = 0

    /// An encoder writing `blockSize` documents a block (at least 1; default 64).
    public init(blockSize: Int = 64) {
        self.blockSize = max(1, blockSize)
    }

    /// About the bytes ``finish(into:)`` would write.
    public var byteCount: Int { blocks.count + skips.count + 8 }

    /// Makes room for about `bytes` of postings.
    public mutating func reserve(_ bytes: Int) {
        blocks.reserveCapacity(bytes)
    }

    /// Appends `document` (greater than the previous one) with its occurrence groups already
    /// encoded, as a stored list holds them (`group+` in docs/SEARCH.md's format): a list rebuilt
    /// or merged from stored bytes copies them instead of decoding and encoding its occurrences
    /// again.
    public mutating func append(document: UInt32, encodedGroups groups: UnsafeRawBufferPointer) {
        precondition(documentCount == 0 || document > previousDocument, "documents must ascend")
        precondition(!groups.isEmpty, "a posting needs an occurrence")
        if inBlock == blockSize { closeBlock() }
        writeVarint(UInt64(document - (inBlock == 0 ? previousBlockLast : previousDocument)), to: &blocks)
        if groups.count <= 8 {
            // Most postings are a few bytes: a call to memmove each costs more than the bytes.
            for byte in groups { blocks.append(byte) }
        } else {
            blocks.append(contentsOf: groups)
        }
        previousDocument = document
        inBlock += 1
        documentCount += 1
    }

    /// Appends `document` (greater than the previous one) where the term occurs at `occurrences`,
    /// sorted by field then position, not empty, fields below 16.
    public mutating func append(document: UInt32, occurrences: some Sequence<Occurrence>) {
        precondition(documentCount == 0 || document > previousDocument, "documents must ascend")
        if inBlock == blockSize { closeBlock() }
        writeVarint(UInt64(document - (inBlock == 0 ? previousBlockLast : previousDocument)), to: &blocks)
        previousDocument = document
        inBlock += 1
        documentCount += 1

        // Groups: a field's header needs its count, so positions are written after counting.
        var iterator = occurrences.makeIterator()
        var pending = iterator.next()
        precondition(pending != nil, "a posting needs an occurrence")
        while let first = pending {
            precondition(first.field < 16, "field ids are below 16")
            let headerAt = blocks.count
            blocks.append(0)  // placeholder, usually one byte
            var count: UInt64 = 1
            var last = first.position
            writeVarint(UInt64(first.position), to: &blocks)
            pending = iterator.next()
            while let next = pending, next.field == first.field {
                precondition(next.position >= last, "positions must ascend")
                writeVarint(UInt64(next.position - last), to: &blocks)
                last = next.position
                count += 1
                pending = iterator.next()
            }
            if let next = pending { precondition(next.field > first.field, "fields must ascend") }
            let header = count << 5 | UInt64(first.field) << 1 | (pending == nil ? 1 : 0)
            if header < 0x80 {
                blocks[headerAt] = UInt8(header)
            } else {
                var encoded: [UInt8] = []
                writeVarint(header, to: &encoded)
                blocks.replaceSubrange(headerAt...headerAt, with: encoded)
            }
        }
    }

    /// Starts over from the stored list `encoded` (as ``finish(into:)`` wrote it): the documents
    /// appended next continue it, as if the encoder had appended its documents itself. Copies its
    /// bytes without decoding its postings (extending a term's last stored block costs a copy);
    /// only the header and the skip table are read, and checked.
    ///
    /// - Throws: ``PostingFormatError`` when the header or the skip table is malformed; the
    ///   encoder is then empty.
    public mutating func resume(from encoded: UnsafeRawBufferPointer) throws(PostingFormatError) {
        removeAll()
        var at = 0
        let documents = try PostingCursor.varint(encoded, &at, limit: encoded.count)
        let count = try PostingCursor.varint(encoded, &at, limit: encoded.count)
        guard documents <= UInt64(UInt32.max), count <= documents, (documents == 0) == (count == 0) else {
            throw PostingFormatError(offset: 0, "document count \(documents) with \(count) blocks")
        }
        guard count > 0 else { return }
        var last: UInt64 = 0
        var lastBefore: UInt64 = 0
        var lastLength = 0
        var total = 0
        let skipStart = at
        var lastSkipAt = at
        for index in 0..<Int(count) {
            lastSkipAt = at
            let delta = try PostingCursor.varint(encoded, &at, limit: encoded.count)
            let length = try PostingCursor.varint(encoded, &at, limit: encoded.count)
            guard length > 0, length <= UInt64(encoded.count), delta <= UInt64(UInt32.max), index == 0 || delta > 0 else {
                throw PostingFormatError(offset: at, "skip entry \(index) of \(count)")
            }
            lastBefore = last
            last += delta
            guard last <= UInt64(UInt32.max) else { throw PostingFormatError(offset: at, "document past UInt32.max") }
            lastLength = Int(length)
            total += lastLength
        }
        guard total == encoded.count - at else {
            throw PostingFormatError(offset: at, "blocks hold \(encoded.count - at) bytes, the skip table says \(total)")
        }
        // Every block but the last holds `blockSize` documents when one encoder wrote them; the
        // last one stays open. Other counts (another block size) only make blocks longer or shorter.
        // Saturating: a huge `blockSize` must not trap (such a list came from another block size).
        let (full, overflow) = blockSize.multipliedReportingOverflow(by: Int(count) - 1)
        let open = Int(documents) - (overflow ? Int.max : full)
        // The last block's skip entry is written again when it closes.
        skips.append(contentsOf: UnsafeRawBufferPointer(rebasing: encoded[skipStart..<lastSkipAt]))
        blocks.append(contentsOf: UnsafeRawBufferPointer(rebasing: encoded[at...]))
        blockCount = Int(count) - 1
        blockStart = blocks.count - lastLength
        previousBlockLast = UInt32(lastBefore)
        previousDocument = UInt32(last)
        inBlock = max(1, min(open, blockSize))
        documentCount = Int(documents)
    }

    /// Empties the encoder without writing what it holds, keeping its buffers' capacity.
    public mutating func removeAll() {
        blocks.removeAll(keepingCapacity: true)
        skips.removeAll(keepingCapacity: true)
        blockCount = 0
        blockStart = 0
        inBlock = 0
        previousDocument = 0
        previousBlockLast = 0
        documentCount = 0
    }

    private mutating func closeBlock() {
        guard inBlock > 0 else { return }
        writeVarint(UInt64(previousDocument - previousBlockLast), to: &skips)
        writeVarint(UInt64(blocks.count - blockStart), to: &skips)
        previousBlockLast = previousDocument
        blockStart = blocks.count
        blockCount += 1
        inBlock = 0
    }

    /// Appends the finished list to `output` and resets the encoder for the next term.
    public mutating func finish(into output: inout [UInt8]) {
        closeBlock()
        writeVarint(UInt64(documentCount), to: &output)
        writeVarint(UInt64(blockCount), to: &output)
        output.append(contentsOf: skips)
        output.append(contentsOf: blocks)
        removeAll()
    }

    /// The encoded list of `postings` (ascending documents).
    public static func encode(_ postings: [Posting], blockSize: Int = 64) -> [UInt8] {
        var encoder = PostingListEncoder(blockSize: blockSize)
        for posting in postings { encoder.append(document: posting.document, occurrences: posting.occurrences) }
        var out: [UInt8] = []
        encoder.finish(into: &out)
        return out
    }
}

@inline(__always)
func writeVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var v = value
    while v >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    bytes.append(UInt8(v))
}

/// Reads one posting list in place, document by document, without allocating.
///
/// The cursor holds a raw pointer: the bytes must stay valid and unchanged while it is used (inside
/// an LMDB read transaction, or `withUnsafeBytes`). Every read is bounds-checked; malformed bytes
/// throw ``PostingFormatError``, never trap.
public struct PostingCursor {
    private let base: UnsafeRawBufferPointer
    /// The number of documents in the list.
    public let documentCount: Int
    private let blockCount: Int
    private var skipOffset: Int
    private var blockIndex = -1
    private var blockEnd: Int
    private var blockLast: UInt32 = 0
    private var offset: Int
    private var previous: UInt32 = 0
    private var groupsStart = 0
    private var decoded = 0
    private var countable = true
    private var blockStart = 0
    /// Whether a step leaves the document's groups to be passed by the next step or read by
    /// ``readOccurrences(into:from:)`` (a phrase reads its candidates' groups: one pass, not two).
    private let defersGroups: Bool
    /// The current document's groups are not passed (nor checked) yet.
    private var groupsPending = false
    /// The current document, valid after ``next()`` or ``advance(to:)`` returned one.
    public private(set) var document: UInt32 = 0

    /// A cursor before the first document of the list in `bytes`. With `deferringGroups`, a
    /// document's occurrence groups are checked when the cursor moves past them or
    /// ``readOccurrences(into:from:)`` reads them, not before the document is returned.
    public init(_ bytes: UnsafeRawBufferPointer, deferringGroups: Bool = false) throws(PostingFormatError) {
        base = bytes
        defersGroups = deferringGroups
        var at = 0
        let documents = try Self.varint(bytes, &at, limit: bytes.count)
        let blocks = try Self.varint(bytes, &at, limit: bytes.count)
        guard documents <= UInt64(UInt32.max) + 1, blocks <= documents, (documents == 0) == (blocks == 0) else {
            throw PostingFormatError(offset: 0, "document count \(documents) with \(blocks) blocks")
        }
        documentCount = Int(documents)
        blockCount = Int(blocks)
        skipOffset = at
        // Walk the skip table once to find where the blocks start and check their lengths add up.
        var total = 0
        for _ in 0..<blockCount {
            _ = try Self.varint(bytes, &at, limit: bytes.count)
            let length = try Self.varint(bytes, &at, limit: bytes.count)
            guard length > 0, length <= UInt64(bytes.count) else {
                throw PostingFormatError(offset: at, "block length \(length)")
            }
            total += Int(length)
        }
        guard total == bytes.count - at else {
            throw PostingFormatError(offset: at, "blocks hold \(bytes.count - at) bytes, the skip table says \(total)")
        }
        blockEnd = at
        offset = at
    }

    @inline(__always)
    static func varint(_ bytes: UnsafeRawBufferPointer, _ at: inout Int, limit: Int) throws(PostingFormatError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < limit else { throw PostingFormatError(offset: at, "truncated varint") }
            let byte = bytes[at]
            at += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
            guard shift < 64 else { throw PostingFormatError(offset: at, "varint too long") }
        }
    }

    private mutating func loadNextBlock() throws(PostingFormatError) -> Bool {
        guard blockIndex + 1 < blockCount else { return false }
        let lastDelta = try Self.varint(base, &skipOffset, limit: base.count)
        let length = try Self.varint(base, &skipOffset, limit: base.count)
        guard lastDelta <= UInt64(UInt32.max - blockLast), blockIndex < 0 || lastDelta > 0 else {
            throw PostingFormatError(offset: skipOffset, "block's last document out of order")
        }
        previous = blockLast
        blockLast += UInt32(lastDelta)
        blockIndex += 1
        groupsPending = false
        offset = blockEnd
        blockStart = blockEnd
        blockEnd += Int(length)
        return true
    }

    /// Moves to the next document and returns it, or nil after the last one.
    public mutating func next() throws(PostingFormatError) -> UInt32? {
        try step()
    }

    /// ``next()``'s body, inlined into ``advance(to:)``'s walk through a block.
    @inline(__always)
    private mutating func step() throws(PostingFormatError) -> UInt32? {
        if groupsPending {
            groupsPending = false
            try skipGroups()
            try checkBlockEnd()
        }
        if offset >= blockEnd {
            guard try loadNextBlock() else {
                guard !countable || decoded == documentCount else {
                    throw PostingFormatError(offset: offset, "\(decoded) documents, the header says \(documentCount)")
                }
                return nil
            }
        }
        let delta = try Self.varint(base, &offset, limit: blockEnd)
        guard delta <= UInt64(blockLast - previous), delta > 0 || (blockIndex == 0 && offset == blockStart + 1) else {
            throw PostingFormatError(offset: offset, "document out of order")
        }
        document = previous + UInt32(delta)
        previous = document
        decoded += 1
        groupsStart = offset
        if defersGroups {
            groupsPending = true
        } else {
            try skipGroups()
            try checkBlockEnd()
        }
        return document
    }

    /// After the current document's groups: a block ends at the document its skip entry names.
    @inline(__always)
    private func checkBlockEnd() throws(PostingFormatError) {
        if offset == blockEnd, document != blockLast {
            throw PostingFormatError(offset: offset, "block ends at document \(document), the skip table says \(blockLast)")
        }
    }

    /// Moves `offset` past the current posting's groups. A position is read only for where it
    /// ends, so skipping a common term's postings while advancing costs a few word operations
    /// per posting, not a varint decode per position.
    @inline(__always)
    private mutating func skipGroups() throws(PostingFormatError) {
        while true {
            let header = try Self.varint(base, &offset, limit: blockEnd)
            let count = header >> 5
            guard count > 0 else { throw PostingFormatError(offset: offset, "empty group") }
            try skipVarints(count)
            if header & 1 == 1 { return }
        }
    }

    /// Moves `offset` past `count` varints, eight bytes at a time where the block has them: a
    /// varint ends at each byte below 0x80, so a word's ends are its clear high bits.
    @inline(__always)
    private mutating func skipVarints(_ count: UInt64) throws(PostingFormatError) {
        var left = count
        while left > 0 {
            if offset &+ 8 <= blockEnd {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                // One step an end (no population count: the baseline x86-64 has none in hardware).
                var ends = ~word & 0x8080_8080_8080_8080
                while ends != 0 {
                    left -= 1
                    if left == 0 {
                        offset += ends.trailingZeroBitCount / 8 + 1
                        return
                    }
                    ends &= ends &- 1
                }
                offset += 8
                continue
            }
            guard offset < blockEnd else { throw PostingFormatError(offset: offset, "truncated varint") }
            if base[offset] < 0x80 { left -= 1 }
            offset += 1
        }
    }

    /// Moves to the first document at or after `target` (skipping whole blocks through the skip
    /// table) and returns it, or nil when there is none. Never moves backwards.
    public mutating func advance(to target: UInt32) throws(PostingFormatError) -> UInt32? {
        if decoded > 0, document >= target { return document }
        while blockIndex < 0 || blockLast < target {
            // Documents left undecoded: no final count check.
            if groupsPending || offset < blockEnd { countable = false }
            guard try loadNextBlock() else {
                offset = blockEnd
                return nil
            }
        }
        while let next = try step() {
            if next >= target { return next }
        }
        return nil
    }

    /// Calls `body` with each occurrence of the term in the current document, by field then position.
    public func forEachOccurrence<E: Error>(_ body: (Occurrence) throws(E) -> Void) throws(E) {
        var at = groupsStart
        // The groups were checked by the step (a deferring cursor's are read within bounds, and
        // checked when it moves on): a failed read ends them.
        while let header = try? Self.varint(base, &at, limit: blockEnd) {
            let field = UInt8(truncatingIfNeeded: header >> 1) & 15
            var position: UInt32 = 0
            for index in 0..<(header >> 5) {
                guard let delta = try? Self.varint(base, &at, limit: blockEnd) else { return }
                position = index == 0 ? UInt32(truncatingIfNeeded: delta) : position &+ UInt32(truncatingIfNeeded: delta)
                try body(Occurrence(field: field, position: position))
            }
            if header & 1 == 1 { return }
        }
    }

    /// Writes the current document's occurrences, by field then position, into `buffer` from
    /// index `start`, checking them, and returns the index after the last; nil when they do not
    /// fit (the cursor is then unchanged). A deferring cursor moves past them as it reads: its
    /// next step does not pass them again.
    public mutating func readOccurrences(into buffer: UnsafeMutableBufferPointer<Occurrence>, from start: Int)
        throws(PostingFormatError) -> Int?
    {
        guard decoded > 0 else { return start }
        var at = groupsStart
        var end = start
        while true {
            let header = try Self.varint(base, &at, limit: blockEnd)
            let count = header >> 5
            guard count > 0 else { throw PostingFormatError(offset: at, "empty group") }
            guard count <= UInt64(buffer.count - end) else { return nil }
            let field = UInt8(truncatingIfNeeded: header >> 1) & 15
            var position = UInt32(truncatingIfNeeded: try Self.varint(base, &at, limit: blockEnd))
            buffer[end] = Occurrence(field: field, position: position)
            end += 1
            for _ in 1..<count {
                position &+= UInt32(truncatingIfNeeded: try Self.varint(base, &at, limit: blockEnd))
                buffer[end] = Occurrence(field: field, position: position)
                end += 1
            }
            if header & 1 == 1 { break }
        }
        if groupsPending {
            groupsPending = false
            offset = at
            try checkBlockEnd()
        }
        return end
    }

    /// Calls `body` with each field of the current document and the term's count in it.
    public func forEachField<E: Error>(_ body: (_ field: UInt8, _ count: UInt32) throws(E) -> Void) throws(E) {
        var at = groupsStart
        while let header = try? Self.varint(base, &at, limit: blockEnd) {
            let count = header >> 5
            try body(UInt8(truncatingIfNeeded: header >> 1) & 15, UInt32(truncatingIfNeeded: count))
            for _ in 0..<count { guard (try? Self.varint(base, &at, limit: blockEnd)) != nil else { return } }
            if header & 1 == 1 { return }
        }
    }

    /// Every posting of the list in `bytes` (allocates; for tests and tools).
    public static func decodeAll(_ bytes: [UInt8]) throws(PostingFormatError) -> [Posting] {
        let result = bytes.withUnsafeBytes { raw -> Result<[Posting], PostingFormatError> in
            do throws(PostingFormatError) {
                var cursor = try PostingCursor(raw)
                var out: [Posting] = []
                while let document = try cursor.next() {
                    var occurrences: [Occurrence] = []
                    cursor.forEachOccurrence { occurrences.append($0) }
                    out.append(Posting(document: document, occurrences: occurrences))
                }
                return .success(out)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
