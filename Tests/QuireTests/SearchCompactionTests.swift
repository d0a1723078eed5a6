import Foundation
import Synchronization
import Testing
@testable import Quire
import QuireLMDB  // white-box: reads the posting blocks under the store
import QuireNews
import QuireTestSupport

/// Generated news text (the fixtures' Zipf vocabulary) as notes: headline and abstract.
private func newsNotes(_ count: Int) -> [Note] {
    generatedArticles(count, seed: 11).enumerated().map { i, article in
        note(article.id, article.headline ?? "", (article.abstract ?? "") + " " + (article.leadParagraph ?? ""),
             section: i % 4 == 0 ? "Science" : "World", day: i)
    }
}

private func postingBytes(_ store: Store) throws -> Int {
    let stats = try store.storeStatistics().collections.first { $0.name == notes.name }
    return stats?.indexes.first { $0.name == "search:post" }?.bytes ?? 0
}

private func hits(_ store: Store, _ query: String) throws -> [String] {
    try store.read { snap in
        try snap.search(query, in: notes, limit: 50).map { "\($0.key) \(($0.score * 1e6).rounded())" }
    }
}

@Suite struct SearchCompactionTests {
    @Test func aLoadThatSplitsThePostingPagesLeavesThemPackedWithTheSameAnswers() async throws {
        let values = newsNotes(2_000)
        try await withNotes([]) { chunked in
            // 20 chunks: each one's postings land among the stored ones of every term it has.
            let report = try await chunked.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 100))
            let compaction = try #require(report.searchCompaction)
            #expect(compaction.bytesAfter < compaction.bytesBefore * 9 / 10, "\(compaction)")
            #expect(try chunked.verify().isSound)
            try await withNotes([]) { whole in
                // One chunk: every posting appended in key order, packed as written.
                let one = try await whole.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                #expect(one.chunks == 1)
                let (c1, w1) = (try postingBytes(chunked), try postingBytes(whole))
                #expect(c1 <= w1 * 21 / 20, "\(c1) \(w1)")
                let words = values.prefix(12).compactMap { $0.title.split(separator: " ").first.map(String.init) }
                for query in words + ["\(words[0]) \(words[1])", "\(words[2]) OR \(words[3])"] {
                    let expected = try hits(whole, query)
                    #expect(try hits(chunked, query) == expected, "\(query)")
                }
                #expect(try !hits(whole, words[0]).isEmpty)
            }
        }
    }

    @Test func aFrequentTermsBlocksOnOverflowPagesAreCutAgainAsOneRun() async throws {
        // "common" in every note: each 3,000-record chunk writes it as blocks on overflow pages
        // (a run of over 8 KB). Short notes: the test is about the blocks, not the text.
        let values = (0..<9_000).map { i in note(String(format: "n%05d", i), "common w\(i % 97) x\(i % 13)") }
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                let report = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 3_000)) {
                    loader in
                    loader.stopsCompaction(when: { true })
                    for start in stride(from: 0, to: values.count, by: 3_000) {
                        try await loader.submit(values[start..<(start + 3_000)])
                    }
                }
                #expect(report.chunks == 3)
                // Each chunk's run of "common" in its segment: blocks that fill one overflow page
                // each (LMDB then needs no run of free pages for them), but for the run's last.
                let segmentBlocks = try store.read { snap in
                    let dbs = try #require(try store.resolved(notes.name).search)
                    return snap.lmdb.entries(in: try dbs.postings(try SearchState.stored(dbs, snap.lmdb)))
                        .filter { $0.key.count == 16 && $0.key.first == 0 && $0.key[5..<12].elementsEqual(Array("common".utf8) + [0]) }
                        .map { (segment: Array($0.key.prefix(5)), bytes: $0.value.count) }
                }
                let segmentRuns = Dictionary(grouping: segmentBlocks, by: \.segment).values.map { $0.map(\.bytes) }
                #expect(segmentRuns.count == 3)
                for run in segmentRuns {
                    #expect(run.count >= 2)
                    #expect(run.dropLast().allSatisfy { $0 <= 4_096 - 16 && $0 > 4_096 - 16 - 64 }, "\(run)")
                }
                // The segments copied (as a load's end does above `segmentsMergedInPlace`).
                let outcome = try await store.writer.run {
                    try store.compactSearchIndexAfterLoad(notes, written: values.count, segmentsMergedInPlace: 0)
                }
                #expect(outcome?.rewritten == true)
                #expect(try store.verify().isSound)
                let hits = try store.read { snap in try snap.search("common", in: notes, limit: 10_000) }
                #expect(hits.count == values.count)
            }
            let env = try Environment(path: path)
            defer { env.close() }
            // The compaction wrote the other posting database and switched to it.
            let postings = try env.openDatabase("s:notes:post.1")
            let sizes = try env.read { txn in
                txn.entries(in: postings, range: .prefix(Array("common".utf8) + [0])).map { $0.value.count }
            }
            // Every block but the last ends within a posting of its overflow page's end.
            let full = 4_096 - 16
            #expect(sizes.count >= 2)
            #expect(sizes.dropLast().allSatisfy { $0 <= full && $0 > full - 64 }, "\(sizes)")
        }
    }

    /// A load interrupted after its last chunk (the first Ctrl-C of `quire load`) skips or stops
    /// its compaction; one stopped part way, after the posting blocks were copied out and the
    /// database emptied, is rolled back: the index stays as the chunks wrote it, and sound.
    @Test func aCompactionStoppedPartWayLeavesTheIndexAsTheChunksWroteIt() async throws {
        let values = newsNotes(2_000)
        try await withNotes([]) { store in
            let report = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                loader.stopsCompaction(when: { true })
                try await loader.submit(values)
            }
            #expect(report.records == values.count)
            #expect(report.searchCompaction == nil)
            let before = try postingBytes(store)
            let entries = try #require(
                try store.storeStatistics().collections.first { $0.name == notes.name }?.indexes.first { $0.name == "search:post" }
            ).entries
            // The first poll after the copy out: the blocks are being appended back.
            let polls = Mutex(0)
            await #expect(throws: CancellationError.self) {
                try await store.writer.run {
                    try store.compactSearchIndexAfterLoad(notes, written: values.count) {
                        polls.withLock { n in
                            n += 1
                            return n > entries / 4_096
                        }
                    }
                }
            }
            #expect(polls.withLock { $0 } == entries / 4_096 + 1)
            #expect(try postingBytes(store) == before)
            #expect(try store.verify().isSound)
            let outcome = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: values.count) }
            #expect(outcome?.rewritten == true)
            #expect(try postingBytes(store) < before)
        }
    }

    /// A write that lands between the copy's transactions (a `put` while a load's end compacts)
    /// voids the copy: the postings stay where they are, with the write's, and a later
    /// compaction switches to a copy that holds it.
    @Test(arguments: [1, 2]) func aWriteBetweenTheCopysTransactionsVoidsTheCopy(writeAtCall: Int) async throws {
        let values = newsNotes(1_000)
        let late = note("late-note", "zyzzyva quokka", section: "Science")
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values)
                }
                let calls = Mutex(0)
                let voided = try await store.writer.run {
                    try store.compactSearchIndexAfterLoad(
                        notes, written: values.count,
                        betweenBatches: {
                            // Called before each batch of the copy and once after the last one.
                            guard calls.withLock({ n in n += 1; return n }) == writeAtCall else { return }
                            try store.writeNow { txn in try txn.put(late, in: notes) }
                        }, segmentsMergedInPlace: 0)  // the segments copied with the main blocks
                }
                #expect(calls.withLock { $0 } >= writeAtCall)
                #expect(voided != nil)
                #expect(try hits(store, "zyzzyva").first?.hasPrefix("late-note ") == true)
                #expect(try store.verify().isSound)
            }
            do {
                // The copy was not switched to: the second posting database is empty.
                let env = try Environment(path: path)
                defer { env.close() }
                let second = try env.openDatabase("s:notes:post.1")
                #expect(try env.read { txn throws in try txn.count(of: second) } == 0)
            }
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let outcome = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: values.count) }
            #expect(outcome?.rewritten == true)
            #expect(try hits(store, "zyzzyva").first?.hasPrefix("late-note ") == true)
            #expect(try hits(store, "quokka").count == 1)
            #expect(try store.verify().isSound)
        }
    }

    /// Two loads' ends compacting at once (two processes): one copy switches to the other
    /// posting database while the other copy is between its transactions. The voided copy must
    /// not empty its target, which now holds every posting (it did: a search found nothing).
    @Test func aCopyVoidedByAnotherFinishedCopyLeavesItsPostingsAlone() async throws {
        let values = newsNotes(1_000)
        try await withNotes([]) { store in
            try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                loader.stopsCompaction(when: { true })
                try await loader.submit(values)
            }
            let calls = Mutex(0)
            let outcome = try await store.writer.run {
                try store.compactSearchIndexAfterLoad(
                    notes, written: values.count,
                    betweenBatches: {
                        guard calls.withLock({ n in n += 1; return n }) == 1 else { return }
                        // The other load's end: its whole copy, switched to, in between.
                        let other = try store.compactSearchIndexAfterLoad(notes, written: values.count, segmentsMergedInPlace: 0)
                        #expect(other?.rewritten == true)
                    }, segmentsMergedInPlace: 0)
            }
            #expect(calls.withLock { $0 } >= 1)
            #expect(outcome?.rewritten == false)
            #expect(try store.verify().isSound)
            let word = try #require(values[0].title.split(separator: " ").first.map(String.init))
            #expect(try hits(store, word).contains { $0.hasPrefix(values[0].id + " ") })
        }
    }

    @Test func onlyALoadOfAQuarterOfTheIndexLooksAtIt() async throws {
        let values = newsNotes(800)
        try await withNotes([]) { store in
            try await store.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
            let small = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: 199) }
            #expect(small == nil)
            let large = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: 200) }
            // Looked, and found the pages of one appended chunk packed already.
            let outcome = try #require(large ?? nil)
            #expect(!outcome.rewritten)
            #expect(outcome.bytesBefore > 0)
        }
    }

    @Test func aSmallLoadAfterwardsNeitherCompactsNorLosesAnything() async throws {
        let values = newsNotes(1_200)
        try await withNotes([]) { store in
            try await store.bulkInsert(values.prefix(1_000), into: notes, options: BulkInsertOptions(chunkSize: 100))
            let more = try await store.bulkInsert(values.suffix(200), into: notes, options: BulkInsertOptions(chunkSize: 20))
            #expect(more.searchCompaction == nil)  // 200 of 1,200 documents: below a quarter
            #expect(try store.verify().isSound)
            let last = try #require(values.last)
            let word = try #require(last.title.split(separator: " ").first.map(String.init))
            #expect(try hits(store, word).contains { $0.hasPrefix(last.id + " ") })
        }
    }
}

