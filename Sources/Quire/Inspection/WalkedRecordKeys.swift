/// The records verify's walk saw, by a 64-bit hash of their physical keys
/// (``SearchDocumentEntries/hashValue(_:)``), each with its text's checksum for the full-text
/// check (``SearchDocumentCheck``) when its collection's index keeps checks. The passes after the
/// walk look a key up here, not in the records' B-tree: every index entry, relation member and
/// full-text document once, millions of lookups in a large store. A missing key whose hash a
/// present one shares would pass for present: about one chance in 2⁶⁴ / records a lookup.
///
/// Sorted by hash, 16 bytes a record: a dictionary reserved for 10M records took 268 MB (its
/// buckets a power of two, at most three quarters full); the hashes are uniform, so a lookup
/// interpolates its way in a few probes. Built by ``Builder`` during the walk.
struct WalkedRecordKeys {
    fileprivate struct Entry {
        var hash: UInt64
        /// The text checksum, ``noText``, or ``shared`` for a hash two keys share.
        var value: UInt64
    }

    private static let noText = UInt64.max - 1
    private static let shared = UInt64.max
    private let entries: [Entry]

    /// The keys in walk order, sorted once the walk is done.
    struct Builder {
        private var entries: [Entry] = []

        init(capacity: Int) { entries.reserveCapacity(capacity) }

        /// Adds the record whose key hashes to `hash` (``hash(_:)``), with its text's checksum.
        mutating func add(hash: UInt64, textChecksum: UInt32?) {
            entries.append(Entry(hash: hash, value: textChecksum.map(UInt64.init) ?? WalkedRecordKeys.noText))
        }

        /// The keys added, ready for lookups (moved out: sorting a second reference would copy them).
        mutating func sealed() -> WalkedRecordKeys {
            var taken: [Entry] = []
            swap(&taken, &entries)
            return WalkedRecordKeys(sorting: taken)
        }
    }

    private init(sorting unsorted: consuming [Entry]) {
        var entries = consume unsorted
        entries.sort { $0.hash < $1.hash }
        var kept = 0
        for entry in entries {
            if kept > 0 && entries[kept - 1].hash == entry.hash {
                entries[kept - 1].value = Self.shared
            } else {
                entries[kept] = entry
                kept += 1
            }
        }
        entries.removeLast(entries.count - kept)
        self.entries = entries
    }

    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 { SearchDocumentEntries.hashValue(key) }

    /// Whether the walk saw a record under the physical `key`.
    func contains(_ key: UnsafeRawBufferPointer) -> Bool { contains(hash: Self.hash(key)) }

    /// The text checksum of the record under the physical `key`, nil when the walk has none.
    func textChecksum(of key: UnsafeRawBufferPointer) -> UInt32? { checksum(ofHash: Self.hash(key)) }

    func contains(hash: UInt64) -> Bool { value(of: hash) != nil }

    func checksum(ofHash hash: UInt64) -> UInt32? {
        guard let found = value(of: hash), found < Self.noText else { return nil }
        return UInt32(found)
    }

    /// The value stored for `hash`: interpolation between the range's ends (the hashes are
    /// uniform), halving instead after a few probes so that no spread of hashes costs more
    /// than a binary search.
    private func value(of hash: UInt64) -> UInt64? {
        entries.withUnsafeBufferPointer { entries in
            var (low, high, probes) = (0, entries.count - 1, 0)
            while low <= high {
                let (first, last) = (entries[low].hash, entries[high].hash)
                guard hash >= first && hash <= last else { return nil }
                probes += 1
                var middle = low + (high - low) / 2
                if probes <= 4 && last > first {
                    let fraction = Double(hash - first) / Double(last - first)
                    middle = low + min(high - low, Int(fraction * Double(high - low)))
                }
                let found = entries[middle].hash
                if found == hash { return entries[middle].value }
                if found < hash { low = middle + 1 } else { high = middle - 1 }
            }
            return nil
        }
    }
}
