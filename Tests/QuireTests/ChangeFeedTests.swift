import Foundation
import Quire
import QuireLMDB  // white-box: damages an entry of the feed
import QuireNews
import Testing

/// The durable change feed: numbered commits kept in the environment, resumable after a restart,
/// pulled at the subscriber's pace, and a gap (never silence) past retention.
@Suite struct ChangeFeedTests {
    func collect(_ feed: ChangeFeed, batches count: Int) async -> [ChangeFeedEvent] {
        await collectChanges(feed, batches: count)
    }

    /// A commit of the feed that cannot be read ends an iteration with its error (watch said
    /// nothing and exited 0), and verify reports it (it never read the feed).
    @Test func anUnreadableCommitEndsTheFeedWithItsErrorAndVerifyFindsIt() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)
                for article in generatedArticles(3) { try await store.write { try $0.put(article, in: articles) } }
                store.close()
            }
            try appendUnreadableCommit(path)
            let store = try openStore(path)
            defer { store.close() }
            let feed = store.changes(since: 0)
            let events = await collect(feed, batches: 10)
            #expect(events.count >= 3)
            #expect(feed.failure?.code == .corrupted)
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("the change feed") }, "\(report.problems)")
        }
    }

    /// A feed key past `Int64.max` (one flipped bit in the top byte) made `watch` trap converting
    /// it to print; verify passed. It is an unreadable entry now, for the feed and for verify.
    @Test func aSequencePastInt64MaxIsAnUnreadableEntry() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)
                for article in generatedArticles(2) { try await store.write { try $0.put(article, in: articles) } }
                store.close()
            }
            try appendUnreadableCommit(path, sequence: 1 << 63, value: nil)
            let store = try openStore(path)
            defer { store.close() }
            let feed = store.changes(since: 0)
            let events = await collect(feed, batches: 10)
            #expect(events.count == 2)
            #expect(feed.failure?.code == .corrupted)
            #expect(throws: StoreError.self) { try store.lastChangeSequence() }
            let report = try store.verify()
            #expect(report.problems.contains { $0.contains("the change feed") }, "\(report.problems)")
        }
    }

    @Test func commitsAreNumberedAndResumeAfterARestart() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(30)
            do {
                let store = try openStore(path)
                for article in sample[0..<5] { try await store.write { try $0.put(article, in: articles) } }
                _ = try await store.bulkInsert(Array(sample[5..<30]), into: articles)
                #expect(try store.lastChangeSequence() >= 6)
                store.close()
            }
            // Another open (a restart, or another process) reads the same feed from any point.
            let store = try openStore(path)
            defer { store.close() }
            let all = await collect(store.changes(since: 0), batches: 6)
            let batches = all.compactMap { if case .batch(let b) = $0 { b } else { nil } }
            #expect(batches.map(\.sequence) == Array(1...6))
            #expect(batches[0..<5].map { $0.changes.first?.keys } == sample[0..<5].map { [.string($0.id)] })
            #expect(Set(batches[5].changes.flatMap(\.keys)) == Set(sample[5..<30].map { .string($0.id) }))
            let resumed = await collect(store.changes(since: 3), batches: 1)
            #expect(resumed.first.map { event -> UInt64 in if case .batch(let b) = event { b.sequence } else { 0 } } == 4)
        }
    }

    @Test func aSubscriberPastRetentionGetsAnExplicitGapThenEveryKeptCommit() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) { $0.changeRetention = 5 }
            defer { store.close() }
            for article in generatedArticles(12) { try await store.put(article, in: articles) }
            #expect(try store.lastChangeSequence() == 12)
            let events = await collect(store.changes(since: 2), batches: 5)
            #expect(events.first == .gap(3...7))
            let sequences = events.compactMap { if case .batch(let b) = $0 { b.sequence } else { nil } }
            #expect(sequences == [8, 9, 10, 11, 12])
        }
    }

    /// Bulk commits list every key they wrote: past the byte bound the oldest are trimmed (a
    /// gap for a subscriber that had not read them), the newest always kept.
    @Test func theFeedKeepsToItsByteBound() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) { $0.changeRetentionBytes = 256 << 10 }
            defer { store.close() }
            let sample = generatedArticles(12_000)
            for part in 0..<12 {
                _ = try await store.bulkInsert(Array(sample[(part * 1_000)..<((part + 1) * 1_000)]), into: articles)
            }
            let last = try store.lastChangeSequence()
            #expect(last >= 12)
            let feedBytes = try store.storeStatistics().changeFeedBytes
            #expect(feedBytes <= 256 << 10 && feedBytes > 0, "\(feedBytes)")
            let events = await collect(store.changes(since: 0), batches: 1)
            guard case .gap(let missed)? = events.first else {
                Issue.record("\(events.first.map { "\($0)" } ?? "nothing")")
                return
            }
            #expect(missed.lowerBound == 1 && missed.upperBound < last)
            // What is kept is every commit after the gap, the last one's keys whole.
            let kept = await collect(store.changes(since: missed.upperBound), batches: Int(last - missed.upperBound))
            let batches = kept.compactMap { if case .batch(let b) = $0 { b } else { nil } }
            #expect(batches.map(\.sequence) == Array((missed.upperBound + 1)...last))
            #expect(Set(batches.last?.changes.flatMap(\.keys) ?? []) == Set(sample[11_000...].map { .string($0.id) }))

            // A single commit larger than the bound is kept whole: the feed never drops the newest.
            let tight = try openStore(path + "-tight") { $0.changeRetentionBytes = 4_096 }
            defer {
                tight.close()
                try? FileManager.default.removeItem(atPath: path + "-tight")
            }
            _ = try await tight.bulkInsert(Array(sample[0..<2_000]), into: articles)
            let only = await collect(tight.changes(since: try tight.lastChangeSequence() - 1), batches: 1)
            #expect(only.first.map { if case .batch(let b) = $0 { b.changes.flatMap(\.keys).count } else { 0 } } == 2_000)
        }
    }

    @Test func aSlowSubscriberLosesNothingAndALiveOneSeesNewCommits() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            let live = store.changes()
            let writer = Task {
                for article in generatedArticles(200) { try await store.put(article, in: articles) }
            }
            // Reads slowly while 200 commits go in: every one arrives, in order, no gap.
            var sequences: [UInt64] = []
            for await event in live {
                guard case .batch(let batch) = event else {
                    Issue.record("unexpected \(event)")
                    break
                }
                sequences.append(batch.sequence)
                if sequences.count % 50 == 0 { try await Task.sleep(for: .milliseconds(30)) }
                if sequences.count == 200 { break }
            }
            try await writer.value
            #expect(sequences.count == 200 && sequences == sequences.sorted() && Set(sequences).count == 200)
            #expect(sequences.last == sequences.first.map { $0 + 199 })
        }
    }

    /// Statistics name the transaction their counts are from (`serve`'s change stream sends the
    /// pair as one `commit` event): read while commits go in, one transaction id never comes
    /// with two counts. The id was the environment's last, read before the counts' snapshot.
    @Test func statisticsNameTheTransactionOfTheirCounts() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            let writer = Task {
                for article in generatedArticles(300) { try await store.put(article, in: articles) }
            }
            var countByTransaction: [Int: Int] = [:]
            var conflicts: [String] = []
            while !writer.isCancelled {
                let stats = try store.storeStatistics()
                let records = stats.collections.first { $0.name == articles.name }?.records ?? 0
                if let known = countByTransaction[stats.lastTransactionID], known != records {
                    conflicts.append("\(stats.lastTransactionID): \(known) and \(records)")
                }
                countByTransaction[stats.lastTransactionID] = records
                if records == 300 { break }
                await Task.yield()
            }
            try await writer.value
            #expect(conflicts.isEmpty, "\(conflicts.prefix(5))")
            #expect(countByTransaction.count > 20)
        }
    }
}

/// Appends a commit the feed cannot decode, through LMDB (synchronous: a write transaction
/// begins and commits on one thread).
/// `sequence`: the key's number (nil: the next); `value`: the entry (nil: a copy of the last one).
private func appendUnreadableCommit(_ path: String, sequence: UInt64? = nil, value: [UInt8]? = [0xFF, 0x01, 0x02]) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let feed = try env.openDatabase("_changes", flags: [])
    let (count, last) = try env.read { txn in
        (try txn.count(of: feed), try txn.cursor(in: feed).last().map { Array($0.value) })
    }
    let key = withUnsafeBytes(of: (sequence ?? UInt64(count + 1)).bigEndian) { Array($0) }
    let entry = try #require(value ?? last)
    try env.write { txn in try txn.put(entry, forKey: key, in: feed) }
}
