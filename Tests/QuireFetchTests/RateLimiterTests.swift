import Foundation
import QuireFetch
import QuireFixtures
import Testing

@Suite struct RateLimiterTests {
    @Test func fivePerMinuteThenWaitForTheOldest() {
        let limiter = RateLimiter()
        let start = Date(timeIntervalSince1970: 1_000_000)
        for second in 0..<5 { #expect(limiter.reserve(at: start.addingTimeInterval(Double(second))) == nil) }
        #expect(limiter.reserve(at: start.addingTimeInterval(10)) == .seconds(50))
        // The request at 0 s leaves the window at 60 s; the next slot frees at 61 s.
        #expect(limiter.reserve(at: start.addingTimeInterval(60)) == nil)
        #expect(limiter.reserve(at: start.addingTimeInterval(60.5)) == .milliseconds(500))
        #expect(limiter.usage(at: start.addingTimeInterval(60.5)) == (5, 6))
    }

    @Test func theDailyBudgetHoldsUntilADayAfterTheOldest() {
        let limiter = RateLimiter(perMinute: 100, perDay: 3)
        let start = Date(timeIntervalSince1970: 2_000_000)
        for hour in 0..<3 { #expect(limiter.reserve(at: start.addingTimeInterval(Double(hour) * 3600)) == nil) }
        #expect(limiter.reserve(at: start.addingTimeInterval(4 * 3600)) == .seconds(20 * 3600))
        #expect(limiter.reserve(at: start.addingTimeInterval(86_400)) == nil)
    }

    @Test func acquireWaitsOnTheInjectedClock() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(perMinute: 2, perDay: 500)
        var total = Duration.zero
        for _ in 0..<5 { total += try await limiter.acquire(clock: clock) }
        #expect(clock.sleptSeconds == [60, 60])
        #expect(total == .seconds(120))
    }

    @Test func theServiceWaitsForTheDefaultBudgetWithoutReallySleeping() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 115 }
        let clock = TestClock()
        let log = ProgressLog()
        let sink = InMemoryFetchSink()
        let service = makeService(clock: clock, rateLimiter: RateLimiter())
        let summary = try await service.run(nytSource(api), into: sink, progress: log.handler)
        #expect(summary.pages == 12)
        // 12 requests at 5 a minute: two full waits of a minute.
        #expect(summary.waits == 2)
        #expect(summary.waitedSeconds == 120)
        #expect(clock.sleptSeconds == [60, 60])
        let waits = log.all.filter { if case .waitingForRateLimit = $0 { true } else { false } }
        #expect(waits.count == 2)
        #expect(sink.articles.count == 115)
    }
}
