/// Finds earlier numbered strings by hash, so that a record with many strings encodes in time
/// linear in its size (see docs/FORMAT.md, "String references").
///
/// Small records scan their few numbered strings directly (``ByteWriter`` does that below
/// ``threshold``); past it, this index answers the two questions the writer asks:
/// - which earlier string is equal to this one (a hash of the whole text, then a byte compare;
///   numbered strings are all distinct, since a repeat is written as a reference);
/// - which earlier strings share its first 8 bytes, most recent first, at most
///   ``prefixCandidateLimit`` of them (so even strings that all share a head cost a bounded
///   amount each).
///
/// Hashes use the standard library's per-process seeded hasher, so crafted input cannot force
/// collisions.
struct NumberedStringIndex {
    /// The number of numbered strings at which the writer starts using an index.
    static let threshold = 32
    /// How many same-head strings a shared-prefix search looks at, most recent first.
    static let prefixCandidateLimit = 32

    /// Full-text hash → the numbered string with that hash (the most recent).
    private var byHash: [Int: Int32] = [:]
    /// For each numbered string, the previous one with the same full-text hash, or -1.
    private var previousSameHash: [Int32] = []
    /// First 8 bytes → the most recent numbered string of at least 8 bytes starting with them.
    private var byHead: [UInt64: Int32] = [:]
    /// For each numbered string, the previous one with the same head, or -1.
    private var previousSameHead: [Int32] = []

    /// The hash of `count` bytes at `bytes`.
    static func hash(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(start: bytes, count: count))
        return hasher.finalize()
    }

    /// Records numbered string `index` (its text hashes to `hash`, its first 8 bytes are `head`).
    mutating func insert(index: Int, hash: Int, head: UInt64, length: Int) {
        let id = Int32(truncatingIfNeeded: index)
        previousSameHash.append(byHash.updateValue(id, forKey: hash) ?? -1)
        if length >= minimumSharedPrefixLength {
            previousSameHead.append(byHead.updateValue(id, forKey: head) ?? -1)
        } else {
            previousSameHead.append(-1)
        }
    }

    /// The numbered strings whose text hashes to `hash`, most recent first.
    func sameHash(_ hash: Int, _ body: (Int) -> Bool) {
        var next = byHash[hash] ?? -1
        while next >= 0 {
            if body(Int(next)) { return }
            next = previousSameHash[Int(next)]
        }
    }

    /// Up to ``prefixCandidateLimit`` numbered strings of at least 8 bytes starting with
    /// `head`, most recent first.
    func sameHead(_ head: UInt64, _ body: (Int) -> Void) {
        var next = byHead[head] ?? -1
        var seen = 0
        while next >= 0 && seen < Self.prefixCandidateLimit {
            body(Int(next))
            seen += 1
            next = previousSameHead[Int(next)]
        }
    }
}
