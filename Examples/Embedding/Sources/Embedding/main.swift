import Foundation
import Quire
import QuireFetch
import QuireHTTP
import QuireNews

// Open a store with the news schema declared: articles (+ date and section indexes), lists, relations.
let store = try Store(path: "news.db", schema: NewsSchema.schema)
defer { store.close() }

// The durable change feed: every commit from now on, numbered (resumable with changes(since:)).
let watcher = Task {
    for await event in store.changes() {
        if case .batch(let batch) = event { print("commit \(batch.sequence): \(batch.changes.map(\.keys.count)) keys") }
    }
}

// Writes go through one actor; concurrent single writes are group-committed.
let article = Article(id: "nyt://article/example", url: "https://www.nytimes.com/example.html", headline: "Example")
try await store.put(article, in: NewsSchema.articles)
let many = (0..<1_000).map { Article(id: "bulk-\($0)", headline: "Article \($0)", publishedAt: Date(timeIntervalSince1970: Double($0) * 86_400)) }
try await store.bulkInsert(many, into: NewsSchema.articles, options: BulkInsertOptions(relaxedDurability: true))

// Reads are synchronous, run on any thread or task, and see a consistent snapshot.
let recent = try store.read { snapshot in
    try snapshot.values(in: NewsSchema.byDate, of: NewsSchema.articles, reverse: true, limit: 20)
}
let headline = try store.read { try $0.field("headline", of: .string(article.id), in: NewsSchema.articles) }
print("\(recent.count) recent articles; headline: \(headline.map { "\($0)" } ?? "none")")

// Your own types: any `Codable & Sendable` value; `Identifiable` ones are keyed by their id.
struct Note: Codable, Sendable, Identifiable {
    var id: Int
    var day: Date
    var text: String
}
let notes = StoreCollection<Note>(name: "notes", indexes: [StoreIndex(\Note.day)])
try store.register(notes)
try await store.put(Note(id: 1, day: Date(), text: "hello"), in: notes)

// Fetching, exactly once: each page's records and the source's checkpoint commit in one
// transaction, so a killed process resumes where it stopped.
if let key = ProcessInfo.processInfo.environment["NYT_API_KEY"], !key.isEmpty {
    let client = HTTPClient()
    defer { client.shutdown() }
    let service = FetchService(client: client)  // 5 requests a minute, 500 a day by default
    let sink = try StoreFetchSink(store: store)
    let source = NYTSource(query: NYTQuery(query: "climate", sort: .newest), key: APIKey(key), maxPages: 2)
    do {
        let summary = try await service.run(source, into: sink)  // resumes from the stored checkpoint
        print("stored \(summary.articles), rejected \(summary.rejected)")
    } catch {
        print("fetch failed: \(error)")  // typed FetchError; committed pages stay
    }
    // Offline fallback: fresh when the network works, else what the store holds, marked stale.
    let result = await service.articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
    print("\(result.articles.count) articles for the query\(result.isStale ? " (stale)" : "")")
} else {
    print("set NYT_API_KEY to fetch from the New York Times")
}

watcher.cancel()
