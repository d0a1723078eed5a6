/// Verify's pass over every posting block of a full-text index: the blocks are read in key
/// order by the caller (one LMDB cursor, one thread), then decoded, checked and summed per
/// document on every core, each part into sums of its own, added up at the end. The pass reads
/// every posting of the index, a third of a verify when it ran on one thread.
struct SearchPostingPass {
    /// What the pass learned of one block.
    struct Block: Sendable {
        /// The first and last document, nil for an empty block.
        var first: UInt32?
        var last: UInt32?
        var postings = 0
        /// Why the block could not be read (then none of its postings counts).
        var unreadable: String?
        /// Documents of its postings that no `num` entry has.
        var missing: [UInt32] = []
    }

    let slots: DocumentSlots
    let sums: PostingSums
    private let termSums: Bool

    /// `termSums`: whether the documents' term hashes are summed too, with whole occurrence
    /// sums (some document expects them: an index without stored checks); otherwise only the
    /// occurrence sums' low 32 bits, all that a stored check compares.
    init(_ slots: DocumentSlots, termSums: Bool) {
        self.slots = slots
        self.termSums = termSums
        sums = PostingSums(slots: slots.count, parts: Parallelism.parts, full: termSums)
    }

    /// Whether the postings read for `slot` add up to `want`. Without term sums a full digest
    /// (a record's text analysed again, for a document whose stored check disagreed) is
    /// compared by its occurrences' low 32 bits, as the check was: each posting's occurrence
    /// hash mixes in its term's.
    func matches(_ want: SearchPostingDigest, slot: Int) -> Bool {
        let seen = sums.seen(slot)
        guard !termSums, want.storedOccurrences == nil, want.checksOccurrences else { return want.matches(seen) }
        return UInt32(truncatingIfNeeded: seen.occurrences) == UInt32(truncatingIfNeeded: want.occurrences)
    }

    /// Reads the blocks (each its term and its stored bytes, in the map) on every core.
    func read(_ blocks: MappedBlocks) -> [Block] {
        let (slots, sums) = (slots, sums)
        return Parallelism.inNumberedParts(count: blocks.values.count) { part, range in
            var postings: [(number: UInt32, groups: UnsafeRawBufferPointer)] = []
            return range.map { b -> Block in
                var block = Block()
                postings.removeAll(keepingCapacity: true)
                do {
                    try PostingBlock.forEachPosting(in: blocks.values[b]) { postings.append(($0, $1)) }
                } catch {
                    block.unreadable = "\(error)"
                    return block
                }
                block.first = postings.first?.number
                block.last = postings.last?.number
                block.postings = postings.count
                let termHash = SearchPostingDigest.hash(blocks.terms[b])
                for (number, groups) in postings {
                    if let slot = slots.slot(of: number) {
                        sums.add(part: part, slot: slot, termHash: termHash, groups: groups)
                    } else {
                        block.missing.append(number)
                    }
                }
                return block
            }
        }.flatMap { $0 }
    }
}

/// Posting blocks in the map (their terms and values), read by the parts' threads of
/// ``Parallelism/inNumberedParts(count:_:)``. @unchecked: as ``MappedRecords``, only read,
/// within the caller's read transaction.
struct MappedBlocks: @unchecked Sendable {
    var terms: [UnsafeRawBufferPointer] = []
    var values: [UnsafeRawBufferPointer] = []
}

/// The slot of each document number in ``PostingSums``: the number itself when the numbers are
/// dense, else its rank among the known numbers.
struct DocumentSlots: Sendable {
    private let known: [Bool]?
    private let ranks: [UInt32: Int]

    init(dense known: [Bool]) {
        self.known = known
        ranks = [:]
    }

    init(sparse numbers: some Sequence<UInt32>) {
        known = nil
        var ranks: [UInt32: Int] = [:]
        for number in numbers { ranks[number] = ranks.count }
        self.ranks = ranks
    }

    var count: Int { known?.count ?? ranks.count }

    /// The slot of a number a `num` entry has; nil for any other.
    func slot(of number: UInt32) -> Int? {
        guard let known else { return ranks[number] }
        let i = Int(number)
        return i < known.count && known[i] ? i : nil
    }
}

/// Per document slot, the wrapping sums of its postings' term hashes and of their hashes with
/// their occurrences (``SearchPostingDigest``), kept apart for each part (each part's thread
/// writes only its own) and added up when read. Full sums (8 bytes each) only when asked:
/// documents with a stored check compare the low 32 bits of their occurrences' sum alone, so
/// then only those are kept, 4 bytes a document a part. @unchecked: see that rule.
final class PostingSums: @unchecked Sendable {
    private let terms: [UnsafeMutableBufferPointer<UInt64>]
    private let occurrences: [UnsafeMutableBufferPointer<UInt64>]
    private let lowOccurrences: [UnsafeMutableBufferPointer<UInt32>]

    /// `full`: term sums and whole occurrence sums; otherwise the occurrences' low 32 bits.
    init(slots: Int, parts: Int, full: Bool) {
        terms = full ? (0..<parts).map { _ in Self.zeroed(slots) } : []
        occurrences = full ? (0..<parts).map { _ in Self.zeroed(slots) } : []
        lowOccurrences = full ? [] : (0..<parts).map { _ in Self.zeroed(slots) }
    }

