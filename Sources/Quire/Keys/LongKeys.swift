internal import QuireLMDB

/// How keys longer than LMDB's key limit are stored: identification keys, index keys and
/// relation keys (owners and members) of any length.
///
/// LMDB refuses keys (and, in sorted-duplicate databases, values) over 511 bytes. A key of up to
/// ``literalLimit`` (510) bytes is stored as itself. A longer *logical* key is stored as its first
/// ``prefixLength`` (495) bytes followed by a ``digestLength`` (16) byte hash of the whole key:
/// exactly ``physicalLength`` (511) bytes, a length no literal key has, so a stored key is a long
/// one exactly when it is 511 bytes long. The `_longkeys` database maps each such physical key to
/// its full logical key; it is written in the same transaction as the first key that needs it and
/// is what detects a hash collision (a physical key already mapped to another logical key).
///
/// Physical keys sort like their logical keys up to byte 495; long keys that share their first
/// 495 bytes sort among themselves by hash. Range bounds longer than 495 bytes are widened to
/// their first 495 bytes and the walk filters by the logical key, so range membership is exact.
///
/// Short keys pay nothing: only keys over 510 bytes are hashed or looked up.
struct LongKeys: Sendable {
    /// The longest key stored as itself.
    static let literalLimit = 510
    /// The bytes of a long key kept at the front of its physical form.
    static let prefixLength = 495
    /// The bytes of the hash after the prefix.
    static let digestLength = 16
    /// The length of every long key's physical form, and of no literal key.
    static let physicalLength = prefixLength + digestLength

    /// Computes the 16-byte digest of a whole logical key.
    private let digest: @Sendable ([UInt8]) -> [UInt8]

    /// The store's scheme: MurmurHash3 x64 128 with seed 0, or `digest` (tests force collisions
    /// with it).
    init(digest: (@Sendable ([UInt8]) -> [UInt8])? = nil) {
        self.digest = digest ?? { KeyHash.murmur3x64_128($0) }
    }

    /// True when a key of `count` bytes must be stored in its hashed form.
    @inline(__always)
    static func isLong(_ count: Int) -> Bool { count > literalLimit }

    /// True when a stored key of `count` bytes is the physical form of a long key.
    @inline(__always)
    static func isPhysicalLong(_ count: Int) -> Bool { count == physicalLength }

    /// The key as stored: itself up to 510 bytes, else its first 495 bytes and its digest.
    func physical(_ logical: [UInt8]) -> [UInt8] {
        guard Self.isLong(logical.count) else { return logical }
        let hash = digest(logical)
        precondition(hash.count == Self.digestLength, "a long-key digest must be \(Self.digestLength) bytes")
        var out = [UInt8]()
        out.reserveCapacity(Self.physicalLength)
        out += logical[..<Self.prefixLength]
        out += hash
        return out
    }

    /// A range over physical keys that contains every stored key whose logical key is in `range`,
    /// and the filter to apply to logical keys when the two differ (a bound longer than 495
    /// bytes); nil when the physical range is exact.
    static func physicalRange(_ range: KeyRange) -> (range: KeyRange, filter: KeyRange?) {
        let lowerLong = range.lower.map { Self.bytes(of: $0).count > prefixLength } ?? false
        let upperLong = range.upper.map { Self.bytes(of: $0).count > prefixLength } ?? false
        guard lowerLong || upperLong else { return (range, nil) }
        var widened = range
        if lowerLong, let lower = range.lower {
            widened.lower = .inclusive(Array(Self.bytes(of: lower).prefix(prefixLength)))
        }
        if upperLong, let upper = range.upper {
            let prefix = Array(Self.bytes(of: upper).prefix(prefixLength))
            widened.upper = KeyRange.successor(ofPrefix: prefix).map { .exclusive($0) }
        }
        return (widened, range)
    }

    /// True when `key` lies in `range` (bytewise order, as LMDB compares).
    static func contains(_ key: [UInt8], in range: KeyRange) -> Bool {
        if let lower = range.lower {
            let c = KeyRange.compare(key, bytes(of: lower))
            switch lower {
            case .inclusive: if c < 0 { return false }
            case .exclusive: if c <= 0 { return false }
            }
        }
        if let upper = range.upper {
            let c = KeyRange.compare(key, bytes(of: upper))
            switch upper {
            case .inclusive: if c > 0 { return false }
            case .exclusive: if c >= 0 { return false }
            }
        }
        return true
    }

    private static func bytes(of bound: KeyRange.Bound) -> [UInt8] {
        switch bound {
        case .inclusive(let key), .exclusive(let key): key
        }
    }
}

/// The hash of long keys: MurmurHash3, x64 128-bit variant (Austin Appleby's public-domain
/// algorithm), written from its description. Its 16 bytes are `h1` then `h2`, each little-endian.
/// It is part of the store format (docs/FORMAT.md): changing it would orphan stored long keys.
enum KeyHash {
    static func murmur3x64_128(_ bytes: [UInt8], seed: UInt64 = 0) -> [UInt8] {
        let c1: UInt64 = 0x87c3_7b91_1142_53d5
        let c2: UInt64 = 0x4cf5_ad43_2745_937f
        var h1 = seed
        var h2 = seed
        @inline(__always) func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
        @inline(__always) func fmix(_ k: UInt64) -> UInt64 {
            var k = k
            k ^= k >> 33
            k &*= 0xff51_afd7_ed55_8ccd
            k ^= k >> 33
            k &*= 0xc4ce_b9fe_1a85_ec53
            k ^= k >> 33
            return k
        }
        @inline(__always) func mix1(_ k: UInt64) -> UInt64 { rotl(k &* c1, 31) &* c2 }
        @inline(__always) func mix2(_ k: UInt64) -> UInt64 { rotl(k &* c2, 33) &* c1 }
        bytes.withUnsafeBytes { raw in
            let blocks = raw.count / 16
            for i in 0..<blocks {
                let k1 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 16, as: UInt64.self))
                let k2 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i * 16 + 8, as: UInt64.self))
                h1 ^= mix1(k1)
                h1 = rotl(h1, 27) &+ h2
                h1 = h1 &* 5 &+ 0x52dc_e729
                h2 ^= mix2(k2)
                h2 = rotl(h2, 31) &+ h1
                h2 = h2 &* 5 &+ 0x3849_5ab5
            }
            let tail = blocks * 16
            let rest = raw.count - tail
            var k1: UInt64 = 0
            var k2: UInt64 = 0
            if rest > 8 {
                for j in stride(from: rest - 1, through: 8, by: -1) { k2 = k2 << 8 | UInt64(raw[tail + j]) }
                h2 ^= mix2(k2)
            }
            if rest > 0 {
                for j in stride(from: min(rest, 8) - 1, through: 0, by: -1) { k1 = k1 << 8 | UInt64(raw[tail + j]) }
                h1 ^= mix1(k1)
            }
        }
        let length = UInt64(bytes.count)
        h1 ^= length
        h2 ^= length
        h1 &+= h2
        h2 &+= h1
        h1 = fmix(h1)
        h2 = fmix(h2)
        h1 &+= h2
        h2 &+= h1
        var out = [UInt8]()
        out.reserveCapacity(16)
        withUnsafeBytes(of: h1.littleEndian) { out += $0 }
        withUnsafeBytes(of: h2.littleEndian) { out += $0 }
        return out
    }
}
