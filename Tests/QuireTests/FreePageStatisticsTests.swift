import Foundation
import Quire
import QuireNews
import QuireTestSupport
import Testing

/// `StoreStatistics.freeBytes`: the pages earlier writes freed, which a compacting copy drops.
@Suite struct FreePageStatisticsTests {
    static let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })

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
}
