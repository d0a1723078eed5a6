import Foundation
import QuireFetch
import QuireFixtures
import QuireNews
import Testing

@Suite struct ResumeTests {
    /// Runs `source` to the end, crashing the sink after every possible number of commits in turn
    /// and resuming, and compares with an uninterrupted run.
    func crashAndResumeEverywhere<S: FetchSource>(_ makeSource: () -> S) async throws {
        let reference = InMemoryFetchSink()
        let service = makeService()
        _ = try await service.run(makeSource(), into: reference)
        let totalCommits = reference.commitCount
        #expect(totalCommits > 3)

        for crashPoint in 0..<totalCommits {
            let sink = InMemoryFetchSink(crashAfterCommits: crashPoint)
            let error = await runExpectingFailure(service, makeSource(), into: sink)
            #expect(error?.code == .sink)
            #expect(sink.commitCount == crashPoint)
            sink.crashAfterCommits = nil
            let resumed = try await service.run(makeSource(), into: sink)
            #expect(resumed.resumed == (crashPoint > 0))
            #expect(resumed.isComplete)

            #expect(sink.articles == reference.articles)
            #expect(sink.lists == reference.lists)
            #expect(sink.queryIndex == reference.queryIndex)
            #expect(sink.checkpoints == reference.checkpoints)
            // No page was committed twice: the same pages, in the same order.
            #expect(sink.committedPages.map(\.checkpoint) == reference.committedPages.map(\.checkpoint))
            #expect(sink.committedPages.map(\.articles) == reference.committedPages.map(\.articles))
        }
    }

    @Test func nytResumesExactlyAfterACrashAtEveryCommit() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 90
            $0.maxPage = 2
        }
        let query = NYTQuery(query: "harbor", begin: day("2012-01-01"), end: day("2025-07-01"), sort: .newest)
        try await crashAndResumeEverywhere { nytSource(api, query: query, pageCap: 3) }
    }

    @Test func feedzillaResumesExactlyAfterACrashAtEveryCommit() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 4
            $0.feedzillaArticlesPerCategory = 8
        }
        try await crashAndResumeEverywhere { FeedzillaSource(baseURL: api.feedzillaBaseURL) }
    }

    @Test func aFinishedSourceMakesNoRequestUnlessStartedOver() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 12 }
        let sink = InMemoryFetchSink()
        let service = makeService()
        _ = try await service.run(nytSource(api), into: sink)
        let requests = api.requestCount
        let again = try await service.run(nytSource(api), into: sink)
        #expect(again.pages == 0)
        #expect(again.isComplete)
        #expect(api.requestCount == requests)

        let fresh = try await service.run(nytSource(api), into: sink, startOver: true)
        #expect(fresh.pages == 2)
        #expect(sink.articles.count == 12)
    }
}
