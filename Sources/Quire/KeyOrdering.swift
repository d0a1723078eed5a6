import QuireLMDB

/// Orders of keys for the bulk loader, compared as raw bytes (LMDB's default order) without
/// retaining an array per comparison.
enum KeyOrdering {
    /// The positions of `keys` in ascending key order, equal keys in their input order.
    static func stableSortedOrder(_ keys: [[UInt8]]) -> [Int] {
        // Most keys differ in their first 8 bytes: compare those as one big-endian integer
        // (zero-padded, which keeps the order whenever the prefixes differ) and compare whole
        // keys only on a tie.
        var entries = keys.indices.map { SortEntry(prefix: prefix(keys[$0]), index: $0) }
        keys.withUnsafeBufferPointer { keys in
            entries.sort { a, b in
                if a.prefix != b.prefix { return a.prefix < b.prefix }
                let c = KeyRange.compare(keys[a.index], keys[b.index])
                return c != 0 ? c < 0 : a.index < b.index
            }
        }
        return entries.map(\.index)
    }

    private struct SortEntry {
        var prefix: UInt64
        var index: Int
    }

    private static func prefix(_ key: [UInt8]) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(i < key.count ? key[i] : 0) }
        return value
    }

    /// One merged key: the run and position it is taken from, and how many keys (equal ones,
    /// of which it is the last given) it stands for.
    struct Pick {
        var run: Int32
        var position: Int32
        var consumed: Int32
    }

    /// The order in which a k-way merge of sorted key runs takes their keys: one pick per
    /// distinct key, ascending. Computed on one flat copy of the key bytes, so that a
    /// comparison is a `memcmp`.
    static func mergeOrder(_ runs: [[[UInt8]]]) -> [Pick] {
        var bytes: [UInt8] = []
        var starts: [Int] = [0]  // key i is bytes[starts[i]..<starts[i + 1]], runs one after another
        var runFirst: [Int] = []
        for run in runs {
            runFirst.append(starts.count - 1)
            for key in run {
                bytes += key
                starts.append(bytes.count)
            }
        }
        let ends = runFirst.indices.map { $0 + 1 < runFirst.count ? runFirst[$0 + 1] : starts.count - 1 }
        var heads = runFirst
        var picks: [Pick] = []
        picks.reserveCapacity(starts.count - 1)
        bytes.withUnsafeBytes { buffer in
            func compare(_ a: Int, _ b: Int) -> Int {
                KeyRange.compare(
                    UnsafeRawBufferPointer(rebasing: buffer[starts[a]..<starts[a + 1]]),
                    UnsafeRawBufferPointer(rebasing: buffer[starts[b]..<starts[b + 1]]))
            }
            while true {
                var smallest = -1
                for run in heads.indices where heads[run] < ends[run] {
                    if smallest < 0 || compare(heads[run], heads[smallest]) < 0 { smallest = run }
                }
                guard smallest >= 0 else { break }
                // Runs before `smallest` hold only larger keys; later runs hold later input.
                let key = heads[smallest]
                var pick = Pick(run: Int32(smallest), position: 0, consumed: 0)
                for run in smallest..<heads.count {
                    while heads[run] < ends[run] && compare(heads[run], key) == 0 {
                        pick.run = Int32(run)
                        pick.position = Int32(heads[run] - runFirst[run])
                        pick.consumed += 1
                        heads[run] += 1
                    }
                }
                picks.append(pick)
            }
        }
        return picks
    }
}
