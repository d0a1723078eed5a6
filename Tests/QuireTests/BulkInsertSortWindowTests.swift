import Foundation
import Quire
import QuireLMDB  // white-box: reaches under the store on purpose
import QuireNews
import Synchronization
import Testing

/// Chunks whose keys arrive out of order are held and merged across the sort window.
@Suite struct BulkInsertSortWindowTests {
    @Test func randomKeysAcrossChunksAreMergedIntoOneAppendedRun() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let input = scrambledRows(2_000)
            let committed = Mutex<[Int]>([])
            let report = try await store.bulkInsert(input, into: rows, options: BulkInsertOptions(chunkSize: 250)) { progress in
                committed.withLock { $0.append(progress.records) }
            }
            #expect(report.records == 2_000)
            #expect(report.chunks == 8)
            #expect(report.appendedChunks == 8)  // each chunk alone overlaps the others: only a merge appends them all
            #expect(committed.withLock { $0 } == Array(stride(from: 250, through: 2_000, by: 250)))
            try store.read { snap throws in
                var expected = 0
                for record in snap.records(in: rows) {
                    let (key, row) = try record.get()
                    guard key == .int(Int64(expected)), row == Row(id: expected, name: "v1 \(expected)", group: expected % 5)
                    else { break }
                    expected += 1
                }
                #expect(expected == 2_000)
                #expect(try snap.keys(in: rows.indexes[0], of: rows).count == 2_000)
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func aMergedRunLandingAmongStoredKeysCommitsInSmallerTransactions() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let evens = (0..<30_000).map { Row(id: $0 * 2, name: "even", group: 0) }
            let first = try await store.bulkInsert(evens, into: rows)
            #expect(first.chunks == 2 && first.appendedChunks == 2)
            // Odd ids in scrambled order, one window: the merged run interleaves with the evens.
            let odds = scrambledRows(30_000).map { Row(id: $0.id * 2 + 1, name: "odd", group: 1) }
            let options = BulkInsertOptions(chunkSize: 20_000)
            let second = try await store.bulkInsert(odds, into: rows, options: options)
            #expect(second.records == 30_000)
            #expect(second.chunks == 3)  // 12,000 + 12,000 + 6,000, not 20,000 + 10,000
            #expect(second.appendedChunks == 0)
            // Beyond every stored key, the same window is written in chunks of the chunk size.
            let above = scrambledRows(30_000).map { Row(id: $0.id + 100_000, name: "above", group: 2) }
            let third = try await store.bulkInsert(above, into: rows, options: options)
            #expect(third.chunks == 2 && third.appendedChunks == 2)
            try store.read { snap throws in #expect(try snap.count(of: rows) == 90_000) }
            #expect(try store.verify().isSound)
        }
    }

