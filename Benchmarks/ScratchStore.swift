import Foundation
import Quire
import QuireFetch
import QuireNews

/// A Quire store in a fresh temporary directory, removed on `close`.
final class ScratchStore {
    let directory: URL
    let store: Store

    /// The map the store starts with: as large as the raw LMDB baseline's, so neither pays for
    /// growing its map during a timed run (a store's map otherwise starts at 64 MiB and grows).
    static let mapSize = 8 << 30

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("quire-bench-store-\(UUID().uuidString)", isDirectory: true)
        var options = StoreOptions()
        options.initialMapSize = Self.mapSize
        store = try Store(path: directory.path, options: options)
    }

    func close() {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The mean stored size of the values under `keys` (the bytes LMDB holds for each record).
    func meanStoredBytes(_ keys: [[UInt8]], in collection: StoreCollection<Article>) throws -> Double {
        let total = try store.read { snapshot in
            var total = 0
            for key in keys {
                total += try snapshot.withRecordBytes(StoreKey(bytes: key), in: collection) { $0.byteCount } ?? 0
            }
            return total
        }
        return Double(total) / Double(max(1, keys.count))
    }
}

/// The article collection as the benchmarks declare it: keyed by id, with the news schema's
/// date and section indexes or without any (what compares with raw LMDB puts, which have none),
/// and with its full-text index too (`NewsSchema.articles` as the product declares it).
enum BenchCollections {
    static let plain = StoreCollection<Article>(name: "articles", key: { .string($0.id) })
    static let indexed = StoreCollection<Article>(
        name: "articles", key: { .string($0.id) }, indexes: NewsSchema.articles.indexes)
    static let searchable = NewsSchema.articles
    static let compressed = StoreCollection<Article>(name: "articles", key: { .string($0.id) }, compressed: true)
}

/// A store holding the whole corpus (no indexes), loaded once for the read cases; `compressed`:
/// the records compressed with a dictionary trained on the load's first 2,000 (as a default
/// store's articles are).
final class ReadStore {
    let scratch: ScratchStore
    var store: Store { scratch.store }
    let collection: StoreCollection<Article>

    init(corpus: Corpus, compressed: Bool = false) throws {
        scratch = try ScratchStore()
        let store = scratch.store
        let collection = compressed ? BenchCollections.compressed : BenchCollections.plain
        self.collection = collection
        try store.register(collection)
        let articles = corpus.sortedArticles
        // A compressed collection's bulk load trains its dictionary on its first values itself.
        _ = try blockingAwait {
            try await store.bulkInsert(articles, into: collection, options: BulkInsertOptions(relaxedDurability: true))
        }
    }

    func close() { scratch.close() }
}