@Suite struct SearchDocumentEntriesTests {
    @Test func keysWhoseHashesCollideAreToldApartByTheirNumberEntries() throws {
        try withTemporaryDirectory("doc-entries") { path throws in
            let env = try Environment(path: path)
            defer { env.close() }
            let db = { (name: String) in try env.openDatabase(name, flags: .create) }
            let definition = SearchDefinition(fields: [StoreSearchField(name: "body", id: 0, weight: 1, path: "body")])
            let dbs = SearchDatabases(
                definition: definition, postingDatabases: (try db("post"), nil), documents: try db("doc"), numbers: try db("num"),
                state: try db("stat"))
            let state = SearchState(newIndex: definition, hashedDocuments: true)
            // Every key hashes alike: one entry holds every number.
            let entries = SearchDocumentEntries(dbs, state, hash: { _ in [0, 0, 0, 0, 0, 0, 0, 7] })
            let keys = ["alpha", "beta", "gamma"].map { Array($0.utf8) }
            try env.write { txn throws in
                for (number, key) in keys.enumerated() {
                    try entries.put(key, UInt32(number), appending: false, txn)
                    // The number entry: one length (field 0), the check (4 bytes), then the key.
                    try txn.put([3] + [UInt8](repeating: 0, count: 4) + key, forKey: [0, 0, 0, UInt8(number)], in: dbs.numbers)
                }
                try entries.put(keys[1], 1, appending: false, txn)  // again: no second copy
            }
            try env.read { txn throws in
                #expect(try txn.get([0, 0, 0, 0, 0, 0, 0, 7], in: dbs.documents) == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2])
                for (number, key) in keys.enumerated() { #expect(try entries.entry(of: key, txn)?.number == UInt32(number)) }
                #expect(try entries.entry(of: Array("delta".utf8), txn) == nil)
            }
            try env.write { txn throws in try entries.remove(keys[0], 0, txn) }
            try env.read { txn throws in
                #expect(try entries.entry(of: keys[0], txn) == nil)
                #expect(try entries.entry(of: keys[2], txn)?.number == 2)
            }
            try env.write { txn throws in
                try entries.remove(keys[1], 1, txn)
                try entries.remove(keys[2], 2, txn)
            }
            #expect(try env.read { txn throws in try txn.count(of: dbs.documents) } == 0)
        }
    }
}
