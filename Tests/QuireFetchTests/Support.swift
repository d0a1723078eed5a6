import Foundation
import Quire
import QuireTestSupport
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import Synchronization

/// A clock that never waits: `sleep` records the duration and moves `now` forward at once.
final class TestClock: FetchClock {
    private let state: Mutex<(now: Date, sleeps: [Duration])>

    init(start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex((start, []))
    }

    var now: Date { state.withLock { $0.now } }
    var sleeps: [Duration] { state.withLock { $0.sleeps } }
    var sleptSeconds: [Double] { sleeps.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } }

    func advance(by seconds: Double) { state.withLock { $0.now.addTimeInterval(seconds) } }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(duration)
            let (seconds, atto) = duration.components
            state.now.addTimeInterval(Double(seconds) + Double(atto) / 1e18)
        }
        await Task.yield()
    }
}

/// A clock whose sleeps really suspend (until cancelled), to test cancellation mid-run.
struct SuspendingClock: FetchClock {
    var now: Date { Date(timeIntervalSince1970: 1_700_000_000) }
    func sleep(for duration: Duration) async throws { try await Task.sleep(for: .seconds(3600)) }
}

/// Collects progress events.
final class ProgressLog: Sendable {
    private let events = Mutex<[FetchProgress]>([])
    var all: [FetchProgress] { events.withLock { $0 } }
    var handler: @Sendable (FetchProgress) -> Void { { [self] event in events.withLock { $0.append(event) } } }
}

let testKey = "SeCrEt-Key-7f3a9c21"

/// A retry policy without jitter, so the waits are exact.
func exactRetries(rateLimitAttempts: Int = 5, transientAttempts: Int = 4) -> RetryPolicy {
    var policy = RetryPolicy()
    policy.jitter = 0
    policy.rateLimitAttempts = rateLimitAttempts
    policy.transientAttempts = transientAttempts
    return policy
}

/// A fixture API requiring ``testKey``.
func makeAPI(_ configure: (inout FixtureAPI.Configuration) -> Void = { _ in }) throws -> FixtureAPI {
    var configuration = FixtureAPI.Configuration()
    configuration.apiKey = testKey
    configure(&configuration)
    return try FixtureAPI(configuration: configuration)
}

/// A service on a test clock, with no rate limit unless given.
func makeService(
    clock: any FetchClock = TestClock(), rateLimiter: RateLimiter = .unlimited, retryPolicy: RetryPolicy = exactRetries(),
    client: HTTPClient = HTTPClient()
) -> FetchService {
    FetchService(client: client, rateLimiter: rateLimiter, retryPolicy: retryPolicy, clock: clock)
}

func nytSource(
    _ api: FixtureAPI, query: NYTQuery = NYTQuery(query: "election"), key: String = testKey, pageCap: Int = 100,
    maxPages: Int? = nil, fallbackRange: NYTDateWindow? = nil
) -> NYTSource {
    NYTSource(
        query: query, key: APIKey(key), endpoint: api.nytSearchURL, pageCap: pageCap, maxPages: maxPages,
        fallbackRange: fallbackRange)
}

/// Runs and returns the typed error, or nil when the run succeeded.
func runExpectingFailure<S: FetchSource>(
    _ service: FetchService, _ source: S, into sink: InMemoryFetchSink, progress: ProgressLog? = nil
) async -> FetchError? {
    do {
        _ = try await service.run(source, into: sink, progress: progress?.handler)
        return nil
    } catch {
        return error
    }
}

/// Every byte a sink holds, as text, to search for secrets.
func everythingStored(in sink: InMemoryFetchSink) throws -> String {
    let encoder = JSONEncoder()
    var text = String(decoding: try encoder.encode(sink.articles), as: UTF8.self)
    text += String(decoding: try encoder.encode(Array(sink.lists.values)), as: UTF8.self)
    for page in sink.committedPages {
        text += String(decoding: page.checkpoint, as: UTF8.self)
        text += page.sourceID + (page.queryTag ?? "")
        for raw in page.rawDocuments { text += String(decoding: raw, as: UTF8.self) }
    }
    return text
}

func day(_ text: String) -> NYTDay { NYTDay(string: text)! }

/// A store in a fresh directory for one test, closed and removed afterwards.
func withTemporaryStore<R>(_ body: (Store) async throws -> R) async throws -> R {
    try await withTemporaryDirectory("fetch", create: false) { path in
        let store = try Store(path: path)
        defer { store.close() }
        return try await body(store)
    }
}