    @Test func piecesStagedInOrderThenJoiningTheWindowStillAppendInFullChunks() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            // A sequence: its first piece of 4,096 arrives in order (staged), the rest scrambled.
            let head = (100_000..<(100_000 + 4_096)).map { Row(id: $0, name: "head", group: 0) }
            let tail = scrambledRows(25_904).map { Row(id: $0.id, name: "tail", group: 1) }
            let values = (head + tail).lazy.map { $0 }
            let report = try await store.bulkInsert(values, into: rows, options: BulkInsertOptions(chunkSize: 20_000))
            #expect(report.records == 30_000)
            #expect(report.chunks == 2)  // 20,000 + 10,000: the merged run appends into the empty store
            #expect(report.appendedChunks == 2)
            try store.read { snap throws in #expect(try snap.count(of: rows) == 30_000) }
            #expect(try store.verify().isSound)
        }
    }

    @Test(arguments: [0, 600, 256 << 20]) func theLastValueForAKeyWinsWhateverTheWindow(window: Int) async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            // Three passes over 300 ids in scrambled orders: every key given three times, in
            // different chunks, and the window (in bytes) flushes every few chunks or never.
            let input = scrambledRows(300, name: "a") + scrambledRows(300, name: "b").reversed() + scrambledRows(300, name: "c")
            let options = BulkInsertOptions(chunkSize: 70, sortWindow: window)
            let report = try await store.bulkInsert(input, into: rows, options: options)
            #expect(report.records == 900)
            try store.read { snap throws in
                #expect(try snap.count(of: rows) == 300)
                for id in 0..<300 { #expect(try snap.get(.int(Int64(id)), from: rows)?.name == "c \(id)") }
                #expect(try snap.keys(in: rows.indexes[0], of: rows).count == 300)
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func chunksHeldAfterOneWrittenInOrderStillReplaceItsValues() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let first = (0..<100).map { Row(id: $0, name: "first", group: 0) }  // in order: written at once
            let later = scrambledRows(100, name: "later") + [Row(id: 500, name: "beyond", group: 1)]
            let report = try await store.bulkInsert(first + later, into: rows, options: BulkInsertOptions(chunkSize: 100))
            #expect(report.chunks == 3)
            #expect(report.appendedChunks == 2)  // the first chunk, and the merged one beyond it
            try store.read { snap throws in
                #expect(try snap.count(of: rows) == 101)
                for id in 0..<100 { #expect(try snap.get(.int(Int64(id)), from: rows)?.name == "later \(id)") }
                // Moved index entries: every row left group 0 except the multiples of 5.
                #expect(try snap.keys(in: rows.indexes[0], of: rows, range: .prefix(StoreKey.int(0))).count == 20)
            }
            #expect(try store.verify().isSound)
        }
    }

    @Test func overlappingRelaxedAndDurableLoadsLeaveTheStoreDurable() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let reported = Mutex<[Int]>([])
            // A durable load whose chunks are held, beside a relaxed load of other keys.
            async let relaxed = store.bulkInsert(
                (10_000..<13_000).map { Row(id: $0, name: "relaxed", group: 1) }, into: rows,
                options: BulkInsertOptions(chunkSize: 500, relaxedDurability: true))
            let durable = try await store.bulkInsert(scrambledRows(2_000), into: rows, options: BulkInsertOptions(chunkSize: 400)) {
                progress in reported.withLock { $0.append(progress.records) }
            }
            _ = try await relaxed
            #expect(durable.chunks == 5)
            #expect(reported.withLock { $0 } == [400, 800, 1_200, 1_600, 2_000])
            #expect(try store.environment.isRelaxedDurability == false)
            #expect(try store.read { try $0.count(of: rows) } == 5_000)
            #expect(try store.verify().isSound)
        }
    }

    @Test func aFailingValueStillLeavesTheHeldChunksBeforeItCommitted() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var input = generatedArticles(300, seed: 31)
            input[250].id = ""  // an empty key is refused
            await #expect(throws: StoreError.self) {
                try await store.bulkInsert(input, into: articles, options: BulkInsertOptions(chunkSize: 100))
            }
            try store.read { snap throws in
                #expect(try snap.count(of: articles) == 200)  // the two held chunks before the failing one
                for article in input[..<200] { #expect(try snap.get(.string(article.id), from: articles) == article) }
            }
            #expect(try store.environment.isRelaxedDurability == false)
        }
    }

    @Test func aStoreOpenedRelaxedStaysRelaxedAfterALoad() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) { $0.durability = .relaxed }
            try store.register(rows)
            try await store.bulkInsert(scrambledRows(600), into: rows, options: BulkInsertOptions(chunkSize: 100))
            try await store.bulkInsert((600..<700).map { Row(id: $0, name: "r", group: 0) }, into: rows,
                options: BulkInsertOptions(relaxedDurability: true))
            #expect(try store.environment.isRelaxedDurability)
            #expect(try store.read { try $0.count(of: rows) } == 700)
        }
    }

    /// The default window holds every chunk; 40,000 bytes spills each chunk as a run of its own.
    @Test(arguments: [96 << 20, 40_000])
    func heldChunksSurviveNamesInternedByAnotherWriterMeanwhile(window: Int) async throws {
        try await withTemporaryStorePath { path in
            let input = generatedArticles(600, seed: 21).enumerated().map { index, article in
                var article = article
                article.section = "Held section \(index / 100)"  // a new interned value per chunk
                return article
            }
            let outsider = {
                var article = generatedArticles(1, seed: 22)[0]
                article.section = "Outsider section"
                return article
            }()
            do {
                let store = try openStore(path)
                // Between chunks (while the earlier ones are held), another write interns a value.
                let values = InterleavedSequence(values: input, every: 100) { index in
                    if index == 200 { try await store.put(outsider, in: articles) }
                }
                let options = BulkInsertOptions(chunkSize: 100, sortWindow: window)
                let report = try await store.bulkInsert(values, into: articles, options: options)
                #expect(report.records == 600)
                #expect(try store.verify().isSound)
            }
            let reopened = try openStore(path)
            try reopened.read { snap throws in
                for article in input { #expect(try snap.get(.string(article.id), from: articles) == article) }
                #expect(try snap.get(.string(outsider.id), from: articles) == outsider)
                #expect(try snap.count(of: articles) == 601)
            }
        }
    }
}

/// Values that run `between` (with the index of the next value) before every `every`-th value.
private struct InterleavedSequence: AsyncSequence {
    typealias Element = Article
    let values: [Article]
    let every: Int
    let between: @Sendable (Int) async throws -> Void

    func makeAsyncIterator() -> Iterator { Iterator(sequence: self) }

    struct Iterator: AsyncIteratorProtocol {
        let sequence: InterleavedSequence
        var index = 0

        mutating func next() async throws -> Article? {
            guard index < sequence.values.count else { return nil }
            if index > 0 && index % sequence.every == 0 { try await sequence.between(index) }
            defer { index += 1 }
            return sequence.values[index]
        }
    }
}
