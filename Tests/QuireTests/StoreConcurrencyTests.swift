import Foundation
import Synchronization
import Testing
@testable import Quire
import QuireLMDB  // white-box: reaches under the store on purpose
import QuireNews

@Suite struct StoreConcurrencyTests {
    @Test func concurrentSingleWritesAreGroupCommitted() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(400)
            let before = store.statistics.commits
            try await withThrowingTaskGroup(of: Void.self) { group in
                for article in sample { group.addTask { try await store.put(article, in: articles) } }
                try await group.waitForAll()
            }
            let commits = store.statistics.commits - before
            #expect(try store.read { try $0.count(of: articles) } == 400)
            #expect(store.statistics.groupedWrites == 400)
            // Batching happened: far fewer transactions than writes.
            #expect(commits < 200)
        }
    }

    @Test func aFailingWriteInABatchFailsOnlyItsCaller() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            var sample = generatedArticles(50)
            sample[10].id = ""  // an empty key is refused
            let batch = sample
            let failures = await withTaskGroup(of: Int.self) { group in
                for article in batch {
                    group.addTask {
                        do {
                            try await store.put(article, in: articles)
                            return 0
                        } catch {
                            return 1
                        }
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(failures == 1)
            #expect(try store.read { try $0.count(of: articles) } == 49)
        }
    }

    /// Writers upsert and delete while reader threads check, in every snapshot, that each index
    /// entry resolves to a record with that value and that the index and record counts agree.
    @Test func writersAndReadersHammerOneStore() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            let stop = Atomic<Bool>(false)
            let violations = Atomic<Int>(0)
            let snapshots = Atomic<Int>(0)
            let readers = DispatchGroup()
            for _ in 0..<3 {
                readers.enter()
                Thread.detachNewThread {
                    defer { readers.leave() }
                    while !stop.load(ordering: .relaxed) {
                        let ok = (try? store.read { snap -> Bool in
                            let count = try snap.count(of: rows)
                            let indexed = try snap.keys(in: rows.indexes[0], of: rows)
                            guard indexed.count == count else { return false }
                            for group in 0..<4 {
                                let g = StoreKey.int(Int64(group)).bytes
                                for key in try snap.keys(in: rows.indexes[0], of: rows, range: .exactly(StoreKey(bytes: g))) {
                                    guard let row = try snap.get(key, from: rows), row.group == group else { return false }
                                }
                            }
                            return true
                        }) ?? false
                        if !ok { violations.add(1, ordering: .relaxed) }
                        snapshots.add(1, ordering: .relaxed)
                    }
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for i in 0..<150 {
                            let id = (writer * 1000 + i) % 97
                            if i % 5 == 4 {
                                try await store.delete(.int(Int64(id)), from: rows)
                            } else {
                                try await store.put(Row(id: id, name: "w\(writer)-\(i)", group: (i + writer) % 4), in: rows)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            stop.store(true, ordering: .relaxed)
            readers.wait()
            #expect(violations.load(ordering: .relaxed) == 0)
            #expect(snapshots.load(ordering: .relaxed) > 0)
        }
    }

    @Test func bulkInsertOfAHundredThousandRecordsReadsBackInOrder() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) { $0.initialMapSize = 1 << 20 }
            try store.register(rows)
            let progressCalls = Atomic<Int>(0)
            // Generated lazily: the sequence is never materialised.
            let values = (0..<100_000).lazy.map { Row(id: $0, name: "row \($0)", group: $0 % 4) }
            let report = try await store.bulkInsert(
                values, into: rows, options: BulkInsertOptions(chunkSize: 10_000, relaxedDurability: true)
            ) { _ in progressCalls.add(1, ordering: .relaxed) }
            #expect(report.records == 100_000)
            #expect(report.chunks == 10)
            #expect(report.appendedChunks == 10)  // ascending keys go through MDB_APPEND
            #expect(progressCalls.load(ordering: .relaxed) == 10)
            #expect(store.environment.mapGrowthCount > 0)
            try store.read { snap throws in
                #expect(try snap.count(of: rows) == 100_000)
                var expected = 0
                for record in snap.records(in: rows) {
                    let (key, row) = try record.get()
                    guard row.id == expected, key == .int(Int64(expected)) else { break }
                    expected += 1
                }
                #expect(expected == 100_000)
                #expect(try snap.keys(in: rows.indexes[0], of: rows).count == 100_000)
            }
        }
    }

    @Test func bulkInsertWithRandomKeysUpsertsAndKeepsIndexes() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let sample = generatedArticles(3_000)
            try await store.bulkInsert(sample, into: articles, options: BulkInsertOptions(chunkSize: 700))
            // A second load of changed values replaces them by key.
            let changed = sample.map { a -> Article in
                var b = a
                b.section = "Reloaded"
                return b
            }
            let report = try await store.bulkInsert(changed, into: articles, options: BulkInsertOptions(chunkSize: 1000))
            #expect(report.appendedChunks == 0)
            try store.read { snap throws in
                #expect(try snap.count(of: articles) == 3_000)
                let reloaded = try snap.keys(in: articles.indexes[1], of: articles, range: .prefix(.string("Reloaded")))
                #expect(reloaded.count == 3_000)
                #expect(try snap.keys(in: articles.indexes[1], of: articles).count == 3_000)
            }
        }
    }

    @Test func mapGrowsDuringBulkInsertWithReadersActive() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) { $0.initialMapSize = 256 << 10 }
            let stop = Atomic<Bool>(false)
            let bad = Atomic<Int>(0)
            let readers = DispatchGroup()
            for _ in 0..<2 {
                readers.enter()
                Thread.detachNewThread {
                    defer { readers.leave() }
                    while !stop.load(ordering: .relaxed) {
                        let ok = (try? store.read { snap -> Bool in
                            // Chunks are atomic: counts are whole chunks, and every record decodes.
                            let n = try snap.count(of: articles)
                            var seen = 0
                            for record in snap.records(in: articles) {
                                _ = try record.get()
                                seen += 1
                            }
                            return n % 500 == 0 && seen == n
                        }) ?? false
                        if !ok { bad.add(1, ordering: .relaxed) }
                    }
                }
            }
            let sample = generatedArticles(4_000)
            try await store.bulkInsert(sample, into: articles, options: BulkInsertOptions(chunkSize: 500))
            stop.store(true, ordering: .relaxed)
            readers.wait()
            #expect(bad.load(ordering: .relaxed) == 0)
            #expect(store.environment.mapGrowthCount > 0)
            #expect(try store.read { try $0.count(of: articles) } == 4_000)
        }
    }

    @Test func changeStreamReportsCommits() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let stream = store.changes()
            let sample = generatedArticles(3)
            try await store.write { txn in
                try txn.put(sample[0], in: articles)
                try txn.put(sample[1], in: articles)
            }
            try await store.delete(.string(sample[0].id), from: articles)
            var iterator = stream.makeAsyncIterator()
            guard case .batch(let first)? = await iterator.next(), case .batch(let second)? = await iterator.next() else {
                Issue.record("two commits expected")
                return
            }
            #expect(first.changes.map(\.keys) == [[.string(sample[0].id), .string(sample[1].id)]])
            #expect(first.changes.map(\.kind) == [.upsert])
            #expect(second.sequence == first.sequence + 1)
            #expect(second.changes.map(\.kind) == [.delete] && second.changes.first?.keys == [.string(sample[0].id)])
        }
    }
}

@Suite struct BulkInsertSemanticsTests {
    @Test func theLastValueForARepeatedKeyWins() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            // Keys out of order, with repeats inside one chunk and across chunks.
            var values: [Row] = []
            for round in 0..<3 {
                for id in [5, 3, 9, 3, 1, 9] { values.append(Row(id: id, name: "r\(round)-\(values.count)", group: round)) }
            }
            try await store.bulkInsert(values, into: rows, options: BulkInsertOptions(chunkSize: 7))
            let expected = Dictionary(values.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            try store.read { snap throws in
                #expect(try snap.count(of: rows) == expected.count)
                for (id, row) in expected { #expect(try snap.get(.int(Int64(id)), from: rows) == row) }
                #expect(try snap.keys(in: rows.indexes[0], of: rows).count == expected.count)
            }
            #expect(try store.verify().isSound)
        }
    }
}
