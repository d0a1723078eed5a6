import Synchronization

/// The large arrays of finished searches, handed to the next ones (one pool a store).
///
/// A query over common words fills arrays of megabytes: its terms' documents and counts, the
/// matches' field lengths and scores. Fresh arrays of that size come from `mmap`: a zeroed page
/// each 4 KiB on first touch, and on free an unmap that stops the other cores for a TLB flush,
/// which is what kept two threads' prefix queries from running twice as fast as one. Arrays
/// below `minimumCount` elements go back to malloc as before; the pool keeps at most
/// `maximumBytes`, dropping the smallest arrays first.
final class SearchQueryBuffers: Sendable {
    static let minimumCount = 32 * 1024
    static let maximumBytes = 96 << 20

    private struct Kept {
        var numbers: [[UInt32]] = []
        var reals: [[Double]] = []
        var bytes = 0
    }

    private let kept = Mutex(Kept())

    init() {}

    /// An empty array with room for `count` numbers: a kept one when one is large enough.
    func numbers(capacity count: Int) -> [UInt32] { take(count, from: \.numbers) }

    /// An empty array with room for `count` reals: a kept one when one is large enough.
    func reals(capacity count: Int) -> [Double] { take(count, from: \.reals) }

    /// Keeps `given`'s storage for a later search (small arrays are let go).
    func give(_ given: [UInt32]) { keep(given, in: \.numbers) }

    /// Keeps `given`'s storage for a later search (small arrays are let go).
    func give(_ given: [Double]) { keep(given, in: \.reals) }

    private func take<T: Sendable>(_ count: Int, from arrays: WritableKeyPath<Kept, [[T]]>) -> [T] {
        // Bound straight from the lock's result: a second owner would make the removal copy.
        if count >= Self.minimumCount,
            var reused = kept.withLock({ kept -> [T]? in
                guard let at = Self.smallest(in: kept[keyPath: arrays], holding: count) else { return nil }
                kept.bytes -= kept[keyPath: arrays][at].capacity * MemoryLayout<T>.stride
                return kept[keyPath: arrays].remove(at: at)
            })
        {
            reused.removeAll(keepingCapacity: true)  // emptied here: the giver may still hold it
            return reused
        }
        var fresh: [T] = []
        fresh.reserveCapacity(count)
        return fresh
    }

    private func keep<T: Sendable>(_ given: [T], in arrays: WritableKeyPath<Kept, [[T]]>) {
        let bytes = given.capacity * MemoryLayout<T>.stride
        guard given.capacity >= Self.minimumCount, bytes <= Self.maximumBytes else { return }
        kept.withLock { kept in
            guard !kept[keyPath: arrays].contains(where: { Self.sameStorage($0, given) }) else { return }
            kept[keyPath: arrays].append(given)
            kept.bytes += bytes
            Self.trim(&kept)
        }
    }

    /// The bytes of the arrays kept now.
    var keptBytes: Int { kept.withLock { $0.bytes } }

    /// The index of the smallest array with room for `count`.
    private static func smallest<T>(in arrays: [[T]], holding count: Int) -> Int? {
        var best: Int?
        for (i, array) in arrays.enumerated() where array.capacity >= count {
            if best.map({ array.capacity < arrays[$0].capacity }) ?? true { best = i }
        }
        return best
    }

    /// Whether two arrays share storage (an array given twice, as a term's documents and as
    /// the query's matches, is kept once).
    private static func sameStorage<T>(_ a: [T], _ b: [T]) -> Bool {
        a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
    }

    /// Drops the smallest arrays until the pool holds at most `maximumBytes`.
    private static func trim(_ kept: inout Kept) {
        while kept.bytes > maximumBytes {
            let smallestNumbers = kept.numbers.indices.min { kept.numbers[$0].capacity < kept.numbers[$1].capacity }
            let smallestReals = kept.reals.indices.min { kept.reals[$0].capacity < kept.reals[$1].capacity }
            let numberBytes = smallestNumbers.map { kept.numbers[$0].capacity * 4 } ?? .max
            let realBytes = smallestReals.map { kept.reals[$0].capacity * 8 } ?? .max
            if let i = smallestNumbers, numberBytes <= realBytes {
                kept.bytes -= numberBytes
                kept.numbers.remove(at: i)
            } else if let i = smallestReals {
                kept.bytes -= realBytes
                kept.reals.remove(at: i)
            } else {
                return
            }
        }
    }
}
