import Foundation
import Quire
import QuireLMDB  // white-box: lists the environment's databases
import QuireNews
import QuireTestSupport
import Testing

/// docs/STORE.md's writer rules, enforced: every write runs on the writer thread, and what would
/// wait for itself traps with a message instead of hanging.
@Suite struct WriterRuleTests {
    // The trapping child cannot remove its store: the test's own process makes and removes it.
    @Test func registerInsideAWriteTrapsInsteadOfHanging() async throws {
        try await withTemporaryDirectory("trap", create: false) { path in
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store(path: path)
                let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })
                try await store.write { _ in try store.register(notes) }
            }
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("would wait for itself"))
        }
    }

    @Test func closeInsideAReadTrapsInsteadOfHanging() async throws {
        try await withTemporaryDirectory("trap", create: false) { path in
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store(path: path)
                try store.read { _ in store.close() }
            }
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("inside a read of the same store would wait for itself"))
        }
    }

    /// A registration inside a read could wait for the writer, which may wait for that read to
    /// end (to grow the map): it hung for good; it traps with a message.
    @Test func registerInsideAReadTrapsInsteadOfHanging() async throws {
        try await withTemporaryDirectory("trap", create: false) { path in
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store(path: path)
                let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })
                try store.read { _ in try store.register(notes) }
            }
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("register(_:) inside a read of the same store would wait for itself"))
        }
    }

    @Test func relationRegisterInsideAWriteTraps() async throws {
        try await withTemporaryDirectory("trap", create: false) { path in
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = path as String] in
                let store = try Store(path: path)
                try await store.write { _ in try store.register(StoreRelation(name: "r", memberCollection: "x")) }
            }
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("declare relations before writing"))
        }
    }

    @Test func registerFromManyThreadsAtOnceWritesOneDefinitionEach() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<16 {
                    group.addTask {
                        try store.register(StoreCollection<Row>(name: "c\(i % 4)", key: { .int(Int64($0.id)) }))
                    }
                }
                try await group.waitForAll()
            }
            #expect(Set(try store.storedCollections().map(\.name)) == ["c0", "c1", "c2", "c3"])
        }
    }

    @Test func droppingAnIndexDeletesItsDatabase() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)  // date and section indexes
                _ = try await store.bulkInsert(generatedArticles(50), into: articles)
                store.close()
            }
            do {
                let store = try Store(path: path)
                defer { store.close() }
                let dateOnly = StoreCollection<Article>(name: "articles", key: { .string($0.id) }, indexes: [articles.indexes[0]])
                try store.register(dateOnly)
                let names = try store.storeStatistics().collections.flatMap { $0.indexes.map(\.name) }
                #expect(names == ["publishedAt"])
                #expect(try store.verify().problems.isEmpty)
            }
            let env = try Environment(path: path)
            defer { env.close() }
            let main = try env.openDatabase(nil, flags: [])
            let databases = try env.read { txn in txn.entries(in: main).map { String(decoding: $0.key, as: UTF8.self) } }
            #expect(databases.contains("i:articles:publishedAt") && !databases.contains("i:articles:section"))
        }
    }
}
