import Foundation
import Quire
import QuireFixtures
import QuireNews
import QuireTestSupport

/// A fresh store directory for one test (left for the store to create), removed afterwards.
func withTemporaryStorePath<R>(_ body: (String) async throws -> R) async throws -> R {
    try await withTemporaryDirectory("store", create: false, body)
}

/// Articles keyed by id, indexed by publication date and section.
let articles = StoreCollection<Article>(
    name: "articles", key: { .string($0.id) },
    indexes: [
        StoreIndex(name: "publishedAt", kind: .date, field: "publishedAt") { a in a.publishedAt.map { [.date($0)] } ?? [] },
        StoreIndex(name: "section", kind: .string, field: "section") { a in a.section.map { [.string($0)] } ?? [] },
    ])

let lists = StoreCollection<ArticleList>(name: "lists", key: { .string($0.id) })
let listMembers = StoreRelation(name: "list-articles", memberCollection: "articles")

func generatedArticles(_ count: Int, seed: UInt64 = 7) -> [Article] {
    var generator = ArticleGenerator(seed: seed)
    return (0..<count).map { generator.article(index: $0) }
}

/// Reads a change feed's events until `count` batches arrived (or 20 seconds passed).
func collectChanges(_ feed: ChangeFeed, batches count: Int) async -> [ChangeFeedEvent] {
    let task = Task {
        var events: [ChangeFeedEvent] = []
        var batches = 0
        for await event in feed {
            events.append(event)
            if case .batch = event { batches += 1 }
            if batches == count { break }
        }
        return events
    }
    let timeout = Task {
        try await Task.sleep(for: .seconds(20))
        task.cancel()
    }
    let events = await task.value
    timeout.cancel()
    return events
}

func openStore(_ path: String, _ configure: (inout StoreOptions) -> Void = { _ in }) throws -> Store {
    var options = StoreOptions()
    configure(&options)
    let store = try Store(path: path, options: options)
    if !options.readOnly {
        try store.register(articles)
        try store.register(lists)
        try store.register(listMembers)
    }
    return store
}

/// A small record for high-volume tests (debug builds are slow to encode big articles).
struct Row: Codable, Sendable, Hashable {
    var id: Int
    var name: String
    var group: Int
}

let rows = StoreCollection<Row>(
    name: "rows", key: { .int(Int64($0.id)) },
    indexes: [StoreIndex(name: "group", kind: .int, field: "group") { [.int(Int64($0.group))] }])

/// Rows with ids 0..<count in a scrambled but deterministic order (7919 is prime, coprime to
/// count), named "`name` id", grouped by id % 5.
func scrambledRows(_ count: Int, name: String = "v1") -> [Row] {
    (0..<count).map { i in
        let id = (i * 7919) % count
        return Row(id: id, name: "\(name) \(id)", group: id % 5)
    }
}
