import Foundation
import Synchronization
import Testing
@testable import Quire
import QuireLMDB  // white-box: moves a segment's block under the store
import QuireNews

/// Generated news text (the fixtures' Zipf vocabulary) as notes.
private func segmentNotes(_ count: Int, seed: UInt64 = 23) -> [Note] {
    generatedArticles(count, seed: seed).enumerated().map { i, article in
        note(article.id, article.headline ?? "", (article.abstract ?? "") + " " + (article.leadParagraph ?? ""),
             section: i % 3 == 0 ? "Science" : "World", day: i)
    }
}

/// The starts of the notes index's segments, and whether its state says it has any.
private func segments(_ store: Store) throws -> (starts: [UInt32], flagged: Bool) {
    let dbs = try #require(try store.resolved(notes.name).search)
    return try store.read { snap in
        let state = try SearchState.stored(dbs, snap.lmdb)
        return (try state.segmentKeys.starts(try snap.lmdb.cursor(in: try dbs.postings(state))), state.segmented)
    }
}

/// The notes index's posting blocks by key, the segments' with them.
private func postingBlocks(_ store: Store) throws -> [[UInt8]: [UInt8]] {
    let dbs = try #require(try store.resolved(notes.name).search)
    return try store.read { snap in
        let postings = try dbs.postings(try SearchState.stored(dbs, snap.lmdb))
        return Dictionary(uniqueKeysWithValues: snap.lmdb.entries(in: postings).map { ($0.keyBytes, $0.valueBytes) })
    }
}

/// Keys the notes index's segments `0xFF start term 0x00 bound`, its state's flag of segments
/// below the terms clear: as an older build's interrupted load left them.
private func keySegmentsAboveTheTerms(_ store: Store) async throws {
    let dbs = try #require(try store.resolved(notes.name).search)
    try await store.writer.run {
        try store.writeNow { txn in
            var state = try SearchState.stored(dbs, txn.lmdb)
            #expect(state.lowSegments)
            let postings = try dbs.postings(state)
            let low = txn.lmdb.entries(in: postings).filter { $0.key.first == 0 }.map { ($0.keyBytes, $0.valueBytes) }
            #expect(!low.isEmpty)
            for (key, value) in low {
                #expect(try txn.lmdb.delete(key, in: postings))
                try txn.lmdb.put(value, forKey: [0xFF] + key.dropFirst(), in: postings)
            }
            state.lowSegments = false
            try txn.lmdb.put(state.bytes, forKey: SearchDatabases.stateKey, in: dbs.state)
        }
    }
}

/// A merge batch of 2 KiB of the segments starting at `starts`, read in `txn`.
private func collectSmallBatch<T: ReadableTransaction & ~Copyable>(
    _ txn: borrowing T, _ postings: Database, _ starts: [UInt32], _ keys: SegmentKeys, from: [UInt8], after: UInt32? = nil
) throws -> SearchSegmentMerge.Batch {
    try SearchSegmentMerge.collectBatch(
        postings, txn, segments: starts, keys: keys, from: from, after: after, bytes: 2 << 10, isCancelled: nil)
}

/// The pages the notes index's postings take, and about what they would take packed.
private func postingPages(_ store: Store) throws -> (used: Int, packed: Int) {
    let dbs = try #require(try store.resolved(notes.name).search)
    return try store.read { snap in
        let postings = try dbs.postings(try SearchState.stored(dbs, snap.lmdb))
        let statistics = try snap.lmdb.statistics(of: postings)
        return (statistics.branchPages + statistics.leafPages + statistics.overflowPages,
                try SearchCompaction.packedPages(postings, snap.lmdb, pageSize: statistics.pageSize))
    }
}

/// Whether the notes index's state says a merge of its segments is under way, and it has the
/// entry that records how far (nil when the two disagree).
private func merging(_ store: Store) throws -> Bool? {
    let dbs = try #require(try store.resolved(notes.name).search)
    return try store.read { snap in
        let flagged = try SearchState.stored(dbs, snap.lmdb).merging
        let entry = try SegmentMergeProgress.stored(dbs, snap.lmdb) != nil
        return flagged == entry ? flagged : nil
    }
}

