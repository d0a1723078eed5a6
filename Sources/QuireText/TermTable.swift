import CPrefetch

/// Dense ids for distinct terms: an open-addressing hash table over one byte arena, so that looking
/// up a term allocates nothing (a bulk index build interns each token's bytes and sorts runs of
/// small integers instead of strings).
///
/// Ids are assigned from 0 in first-seen order and never change. Not thread-safe: keep one per
/// builder (it is a value; copies are independent).
public struct TermTable: Sendable {
    /// Per term: its id (4 bytes, little-endian), its length (2 bytes) and its bytes, so that a
    /// probe that finds a slot reads the term's id and bytes from one place.
    private var arena: [UInt8] = []
    /// `entries[id]` is the offset of term `id`'s entry in the arena.
    private var entries: [UInt32] = []
    private var hashes: [UInt64] = []
    /// Per slot: the hash's high 32 bits and the entry's offset + 1 in the low 32 bits, 0 when
    /// empty (a probe rejects most other terms without touching their bytes); the count is a
    /// power of two.
    private var slots: [UInt64]
    /// The total bytes of all terms.
    public private(set) var byteCount = 0

    /// An empty table with room for about `capacity` terms before it grows.
    public init(capacity: Int = 1024) {
        var size = 16
        // A hint, bounded: the table grows past it anyway, and `.max * 2` would overflow.
        while size < min(capacity, 1 << 20) * 2 { size <<= 1 }
        slots = [UInt64](repeating: 0, count: size)
    }

