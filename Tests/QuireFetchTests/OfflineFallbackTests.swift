import Foundation
import QuireFetch
import QuireFixtures
import Testing

@Suite struct OfflineFallbackTests {
    @Test func freshWhenOnlineStoredAndStaleWhenOffline() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 22 }
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let service = makeService(clock: clock, retryPolicy: exactRetries(transientAttempts: 2))
        let source = nytSource(api)

        let online = await service.articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
        #expect(!online.isStale)
        #expect(online.failure == nil)
        #expect(online.articles.count == 22)
        let fetchedAt = try #require(online.fetchedAt)

        api.stop()
        clock.advance(by: 3600)
        let offline = await service.articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
        #expect(offline.isStale)
        #expect(offline.articles == online.articles)
        #expect(offline.fetchedAt == fetchedAt)
        let failure = try #require(offline.failure)
        #expect(failure.code == .transport)
        #expect(failure.code.isNetworkFailure)
    }

    @Test func nothingStoredGivesAnEmptyStaleResult() async throws {
        let api = try makeAPI { $0.faults = [.init(.everyNYTRequest, .serverError)] }
        let sink = InMemoryFetchSink()
        let source = nytSource(api)
        let result = await makeService().articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
        #expect(result.isStale)
        #expect(result.articles.isEmpty)
        #expect(result.fetchedAt == nil)
        #expect(result.failure?.code == .serverError)
    }
}
