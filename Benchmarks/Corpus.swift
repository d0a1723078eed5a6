import Foundation
import QuireCodec
import QuireFixtures
import QuireNews

/// The generated data every case of one run shares, so all comparisons see the same records:
/// QuireFixtures' `ArticleGenerator` articles, the NYT-shaped `Article` the store keeps.
final class Corpus: @unchecked Sendable {
    // @unchecked: built once in `init`; the cases only read it (the lazy read store is made
    // from the main thread, in a case's `setUp`, before any of its threads start).

    /// The generator's seed: the same on every run and machine, so runs compare.
    static let seed: UInt64 = 0x5155_4952_4521

    /// The articles in generation order (their ids are random hex or uuids: a random key order).
    let articles: [Article]
    /// Each article's id as UTF-8 key bytes, in generation order.
    let keys: [[UInt8]]
    /// Indices of `articles` in ascending (bytewise) key order.
    let sortedOrder: [Int]
    /// The same articles in ascending key order, generated again in that order, so that each
    /// one's strings lie in memory in the order a sorted load reads them, as they would when a
    /// load decodes its (sorted) input. Reordering `articles` instead would leave every value
    /// at a random heap address: a cache miss per string that no real load pays.
    let sortedArticles: [Article]
    /// Each article as the store keeps it: `CompactEncoder` bytes with field ids from `fields`.
    /// The raw LMDB baselines put exactly these bytes.
    let values: [[UInt8]]
    /// The field table `values` were encoded with. Encoded in sorted key order from an empty
    /// table, the same names get the same ids as in a fresh store loaded in that order.
    let fields: FieldTable
    /// Each article hand-encoded (`HandCodec`), for the hand-written floor.
    let handValues: [[UInt8]]

    init(count: Int) throws {
        var generator = ArticleGenerator(seed: Self.seed)
        let articles = generator.articles(count: count)
        self.articles = articles
        let keys = articles.map { Array($0.id.utf8) }
        self.keys = keys
        let sortedOrder = keys.indices.sorted { keys[$0].lexicographicallyPrecedes(keys[$1]) }
        self.sortedOrder = sortedOrder
        sortedArticles = sortedOrder.map { generator.article(index: $0) }
        var table = FieldTable()
        let encoder = CompactEncoder()
        var values = [[UInt8]](repeating: [], count: count)
        for index in sortedOrder { values[index] = try encoder.encode(articles[index], fields: &table) }
        self.values = values
        fields = table
        handValues = articles.map(HandCodec.encode)
    }

    var count: Int { articles.count }

    /// Mean size of the store's encoded values.
    var meanValueBytes: Double { Self.mean(values) }

    static func mean(_ values: [[UInt8]]) -> Double {
        Double(values.reduce(0) { $0 + $1.count }) / Double(max(1, values.count))
    }

    private var dictionaryStorage: [UInt8]?

    /// A zstd dictionary trained on up to 2,000 of the encoded records, spread over the corpus.
    func zstdDictionary() throws -> [UInt8] {
        if let dictionaryStorage { return dictionaryStorage }
        let step = max(1, values.count / 2_000)
        let samples = stride(from: 0, to: values.count, by: step).map { values[$0] }
        let dictionary = try ZstdDictionary.train(samples: samples)
        dictionaryStorage = dictionary
        return dictionary
    }

    /// A store holding the whole corpus, shared by the read cases; made on first use.
    private var readStoreStorage: ReadStore?

    func readStore() throws -> ReadStore {
        if let readStoreStorage { return readStoreStorage }
        let store = try ReadStore(corpus: self)
        readStoreStorage = store
        return store
    }

    /// ``readStore()`` with its records compressed (`ReadStore(corpus:compressed:)`).
    private var compressedReadStoreStorage: ReadStore?

    func compressedReadStore() throws -> ReadStore {
        if let compressedReadStoreStorage { return compressedReadStoreStorage }
        let store = try ReadStore(corpus: self, compressed: true)
        compressedReadStoreStorage = store
        return store
    }

    /// The search cases' store and FTS5 database (`searchFixture()`); made on first use.
    var searchFixtureStorage: SearchFixture?

    /// Closes and removes the shared read store and search fixture.
    func cleanUp() {
        readStoreStorage?.close()
        readStoreStorage = nil
        compressedReadStoreStorage?.close()
        compressedReadStoreStorage = nil
        searchFixtureStorage?.close()
        searchFixtureStorage = nil
    }
}
