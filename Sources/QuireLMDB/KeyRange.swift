/// A range of keys in LMDB's byte order (lexicographic, shorter first).
///
/// Ranges compare raw key bytes, which matches databases opened without custom comparators.
package struct KeyRange: Sendable, Hashable {
    /// One end of a range.
    package enum Bound: Sendable, Hashable {
        case inclusive([UInt8])
        case exclusive([UInt8])

        var key: [UInt8] {
            switch self {
            case .inclusive(let k), .exclusive(let k): k
            }
        }
    }

    /// The lowest key, or nil for the first key.
    package var lower: Bound?
    /// The highest key, or nil for the last key.
    package var upper: Bound?

    /// Creates a range from optional bounds.
    package init(lower: Bound? = nil, upper: Bound? = nil) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    package static let all = KeyRange()

    /// Keys from `key` on (inclusive).
    package static func from(_ key: [UInt8]) -> KeyRange { KeyRange(lower: .inclusive(key)) }

    /// Keys in `lower ..< upper`.
    package static func between(_ lower: [UInt8], _ upper: [UInt8]) -> KeyRange {
        KeyRange(lower: .inclusive(lower), upper: .exclusive(upper))
    }

    /// Keys in `lower ... upper`.
    package static func closed(_ lower: [UInt8], _ upper: [UInt8]) -> KeyRange {
        KeyRange(lower: .inclusive(lower), upper: .inclusive(upper))
    }

    /// Keys that start with `prefix`.
    package static func prefix(_ prefix: [UInt8]) -> KeyRange {
        KeyRange(lower: .inclusive(prefix), upper: successor(ofPrefix: prefix).map { .exclusive($0) })
    }

    /// The smallest key greater than every key starting with `prefix`, or nil when there is none
    /// (an empty prefix or one of all 0xFF bytes).
    package static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var next = prefix
        while let last = next.last {
            if last < 0xFF {
                next[next.count - 1] = last + 1
                return next
            }
            next.removeLast()
        }
        return nil
    }

    func isBelowUpper(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return true }
        let c = compareKeys(key, upper.key)
        switch upper {
        case .inclusive: return c <= 0
        case .exclusive: return c < 0
        }
    }

    func isAboveLower(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let lower else { return true }
        let c = compareKeys(key, lower.key)
        switch lower {
        case .inclusive: return c >= 0
        case .exclusive: return c > 0
        }
    }
}

extension KeyRange {
    /// LMDB's default key order: negative when `a` sorts before `b`, zero when equal.
    package static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { compareKeys($0, b) }
    }

    /// LMDB's default key order on raw bytes: `memcmp`, then the shorter key first.
    @inlinable package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
}

/// ``KeyRange/compare(_:_:)-(UnsafeRawBufferPointer,UnsafeRawBufferPointer)`` with an array.
func compareKeys(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
    b.withUnsafeBytes { KeyRange.compare(a, $0) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
