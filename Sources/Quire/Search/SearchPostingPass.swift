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

    init(_ slots: DocumentSlots) {
        self.slots = slots
        sums = PostingSums(slots: slots.count, parts: Parallelism.parts)
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
/// writes only its own) and added up when read. @unchecked: see that rule.
final class PostingSums: @unchecked Sendable {
    private let terms: [UnsafeMutableBufferPointer<UInt64>]
    private let occurrences: [UnsafeMutableBufferPointer<UInt64>]

    init(slots: Int, parts: Int) {
        terms = (0..<parts).map { _ in Self.zeroed(slots) }
        occurrences = (0..<parts).map { _ in Self.zeroed(slots) }
    }

    private static func zeroed(_ count: Int) -> UnsafeMutableBufferPointer<UInt64> {
        let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: count)
        buffer.initialize(repeating: 0)
        return buffer
    }

    deinit {
        for buffer in terms + occurrences { buffer.deallocate() }
    }

    func add(part: Int, slot: Int, termHash: UInt64, groups: UnsafeRawBufferPointer) {
        terms[part][slot] &+= termHash
        occurrences[part][slot] &+= SearchPostingDigest.occurrenceHash(termHash: termHash, groups: groups)
    }

    /// What the postings of `slot` add up to, on every part.
    func seen(_ slot: Int) -> SearchPostingDigest {
        var digest = SearchPostingDigest()
        for part in terms.indices {
            digest.terms &+= terms[part][slot]
            digest.occurrences &+= occurrences[part][slot]
        }
        return digest
    }
}

/// What verify learns about each document number: whether a `num` entry has it, its stored
/// check, and the digest its record (or stored check, or listed terms) expects.
struct DocumentCheck {
    var known = false
    /// Its `num` entry's check, in an index that keeps them.
    var stored: UInt32?
    var expected: SearchPostingDigest?
}

/// ``DocumentCheck``s by document number: an array when the numbers below `end` are at most four
/// times the documents (or a million), a dictionary otherwise, so a damaged or sparse index never
/// allocates more than its documents need.
struct DocumentNumberTable {
    private var dense: [DocumentCheck]
    private var sparse: [UInt32: DocumentCheck] = [:]
    private let isDense: Bool

    init(end: UInt64, count: Int) {
        isDense = end <= UInt64(max(1 << 20, 4 * count))
        dense = isDense ? Array(repeating: DocumentCheck(), count: Int(end)) : []
    }

    subscript(number: UInt32) -> DocumentCheck {
        get { isDense ? (Int(number) < dense.count ? dense[Int(number)] : DocumentCheck()) : sparse[number] ?? DocumentCheck() }
        set {
            if !isDense {
                sparse[number] = newValue
            } else if Int(number) < dense.count {
                dense[Int(number)] = newValue
            }
        }
    }

    /// Marks `number` as a document's: a `num` entry has it.
    mutating func addKnown(_ number: UInt32) {
        if isDense {
            if Int(number) < dense.count { dense[Int(number)].known = true }
        } else {
            sparse[number, default: DocumentCheck()].known = true
        }
    }

    /// The slots of the known numbers for the posting pass.
    var slots: DocumentSlots {
        isDense ? DocumentSlots(dense: dense.map(\.known)) : DocumentSlots(sparse: sparse.keys.filter { sparse[$0]!.known })
    }

    /// Calls `body` with each number that expects postings, its expected digest and its slot
    /// in `slots` (``slots`` of this table).
    func forEachExpected(_ slots: DocumentSlots, _ body: (UInt32, SearchPostingDigest, Int) throws -> Void) rethrows {
        if isDense {
            for (number, check) in dense.enumerated() {
                if let expected = check.expected, let slot = slots.slot(of: UInt32(number)) { try body(UInt32(number), expected, slot) }
            }
        } else {
            for (number, check) in sparse {
                if let expected = check.expected, let slot = slots.slot(of: number) { try body(number, expected, slot) }
            }
        }
    }
}