    /// The number of distinct terms.
    public var count: Int { hashes.count }

    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // FNV-1a, then a final avalanche (so the low bits used for slots depend on every byte).
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        return h
    }

    /// The id of the entry at `offset` when it holds `bytes`.
    @inline(__always)
    private static func match(_ arena: UnsafeBufferPointer<UInt8>, _ offset: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        let length = Int(arena[offset + 4]) | Int(arena[offset + 5]) << 8
        guard length == bytes.count else { return nil }
        let start = offset + 6
        for i in 0..<length where arena[start + i] != bytes[i] { return nil }
        return UInt32(arena[offset]) | UInt32(arena[offset + 1]) << 8 | UInt32(arena[offset + 2]) << 16
            | UInt32(arena[offset + 3]) << 24
    }

    /// The slot holding `bytes` (hashing to `h`) and its id, or the empty slot where it would go.
    @inline(__always)
    private func find(_ bytes: UnsafeBufferPointer<UInt8>, _ h: UInt64) -> (slot: Int, id: UInt32?) {
        arena.withUnsafeBufferPointer { arena in
            slots.withUnsafeBufferPointer { slots in Self.find(bytes, h, slots, arena) }
        }
    }

    @inline(__always)
    private static func find(
        _ bytes: UnsafeBufferPointer<UInt8>, _ h: UInt64, _ slots: UnsafeBufferPointer<UInt64>, _ arena: UnsafeBufferPointer<UInt8>
    ) -> (slot: Int, id: UInt32?) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: h) & mask
        let tag = h & 0xFFFF_FFFF_0000_0000
        while true {
            let entry = slots[slot]
            if entry == 0 { return (slot, nil) }
            if entry & 0xFFFF_FFFF_0000_0000 == tag, let id = match(arena, Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1, bytes) {
                return (slot, id)
            }
            slot = (slot + 1) & mask
        }
    }

    /// The id of the term `bytes`, or nil when it was never added.
    public func id(of bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        find(bytes, Self.hash(bytes)).id
    }

    /// The id of the term `bytes`, adding it when new.
    public mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        intern(bytes, hash: Self.hash(bytes))
    }

    /// ``intern(_:)`` of bytes whose ``hash(_:)`` is `h`.
    @inline(__always)
    mutating func intern(_ bytes: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> UInt32 {
        var (slot, found) = find(bytes, h)
        if let found { return found }
        precondition(bytes.count <= Int(UInt16.max), "terms are at most 65,535 bytes")
        let id = UInt32(hashes.count)
        let offset = arena.count
        precondition(offset < Int(UInt32.max), "a term table holds less than 4 GiB of terms")
        for shift in stride(from: 0, to: 32, by: 8) { arena.append(UInt8(truncatingIfNeeded: id >> UInt32(shift))) }
        arena.append(UInt8(truncatingIfNeeded: bytes.count))
        arena.append(UInt8(truncatingIfNeeded: bytes.count >> 8))
        arena.append(contentsOf: bytes)
        entries.append(UInt32(offset))
        hashes.append(h)
        byteCount += bytes.count
        if hashes.count * 2 > slots.count {
            grow()
            let mask = slots.count - 1
            slot = Int(truncatingIfNeeded: h) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
        }
        slots[slot] = h & 0xFFFF_FFFF_0000_0000 | UInt64(offset + 1)
        return id
    }

    /// Interns many terms at once: `ids[i]` becomes the id of `term(i)`, whose ``hash(_:)`` is
    /// `hashes[i]`. While it looks up one term it asks the processor for the home slot of the
    /// eighth next and the entry of the fourth next, so that the cache misses of a large table
    /// overlap instead of following one another (a bulk index build spent a seventh of its time
    /// waiting on them).
    mutating func intern(
        hashes: UnsafeBufferPointer<UInt64>, into ids: UnsafeMutableBufferPointer<UInt32>,
        _ term: (Int) -> UnsafeBufferPointer<UInt8>
    ) {
        var index = 0
        while index < hashes.count {
            // Known terms with the arrays held still; a new term ends the run (adding it may move them).
            index = arena.withUnsafeBufferPointer { arena in
                slots.withUnsafeBufferPointer { slots in
                    let mask = slots.count - 1
                    var i = index
                    while i < hashes.count {
                        if i + 8 < hashes.count {
                            quire_prefetch(slots.baseAddress! + (Int(truncatingIfNeeded: hashes[i + 8]) & mask))
                        }
                        if i + 4 < hashes.count {
                            let entry = slots[Int(truncatingIfNeeded: hashes[i + 4]) & mask]
                            if entry != 0 { quire_prefetch(arena.baseAddress! + (Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1)) }
                        }
                        guard let id = Self.find(term(i), hashes[i], slots, arena).id else { return i }
                        ids[i] = id
                        i += 1
                    }
                    return i
                }
            }
            if index < hashes.count {
                ids[index] = intern(term(index), hash: hashes[index])
                index += 1
            }
        }
    }

    /// The id of the term `text` (folded already), adding it when new.
    public mutating func intern(_ text: String) -> UInt32 {
        var text = text
        return text.withUTF8 { intern($0) }
    }

    private mutating func grow() {
        var grown = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = grown.count - 1
        for (id, h) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: h) & mask
            while grown[slot] != 0 { slot = (slot + 1) & mask }
            grown[slot] = h & 0xFFFF_FFFF_0000_0000 | UInt64(entries[id] + 1)
        }
        slots = grown
    }

    /// Calls `body` with the bytes of term `id` (valid only inside `body`).
    public func withTerm<R>(_ id: UInt32, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let offset = Int(entries[Int(id)])
        return try arena.withUnsafeBufferPointer { arena in
            let length = Int(arena[offset + 4]) | Int(arena[offset + 5]) << 8
            return try body(UnsafeBufferPointer(rebasing: arena[(offset + 6)..<(offset + 6 + length)]))
        }
    }

    /// The term `id` as a string.
    public func term(_ id: UInt32) -> String {
        withTerm(id) { String(decoding: $0, as: UTF8.self) }
    }
}

extension TokenBuffer {
    /// The number of tokens of `field`, joined forms not counted (the field length BM25 normalizes by).
    public func length(of field: UInt8) -> UInt32 {
        var count: UInt32 = 0
        for token in tokens where token.field == field && token.kind != .joined { count += 1 }
        return count
    }

    /// Every field's length at once: `lengths[f]` becomes ``length(of:)`` of field `f` for each
    /// field below `lengths.count` (one pass over the tokens instead of one a field).
    public func fieldLengths(into lengths: inout [UInt32]) {
        for f in lengths.indices { lengths[f] = 0 }
        lengths.withUnsafeMutableBufferPointer { counts in
            for token in tokens where token.kind != .joined && Int(token.field) < counts.count {
                counts[Int(token.field)] += 1
            }
        }
    }

