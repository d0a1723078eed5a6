import Foundation
import QuireFetch
import QuireFixtures
import QuireNews
import Testing

@Suite struct NYTFetchTests {
    @Test(arguments: NYTEra.allCases)
    func fetchesEveryPageOfEachEra(era: NYTEra) async throws {
        let api = try makeAPI {
            $0.era = era
            $0.nytArticlesPerQuery = 35
        }
        let sink = InMemoryFetchSink()
        let source = nytSource(api)
        let summary = try await makeService().run(source, into: sink)

        let expected = api.nytArticles(query: "election").map { nytRoundTrip($0, era: era) }
        #expect(sink.articles == expected)
        #expect(summary.pages == 4)
        #expect(summary.records == 35)
        #expect(summary.isComplete)
        #expect(!summary.resumed)
        #expect(sink.rawDocuments.count == 35)
        #expect(sink.queryIndex[source.queryTag] == expected.map(\.id))
        #expect(api.requestLog == (0..<4).map { "/svc/search/v2/articlesearch.json?q=election&page=\($0)" })
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints[source.sourceID]))
        #expect(checkpoint.isFinished)
        #expect(checkpoint.pagesFetched == 4)
    }

    @Test func exactlyTenAPageStopsAtHits() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 30 }
        let sink = InMemoryFetchSink()
        let summary = try await makeService().run(nytSource(api), into: sink)
        // Three full pages; hits (30) says there is no fourth, so it is not requested.
        #expect(summary.pages == 3)
        #expect(api.requestCount == 3)
        #expect(sink.articles.count == 30)
    }

    @Test func maxPagesStopsAndALaterRunContinues() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 45 }
        let sink = InMemoryFetchSink()
        let service = makeService()
        let first = try await service.run(nytSource(api, maxPages: 2), into: sink)
        #expect(first.pages == 2)
        #expect(first.records == 20)
        #expect(!first.isComplete)

        let second = try await service.run(nytSource(api), into: sink)
        #expect(second.resumed)
        #expect(second.pages == 3)
        #expect(second.isComplete)
        #expect(sink.articles.map(\.id) == api.nytArticles(query: "election").map(\.id))
        #expect(api.requestLog.map { $0.components(separatedBy: "page=").last! } == ["0", "1", "2", "3", "4"])
    }

    @Test func pageCapStopsAWindowThatCannotBeSplit() async throws {
        // hits is exact and within the cap, so no split: the cap alone stops paging.
        let api = try makeAPI { $0.nytArticlesPerQuery = 80 }
        let sink = InMemoryFetchSink()
        let summary = try await makeService().run(nytSource(api, pageCap: 3), into: sink)
        // 80 > 30 reachable: split into windows by date, every article still arrives.
        #expect(Set(sink.articles.map(\.id)) == Set(api.nytArticles(query: "election").map(\.id)))
        #expect(summary.isComplete)
        #expect(!api.requestLog.contains { $0.hasSuffix("page=3") })
    }

    @Test(arguments: [NYTQuery.Sort.newest, .oldest])
    func splitsTheDateRangeWhenHitsExceedTheCap(sort: NYTQuery.Sort) async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 200
            $0.maxPage = 4
        }
        let sink = InMemoryFetchSink()
        let query = NYTQuery(query: "market", begin: day("2012-01-01"), end: day("2025-07-01"), sort: sort)
        let source = nytSource(api, query: query, pageCap: 5)
        let summary = try await makeService().run(source, into: sink)

        let all = api.nytArticles(query: "market")
        #expect(Set(sink.articles.map(\.id)) == Set(all.map(\.id)))
        #expect(sink.articles.count == 200)
        #expect(summary.isComplete)
        // No request ever asked for a page beyond the cap (which the server would reject).
        #expect(!api.requestLog.contains { $0.hasSuffix("page=5") })
        let encoded = try #require(sink.checkpoints[source.sourceID])
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: encoded)
        #expect(checkpoint.truncatedDayCount == 0 && checkpoint.unreachableResults == 0)
        #expect(checkpoint.doneWindowCount > 2)
        // However many windows the query split into, the checkpoint stays small.
        #expect(encoded.count < 600, "\(String(decoding: encoded, as: UTF8.self))")
        // The windows were split by date and cover the range without overlap, in sort order:
        // the first window requested past page 0 starts (or ends) at the range's edge.
        let windowDays = api.requestLog.compactMap { line -> (String, String)? in
            guard let b = line.range(of: "begin_date="), let e = line.range(of: "end_date=") else { return nil }
            return (String(line[b.upperBound...].prefix(8)), String(line[e.upperBound...].prefix(8)))
        }
        #expect(windowDays.contains { $0.0 == "20120101" })
        #expect(windowDays.contains { $0.1 == "20250701" })
        // Newest-first fetching stores the newest articles first.
        let dates = sink.articles.compactMap(\.publishedAt)
        #expect(sort == .newest ? dates == dates.sorted(by: >) : dates == dates.sorted())
    }

    @Test func splitsAQueryWithoutDatesUsingTheFallbackRange() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 120
            $0.maxPage = 4
        }
        let sink = InMemoryFetchSink()
        let source = nytSource(
            api, pageCap: 5, fallbackRange: NYTDateWindow(begin: day("2010-01-01"), end: day("2026-12-31")))
        let summary = try await makeService().run(source, into: sink)
        #expect(summary.isComplete)
        #expect(Set(sink.articles.map(\.id)) == Set(api.nytArticles(query: "election").map(\.id)))
        #expect(api.requestLog.first == "/svc/search/v2/articlesearch.json?q=election&page=0")
        #expect(api.requestLog.dropFirst().allSatisfy { $0.contains("begin_date=") && $0.contains("end_date=") })
    }

    @Test func dateWindowSplitHalvesByDay() {
        let window = NYTDateWindow(begin: day("2020-01-01"), end: day("2020-01-10"))
        let halves = window.split()
        #expect(halves?.first == NYTDateWindow(begin: day("2020-01-01"), end: day("2020-01-05")))
        #expect(halves?.second == NYTDateWindow(begin: day("2020-01-06"), end: day("2020-01-10")))
        #expect(NYTDateWindow(begin: day("2020-02-29"), end: day("2020-02-29")).split() == nil)
        let two = NYTDateWindow(begin: day("2019-12-31"), end: day("2020-01-01")).split()
        #expect(two?.first.dayCount == 1)
        #expect(two?.second.begin == day("2020-01-01"))
    }

    @Test func aStoredCheckpointOfAnotherQueryIsRejected() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 15 }
        let sink = InMemoryFetchSink()
        let other = NYTCheckpoint(queryIdentity: "q=other", window: nil)
        let source = nytSource(api)
        _ = try await sink.commit(
            FetchedPage(
                sourceID: source.sourceID, articles: [], queryTag: nil, checkpoint: try JSONEncoder().encode(other),
                fetchedAt: Date()))
        let error = await runExpectingFailure(makeService(), source, into: sink)
        #expect(error?.code == .checkpoint)
        #expect(api.requestCount == 0)
    }
}
