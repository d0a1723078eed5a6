import Foundation
import QuireNews

/// `insert.lmdb_raw.sorted` / `.random`: raw `mdb_put` of the bytes the store would keep
/// (the corpus pre-encoded once with `CompactEncoder`) in one durable transaction, into a fresh environment each sample. Sorted keys use `MDB_APPEND`.
final class RawLMDBInsertBenchmark: Benchmark {
    let name: String
    let group: String
    let isBaseline = true
    private let corpus: Corpus
    private let sorted: Bool
    private var keys: [[UInt8]] = []
    private var values: [[UInt8]] = []
    private var store: ScratchLMDB?

    init(corpus: Corpus, sorted: Bool) {
        self.corpus = corpus
        self.sorted = sorted
        name = sorted ? "insert.lmdb_raw.sorted" : "insert.lmdb_raw.random"
        group = sorted ? "insert.sorted" : "insert.random"
    }

    var records: Int { corpus.count }
    var bytesPerRecord: Double? { corpus.meanValueBytes }

    func setUp() throws {
        let order = sorted ? corpus.sortedOrder : Array(corpus.keys.indices)
        keys = order.map { corpus.keys[$0] }
        values = order.map { corpus.values[$0] }
    }

    func prepareSample() throws { store = try ScratchLMDB() }

    func run() throws -> Int {
        guard let store else { throw BenchError("no store") }
        try store.putAll(keys: keys, values: values, append: sorted)
        return keys.count
    }

    func finishSample() throws {
        store?.close()
        store = nil
    }
}

/// `insert.json_lmdb`: what a user gets by pairing `JSONEncoder` with LMDB: encode each article
/// to JSON inside the timed loop, then put it with sorted keys and `MDB_APPEND`, one transaction.
final class JSONLMDBInsertBenchmark: Benchmark {
    let name = "insert.json_lmdb"
    let group = "insert.sorted"
    let isBaseline = false
    private let corpus: Corpus
    private var articles: [Article] = []
    private var keys: [[UInt8]] = []
    private var store: ScratchLMDB?
    private var meanBytes: Double?

    init(corpus: Corpus) { self.corpus = corpus }

    var records: Int { corpus.count }
    var bytesPerRecord: Double? { meanBytes }

    func setUp() throws {
        articles = corpus.sortedArticles
        keys = corpus.sortedOrder.map { corpus.keys[$0] }
    }

    func prepareSample() throws { store = try ScratchLMDB() }

    func run() throws -> Int {
        guard let store else { throw BenchError("no store") }
        let encoder = JSONEncoder()
        var values: [[UInt8]] = []
        values.reserveCapacity(articles.count)
        var total = 0
        for article in articles {
            let data = try encoder.encode(article)
            total += data.count
            values.append(Array(data))
        }
        try store.putAll(keys: keys, values: values, append: true)
        meanBytes = Double(total) / Double(max(1, articles.count))
        return total
    }

    func finishSample() throws {
        store?.close()
        store = nil
    }
}