    /// Calls `body` once per distinct term of the buffer, in order of first appearance, with the
    /// term's id in `terms` (interned when new), its bytes and its occurrences sorted by field then
    /// position — what a posting list encoder appends for one document. Pointers are valid only
    /// inside `body`.
    ///
    /// Groups through a small per-document hash of term ids, in linear time; uses scratch storage
    /// kept in the buffer, so nothing is allocated once it has grown. Interns the document's tokens
    /// in one call (``TermTable/intern(hashes:into:_:)``, which prefetches ahead) before grouping.
    public mutating func forEachTerm(
        interning terms: inout TermTable,
        _ body: (_ id: UInt32, _ term: UnsafeBufferPointer<UInt8>, _ occurrences: UnsafeBufferPointer<Occurrence>) -> Void
    ) {
        let count = tokens.count
        var size = 16
        while size < count * 2 { size <<= 1 }
        let mask = size - 1
        // Moved into locals for the loops (no access checks on the buffer's fields), moved back below.
        var grouping = TermGrouping()
        var occurrences: [Occurrence] = []
        swap(&grouping, &scratch)
        swap(&occurrences, &scratchOccurrences)
        // The document's hash slots, then per token the next token of its term, then per group (a
        // distinct term of the document) its first token, last token and term id (as a bit pattern).
        grouping.words.removeAll(keepingCapacity: true)
        grouping.words.append(contentsOf: repeatElement(-1, count: size + 4 * count))
        grouping.hashes.removeAll(keepingCapacity: true)
        grouping.hashes.append(contentsOf: repeatElement(0, count: count))
        grouping.ids.removeAll(keepingCapacity: true)
        grouping.ids.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeBufferPointer { all in
            tokens.withUnsafeBufferPointer { tokens in
                func term(_ token: Token) -> UnsafeBufferPointer<UInt8> {
                    UnsafeBufferPointer(rebasing: all[token.start..<(token.start + token.length)])
                }
                grouping.hashes.withUnsafeMutableBufferPointer { hashes in
                    for index in 0..<count { hashes[index] = TermTable.hash(term(tokens[index])) }
                }
                grouping.hashes.withUnsafeBufferPointer { hashes in
                    grouping.ids.withUnsafeMutableBufferPointer { ids in
                        terms.intern(hashes: hashes, into: ids) { term(tokens[$0]) }
                    }
                }
                grouping.ids.withUnsafeBufferPointer { tokenIDs in
                    grouping.words.withUnsafeMutableBufferPointer { words in
                        let slots = words.baseAddress!
                        let next = slots + size
                        let heads = next + count
                        let tails = heads + count
                        let ids = tails + count
                        var groupCount = 0
                        for index in 0..<count {
                            let id = tokenIDs[index]
                            var slot = Int(truncatingIfNeeded: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
                            while true {
                                let group = slots[slot]
                                if group < 0 {
                                    slots[slot] = Int32(groupCount)
                                    heads[groupCount] = Int32(index)
                                    tails[groupCount] = Int32(index)
                                    ids[groupCount] = Int32(bitPattern: id)
                                    groupCount += 1
                                    break
                                }
                                let g = Int(group)
                                if ids[g] == Int32(bitPattern: id) {
                                    next[Int(tails[g])] = Int32(index)
                                    tails[g] = Int32(index)
                                    break
                                }
                                slot = (slot + 1) & mask
                            }
                        }
                        for group in 0..<groupCount {
                            occurrences.removeAll(keepingCapacity: true)
                            var sorted = true
                            var index = Int(heads[group])
                            let first = tokens[index]
                            while index >= 0 {
                                let token = tokens[index]
                                let occurrence = Occurrence(field: token.field, position: token.position)
                                if let last = occurrences.last, !(last < occurrence) { sorted = false }
                                occurrences.append(occurrence)
                                index = Int(next[index])
                            }
                            if !sorted {
                                // Fields tokenized out of order (emission order is ascending within a
                                // field): sort, and drop exact duplicates.
                                occurrences.sort()
                                var kept = 0
                                for i in occurrences.indices where i == 0 || occurrences[i] != occurrences[kept - 1] {
                                    occurrences[kept] = occurrences[i]
                                    kept += 1
                                }
                                occurrences.removeLast(occurrences.count - kept)
                            }
                            occurrences.withUnsafeBufferPointer { body(UInt32(bitPattern: ids[group]), term(first), $0) }
                        }
                    }
                }
            }
        }
        swap(&grouping, &scratch)
        swap(&occurrences, &scratchOccurrences)
    }
}

/// Scratch arrays of ``TokenBuffer/forEachTerm(interning:_:)``.
struct TermGrouping: Sendable {
    /// Hash slots, next tokens and groups, laid out as ``TokenBuffer/forEachTerm(interning:_:)`` says.
    var words: [Int32] = []
    /// Each token's ``TermTable`` hash, then its term's id.
    var hashes: [UInt64] = []
    var ids: [UInt32] = []
}