/// Hits with their scores, for queries of every kind over words of `values`.
private func answers(_ store: Store, _ values: [Note]) throws -> [String: [String]] {
    let words = values.prefix(40).compactMap { $0.title.split(separator: " ").first.map(String.init) }
        .filter { $0.count > 3 && $0.allSatisfy(\.isLetter) }
    var queries = Array(words.prefix(12))
    queries += ["\(words[0]) \(words[1])", "\(words[2]) OR \(words[3])", "\(words[4]) -\(words[5])"]
    queries += words.prefix(6).map { String($0.prefix(3)) + "*" }
    queries += values.prefix(8).compactMap { note in
        let parts = note.title.split(separator: " ").prefix(2)
        return parts.count == 2 ? "\"\(parts.joined(separator: " "))\"" : nil
    }
    queries += ["section:Science \(words[0])", "the", "th*"]
    var out: [String: [String]] = [:]
    for query in queries {
        out[query] = try store.read { snap in
            try snap.search(query, in: notes, limit: 200).map { "\($0.key) \(($0.score * 1e6).rounded())" }
        }
    }
    return out
}

private func expectSameAnswers(_ store: Store, _ reference: Store, _ values: [Note]) throws {
    let (got, want) = (try answers(store, values), try answers(reference, values))
    #expect(want.values.contains { !$0.isEmpty })
    for (query, hits) in want { #expect(got[query] == hits, "\(query)") }
}

@Suite struct SearchSegmentTests {
    /// A load whose end is stopped leaves its chunks' segments: queries read them after the main
    /// blocks, puts, upserts and deletes find the segment that owns each document, verify checks
    /// them, and the next load's end merges them; the answers equal those of an index written in
    /// one chunk, with the same scores, at every step.
    /// The same for segments keyed above the terms, as builds before 2026-12-04 wrote them
    /// (`keyedAbove`): they are read, written to, verified and merged as they are, and the next
    /// chunks of that load key theirs the same way.
    @Test(arguments: [false, true])
    func segmentsAnswerAsTheMainBlocksDoUntilALoadMergesThem(keyedAbove: Bool) async throws {
        let values = segmentNotes(1_000)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(780), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                #expect(try segments(store).starts.isEmpty)
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 60)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values[780..<900])
                }
                if keyedAbove { try await keySegmentsAboveTheTerms(store) }
                let left = try segments(store)
                #expect(left.flagged)
                #expect(left.starts == [780, 840])
                #expect(try postingBlocks(store).keys.contains { $0.first == (keyedAbove ? 0xFF : 0x00) })
                try await reference.bulkInsert(values.prefix(900), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)

                // Writes that land in the main blocks, in a segment and past the last one.
                for target in [store, reference] {
                    try await target.write { txn in
                        for value in values[900..<950] { try txn.put(value, in: notes) }  // a group commit: the last segment
                    }
                    try await target.put(values[950], in: notes)
                    var moved = values[10]  // main blocks
                    moved.title = values[960].title
                    try await target.put(moved, in: notes)
                    var changed = values[800]  // a segment
                    changed.body = values[970].body + " " + values[801].title
                    try await target.put(changed, in: notes)
                    try await target.delete(.string(values[860].id), from: notes)
                    try await target.delete(.string(values[20].id), from: notes)
                }
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)

                // A small load into the index: its end merges every segment into the main blocks.
                let tail = Array(values[951...])
                let report = try await store.bulkInsert(tail, into: notes, options: BulkInsertOptions(chunkSize: 20))
                // 49 of 1,000 documents, and 171 in segments: merged in place, not rewritten.
                #expect(report.searchCompaction == nil)
                try await reference.bulkInsert(tail, into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                let merged = try segments(store)
                #expect(merged.starts.isEmpty)
                #expect(!merged.flagged)
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// Every chunk of a load into an empty index writes a segment, keyed below the terms, and
    /// the load's end appends the merged blocks after them: packed pages in the first posting
    /// database, no copy, the same answers.
    @Test func aFirstLoadsEndAppendsItsMergedSegmentsPacked() async throws {
        let values = segmentNotes(2_400)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 200)) { loader in
                    loader.stopsCompaction(when: { true })
                    for start in stride(from: 0, to: values.count, by: 200) {
                        try await loader.submit(values[start..<(start + 200)])
                    }
                }
                #expect(try segments(store).starts == Array(stride(from: 0, to: 2_400, by: 200)).map(UInt32.init))
                #expect(try postingBlocks(store).keys.allSatisfy { $0.first == 0 })
                // Batches of 8 KiB: the segments' keys of the terms after a batch stay while it appends.
                let outcome = try await store.writer.run {
                    try store.compactSearchIndexAfterLoad(notes, written: 2_400, mergeBatchBytes: 8 << 10)
                }
                #expect(outcome?.rewritten == true)
                let left = try segments(store)
                #expect(left.starts.isEmpty && !left.flagged)
                let dbs = try #require(try store.resolved(notes.name).search)
                let state = try store.read { snap in try SearchState.stored(dbs, snap.lmdb) }
                #expect(!state.secondPostings && !state.lowSegments)
                let pages = try postingPages(store)
                #expect(Double(pages.used) <= 1.1 * Double(pages.packed), "\(pages)")
                #expect(try store.verify().isSound)
                try await reference.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// A merge moves the segments' full blocks as they are and packs the small ones again.
    @Test func aMergeMovesFullSegmentBlocksAsTheyAre() async throws {
        let values = segmentNotes(2_480, seed: 11)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(2_000), into: notes, options: BulkInsertOptions(chunkSize: 3_000))
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 240)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values[2_000...])
                }
                #expect(try segments(store).starts == [2_000, 2_240])
                let blocks = try postingBlocks(store).filter { $0.key.first == SegmentKeys.low.marker }
                // `0x00 start term 0x00 bound`: half a leaf block or more moves, the rest is packed.
                let full = blocks.filter { $0.value.count >= SearchPostings.blockLimit(term: $0.key.count - 10) / 2 }
                #expect(full.count >= 2 && full.count < blocks.count / 4)
                // The segments are a fifth of the index: merged in place, not copied.
                let outcome = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: 1) }
                #expect(outcome == nil)
                #expect(try segments(store).starts.isEmpty)
                let merged = try postingBlocks(store)
                for (key, value) in full { #expect(merged[Array(key.dropFirst(5))] == value, "\(key)") }
                #expect(try store.verify().isSound)
                try await reference.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 3_000))
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// A load of most of the index rewrites its segments and the main blocks together.
    @Test func aLargeLoadsEndRewritesTheSegmentsIntoPackedMainBlocks() async throws {
        let values = segmentNotes(1_200, seed: 5)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(200), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                let report = try await store.bulkInsert(
                    values.suffix(1_000), into: notes, options: BulkInsertOptions(chunkSize: 100))
                let compaction = try #require(report.searchCompaction)
                #expect(compaction.bytesAfter < compaction.bytesBefore)
                let left = try segments(store)
                #expect(left.starts.isEmpty && !left.flagged)
                try await reference.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// An interrupted load's segments that hold a quarter of the index are rewritten with the
    /// main blocks by the next load's end, however small that load.
    @Test func segmentsOfAnInterruptedLargeLoadAreRewrittenByTheNextLoad() async throws {
        let values = segmentNotes(820, seed: 17)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(200), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values[200..<800])
                }
                #expect(try segments(store).starts.count == 6)
                let report = try await store.bulkInsert(values.suffix(20), into: notes)
                #expect(report.searchCompaction != nil)
                let left = try segments(store)
                #expect(left.starts.isEmpty && !left.flagged)
                try await reference.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// A first load's end merges its segments in place, packed; each large load into stored
    /// postings merges them among those and then compacts them into the other posting database,
    /// switches to it and empties the one it left. The answers stay those of an index written in
    /// one chunk.
    @Test func compactionsTakeTurnsBetweenTheTwoPostingDatabases() async throws {
        let values = segmentNotes(1_200, seed: 31)
        func entries(_ store: Store) throws -> (first: Int, second: Int, inSecond: Bool) {
            let dbs = try #require(try store.resolved(notes.name).search)
            let second = try #require(dbs.postingDatabases.second)
            return try store.read { snap in
                (try snap.lmdb.statistics(of: dbs.postingDatabases.first).entries,
                 try snap.lmdb.statistics(of: second).entries, try SearchState.stored(dbs, snap.lmdb).secondPostings)
            }
        }
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(300), into: notes, options: BulkInsertOptions(chunkSize: 60))
                let first = try entries(store)
                #expect(!first.inSecond && first.first > 0 && first.second == 0, "\(first)")
                try await store.bulkInsert(values[300..<750], into: notes, options: BulkInsertOptions(chunkSize: 75))
                let second = try entries(store)
                #expect(second.inSecond && second.first == 0 && second.second > first.first, "\(second)")
                try await store.bulkInsert(values[750...], into: notes, options: BulkInsertOptions(chunkSize: 75))
                let third = try entries(store)
                #expect(!third.inSecond && third.second == 0 && third.first > second.second, "\(third)")
                try await reference.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, values)
            }
        }
    }

    /// The load's end merges the segments in place a batch of terms a transaction. Between two
    /// batches — terms below the merge's progress in the main blocks, the others still in the
    /// segments — an upsert, a delete and new documents (from another task or process) land where
    /// readers and verify look for them, and a merge stopped there goes on at the next load's end.
    @Test func writesBetweenTheMergesBatchesLandWhereTheyAreRead() async throws {
        let values = segmentNotes(900, seed: 41)
        let edited = note(values[700].id, "zyzzyva " + values[3].title, values[3].body, section: "World", day: 700)
        let added = (0..<5).map { note("late-\($0)", values[10 + $0].title + " quokka", values[20].body, day: 900 + $0) }
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                try await store.bulkInsert(values.prefix(300), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 150)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values[300...])
                }
                #expect(try segments(store).starts == [300, 450, 600, 750])
                let batches = Mutex(0)
                let midway = Mutex<[VerificationReport]>([])
                // Batches of about 8 KiB of blocks: dozens of them. Stopped after the tenth.
                await #expect(throws: CancellationError.self) {
                    try await store.writer.run {
                        try store.compactSearchIndexAfterLoad(
                            notes, written: 600,
                            betweenMergeBatches: {
                                let batch = batches.withLock { n in
                                    n += 1
                                    return n
                                }
                                if batch == 4 {
                                    try store.writeNow { txn in
                                        try txn.put(edited, in: notes)
                                        try txn.delete(.string(values[450].id), from: notes)
                                        try txn.put(contentsOf: added, in: notes)
                                    }
                                    let report = try store.verify()
                                    midway.withLock { $0.append(report) }
                                }
                                if batch == 10 { throw CancellationError() }
                            }, mergeBatchBytes: 8 << 10)
                    }
                }
                let reports = midway.withLock { $0 }
                #expect(reports.count == 1 && reports[0].isSound, "\(reports.first?.problems ?? [])")
                let stopped = try segments(store)
                #expect(stopped.flagged && !stopped.starts.isEmpty)
                #expect(try merging(store) == true)  // older builds refuse the index meanwhile
                let stats = try store.storeStatistics().collections.first { $0.name == notes.name }
                #expect(stats?.searchSegments == stopped.starts.count && stats?.searchMerging == true)
                #expect(try store.verify().isSound)
                var final = Array(values)
                final[700] = edited
                final.remove(at: 450)
                final += added
                try await reference.bulkInsert(final, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                try expectSameAnswers(store, reference, final)
                #expect(try ids(store, "zyzzyva") == [edited.id])
                #expect(try Set(ids(store, "quokka")) == Set(added.map(\.id)))
                // The next load's end goes on from where it stopped and clears the flag.
                let outcome = try await store.writer.run { try store.compactSearchIndexAfterLoad(notes, written: 600) }
                #expect(outcome != nil)
                #expect(try segments(store) == ([], false))
                #expect(try merging(store) == false)
                let merged = try store.storeStatistics().collections.first { $0.name == notes.name }
                #expect(merged?.searchSegments == 0 && merged?.searchMerging == false)
                #expect(try store.verify().isSound)
                try expectSameAnswers(store, reference, final)
            }
        }
    }

    /// A merge whose batch stops inside a common term (its blocks in every segment, more than a
    /// batch) goes on from the segment it stopped at; writes meanwhile — upserts that add or drop
    /// that term in documents on either side of the stop, new documents, a delete — land where
    /// readers and verify look for them, and older builds refuse the index meanwhile.
    @Test func aMergeStoppedInsideATermGoesOnFromItsSegment() async throws {
        let values = segmentNotes(900, seed: 43)
        try await withNotes([]) { store in
            try await withNotes([]) { reference in
                _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                    loader.stopsCompaction(when: { true })
                    try await loader.submit(values[...])
                }
                #expect(try segments(store).starts.count == 9)
                let dbs = try #require(try store.resolved(notes.name).search)
                let stops = Mutex<[SegmentMergeProgress]>([])
                let written = Mutex<[Note]?>(nil)
                let midway = Mutex<VerificationReport?>(nil)
                let calls = Mutex(0)
                let outcome = try await store.writer.run {
                    try store.compactSearchIndexAfterLoad(
                        notes, written: 900,
                        betweenMergeBatches: {
                            calls.withLock { $0 += 1 }
                            let (progress, state) = try store.read { snap in
                                (try SegmentMergeProgress.stored(dbs, snap.lmdb), try SearchState.stored(dbs, snap.lmdb))
                            }
                            guard let progress, progress.nextSegment != nil else { return }
                            #expect(state.mergingInsideTerm && state.merging)
                            stops.withLock { $0.append(progress) }
                            guard written.withLock({ $0 == nil }) else { return }
                            let word = String(decoding: progress.next, as: UTF8.self)
                            var changed = stride(from: 40, to: 900, by: 170).map { values[$0] }
                            for i in changed.indices {
                                changed[i].body = i % 2 == 0 ? "zyzzyva quokka" : "\(word) zyzzyva \(changed[i].body)"
                            }
                            changed += (0..<3).map { note("late-\($0)", "\(word) quokka", values[$0].body, day: 950 + $0) }
                            try store.writeNow { txn in
                                try txn.put(contentsOf: changed, in: notes)
                                try txn.delete(.string(values[500].id), from: notes)
                            }
                            written.withLock { $0 = changed }
                            midway.withLock { $0 = try? store.verify() }
                        }, mergeBatchBytes: 2 << 10)
                }
                // A batch a transaction and one that found no segments left; each batch but the
                // first was read ahead while the one before it was applied, but for the batch
                // after the write above (which came between their transactions).
                #expect(outcome?.batchesReadAhead == calls.withLock { $0 } - 3)
                let stopped = stops.withLock { $0 }
                #expect(!stopped.isEmpty)
                // The stops go on from one segment to a later one of the same term.
                #expect(zip(stopped, stopped.dropFirst()).contains { $0.next == $1.next && $0.nextSegment! < $1.nextSegment! })
                let report = midway.withLock { $0 }
                #expect(report?.isSound == true, "\(report?.problems ?? [])")
                #expect(try segments(store) == ([], false))
                #expect(try merging(store) == false)
                #expect(try store.verify().isSound)
                let changed = try #require(written.withLock { $0 })
                var final = Dictionary(uniqueKeysWithValues: values.map { ($0.id, $0) })
                for note in changed { final[note.id] = note }
                final[values[500].id] = nil
                let expected = final.values.sorted { $0.id < $1.id }
                try await reference.bulkInsert(expected, into: notes, options: BulkInsertOptions(chunkSize: 10_000))
                try expectSameAnswers(store, reference, expected)
                let word = String(decoding: stopped[0].next, as: UTF8.self)
                for query in [word, "\(word) zyzzyva", "quokka", "\"\(word) quokka\""] {
                    #expect(try ids(store, query) == ids(reference, query), "\(query)")
                }
            }
        }
    }

    /// A batch read ahead, from the snapshot before the batch before it was applied (which holds
    /// the blocks of a term that batch stopped inside in the segments below the stop), is the
    /// batch read after it: at every batch of a merge in 2 KiB batches over 9 segments. The
    /// transaction is rolled back.
    @Test func aBatchReadBeforeTheBatchBeforeItIsAppliedIsTheSameBatch() async throws {
        struct RolledBack: Error {}
        let values = segmentNotes(900, seed: 43)
        try await withNotes([]) { store in
            _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 100)) { loader in
                loader.stopsCompaction(when: { true })
                try await loader.submit(values[...])
            }
            let dbs = try #require(try store.resolved(notes.name).search)
            let before = try postingBlocks(store)
            let counts = Mutex((batches: 0, insideTerm: 0, terms: 0))
            await #expect(throws: RolledBack.self) {
                try await store.writer.run {
                    try store.writeNow { txn in
                        let state = try SearchState.stored(dbs, txn.lmdb)
                        let (postings, keys) = (try dbs.postings(state), state.segmentKeys)
                        let starts = try keys.starts(try txn.lmdb.cursor(in: postings))
                        #expect(starts.count == 9)
                        var (from, batch) = ([UInt8](), try collectSmallBatch(txn.lmdb, postings, starts, keys, from: []))
                        while true {
                            var ahead: SearchSegmentMerge.Batch?
                            if let next = batch.next {
                                ahead = try collectSmallBatch(txn.lmdb, postings, starts, keys, from: next.term, after: next.segment)
                            }
                            let next = try SearchSegmentMerge.applyBatch(
                                batch, postings, txn.lmdb, segments: starts, keys: keys, from: from, isCancelled: nil)
                            counts.withLock {
                                $0.batches += 1
                                $0.terms += batch.termEnds.count
                                if next?.segment != nil { $0.insideTerm += 1 }
                            }
                            guard let next, let ahead else { break }
                            let fresh = try collectSmallBatch(txn.lmdb, postings, starts, keys, from: next.term)
                            #expect(ahead.terms == fresh.terms && ahead.termEnds == fresh.termEnds)
                            #expect(ahead.blocks == fresh.blocks && ahead.blockEnds == fresh.blockEnds)
                            #expect(ahead.blockBounds == fresh.blockBounds && ahead.runEnds == fresh.runEnds)
                            #expect(ahead.next?.term == fresh.next?.term && ahead.next?.segment == fresh.next?.segment)
                            (from, batch) = (next.term, fresh)
                        }
                        // Every block was read once: the segments are empty.
                        #expect(try keys.starts(try txn.lmdb.cursor(in: postings)).isEmpty)
                        throw RolledBack()
                    }
                }
            }
            let (batches, insideTerm, terms) = counts.withLock { $0 }
            #expect(batches > 20 && insideTerm > 0)
            #expect(terms >= Set(before.keys.map { $0.dropFirst(5).dropLast(5) }).count)
            #expect(try postingBlocks(store) == before)
        }
    }

    /// The `merge` entry: as builds before 2026-12-05 wrote it (no segment after the term), with
    /// the segment a batch stopped at, and malformed (a `0x00` not followed by exactly a number).
    @Test func mergeEntriesOfEveryLayoutReadBackAndMalformedOnesAreDamage() async throws {
        try await withNotes([]) { store in
            let dbs = try #require(try store.resolved(notes.name).search)
            func roundTrip(_ bytes: [UInt8]) async throws -> SegmentMergeProgress? {
                _ = try await store.writer.run {
                    try store.writeNow { txn in try txn.lmdb.put(bytes, forKey: SearchDatabases.mergeKey, in: dbs.state) }
                }
                return try store.read { snap in try SegmentMergeProgress.stored(dbs, snap.lmdb) }
            }
            let old = SegmentMergeProgress(last: 840, next: Array("quokka".utf8))
            #expect(old.bytes == [0, 0, 3, 0x48] + Array("quokka".utf8))
            #expect(try await roundTrip(old.bytes) == old)
            let inside = SegmentMergeProgress(last: 840, next: Array("the".utf8), nextSegment: 600)
            #expect(inside.bytes == [0, 0, 3, 0x48] + Array("the".utf8) + [0, 0, 0, 2, 0x58])
            #expect(try await roundTrip(inside.bytes) == inside)
            let empty = SegmentMergeProgress(last: 7, next: [])
            #expect(try await roundTrip(empty.bytes) == empty)
            for malformed in [[0, 0, 3, 0x48] + Array("the".utf8) + [0, 0, 2, 0x58], [0, 0, 3]] as [[UInt8]] {
                await #expect(throws: StoreError.self) { _ = try await roundTrip(malformed) }
            }
        }
    }

    /// A block moved into another segment holds documents outside that segment: verify says so.
    @Test func verifyFindsABlockOutsideItsSegment() async throws {
        let values = segmentNotes(400, seed: 9)
        try await withNotes([]) { store in
            try await store.bulkInsert(values.prefix(100), into: notes, options: BulkInsertOptions(chunkSize: 1_000))
            _ = try await store.withBulkLoader(into: notes, options: BulkInsertOptions(chunkSize: 150)) { loader in
                loader.stopsCompaction(when: { true })
                try await loader.submit(values[100...])
            }
            let starts = try segments(store).starts
            #expect(starts == [100, 250])
            #expect(try store.verify().isSound)
            let dbs = try #require(try store.resolved(notes.name).search)
            try await store.writer.run {
                try store.writeNow { txn in
                    // The last block of the first segment, keyed in the second one.
                    let postings = try dbs.postings(try SearchState.stored(dbs, txn.lmdb))
                    let cursor = try txn.lmdb.cursor(in: postings)
                    let entry = try #require(try cursor.seek(atLeast: SegmentKeys.low.prefix(250)).flatMap { _ in try cursor.previous() })
                    let (key, value) = (entry.keyBytes, entry.valueBytes)
                    #expect(key.starts(with: SegmentKeys.low.prefix(100)))
                    #expect(try txn.lmdb.delete(key, in: postings))
                    try txn.lmdb.put(value, forKey: SegmentKeys.low.prefix(250) + key.dropFirst(5), in: postings)
                }
            }
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("lies outside its segment") }, "\(report.problems)")
        }
    }
}
