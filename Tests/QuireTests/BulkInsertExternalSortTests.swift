import Foundation
import Quire
import QuireNews
import Synchronization
import Testing

/// Inputs larger than the sort window: each full window is written as a sorted run to a
/// temporary file, and the runs are merged into the store once, at the end.
@Suite struct BulkInsertExternalSortTests {
    /// The names in a store's directory besides LMDB's own files.
    private func strayFiles(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0 != "data.mdb" && $0 != "lock.mdb" }
    }

    @Test func windowsSpilledToAFileAreMergedIntoOneAppendedRun() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let seen = Mutex<[BulkInsertProgress]>([])
            // About 80 bytes a row held: a 100 KB window spills every third chunk of 500 rows.
            let options = BulkInsertOptions(chunkSize: 500, sortWindow: 100_000)
            let report = try await store.bulkInsert(scrambledRows(20_000, name: "v"), into: rows, options: options) { progress in
                seen.withLock { $0.append(progress) }
            }
            #expect(report.records == 20_000)
            #expect(report.chunks == 40)
            #expect(report.appendedChunks == 40)  // one ascending run into the empty store
            let events = seen.withLock { $0 }
            let spills = events.filter { $0.records == 0 }
            #expect(spills.count >= 10)  // a progress event per spilled window, before any commit
            #expect(spills.map(\.pending) == spills.map(\.pending).sorted() && spills.last?.pending == 20_000)
            #expect(events.filter { $0.records > 0 }.map(\.records) == Array(stride(from: 500, through: 20_000, by: 500)))
            #expect(events.last?.pending == 0)
            // The input's end begins the merge: it says so before its first commit.
            let merging = try #require(events.firstIndex { $0.phase == .mergingSortedRuns })
            #expect(events[..<merging].allSatisfy { $0.phase == .inserting && $0.records == 0 })
            #expect(events[merging].pending == 20_000 && events[merging].records == 0)
            #expect(events[merging...].allSatisfy { $0.phase == .mergingSortedRuns })  // no full-text index to pack
            try store.read { snap throws in
                var expected = 0
                for record in snap.records(in: rows) {
                    guard try record.get().1 == Row(id: expected, name: "v \(expected)", group: expected % 5) else { break }
                    expected += 1
                }
                #expect(expected == 20_000)
                #expect(try snap.keys(in: rows.indexes[0], of: rows, range: .prefix(StoreKey.int(3))).count == 4_000)
            }
            #expect(try store.verify().isSound)
            #expect(try strayFiles(path).isEmpty)
        }
    }

    @Test func withoutTheExternalSortEachWindowIsWrittenOnItsOwn() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let options = BulkInsertOptions(chunkSize: 500, sortWindow: 100_000, externalSort: false)
            let report = try await store.bulkInsert(scrambledRows(20_000, name: "v"), into: rows, options: options)
            #expect(report.records == 20_000)
            // Each window is a sorted run of its own that lands among the runs before it: only
            // the first is appended.
            #expect(report.chunks == 40)
            #expect(report.appendedChunks < 10)
            #expect(try store.read { try $0.count(of: rows) } == 20_000)
            #expect(try store.verify().isSound)
        }
    }

    @Test func spilledRunsLandingAmongStoredKeysReplaceAndMoveIndexEntries() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            try await store.bulkInsert((0..<10_000).map { Row(id: $0 * 2, name: "old", group: 9) }, into: rows)
            // Every even id again (new group) and every odd one, scrambled, spilled in many runs.
            let input = scrambledRows(20_000, name: "new")
            let report = try await store.bulkInsert(
                input, into: rows, options: BulkInsertOptions(chunkSize: 5_000, sortWindow: 100_000))
            #expect(report.records == 20_000)
            #expect(report.appendedChunks == 0)
            try store.read { snap throws in
                #expect(try snap.count(of: rows) == 20_000)
                #expect(try snap.get(.int(4), from: rows) == Row(id: 4, name: "new 4", group: 4))
                #expect(try snap.keys(in: rows.indexes[0], of: rows, range: .prefix(StoreKey.int(9))).isEmpty)
            }
            let verify = try store.verify()
            #expect(verify.isSound, "\(verify.problems)")
        }
    }

    @Test func aFailingValueAfterSpilledRunsStillCommitsEverythingBeforeIt() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var input = generatedArticles(1_200, seed: 41)
            input.reverse()  // out of order: held, and spilled every few chunks
            input[1_050].id = ""  // an empty key is refused
            let options = BulkInsertOptions(chunkSize: 100, sortWindow: 200_000)
            await #expect(throws: StoreError.self) {
                try await store.bulkInsert(input, into: articles, options: options)
            }
            try store.read { snap throws in
                #expect(try snap.count(of: articles) == 1_000)  // every chunk before the failing one
                for article in input[..<1_000] { #expect(try snap.get(.string(article.id), from: articles) == article) }
            }
            #expect(try store.verify().isSound)
            #expect(try strayFiles(path).isEmpty)
        }
    }

    /// A stop (`quire load`'s Ctrl-C) while the merged runs are written ends the load at the next
    /// chunk: the chunks committed stay, the rest of the runs is dropped with their file.
    @Test func aStopWhileTheRunsAreWrittenEndsTheLoadAtTheNextChunk() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let stop = Atomic<Bool>(false)
            let last = Mutex<BulkInsertProgress?>(nil)
            await #expect(throws: CancellationError.self) {
                try await store.withBulkLoader(
                    into: rows, options: BulkInsertOptions(chunkSize: 500, sortWindow: 100_000),
                    progress: { progress in
                        last.withLock { $0 = progress }
                        if progress.records >= 1_500 { stop.store(true, ordering: .relaxed) }
                    }
                ) { loader in
                    loader.stops(when: { stop.load(ordering: .relaxed) })
                    try await loader.submit(scrambledRows(20_000, name: "v"))
                }
            }
            let count = try store.read { try $0.count(of: rows) }
            // The third chunk's commit raised the stop; at most the one in flight followed it.
            #expect(count == 1_500 || count == 2_000, "\(count)")
            #expect(last.withLock { $0?.records } == count)
            #expect(last.withLock { $0?.pending } == 0)
            try store.read { snap throws in
                for id in [0, count - 1] { #expect(try snap.get(.int(Int64(id)), from: rows)?.name == "v \(id)") }
            }
            #expect(try store.verify().isSound)
            #expect(try strayFiles(path).isEmpty)
        }
    }

    /// The merge's progress counts up to its total: the chunks still committing when the input
    /// ended (an ordered start, written as it came) are counted before the merge's total is
    /// taken. (`quire load` showed "270,490/257,519 records".)
    @Test func theMergesTotalHoldsTheChunksStillCommittingWhenItBegins() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let ordered = (0..<3_000).map { Row(id: $0, name: "v \($0)", group: $0 % 5) }
            let scrambled = scrambledRows(17_000, name: "v").map { Row(id: $0.id + 3_000, name: "v \($0.id + 3_000)", group: ($0.id + 3_000) % 5) }
            let seen = Mutex<[BulkInsertProgress]>([])
            let options = BulkInsertOptions(chunkSize: 500, sortWindow: 100_000)
            let report = try await store.bulkInsert(ordered + scrambled, into: rows, options: options) { progress in
                seen.withLock { $0.append(progress) }
            }
            #expect(report.records == 20_000)
            let merge = seen.withLock { $0 }.filter { $0.phase == .mergingSortedRuns }
            let first = try #require(merge.first)
            #expect(first.records + first.pending == 20_000, "\(first)")
            #expect(merge.allSatisfy { $0.records <= 20_000 } && merge.last?.records == 20_000)
            #expect(try store.verify().isSound)
        }
    }

    /// A stop while the input is read: what is held is written only when it is at most a chunk
    /// (a trickle read from a pipe), never once a window went to the temporary file (its merge
    /// would take as long as the load so far); a window of thousands in memory is dropped too
    /// (merging, tokenizing and indexing it held the stop back for seconds).
    @Test(arguments: [
        (6_000, false, 100, 500, 0), (6_000, true, 100, 500, 0), (400, false, 100, 500, 500),
        // A block of thousands after the stop (a file's, not a pipe's trickle) is dropped.
        (400, false, 3_000, 10_000, 400),
    ])
    func aStopWhileTheInputIsReadWritesAtMostAChunkHeldInMemory(
        rows count: Int, spilled: Bool, after: Int, chunk: Int, written: Int
    ) async throws {
        struct Stop: Error {}
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let all = scrambledRows(count + after, name: "v")
            let options = BulkInsertOptions(chunkSize: chunk, sortWindow: spilled ? 100_000 : 64 << 20)
            let stop = Atomic<Bool>(false)
            await #expect(throws: Stop.self) {
                try await store.withBulkLoader(into: rows, options: options) { loader in
                    loader.stops(when: { stop.load(ordering: .relaxed) })
                    for start in stride(from: 0, to: count, by: 100) { try await loader.submit(all[start..<start + 100]) }
                    stop.store(true, ordering: .relaxed)
                    // Values submitted after the stop (the lines a reader hands over) join what is
                    // held while it stays within a chunk; else they are dropped, not encoded.
                    try await loader.submit(all[count...])
                    throw Stop()
                }
            }
            #expect(try store.read { try $0.count(of: rows) } == written)
            #expect(try store.verify().isSound)
            #expect(try strayFiles(path).isEmpty)
        }
    }

    @Test func aCancelledLoadDropsItsSpilledRunsAndLeavesNoFile() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let all = scrambledRows(6_000, name: "v")
            await #expect(throws: CancellationError.self) {
                try await store.withBulkLoader(into: rows, options: BulkInsertOptions(chunkSize: 1_000, sortWindow: 100_000)) {
                    loader in
                    for start in stride(from: 0, to: all.count, by: 1_000) { try await loader.submit(all[start..<start + 1_000]) }
                    throw CancellationError()
                }
            }
            #expect(try store.read { try $0.count(of: rows) } == 0)
            #expect(try strayFiles(path).isEmpty)
            // The store takes a load again.
            try await store.bulkInsert(all, into: rows, options: BulkInsertOptions(sortWindow: 100_000))
            #expect(try store.read { try $0.count(of: rows) } == 6_000)
        }
    }
}
