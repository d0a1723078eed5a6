import Foundation
import Quire
import QuireNews
import QuireTestSupport
import Testing

/// `StoreStatistics.freeBytes`: the pages earlier writes freed, which a compacting copy drops.
@Suite struct FreePageStatisticsTests {
    static let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })
    static let sectioned = StoreCollection<Article>(
        name: "sectioned", key: { .string($0.id) },
        indexes: [StoreIndex(name: "section", kind: .string, field: "section") { $0.section.map { [.string($0)] } ?? [] }])

    @Test func deletesLeaveFreePagesThatACompactCopyLeavesOut() async throws {
        try await withTemporaryStorePath { path in
            try await withTemporaryStorePath { copy in
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(Self.notes)
                let sample = generatedArticles(600, seed: 3)
                _ = try await store.bulkInsert(sample, into: Self.notes)
                try await store.write { txn in
                    for article in sample.prefix(500) { _ = try txn.delete(.string(article.id), from: Self.notes) }
                }
                // Two more commits, so the pages the deletes freed are past any snapshot.
                for article in sample.suffix(2) { try await store.put(article, in: Self.notes) }
                let stats = try store.storeStatistics()
                let notes = try #require(stats.collections.first { $0.name == "notes" })
                #expect(notes.records == 100)
                // 500 articles of about a kilobyte each freed at least 100 pages.
                #expect(stats.freeBytes >= 100 * stats.pageSize, "\(stats.freeBytes)")
                #expect(stats.freeBytes < stats.usedBytes)

                try store.backup(to: copy)
                let copied = try Store(path: copy)
                defer { copied.close() }
                try copied.register(Self.notes)
                let after = try copied.storeStatistics()
                #expect(after.freeBytes < stats.freeBytes / 10, "\(after.freeBytes)")
                #expect(after.fileBytes < stats.fileBytes)
            }
        }
    }

    /// The statistics account for every used page of the file: LMDB's counts of an index or a
    /// relation leave out the sub-trees of keys with many duplicates (a section's thousands of
    /// ids), and `duplicateBytes` holds them.
    @Test func theLinesAddUpToTheUsedPages() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(Self.notes)
            _ = try await store.bulkInsert(generatedArticles(300, seed: 4), into: Self.notes)
            let plain = try store.storeStatistics()
            // A collection without an index has no duplicates.
            #expect(plain.duplicateBytes == 0)
            #expect(abs(plain.usedBytes - accounted(plain)) <= 4 * plain.pageSize, "\(plain.usedBytes) \(accounted(plain))")

            try store.register(Self.sectioned)
            let sample = generatedArticles(6_000, seed: 5)
            _ = try await store.bulkInsert(sample, into: Self.sectioned)
            let stats = try store.storeStatistics()
            let sectioned = sample.filter { $0.section != nil }
            let largest = Dictionary(grouping: sectioned, by: \.section).values.map(\.count).max() ?? 0
            try #require(largest > 500)
            // At least the ids of the sections' records, on pages of their own.
            let ids = sectioned.reduce(0) { $0 + $1.id.utf8.count }
            #expect(stats.duplicateBytes >= ids, "\(stats.duplicateBytes) \(ids)")
            #expect(abs(stats.usedBytes - accounted(stats)) <= 4 * stats.pageSize, "\(stats.usedBytes) \(accounted(stats))")
        }
    }

    /// What the statistics' lines add up to, with the file's two meta pages; left out are the free
    /// list's and the main database's own few pages.
    private func accounted(_ stats: StoreStatistics) -> Int {
        stats.collections.reduce(0) { $0 + $1.bytes + $1.indexes.reduce(0) { $0 + $1.bytes } }
            + stats.relations.reduce(0) { $0 + $1.bytes }
            + stats.duplicateBytes + stats.changeFeedBytes + stats.metadataBytes + stats.freeBytes + 2 * stats.pageSize
    }
}
