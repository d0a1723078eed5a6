import Foundation
import QuireFetch
import QuireFixtures
import Testing

@Suite struct RateLimiterTests {
    @Test func fivePerMinuteTwelveSecondsApart() {
        let limiter = RateLimiter()
        let start = Date(timeIntervalSince1970: 1_000_000)
        #expect(limiter.reserve(at: start) == nil)
        // Not a burst: the next request waits for its share of the minute.
        #expect(limiter.reserve(at: start.addingTimeInterval(1)) == .seconds(11))
        for second in [12.0, 24, 36, 48] { #expect(limiter.reserve(at: start.addingTimeInterval(second)) == nil) }
        #expect(limiter.reserve(at: start.addingTimeInterval(59.5)) == .milliseconds(500))
        #expect(limiter.reserve(at: start.addingTimeInterval(60)) == nil)
        #expect(limiter.usage(at: start.addingTimeInterval(60)) == (5, 6))
    }

    /// Requests made earlier (a run before) count for the spacing and the window alike.
    @Test func theMinuteWindowHoldsForPreloadedRequests() {
        let limiter = RateLimiter(perMinute: 5, perDay: 500)
        let start = Date(timeIntervalSince1970: 1_500_000)
        limiter.preload((0..<5).map { start.addingTimeInterval(Double($0)) }, now: start.addingTimeInterval(5))
        #expect(limiter.reserve(at: start.addingTimeInterval(20)) == .seconds(40))
        #expect(limiter.reserve(at: start.addingTimeInterval(60.5)) == nil)
    }

    @Test func theDailyBudgetHoldsUntilADayAfterTheOldest() {
        let limiter = RateLimiter(perMinute: 100, perDay: 3)
        let start = Date(timeIntervalSince1970: 2_000_000)
        for hour in 0..<3 { #expect(limiter.reserve(at: start.addingTimeInterval(Double(hour) * 3600)) == nil) }
        #expect(limiter.reserve(at: start.addingTimeInterval(4 * 3600)) == .seconds(20 * 3600))
        #expect(limiter.reserve(at: start.addingTimeInterval(86_400)) == nil)
    }

    /// With no daily budget only the minute's window is kept: a long fetch's every request was
    /// kept, scanned for each new one and written back to the store with each page.
    @Test func noDailyBudgetKeepsOnlyTheMinutesRequests() {
        let limiter = RateLimiter(perMinute: 1_200, perDay: .max)
        let start = Date(timeIntervalSince1970: 3_000_000)
        for tenth in 0..<3_000 { #expect(limiter.reserve(at: start.addingTimeInterval(Double(tenth) / 10)) == nil) }
        let now = start.addingTimeInterval(300)
        let kept = limiter.requestTimes(before: now)
        #expect((590...600).contains(kept.count) && kept.allSatisfy { $0 > now.addingTimeInterval(-60) }, "\(kept.count)")
        #expect(limiter.dailyBudgetFreeAt(now) == nil)
        // The minute's budget still holds.
        let slow = RateLimiter(perMinute: 1, perDay: .max)
        #expect(slow.reserve(at: start) == nil && slow.reserve(at: start.addingTimeInterval(30)) != nil)
    }

    @Test func acquireWaitsOnTheInjectedClock() async throws {
        let clock = TestClock()
        let limiter = RateLimiter(perMinute: 2, perDay: 500)
        var total = Duration.zero
        for _ in 0..<5 { total += try await limiter.acquire(clock: clock) }
        #expect(clock.sleptSeconds == [30, 30, 30, 30])
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
        // 12 requests at 5 a minute: 12 seconds before each but the first.
        #expect(summary.waits == 11)
        #expect(summary.waitedSeconds == 132)
        #expect(clock.sleptSeconds == Array(repeating: 12, count: 11))
        let waits = log.all.filter { if case .waitingForRateLimit = $0 { true } else { false } }
        #expect(waits.count == 11)
        #expect(sink.articles.count == 115)
    }
}
