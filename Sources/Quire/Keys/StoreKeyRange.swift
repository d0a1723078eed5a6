package import QuireLMDB

/// A range of store keys, in the store's key order (bytewise, shorter first).
///
/// Written with Swift's range operators or the factories:
///
/// ```swift
/// snapshot.values(of: articles, range: StoreKeyRange(.string("a")..<.string("n")))
/// snapshot.keys(in: byDate, of: articles, range: .from(.date(since)))
/// snapshot.values(in: bySection, of: articles, range: .exactly(.string("Science")))
/// ```
public struct StoreKeyRange: Sendable, Hashable {
    /// One end of a range.
    public enum Bound: Sendable, Hashable {
        /// The key belongs to the range.
        case inclusive(StoreKey)
        /// The key does not.
        case exclusive(StoreKey)
    }

    /// The lowest key, or nil for the first key.
    public var lower: Bound?
    /// The highest key, or nil for the last key.
    public var upper: Bound?

    /// A range from optional bounds.
    public init(lower: Bound? = nil, upper: Bound? = nil) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key.
    public static let all = StoreKeyRange()

    /// Keys from `key` on, `key` included.
    public static func from(_ key: StoreKey) -> StoreKeyRange { StoreKeyRange(lower: .inclusive(key)) }

    /// Keys after `key`, `key` excluded (the next page of a walk).
    public static func after(_ key: StoreKey) -> StoreKeyRange { StoreKeyRange(lower: .exclusive(key)) }

    /// Keys up to `key`, `key` included.
    public static func through(_ key: StoreKey) -> StoreKeyRange { StoreKeyRange(upper: .inclusive(key)) }

    /// Keys before `key`.
    public static func upTo(_ key: StoreKey) -> StoreKeyRange { StoreKeyRange(upper: .exclusive(key)) }

    /// Exactly `key` (in an index: every record with that index value).
    public static func exactly(_ key: StoreKey) -> StoreKeyRange {
        StoreKeyRange(lower: .inclusive(key), upper: .inclusive(key))
    }

    /// Keys in `lower ..< upper`.
    public static func between(_ lower: StoreKey, _ upper: StoreKey) -> StoreKeyRange {
        StoreKeyRange(lower: .inclusive(lower), upper: .exclusive(upper))
    }

    /// Keys in `lower ... upper`.
    public static func closed(_ lower: StoreKey, _ upper: StoreKey) -> StoreKeyRange {
        StoreKeyRange(lower: .inclusive(lower), upper: .inclusive(upper))
    }

    /// Keys whose bytes start with `prefix`'s (a string key's text prefix).
    public static func prefix(_ prefix: StoreKey) -> StoreKeyRange {
        let range = KeyRange.prefix(prefix.bytes)
        return StoreKeyRange(lmdb: range)
    }

    /// `lower ..< upper`.
    public init(_ range: Range<StoreKey>) { self = .between(range.lowerBound, range.upperBound) }

    /// `lower ... upper`.
    public init(_ range: ClosedRange<StoreKey>) { self = .closed(range.lowerBound, range.upperBound) }

    /// `lower...`.
    public init(_ range: PartialRangeFrom<StoreKey>) { self = .from(range.lowerBound) }

    /// `...upper`.
    public init(_ range: PartialRangeThrough<StoreKey>) { self = .through(range.upperBound) }

    /// `..<upper`.
    public init(_ range: PartialRangeUpTo<StoreKey>) { self = .upTo(range.upperBound) }

    /// The same range in LMDB's terms.
    package var lmdb: KeyRange {
        KeyRange(lower: lower.map(Self.lmdbBound), upper: upper.map(Self.lmdbBound))
    }

    package init(lmdb range: KeyRange) {
        lower = range.lower.map(Self.storeBound)
        upper = range.upper.map(Self.storeBound)
    }

    private static func lmdbBound(_ bound: Bound) -> KeyRange.Bound {
        switch bound {
        case .inclusive(let key): .inclusive(key.bytes)
        case .exclusive(let key): .exclusive(key.bytes)
        }
    }

    private static func storeBound(_ bound: KeyRange.Bound) -> Bound {
        switch bound {
        case .inclusive(let bytes): .inclusive(StoreKey(bytes: bytes))
        case .exclusive(let bytes): .exclusive(StoreKey(bytes: bytes))
        }
    }
}
