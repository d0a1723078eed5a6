import Testing

@testable import Quire

@Suite struct RecordArenaTests {
    @Test func keepsEveryAppendedRecordIntactAcrossBlocks() throws {
        // Small first block, records of every size up to several blocks: forces new blocks,
        // one bigger than the doubling would give.
        let arena = RecordArena(firstBlock: 1)
        var expected: [[UInt8]] = []
        var stored: [ArenaBytes] = []
        var state: UInt64 = 42
        for i in 0..<3_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let count = i == 1_500 ? 9 << 20 : Int(state >> 54)  // 0...1023 bytes, once 9 MiB
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            expected.append(bytes)
            stored.append(try arena.append(bytes))
        }
        #expect(stored.map(\.array) == expected)
        #expect(arena.byteCount == expected.reduce(0) { $0 + $1.count })
        withExtendedLifetime(arena) {}
    }

    @Test func emptyBytesAreValid() throws {
        let arena = RecordArena()
        let empty = try arena.append([])
        #expect(empty.count == 0)
        #expect(empty.array.isEmpty)
        #expect(try arena.append([1, 2, 3]).array == [1, 2, 3])
        withExtendedLifetime(arena) {}
    }
}
