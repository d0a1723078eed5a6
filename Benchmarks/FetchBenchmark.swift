import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews

/// `fetch.loopback`: the whole fetch path on one machine: the fixture NYT API on 127.0.0.1
/// serves generated pages of 10 articles, `FetchService` requests them through libcurl (no rate
/// limit), maps the JSON to `Article`s and commits each page durably into a fresh store through
/// `StoreFetchSink`. Records/s counts articles; the note gives pages/s.
final class FetchBenchmark: Benchmark {
    let name = "fetch.loopback"
    let group = "fetch"
    let isBaseline = true
    static let apiKey = "bench-key-not-a-secret"
    static let query = "bench"
    /// Articles the fixture API holds for the query; above 1,000 the service splits the date range.
    private let articleCount: Int
    private var api: FixtureAPI?
    private var client: HTTPClient?
    private var scratch: ScratchStore?
    private var storedBytes: Double?
    private var lastSummary: FetchSummary?
    private var lastSeconds: Double = 0

    /// A twentieth of the corpus, at most `limit`: each page is an HTTP round trip and a durable commit.
    init(corpus: Corpus, limit: Int = 2_000) {
        articleCount = max(10, min(corpus.count / 20, limit))
    }

    var records: Int { articleCount }
    var bytesPerRecord: Double? { storedBytes }
    var note: String? {
        guard let summary = lastSummary, lastSeconds > 0 else { return nil }
        let pagesPerSecond = Report.fixed(Double(summary.pages) / lastSeconds, 0)
        return "\(summary.pages) pages of ≤ 10 articles, \(pagesPerSecond) pages/s (last sample), one durable commit a page"
    }

    func setUp() throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = articleCount
        configuration.apiKey = Self.apiKey
        api = try FixtureAPI(configuration: configuration)
        client = HTTPClient()
    }

    func prepareSample() throws { scratch = try ScratchStore() }

    func run() throws -> Int {
        guard let api, let client, let store = scratch?.store else { throw BenchError("not set up") }
        let sink = try StoreFetchSink(store: store)
        let service = FetchService(client: client, rateLimiter: .unlimited)
        let source = NYTSource(
            query: NYTQuery(query: Self.query, sort: .newest), key: APIKey(Self.apiKey), endpoint: api.nytSearchURL)
        let start = ContinuousClock.now
        let summary = try blockingAwait { try await service.run(source, into: sink, startOver: true) }
        lastSeconds = BenchmarkRunner.seconds(ContinuousClock.now - start)
        lastSummary = summary
        guard summary.isComplete else { throw BenchError("fetch.loopback: the fetch stopped early") }
        return summary.records
    }

    func finishSample() throws {
        guard let scratch else { return }
        if storedBytes == nil, let api {
            let keys = api.nytArticles(query: Self.query).map { Array($0.id.utf8) }
            storedBytes = try scratch.meanStoredBytes(keys, in: NewsSchema.articles)
        }
        scratch.close()
        self.scratch = nil
    }

    func tearDown() {
        client?.shutdown()
        client = nil
        api?.stop()
        api = nil
    }
}
