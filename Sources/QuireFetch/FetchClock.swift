public import Foundation

/// The time source of the fetch service: what time it is, and how to wait.
///
/// Injected so that tests (and the demo) can run the rate limiter and the back-off without really
/// waiting: a test clock records the requested sleeps and moves its `now` forward at once.
public protocol FetchClock: Sendable {
    /// The current time.
    var now: Date { get }

    /// Waits for `duration`.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `Date()` and `Task.sleep`.
public struct SystemFetchClock: FetchClock {
    /// The system clock.
    public init() {}

    public var now: Date { Date() }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