    private static func zeroed<T: FixedWidthInteger>(_ count: Int) -> UnsafeMutableBufferPointer<T> {
        let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: count)
        buffer.initialize(repeating: 0)
        return buffer
    }

    deinit {
        for buffer in terms + occurrences { buffer.deallocate() }
        for buffer in lowOccurrences { buffer.deallocate() }
    }

    func add(part: Int, slot: Int, termHash: UInt64, groups: UnsafeRawBufferPointer) {
        let hash = SearchPostingDigest.occurrenceHash(termHash: termHash, groups: groups)
        if lowOccurrences.isEmpty {
            terms[part][slot] &+= termHash
            occurrences[part][slot] &+= hash
        } else {
            lowOccurrences[part][slot] &+= UInt32(truncatingIfNeeded: hash)
        }
    }

    /// What the postings of `slot` add up to, on every part (without full sums: no term sum, and
    /// the occurrences' low 32 bits).
    func seen(_ slot: Int) -> SearchPostingDigest {
        var digest = SearchPostingDigest()
        for part in terms.indices { digest.terms &+= terms[part][slot] }
        for part in occurrences.indices { digest.occurrences &+= occurrences[part][slot] }
        var low: UInt32 = 0
        for part in lowOccurrences.indices { low &+= lowOccurrences[part][slot] }
        if !lowOccurrences.isEmpty { digest.occurrences = UInt64(low) }
        return digest
    }
}

/// What verify expects of each document number's postings, in a few bytes a document: a
/// 10M-article index has 10M of them, and a table of optional digests (56 bytes each) with a
/// dictionary of their keys took several gigabytes. A digest by a stored check keeps its 32
/// bits; a full one (an index without checks) keeps its two sums, in arrays made only then.
/// An array by number when the numbers below `end` are at most four times the documents (or a
/// million), a dictionary otherwise, so a damaged or sparse index never allocates more than its
/// documents need.
struct DocumentNumberTable {
    /// What a number expects: ``Kind/none`` until set.
    private enum Kind: UInt8 {
        case none, stored, storedRechecked, terms, termsAndOccurrences
    }

    private let isDense: Bool
    /// By number (dense): whether a `num` entry has it, and what it expects.
    private var known: [Bool]
    private var kinds: [UInt8]
    private var stored: [UInt32]
    /// The full digests' sums, by number; empty until one is set.
    private var terms: [UInt64] = []
    private var occurrences: [UInt64] = []
    private var sparseKnown: Set<UInt32> = []
    private var sparse: [UInt32: SearchPostingDigest] = [:]

    init(end: UInt64, count: Int) {
        isDense = end <= UInt64(max(1 << 20, 4 * count))
        let size = isDense ? Int(end) : 0
        known = Array(repeating: false, count: size)
        kinds = Array(repeating: Kind.none.rawValue, count: size)
        stored = Array(repeating: 0, count: size)
    }

    /// Whether some number expects its postings' terms (a full digest): the posting pass then
    /// sums them too.
    private(set) var needsTerms = false

    /// Marks `number` as a document's: a `num` entry has it.
    mutating func addKnown(_ number: UInt32) {
        if !isDense {
            sparseKnown.insert(number)
        } else if Int(number) < known.count {
            known[Int(number)] = true
        }
    }

    /// Sets what the postings of `number` must add up to (the digest's count is not kept).
    mutating func setExpected(_ number: UInt32, _ digest: SearchPostingDigest) {
        if digest.storedOccurrences == nil { needsTerms = true }
        guard isDense else {
            sparse[number] = digest
            return
        }
        let i = Int(number)
        guard i < kinds.count else { return }
        if let low = digest.storedOccurrences {
            kinds[i] = (digest.recheck ? Kind.storedRechecked : Kind.stored).rawValue
            stored[i] = low
            return
        }
        if terms.isEmpty {
            terms = Array(repeating: 0, count: kinds.count)
            occurrences = Array(repeating: 0, count: kinds.count)
        }
        kinds[i] = (digest.checksOccurrences ? Kind.termsAndOccurrences : Kind.terms).rawValue
        terms[i] = digest.terms
        occurrences[i] = digest.occurrences
    }

    /// The digest set for dense number `i`, nil when none is.
    private func expected(at i: Int) -> SearchPostingDigest? {
        switch Kind(rawValue: kinds[i]) ?? .none {
        case .none: return nil
        case .stored: return SearchPostingDigest(stored: stored[i])
        case .storedRechecked: return SearchPostingDigest(stored: stored[i], recheck: true)
        case .terms, .termsAndOccurrences:
            var digest = SearchPostingDigest()
            digest.terms = terms[i]
            digest.occurrences = occurrences[i]
            digest.checksOccurrences = kinds[i] == Kind.termsAndOccurrences.rawValue
            return digest
        }
    }

    /// The slots of the known numbers for the posting pass.
    var slots: DocumentSlots {
        isDense ? DocumentSlots(dense: known) : DocumentSlots(sparse: sparseKnown)
    }

    /// Calls `body` with each number that expects postings, its expected digest and its slot
    /// in `slots` (``slots`` of this table).
    func forEachExpected(_ slots: DocumentSlots, _ body: (UInt32, SearchPostingDigest, Int) throws -> Void) rethrows {
        if isDense {
            for i in kinds.indices where kinds[i] != Kind.none.rawValue {
                if let expected = expected(at: i), let slot = slots.slot(of: UInt32(i)) { try body(UInt32(i), expected, slot) }
            }
        } else {
            for (number, expected) in sparse {
                if let slot = slots.slot(of: number) { try body(number, expected, slot) }
            }
        }
    }
}
