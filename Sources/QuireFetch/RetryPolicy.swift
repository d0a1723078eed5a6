/// How the fetch service retries a failed request, and how long it backs off.
///
/// - HTTP 429 (and the old gateway's 403 "developer over rate"): wait ``rateLimitBaseDelay``
///   (12 s, the API's advice for its per-minute limit; jitter only lengthens it). By default the
///   run gives up once its rate-limit waits would pass ``rateLimitGiveUp`` (about half a minute,
///   two waits: past that the quota is most likely spent, so resume later), or after
///   ``rateLimitAttempts``. With ``waitForQuota`` it keeps going, doubling each wait up to
///   ``maxDelay``, and honours a `Retry-After` header when the server sends one.
/// - HTTP 5xx, timeouts, refused or broken connections: wait ``transientBaseDelay``, doubling,
///   at most ``transientAttempts`` attempts.
/// - Anything else (401, 400, 403, 404, TLS, size cap, mapping errors): no retry.
///
/// Every delay gets a random jitter of ±``jitter`` of itself, from a generator seeded by
/// ``jitterSeed``, so a run is reproducible and tests can assert the exact waits.
public struct RetryPolicy: Sendable, Hashable {
    /// The first back-off after a 429.
    public var rateLimitBaseDelay: Duration = .seconds(12)
    /// Attempts in all (the first included) while the API answers 429.
    public var rateLimitAttempts: Int = 5
    /// The most time a run spends backing off from rate-limit replies before it gives up with
    /// ``FetchError/Code-swift.struct/rateLimited`` (its checkpoint intact). Ignored with
    /// ``waitForQuota``.
    public var rateLimitGiveUp: Duration = .seconds(30)
    /// Wait out rate limits and a spent daily quota instead of stopping (for long-running jobs).
    public var waitForQuota: Bool = false
    /// The first back-off after a 5xx or a transport failure.
    public var transientBaseDelay: Duration = .seconds(1)
    /// Attempts in all (the first included) for 5xx and transport failures.
    public var transientAttempts: Int = 4
    /// Each further back-off is the previous one times this.
    public var multiplier: Double = 2
    /// No back-off is longer than this (before jitter).
    public var maxDelay: Duration = .seconds(120)
    /// The jitter, as a fraction of the delay (0.2 means ±20 %); 0 turns it off.
    public var jitter: Double = 0.2
    /// Seeds the jitter.
    public var jitterSeed: UInt64 = 0x5EED_F37C

    /// The defaults above.
    public init() {}

    /// Why a request is worth repeating.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// HTTP 429.
        case rateLimited
        /// HTTP 5xx with this status.
        case serverError(Int)
        /// A timeout or a broken or refused connection, with a short redacted explanation.
        case transport(String)

        public var description: String {
            switch self {
            case .rateLimited: "rate limited"  // a 429, or the old gateway's 403
            case .serverError(let status): "server error (HTTP \(status))"
            case .transport(let what): "transport failure (\(what))"
            }
        }
    }

    /// The attempts allowed in all for `reason`.
    public func attempts(for reason: Reason) -> Int {
        switch reason {
        case .rateLimited: max(1, rateLimitAttempts)
        case .serverError, .transport: max(1, transientAttempts)
        }
    }

    /// The back-off before attempt `failedAttempts + 1`, or `nil` when no attempt is left.
    ///
    /// - Parameters:
    ///   - reason: Why the last attempt failed.
    ///   - failedAttempts: Attempts made so far for this request (1 after the first failure).
    ///   - random: The jitter source.
    public func delay(
        after reason: Reason, failedAttempts: Int, random: inout some RandomNumberGenerator
    ) -> Duration? {
        let limited = reason == .rateLimited
        guard (limited && waitForQuota) || failedAttempts < attempts(for: reason) else { return nil }
        let base = limited ? rateLimitBaseDelay : transientBaseDelay
        var seconds = base.seconds
        // A per-minute limit frees up at the same pace: only a job that waits for the quota backs
        // off further and further.
        if !limited || waitForQuota {
            for _ in 1..<max(1, min(failedAttempts, 64)) { seconds *= multiplier }
        }
        seconds = min(seconds, maxDelay.seconds)
        if jitter > 0 {
            let unit = Double(random.next() >> 11) / Double(1 << 53)  // uniform in [0, 1)
            // A rate limit's wait is a floor (the API asks for 12 s): jitter only lengthens it.
            seconds *= limited ? 1 + jitter * unit : 1 + jitter * (unit * 2 - 1)
        }
        return .milliseconds(Int((seconds * 1000).rounded()))
    }
}

/// The jitter generator: small, fast, seeded (a 64-bit linear congruence followed by an output
/// mix), so back-offs are the same on every run with the same seed.
public struct JitterRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var mixed = state
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        return mixed
    }
}
