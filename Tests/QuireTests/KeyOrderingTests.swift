import Testing

@testable import Quire

@Suite struct KeyOrderingTests {
    /// Keys that stress the 8-byte prefix comparison: short keys, zero bytes, shared prefixes.
    private func awkwardKeys(_ count: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let stems: [[UInt8]] = [[], [0], [0, 0], [7], [7, 0, 0, 0, 0, 0, 0, 0], Array("nyt://article/".utf8)]
        return (0..<count).map { _ in
            var key = stems[Int(next() % UInt64(stems.count))]
            for _ in 0..<Int(next() % 12) { key.append(UInt8(next() % 3 == 0 ? 0 : next() % 256)) }
            return key
        }
    }

    /// `keys` copied into an arena, as the bulk loader holds them; the arena must outlive them.
    private func arenaKeys(_ keys: [[UInt8]], in arena: RecordArena) throws -> [ArenaBytes] {
        try keys.map { try arena.append($0) }
    }

    /// Short awkward keys (so that many repeat) cut into runs of `runLength`, each sorted.
    private func sortedRuns(_ count: Int, seed: UInt64, keyLength: Int, runLength: Int) -> (keys: [[UInt8]], runs: [[[UInt8]]]) {
        let keys = awkwardKeys(count, seed: seed).map { Array($0.prefix(keyLength)) }
        let runs = stride(from: 0, to: keys.count, by: runLength).map { start in
            Array(keys[start..<min(keys.count, start + runLength)]).sorted { $0.lexicographicallyPrecedes($1) }
        }
        return (keys, runs)
    }

    private func referenceOrder(_ keys: [[UInt8]]) -> [Int] {
        keys.indices.sorted { a, b in
            if keys[a] != keys[b] { return keys[a].lexicographicallyPrecedes(keys[b]) }
            return a < b
        }
    }

    @Test(arguments: [1 as UInt64, 2, 3]) func sortsLikeBytewiseComparisonAndKeepsEqualKeysInInputOrder(seed: UInt64)
        throws
    {
        let keys = awkwardKeys(3_000, seed: seed)
        let arena = RecordArena()
        let order = KeyOrdering.stableSortedOrder(try arenaKeys(keys, in: arena))
        #expect(order == referenceOrder(keys))
        let sorted = try arenaKeys(order.map { keys[$0] }, in: arena)
        #expect(KeyOrdering.isAscending(sorted))
        #expect(KeyOrdering.isAscending(sorted, strictly: true) == (Set(keys).count == keys.count))
        #expect(!KeyOrdering.isAscending(try arenaKeys(keys, in: arena)))
        withExtendedLifetime(arena) {}
    }

    @Test func twoSortedHalvesMergeIntoTheStableOrderOfTheWhole() throws {
        let keys = awkwardKeys(2_500, seed: 5).map { Array($0.prefix(3)) }  // short: many equal keys
        let arena = RecordArena()
        let all = try arenaKeys(keys, in: arena)
        let split = 1_100
        let first = KeyOrdering.stableSortedOrder(Array(all[..<split]))
        let second = KeyOrdering.stableSortedOrder(Array(all[split...])).map { $0 + split }
        #expect(KeyOrdering.mergeStable(first, second, keys: all) == referenceOrder(keys))
        #expect(KeyOrdering.mergeStable([], second, keys: all) == second)
        withExtendedLifetime(arena) {}
    }

    @Test func mergeTakesEachKeyOnceFromTheLatestRunThatGaveIt() throws {
        // Runs, each sorted, with keys repeated inside a run and across runs.
        let (keys, runs) = sortedRuns(2_000, seed: 9, keyLength: 3, runLength: 450)
        let arena = RecordArena()
        let picks = KeyOrdering.mergeOrder(try runs.map { try arenaKeys($0, in: arena) })

        var latest: [[UInt8]: (run: Int, position: Int)] = [:]
        var given: [[UInt8]: Int] = [:]
        for (r, run) in runs.enumerated() {
            for (p, key) in run.enumerated() {
                latest[key] = (r, p)
                given[key, default: 0] += 1
            }
        }
        let expected = latest.keys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(picks.map { runs[Int($0.run)][Int($0.position)] } == expected)
        for pick in picks {
            let key = runs[Int(pick.run)][Int(pick.position)]
            #expect(latest[key]! == (Int(pick.run), Int(pick.position)))
            #expect(Int(pick.consumed) == given[key])
        }
        #expect(picks.reduce(0) { $0 + Int($1.consumed) } == keys.count)
        withExtendedLifetime(arena) {}
    }

    @Test func aMergeTakenInPartsGivesTheWholeMergesOrder() throws {
        let runs = sortedRuns(1_500, seed: 4, keyLength: 2, runLength: 400).runs
        let arena = RecordArena()
        let arenaRuns = try runs.map { try arenaKeys($0, in: arena) }
        let whole = KeyOrdering.mergeOrder(arenaRuns)
        var merge = KeyOrdering.Merge(arenaRuns)
        var parts: [KeyOrdering.Pick] = []
        while case let part = merge.next(maxCount: 37), !part.isEmpty {
            #expect(part.count <= 37)
            parts += part
        }
        #expect(parts.map { [$0.run, $0.position, $0.consumed] } == whole.map { [$0.run, $0.position, $0.consumed] })
        #expect(merge.next(maxCount: 10).isEmpty)
        withExtendedLifetime(arena) {}
    }

    @Test func mergeOfNothingIsEmpty() {
        #expect(KeyOrdering.mergeOrder([]).isEmpty)
        #expect(KeyOrdering.mergeOrder([[], []]).isEmpty)
        #expect(KeyOrdering.stableSortedOrder([]).isEmpty)
        #expect(KeyOrdering.isAscending([ArenaBytes]()))
    }

    @Test func followsComparesBytewiseAgainstTheLastKey() throws {
        let arena = RecordArena()
        let keys = awkwardKeys(300, seed: 11)
        let stored = try arenaKeys(keys, in: arena)
        for (i, key) in stored.enumerated() {
            #expect(KeyOrdering.follows(key, nil))
            let last = keys[(i * 7) % keys.count]
            #expect(KeyOrdering.follows(key, last) == last.lexicographicallyPrecedes(keys[i]))
        }
        withExtendedLifetime(arena) {}
    }
}
