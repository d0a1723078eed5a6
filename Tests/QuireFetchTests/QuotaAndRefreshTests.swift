import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireNews
import QuireTestSupport
import Testing

/// The daily request budget kept in the store, and what a run does with a finished query.
@Suite struct QuotaAndRefreshTests {
    @Test func aSpentDailyQuotaStopsTheRunAndSurvivesARestart() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 60 }
        defer { api.stop() }
        try await withTemporaryStore { store in
            let clock = TestClock()
            let source = nytSource(api)
            let first = makeService(clock: clock, rateLimiter: RateLimiter(perMinute: 100, perDay: 3))
            let error = try #require(await expectingFailure { try await first.run(source, into: try StoreFetchSink(store: store)) })
            #expect(error.code == .quotaExhausted)
            #expect(error.description.contains("daily quota used") && error.description.contains("resume after"))
            #expect(error.description.contains("UTC"))
            // Said once, and with the day it frees up: it is tomorrow, not today.
            #expect(error.description.components(separatedBy: "daily quota used").count == 2, "\(error)")
            #expect(error.description.contains(try Regex(#"resume after \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"#)), "\(error)")
            #expect(api.requestCount == 3)
            // It did not sleep for a day.
            #expect(clock.sleptSeconds.allSatisfy { $0 < 60 })

            // A new process (a new limiter) reads the budget back and makes no request.
            let second = makeService(clock: clock, rateLimiter: RateLimiter(perMinute: 100, perDay: 3))
            let again = try #require(await expectingFailure { try await second.run(source, into: try StoreFetchSink(store: store)) })
            #expect(again.code == .quotaExhausted)
            #expect(api.requestCount == 3)

            // A day later the budget is free again and the run resumes after the committed pages.
            clock.advance(by: 86_401)
            let third = makeService(clock: clock, rateLimiter: RateLimiter(perMinute: 100, perDay: 100))
            let summary = try await third.run(source, into: try StoreFetchSink(store: store))
            #expect(summary.resumed && summary.isComplete)
            #expect(try store.read { try $0.count(of: NewsSchema.articles) } == 60)
            #expect(api.requestCount == 6)  // pages 3, 4 and 5: none fetched twice
        }
    }

    /// Two runs at once against one API (two processes: two limiters, each with its own list of
    /// requests): the stored budget holds every request of both (each commit wrote its own list
    /// over the other's, and half the requests were forgotten).
    @Test func twoRunsAtOnceRecordEveryRequestInTheBudget() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 80 }
        defer { api.stop() }
        try await withTemporaryStore { store in
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            let first = makeService(clock: TestClock(start: start), rateLimiter: RateLimiter(perMinute: 100, perDay: 500))
            let second = makeService(
                clock: TestClock(start: start.addingTimeInterval(0.25)), rateLimiter: RateLimiter(perMinute: 100, perDay: 500))
            async let a = first.run(nytSource(api, query: NYTQuery(query: "election")), into: try StoreFetchSink(store: store))
            async let b = second.run(nytSource(api, query: NYTQuery(query: "senate")), into: try StoreFetchSink(store: store))
            let (one, two) = try await (a, b)
            #expect(one.isComplete && two.isComplete)
            let times = try await StoreFetchSink(store: store).requestTimes(budget: nytSource(api).budgetID)
            #expect(api.requestCount == 16)
            #expect(times.count == api.requestCount, "\(times.count) of \(api.requestCount) requests recorded")
            #expect(times == times.sorted())
        }
    }

    @Test func aFinishedQueryDoesNothingUntilRefreshedOrRestarted() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 30 }
        defer { api.stop() }
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_750_000_000))  // 2025-06-15
            let service = makeService(clock: clock)
            let query = NYTQuery(query: "election", begin: NYTDay(string: "2012-01-01"), sort: .newest)
            let source = nytSource(api, query: query)
            let full = try await service.run(source, into: sink)
            #expect(full.isComplete && full.articles == 30)
            let afterFull = api.requestCount

            let idle = try await service.run(source, into: sink)
            #expect(idle.alreadyComplete && idle.pages == 0 && api.requestCount == afterFull)

            clock.advance(by: 10 * 86_400)
            let refresh = try await service.run(source, into: sink, mode: .refresh)
            #expect(refresh.isComplete && !refresh.alreadyComplete)
            #expect(!refresh.resumed)  // a new walk of what is newer: the summary says no "(resumed)"
            let refreshRequests = api.requestLog.dropFirst(afterFull)
            #expect(!refreshRequests.isEmpty)
            // Only what is newer than the last completed run: from the day before it, to today.
            #expect(refreshRequests.allSatisfy { $0.contains("begin_date=20250614") && $0.contains("end_date=20250625") })

            let restart = try await service.run(source, into: sink, mode: .restart)
            #expect(restart.articles == 30 && restart.newArticles == 0)
            #expect(api.requestLog.last?.contains("begin_date=20120101") == true)
        }
    }

    @Test func sourcesAreKeyedByEndpointAndQuery() throws {
        let query = NYTQuery(query: "climate")
        let real = NYTSource(query: query, key: APIKey("k"))
        let local = NYTSource(query: query, key: APIKey("k"), endpoint: "http://127.0.0.1:8080/svc/search/v2/articlesearch.json")
        #expect(real.sourceID == "nyt:q=climate")
        #expect(local.sourceID != real.sourceID && local.sourceID.contains("127.0.0.1:8080"))
        #expect(local.queryTag == local.sourceID)
        #expect(!local.sourceID.contains("k&") && real.budgetID == "nyt:api.nytimes.com")
    }

    private func expectingFailure(_ body: () async throws -> FetchSummary) async -> FetchError? {
        do {
            _ = try await body()
            return nil
        } catch let error as FetchError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }
}
