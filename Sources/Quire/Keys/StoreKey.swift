import Foundation

/// An order-preserving key: comparing the bytes compares the values.
///
/// LMDB sorts keys bytewise, so every value is encoded to sort like itself:
/// - strings as their UTF-8 bytes (alone) or escaped and terminated (inside a composite);
/// - integers as 8 big-endian bytes with the sign bit flipped, so negatives sort first;
/// - dates as integer milliseconds since 1970.
///
/// Keys may be of any length but not empty. Keys over 510 bytes are stored as their first 495
/// bytes and a hash, with the whole key kept beside them (docs/FORMAT.md, "Store keys"): reads
/// and walks see the whole key, and order is exact up to byte 495.
public struct StoreKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The encoded bytes, as stored in LMDB.
    public let bytes: [UInt8]

    /// Wraps already encoded bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// A string key: its UTF-8 bytes, so prefix scans and `mdb_dump` read naturally.
    public static func string(_ value: String) -> StoreKey { StoreKey(bytes: Array(value.utf8)) }

    /// A signed integer key.
    public static func int(_ value: Int64) -> StoreKey {
        let flipped = UInt64(bitPattern: value) ^ (1 << 63)
        return StoreKey(bytes: withUnsafeBytes(of: flipped.bigEndian) { Array($0) })
    }

    /// A date key with millisecond precision. Dates more than about 292 million years from 1970
    /// take the first or last key of the range (they still sort before or after every other);
    /// a NaN date takes the first.
    public static func date(_ value: Date) -> StoreKey {
        // From the seconds since 2001 that a Date holds, whole and fraction apart (both exact):
        // `timeIntervalSince1970` adds 978,307,200 s in a Double first, which rounded
        // 23:59:59.9999999 up to the next day's first millisecond (a record on its day for
        // `get`, on the next for a dump of a date range).
        let reference = value.timeIntervalSinceReferenceDate
        if reference.magnitude < 1e15 {
            let seconds = reference.rounded(.down)
            let fraction = min(999, ((reference - seconds) * 1000).rounded(.down))
            return .int(Int64(seconds) * 1000 + Int64(fraction) + 978_307_200_000)
        }
        let milliseconds = (value.timeIntervalSince1970 * 1000).rounded(.down)
        // 2^63 is exactly representable; Int64(_:) traps at or above it and on NaN.
        if milliseconds.isNaN || milliseconds < -0x1p63 { return .int(.min) }
        if milliseconds >= 0x1p63 { return .int(.max) }
        return .int(Int64(milliseconds))
    }

    /// Several components in order; each string is escaped and terminated so that
    /// ("a", "bc") and ("ab", "c") differ and still sort component by component.
    public static func composite(_ parts: [Component]) -> StoreKey {
        var out: [UInt8] = []
        for part in parts {
            switch part {
            case .string(let s):
                for b in s.utf8 {
                    out.append(b)
                    if b == 0 { out.append(0xFF) }
                }
                out.append(0)
                out.append(1)
            case .int(let i): out += StoreKey.int(i).bytes
            case .date(let d): out += StoreKey.date(d).bytes
            }
        }
        return StoreKey(bytes: out)
    }

    /// One part of a composite key.
    public enum Component: Hashable, Sendable {
        case string(String)
        case int(Int64)
        case date(Date)
    }

    /// Decodes an integer key made by `int(_:)`.
    public var intValue: Int64? {
        guard bytes.count == 8 else { return nil }
        var raw: UInt64 = 0
        for b in bytes { raw = raw << 8 | UInt64(b) }
        return Int64(bitPattern: raw ^ (1 << 63))
    }

    /// Decodes a date key made by `date(_:)` (to the millisecond; a date past the key range
    /// reads back as the range's end).
    public var dateValue: Date? {
        intValue.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// The key as UTF-8 text when it is valid UTF-8.
    public var stringValue: String? { String(validating: bytes, as: UTF8.self) }

    public static func < (lhs: StoreKey, rhs: StoreKey) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    public var description: String { stringValue ?? bytes.map { String(format: "%02x", $0) }.joined() }

    /// ``description`` of at most the first 120 bytes, with the key's size when cut: for
    /// diagnostics, where a damaged entry can name a "key" of megabytes (16 MB of hex in one
    /// line, and seconds to format it).
    package var clippedDescription: String {
        guard bytes.count > 120 else { return description }
        return StoreKey(bytes: Array(bytes.prefix(120))).description + "… (\(bytes.count) bytes)"
    }
}
