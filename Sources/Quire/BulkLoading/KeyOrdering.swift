internal import QuireLMDB

/// Orders of keys for the bulk loader, compared as raw bytes (LMDB's default order).
enum KeyOrdering {
    /// The positions of `keys` in ascending key order, equal keys in their input order.
    static func stableSortedOrder(_ keys: [ArenaBytes]) -> [Int] {
        // Most keys differ in their first 8 bytes: compare those as one big-endian integer
        // (zero-padded, which keeps the order whenever the prefixes differ) and compare whole
        // keys only on a tie.
        var entries = keys.indices.map { SortEntry(prefix: prefix(keys[$0].buffer), index: $0) }
        keys.withUnsafeBufferPointer { keys in
            entries.sort { a, b in
                if a.prefix != b.prefix { return a.prefix < b.prefix }
                let c = KeyRange.compare(keys[a.index].buffer, keys[b.index].buffer)
                return c != 0 ? c < 0 : a.index < b.index
            }
        }
        return entries.map(\.index)
    }

    /// Two key orders (positions in `keys`, each ascending) merged into one; on equal keys,
    /// `first`'s positions come first, so stable orders of consecutive inputs stay stable.
    static func mergeStable(_ first: [Int], _ second: [Int], keys: [ArenaBytes]) -> [Int] {
        var merged: [Int] = []
        merged.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count && j < second.count {
            if KeyRange.compare(keys[second[j]].buffer, keys[first[i]].buffer) < 0 {
                merged.append(second[j])
                j += 1
            } else {
                merged.append(first[i])
                i += 1
            }
        }
        merged += first[i...]
        merged += second[j...]
        return merged
    }

    private struct SortEntry {
        var prefix: UInt64
        var index: Int
    }

    /// The first 8 bytes of `key` as a big-endian number, zero-padded: keys whose prefixes differ
    /// sort as their prefixes do, so a sort compares whole keys only on a tie.
    static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(i < key.count ? key[i] : 0) }
        return value
    }

    /// True when `a` and `b` hold the same bytes (one `memcmp`: the generic `elementsEqual`
    /// goes a byte a call, and comparing reloaded records with it took most of a writer's time).
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && KeyRange.compare(a, b) == 0
    }

    /// True when `a` sorts before `b`.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in KeyRange.compare(a, b) < 0 } }
    }

    /// True when `key` sorts after `last` (always when there is no `last`).
    static func follows(_ key: ArenaBytes, _ last: [UInt8]?) -> Bool {
        guard let last else { return true }
        return last.withUnsafeBytes { KeyRange.compare($0, key.buffer) } < 0
    }

    /// True when `keys` are in ascending order; when `strictly`, equal neighbours fail too.
    static func isAscending(_ keys: some Collection<ArenaBytes>, strictly: Bool = false) -> Bool {
        let limit = strictly ? 0 : 1  // the smallest comparison of neighbours that breaks the order
        var previous: ArenaBytes?
        for key in keys {
            if let previous, KeyRange.compare(previous.buffer, key.buffer) >= limit { return false }
            previous = key
        }
        return true
    }

    /// One merged key: the run and position it is taken from, and how many keys (equal ones,
    /// of which it is the last given) it stands for.
    struct Pick {
        var run: Int32
        var position: Int32
        var consumed: Int32
    }

    /// The order in which a k-way merge of sorted key runs takes their keys: one pick per
    /// distinct key, ascending.
    static func mergeOrder(_ runs: [[ArenaBytes]]) -> [Pick] {
        var merge = Merge(runs)
        return merge.next(maxCount: .max)
    }

    /// A k-way merge of sorted key runs, taken a part at a time (so that writing the first part
    /// need not wait for the whole merge).
    struct Merge {
        private let runs: [[ArenaBytes]]
        private var heads: [Int]

        init(_ runs: [[ArenaBytes]]) {
            self.runs = runs
            heads = runs.map { _ in 0 }
        }

        /// The next picks, at most `maxCount`, ascending; empty when every run is merged.
        mutating func next(maxCount: Int) -> [Pick] {
            var picks: [Pick] = []
            picks.reserveCapacity(min(maxCount, runs.indices.reduce(0) { $0 + runs[$1].count - heads[$1] }))
            while picks.count < maxCount, let pick = nextPick() { picks.append(pick) }
            return picks
        }

        private mutating func nextPick() -> Pick? {
            var smallest = -1
            var smallestKey: ArenaBytes?
            for run in runs.indices where heads[run] < runs[run].count {
                let key = runs[run][heads[run]]
                if let best = smallestKey, KeyRange.compare(key.buffer, best.buffer) >= 0 { continue }
                smallest = run
                smallestKey = key
            }
            guard let key = smallestKey else { return nil }
            // Runs before `smallest` hold only larger keys; later runs hold later input.
            var pick = Pick(run: Int32(smallest), position: 0, consumed: 0)
            for run in smallest..<runs.count {
                while heads[run] < runs[run].count && KeyRange.compare(runs[run][heads[run]].buffer, key.buffer) == 0 {
                    pick.run = Int32(run)
                    pick.position = Int32(heads[run])
                    pick.consumed += 1
                    heads[run] += 1
                }
            }
            return pick
        }
    }
}
