import Foundation
import Quire
import QuireNews

/// `insert.quire.sorted` / `.random` (no indexes, like the raw LMDB puts they compare with),
/// `insert.quire.indexed.sorted` / `.random` (the news schema's date and section indexes), and
/// `insert.quire.sorted.relaxed`: `Store.bulkInsert` of the articles through the public API,
/// encoding included, into a fresh store each sample. Durable unless relaxed: each chunk's
/// commit is synced (the raw baseline syncs its one commit).
final class QuireBulkInsertBenchmark: Benchmark {
    let name: String
    let group: String
    let isBaseline = false
    private let corpus: Corpus
    private let sorted: Bool
    private let collection: StoreCollection<Article>
    private let options: BulkInsertOptions
    private var articles: [Article] = []
    private var scratch: ScratchStore?
    private var storedBytes: Double?
    private(set) var note: String?
    private let searchable: Bool
    /// The full-text index's databases after the first sample: name → bytes per record.
    private var searchBytes: [(String, Double)] = []

    init(corpus: Corpus, sorted: Bool, indexed: Bool = false, relaxed: Bool = false, searchable: Bool = false) {
        self.corpus = corpus
        self.searchable = searchable
        self.sorted = sorted
        collection = searchable ? BenchCollections.searchable : indexed ? BenchCollections.indexed : BenchCollections.plain
        options = BulkInsertOptions(relaxedDurability: relaxed)
        name = "insert.quire" + (searchable ? ".search" : indexed ? ".indexed" : "") + (sorted ? ".sorted" : ".random")
            + (relaxed ? ".relaxed" : "")
        group = searchable ? "insert.search" : sorted ? "insert.sorted" : "insert.random"
    }

    var records: Int { corpus.count }
    /// The stored value size, read back from the store after the first sample; for the
    /// searchable case, the full-text index's bytes (all its databases' pages) per record, what
    /// compares with FTS5's index.
    var bytesPerRecord: Double? {
        searchable ? (searchBytes.isEmpty ? nil : searchBytes.reduce(0) { $0 + $1.1 }) : storedBytes
    }

    func setUp() throws {
        articles = sorted ? corpus.sortedArticles : corpus.articles
    }

    func prepareSample() throws {
        let scratch = try ScratchStore()
        try scratch.store.register(collection)
        self.scratch = scratch
    }

    func run() throws -> Int {
        guard let store = scratch?.store else { throw BenchError("no store") }
        let (articles, collection, options) = (self.articles, self.collection, self.options)
        let report = try blockingAwait { try await store.bulkInsert(articles, into: collection, options: options) }
        note = "\(report.chunks) chunks (up to \(options.chunkSize) records each) in \(report.transactions) commits, \(report.appendedChunks) appended"
        if let packed = report.searchCompaction {
            note! += "; full-text index compacted at the end, \(packed.bytesBefore >> 20) → \(packed.bytesAfter >> 20) MiB"
        }
        if !searchBytes.isEmpty {
            let parts = searchBytes.map { "\($0.0) \(Report.fixed($0.1, 0))" }.joined(separator: ", ")
            note! += "; index B/record: " + parts + "; records \(Report.fixed(storedBytes ?? 0, 0)) B/record"
        }
        return report.records
    }

    func finishSample() throws {
        guard let scratch else { return }
        if storedBytes == nil { storedBytes = try scratch.meanStoredBytes(corpus.keys, in: collection) }
        if searchable, searchBytes.isEmpty {
            let stats = try scratch.store.storeStatistics().collections.first { $0.name == collection.name }
            let count = Double(max(1, corpus.count))
            searchBytes = (stats?.indexes ?? []).filter { $0.name.hasPrefix("search:") }.map { ($0.name, Double($0.bytes) / count) }
        }
        scratch.close()
        self.scratch = nil
    }
}

/// `insert.quire.group_commit`: many concurrent tasks each `put` single articles; the store
/// batches whatever is queued into one durable transaction (group commit). Reports records/s and,
/// in its note, how many commits the writes took.
final class GroupCommitBenchmark: Benchmark {
    let name = "insert.quire.group_commit"
    let group = "insert.group_commit"
    let isBaseline = true
    /// Concurrent writers; each awaits its put before the next, as a request handler would.
    let tasks: Int
    private let corpus: Corpus
    private let count: Int
    private var scratch: ScratchStore?
    private var storedBytes: Double?
    private(set) var note: String?

    /// Every durable commit waits for an fsync, so this case writes a quarter of the corpus,
    /// at most `limit` records, per sample to stay within the run's time.
    init(corpus: Corpus, tasks: Int = 64, limit: Int = 10_000) {
        self.corpus = corpus
        self.tasks = tasks
        count = max(1, min(corpus.count / 4, limit))
    }

    var records: Int { count }
    var bytesPerRecord: Double? { storedBytes }

    func setUp() throws {}

    func prepareSample() throws {
        let scratch = try ScratchStore()
        try scratch.store.register(BenchCollections.plain)
        self.scratch = scratch
    }

    func run() throws -> Int {
        guard let store = scratch?.store else { throw BenchError("no store") }
        let articles = Array(corpus.articles.prefix(count))
        let tasks = self.tasks
        let before = store.statistics.commits
        try blockingAwait {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        for index in stride(from: task, to: articles.count, by: tasks) {
                            try await store.put(articles[index], in: BenchCollections.plain)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let commits = store.statistics.commits - before
        note = "\(tasks) tasks, \(commits) commits, \(Report.fixed(Double(count) / Double(max(1, commits)), 1)) records/commit"
        return count
    }

    func finishSample() throws {
        guard let scratch else { return }
        if storedBytes == nil {
            storedBytes = try scratch.meanStoredBytes(Array(corpus.keys.prefix(count)), in: BenchCollections.plain)
        }
        scratch.close()
        self.scratch = nil
    }
}
