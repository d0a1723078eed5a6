import QuireCodec
internal import QuireLMDB

/// Merges encoded chunks, each sorted by key, into chunks sorted across all of them: what lets
/// a load whose keys arrive in random order still write ascending keys (appended, when they
/// are beyond the store's last key) instead of one sorted run per chunk.
///
/// A key given more than once comes out once, with the value given last (the latest chunk,
/// and the latest position in it), as if every value had been written in input order.
struct SortedRunMerger {
    // The runs' parts apart, each read by position.
    private let entries: [[EncodedEntry]]
    private let indexKeys: [[IndexKeyBytes]]
    private let arenas: [RecordArena]
    let fields: FieldTable
    private var merge: KeyOrdering.Merge
    /// Stored form → the keys over 510 bytes it stands for (one, unless two collide).
    private let longKeys: [[UInt8]: [[UInt8]]]

    /// `runs` must each be sorted by key (equal keys in input order) and encoded with `fields`
    /// or a prefix of it; earlier runs hold earlier input.
    init(_ runs: [EncodedChunk], fields: FieldTable) {
        entries = runs.map(\.entries)
        indexKeys = runs.map(\.indexKeys)
        arenas = runs.flatMap(\.arenas)
        self.fields = fields
        merge = KeyOrdering.Merge(entries.map { $0.map(\.key) })
        longKeys = Self.longKeyMap(runs.lazy.flatMap(\.longKeys))
    }

    /// The next merged chunk of at most `maxCount` records, or nil when all runs are merged.
    mutating func next(maxCount: Int) -> EncodedChunk? {
        let picks = merge.next(maxCount: maxCount)
        guard !picks.isEmpty else { return nil }
        let indexed = indexKeys.contains { !$0.isEmpty }
        var chunk = EncodedChunk(
            entries: [], arenas: arenas, indexKeys: [], fields: fields,
            arrivedSorted: true, inputCount: 0, byteCount: 0)
        chunk.entries.reserveCapacity(picks.count)
        if indexed { chunk.indexKeys.reserveCapacity(picks.count) }
        for pick in picks {
            let (run, position) = (Int(pick.run), Int(pick.position))
            let entry = entries[run][position]
            chunk.entries.append(entry)
            chunk.byteCount += entry.key.count + entry.record.count + EncodedChunk.overheadPerRecord
            if indexed {
                chunk.indexKeys.append(indexKeys[run][position])
                chunk.byteCount += indexKeys[run][position].bytes.count
            }
            chunk.inputCount += Int(pick.consumed)
        }
        if !longKeys.isEmpty { chunk.longKeys = Self.longKeysUsed(by: chunk, longKeys) }
        return chunk
    }

    /// Calls `body` with every merged record in key order, its index keys (nil when the
    /// collection has none) and the input values it stands for.
    mutating func forEachRecord(_ body: (EncodedEntry, IndexKeyBytes?, Int) throws -> Void) rethrows {
        let indexed = indexKeys.contains { !$0.isEmpty }
        while true {
            let picks = merge.next(maxCount: 65_536)
            if picks.isEmpty { return }
            for pick in picks {
                let (run, position) = (Int(pick.run), Int(pick.position))
                try body(entries[run][position], indexed ? indexKeys[run][position] : nil, Int(pick.consumed))
            }
        }
    }

    /// Every long key of the runs, with its stored form.
    var allLongKeys: [LongKeyPair] {
        longKeys.flatMap { physical, logicals in logicals.map { LongKeyPair(physical: physical, logical: $0) } }
    }

    /// Stored form → the distinct keys over 510 bytes `pairs` give it.
    static func longKeyMap(_ pairs: some Sequence<LongKeyPair>) -> [[UInt8]: [[UInt8]]] {
        var map: [[UInt8]: [[UInt8]]] = [:]
        for pair in pairs where !(map[pair.physical]?.contains(pair.logical) ?? false) {
            map[pair.physical, default: []].append(pair.logical)
        }
        return map
    }

    /// The long keys among a merged chunk's record and index keys, each stored form once;
    /// `longKeys` maps a stored form to the keys it stands for.
    static func longKeysUsed(by chunk: EncodedChunk, _ longKeys: [[UInt8]: [[UInt8]]]) -> [LongKeyPair] {
        var seen = Set<[UInt8]>()
        var pairs: [LongKeyPair] = []
        func note(_ physical: [UInt8]) {
            guard LongKeys.isPhysicalLong(physical.count), seen.insert(physical).inserted else { return }
            for logical in longKeys[physical] ?? [] { pairs.append(LongKeyPair(physical: physical, logical: logical)) }
        }
        for entry in chunk.entries where LongKeys.isPhysicalLong(entry.key.count) { note(entry.key.array) }
        for keys in chunk.indexKeys {
            keys.forEach { _, key in
                if LongKeys.isPhysicalLong(key.count) { note(Array(key)) }
            }
        }
        return pairs
    }
}
