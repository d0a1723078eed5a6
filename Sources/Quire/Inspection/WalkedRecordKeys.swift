/// The records verify's walk saw, by a 64-bit hash of their physical keys
/// (``SearchDocumentEntries/hashValue(_:)``), each with its text's checksum for the full-text
/// check (``SearchDocumentCheck``) when its collection's index keeps checks. The passes after the
/// walk look a key up here, not in the records' B-tree: every index entry, relation member and
/// full-text document once, millions of lookups in a large store. A missing key whose hash a
/// present one shares would pass for present: about one chance in 2⁶⁴ / records a lookup.
struct WalkedRecordKeys {
    /// Per key hash: the text checksum, ``noText``, or ``shared`` for a hash two keys share.
    private var byHash: [UInt64: UInt64] = [:]
    private static let noText = UInt64.max - 1
    private static let shared = UInt64.max

    init(capacity: Int) { byHash.reserveCapacity(capacity) }

    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 { SearchDocumentEntries.hashValue(key) }

    /// Adds the record whose key hashes to `hash` (``hash(_:)``), with its text's checksum.
    mutating func add(hash: UInt64, textChecksum: UInt32?) {
        if byHash.updateValue(textChecksum.map(UInt64.init) ?? Self.noText, forKey: hash) != nil { byHash[hash] = Self.shared }
    }

    /// Whether the walk saw a record under the physical `key`.
    func contains(_ key: UnsafeRawBufferPointer) -> Bool { byHash[Self.hash(key)] != nil }

    /// The text checksum of the record under the physical `key`, nil when the walk has none.
    func textChecksum(of key: UnsafeRawBufferPointer) -> UInt32? {
        guard let found = byHash[Self.hash(key)], found < Self.noText else { return nil }
        return UInt32(found)
    }
}
