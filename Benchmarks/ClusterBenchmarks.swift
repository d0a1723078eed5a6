import Foundation
import Quire
import QuireCluster
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import Synchronization

/// `fetch.cluster`: the cluster's ingest path, against `fetch.loopback` in the same group: the
/// same fixture pages fetched through `FetchService`, each page committed to a one-member
/// etcd's log (one transaction comparing the checkpoint) while a replica applies the log into
/// a fresh store; the sample ends when the replica has applied the last page. The note gives
/// the replication lag (fetch to applied) p50/p99.
final class ClusterIngestBenchmark: Benchmark {
    let name = "fetch.cluster"
    let group = "fetch"
    let isBaseline = false
    private let articleCount: Int
    private var api: FixtureAPI?
    private var http: HTTPClient?
    private var etcd: LocalEtcd?
    private var scratch: ScratchStore?
    private var sample = 0
    private(set) var note: String?

    init(corpus: Corpus, limit: Int = 2_000) {
        articleCount = max(10, min(corpus.count / 20, limit))
    }

    var records: Int { articleCount }
    var bytesPerRecord: Double? { nil }

    func setUp() throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = articleCount
        configuration.apiKey = FetchBenchmark.apiKey
        api = try FixtureAPI(configuration: configuration)
        http = HTTPClient()
        etcd = try LocalEtcd()
    }

    func prepareSample() throws { scratch = try ScratchStore() }

    func run() throws -> Int {
        guard let api, let http, let client = etcd?.client, let store = scratch?.store else {
            throw BenchError("not set up")
        }
        sample += 1
        // Each sample writes under its own prefix: a fresh log and checkpoint.
        let keys = ClusterKeys(prefix: "/bench/\(sample)/")
        let replica = try Replica(store: store, client: client, keys: keys)
        let source = NYTSource(
            query: NYTQuery(query: FetchBenchmark.query, sort: .newest), key: APIKey(FetchBenchmark.apiKey),
            endpoint: api.nytSearchURL)
        let service = FetchService(client: http, rateLimiter: .unlimited)
        let (summary, lags) = try blockingAwait {
            let done = Atomic<Bool>(false)
            async let fetched = service.run(source, into: ClusterFetchSink(client: client, keys: keys, ownership: nil))
            async let applied: [Double] = {
                var lags: [Double] = []
                while true {
                    let finished = done.load(ordering: .acquiring)
                    let batch = try await replica.applyOnce()
                    lags += batch.lags
                    if batch.pages == 0 {
                        if finished { return lags }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
            }()
            let summary = try await fetched
            done.store(true, ordering: .releasing)
            return (summary, try await applied)
        }
        guard summary.isComplete else { throw BenchError("fetch.cluster: the fetch stopped early") }
        let sorted = lags.sorted()
        if !sorted.isEmpty {
            let p50 = sorted[sorted.count / 2] * 1000
            let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000
            note =
                "\(summary.pages) pages through etcd; replication lag p50 \(Report.fixed(p50, 1)) ms, p99 \(Report.fixed(p99, 1)) ms (fetch to applied, last sample)"
        }
        return try store.read { try $0.values(of: NewsSchema.articles).count }
    }

    func finishSample() throws {
        scratch?.close()
        scratch = nil
    }

    func tearDown() {
        etcd?.stop()
        etcd = nil
        http?.shutdown()
        http = nil
        api?.stop()
        api = nil
    }
}

/// `replica.apply` against `replica.bulk_insert`: a replica applying a log already in etcd
/// (pages of 10 articles, compressed, 20 pages a transaction) into a fresh store, and
/// `Store.bulkInsert` of the same articles into the same collection (the news schema's
/// articles, with their date, section and full-text indexes).
final class ReplicaApplyBenchmark: Benchmark {
    let name: String
    let group = "replica"
    let isBaseline: Bool
    private let articles: [Article]
    private var etcd: LocalEtcd?
    private var scratch: ScratchStore?
    private let keys = ClusterKeys(prefix: "/bench-apply/")
    private(set) var note: String?

    init(corpus: Corpus, bulk: Bool, limit: Int = 20_000) {
        articles = Array(corpus.articles.prefix(limit))
        isBaseline = bulk
        name = bulk ? "replica.bulk_insert" : "replica.apply"
    }

    var records: Int { articles.count }
    var bytesPerRecord: Double? { nil }

    func setUp() throws {
        guard !isBaseline else { return }
        let etcd = try LocalEtcd()
        self.etcd = etcd
        let (client, keys, articles) = (etcd.client, keys, articles)
        let pages = stride(from: 0, to: articles.count, by: 10).map {
            Array(articles[$0..<min($0 + 10, articles.count)])
        }
        let bytes = try blockingAwait {
            var bytes = 0
            let fetchedAt = Date(timeIntervalSince1970: 1_700_000_000)
            for start in stride(from: 0, to: pages.count, by: 20) {
                var operations: [EtcdOperation] = []
                for index in start..<min(start + 20, pages.count) {
                    let entry = LogEntry(
                        source: "bench", version: Int64(index + 1), part: 0, parts: 1, label: "page \(index)",
                        mappingKind: "nyt", queryTag: nil, fetchedAt: fetchedAt, checkpoint: Data("\(index)".utf8),
                        articles: pages[index], lists: [], rejects: [],
                        transactionEntries: min(start + 20, pages.count) - start)
                    let encoded = try entry.encoded()
                    bytes += encoded.count
                    operations.append(.put(keys.logEntry(source: "bench", version: Int64(index + 1), part: 0), encoded))
                }
                _ = try await client.txn(compare: [], success: operations)
            }
            return bytes
        }
        note =
            "\(pages.count) log entries of 10 articles, \(bytes / max(1, pages.count)) bytes each compressed; "
            + "one LMDB transaction per poll (up to 1024 entries, about 8 MiB)"
    }

    func prepareSample() throws {
        scratch = try ScratchStore()
        _ = try StoreFetchSink(store: scratch!.store)
    }

    func run() throws -> Int {
        guard let store = scratch?.store else { throw BenchError("no store") }
        if isBaseline {
            let articles = self.articles
            return try blockingAwait { try await store.bulkInsert(articles, into: NewsSchema.articles) }.records
        }
        guard let client = etcd?.client else { throw BenchError("no etcd") }
        let replica = try Replica(store: store, client: client, keys: keys)
        let applied = try blockingAwait {
            var applied = 0
            while true {
                let batch = try await replica.applyOnce()
                if batch.pages == 0 { return applied }
                applied += batch.articles
            }
        }
        let stored = try store.read { try $0.values(of: NewsSchema.articles).count }
        guard applied == articles.count, stored == Set(articles.map(\.id)).count else {
            throw BenchError("replica.apply: applied \(applied) of \(articles.count) articles, \(stored) stored")
        }
        return applied
    }

    func finishSample() throws {
        scratch?.close()
        scratch = nil
    }

    func tearDown() {
        etcd?.stop()
        etcd = nil
    }
}
