public import Foundation
import Synchronization

/// A request budget per minute and per day, shared by every fetch that uses the same API key.
///
/// Requests are spaced evenly, 60 / ``perMinute`` seconds apart (the NYT asks for 12 seconds
/// between calls: its gateway answers a burst of five with 429s), and sliding windows hold: a
/// request may go when fewer than ``perMinute`` requests were made in the last 60 seconds and
/// fewer than ``perDay`` in the last 24 hours. The defaults are the NYT API's current limits
/// (5 a minute, 500 a day, API_NOTES §5). The limiter never reads the wall clock
/// itself: callers pass a ``FetchClock``, so tests run the budgets on a fake clock.
public final class RateLimiter: Sendable {
    /// Requests allowed in any 60-second window.
    public let perMinute: Int
    /// Requests allowed in any 24-hour window.
    public let perDay: Int
    private let sent = Mutex<[Date]>([])

    /// A limiter with the given budgets (each at least 1).
    public init(perMinute: Int = 5, perDay: Int = 500) {
        self.perMinute = max(1, perMinute)
        self.perDay = max(1, perDay)
    }

    /// A limiter that never waits, for fixture servers and benchmarks.
    public static var unlimited: RateLimiter { RateLimiter(perMinute: .max, perDay: .max) }

    /// How far back requests are kept: a day for a daily budget; with none (`perDay` `.max`)
    /// only the minute's window, or every request of a long fetch was kept, scanned for each
    /// new one and written back to the store with each page (quadratic in the pages).
    private var horizon: TimeInterval { perDay == .max ? 60 : 86_400 }

    /// Takes one request slot at `now` and returns `nil`, or, when the budget is spent, takes
    /// nothing and returns how long to wait before asking again.
    public func reserve(at now: Date) -> Duration? {
        sent.withLock { sent in
            // Forget what no window can see any more.
            let dayAgo = now.addingTimeInterval(-horizon)
            if let keep = sent.firstIndex(where: { $0 > dayAgo }) {
                sent.removeFirst(keep)
            } else {
                sent.removeAll()
            }
            var waitUntil: Date?
            if sent.count >= perDay {
                waitUntil = sent[sent.count - perDay].addingTimeInterval(86_400)
            }
            if let last = sent.last, perMinute < 60_000 {
                let spaced = last.addingTimeInterval(60 / Double(perMinute))
                if spaced > now { waitUntil = max(waitUntil ?? spaced, spaced) }
            }
            let minuteAgo = now.addingTimeInterval(-60)
            let lastMinute = sent.reversed().prefix { $0 > minuteAgo }.count
            if lastMinute >= perMinute {
                let minuteFree = sent[sent.count - perMinute].addingTimeInterval(60)
                waitUntil = max(waitUntil ?? minuteFree, minuteFree)
            }
            if let waitUntil {
                return .milliseconds(max(1, Int((waitUntil.timeIntervalSince(now) * 1000).rounded(.up))))
            }
            sent.append(now)
            return nil
        }
    }

    /// Waits on `clock` until a request slot is free and takes it.
    ///
    /// - Parameters:
    ///   - clock: The time source that waits.
    ///   - onWait: Called before each wait with its length (for progress events).
    /// - Returns: The total time waited.
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    @discardableResult
    public func acquire(clock: any FetchClock, onWait: (Duration) -> Void = { _ in }) async throws -> Duration {
        try await acquireSlot(clock: clock, onWait: onWait).waited
    }

    /// ``acquire(clock:onWait:)``, also returning the slot taken, for ``release(_:)``.
    func acquireSlot(clock: any FetchClock, onWait: (Duration) -> Void) async throws -> (waited: Duration, slot: Date) {
        var waited = Duration.zero
        while true {
            let now = clock.now
            guard let wait = reserve(at: now) else { return (waited, now) }
            onWait(wait)
            try await clock.sleep(for: wait)
            waited += wait
        }
    }

    /// Gives back a slot taken for a request that never reached the server (no connection could
    /// be made): it used none of the API's budget, and its retry should not wait for one.
    func release(_ slot: Date) {
        sent.withLock { sent in
            if let index = sent.lastIndex(of: slot) { sent.remove(at: index) }
        }
    }

    /// Adds requests made earlier (by a previous run, read back from the store), so the daily
    /// budget survives restarts. Times older than a day are ignored.
    public func preload(_ times: [Date], now: Date) {
        sent.withLock { sent in
            let dayAgo = now.addingTimeInterval(-horizon)
            sent = (sent + times.filter { $0 > dayAgo && $0 <= now }).sorted()
        }
    }

    /// When the daily budget has a free slot again, or `nil` when it has one now.
    public func dailyBudgetFreeAt(_ now: Date) -> Date? {
        guard perDay != .max else { return nil }
        return sent.withLock { sent in
            let dayAgo = now.addingTimeInterval(-86_400)
            let lastDay = sent.filter { $0 > dayAgo }
            guard lastDay.count >= perDay else { return nil }
            return lastDay[lastDay.count - perDay].addingTimeInterval(86_400)
        }
    }

    /// The requests made in the 24 hours before `now`, oldest first (with no daily budget,
    /// those of the last minute only: nothing else is kept).
    public func requestTimes(before now: Date) -> [Date] {
        sent.withLock { sent in sent.filter { $0 > now.addingTimeInterval(-horizon) } }
    }

    /// How many requests were made in the 60 seconds and 24 hours before `now`.
    public func usage(at now: Date) -> (lastMinute: Int, lastDay: Int) {
        sent.withLock { sent in
            (sent.filter { $0 > now.addingTimeInterval(-60) }.count,
             sent.filter { $0 > now.addingTimeInterval(-86_400) }.count)
        }
    }
}
