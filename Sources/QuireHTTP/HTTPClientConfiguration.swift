/// Limits and policies of an ``HTTPClient``.
///
/// The defaults suit an API client: short connect timeout, a total timeout, a low-speed abort
/// so a stalled server cannot hold a request forever, few redirects, a 32 MiB response cap,
/// compression on, TLS verification on.
public struct HTTPClientConfiguration: Sendable, CustomStringConvertible {
    /// Time allowed to establish the connection (`CURLOPT_CONNECTTIMEOUT_MS`).
    public var connectTimeout: Duration = .seconds(10)
    /// Time allowed for the whole transfer, redirects included (`CURLOPT_TIMEOUT_MS`).
    public var totalTimeout: Duration = .seconds(60)
    /// The transfer aborts when it stays below this many bytes per second… (`CURLOPT_LOW_SPEED_LIMIT`)
    public var lowSpeedLimit: Int = 1
    /// …for this long; rounded up to whole seconds, at least one (`CURLOPT_LOW_SPEED_TIME`).
    public var lowSpeedTime: Duration = .seconds(15)
    /// Redirects followed before failing with ``HTTPError/Code/tooManyRedirects``
    /// (`CURLOPT_MAXREDIRS`). Zero disables following redirects.
    public var maxRedirects: Int = 5
    /// Whether a redirect to another origin (another scheme, host or port; an http → https
    /// upgrade of the same host is the same) is followed. Off by default: the URL's query
    /// (`api-key=…`) would be sent wherever the server points, and the request fails with
    /// ``HTTPError/Code/crossOriginRedirect`` instead.
    public var crossOriginRedirects: Bool = false
    /// The largest decoded body accepted; larger responses fail with
    /// ``HTTPError/Code/responseTooLarge``.
    public var maxResponseBytes: Int = 32 * 1024 * 1024
    /// Whether to ask for and decode compressed bodies (`CURLOPT_ACCEPT_ENCODING ""`: every
    /// encoding this libcurl was built with).
    public var acceptCompressed: Bool = true
    /// The `User-Agent` header.
    public var userAgent: String = "Quire/1.0 libcurl"
    /// Whether to verify the server's certificate and host name. Turning it off is insecure and
    /// shows in ``description``.
    public var verifyTLS: Bool = true
    /// A CA bundle file to verify against instead of the system default (`CURLOPT_CAINFO`).
    public var caInfo: String?

    /// The default configuration.
    public init() {}

    public var description: String {
        var parts = [
            "connectTimeout: \(connectTimeout)", "totalTimeout: \(totalTimeout)",
            "lowSpeed: \(lowSpeedLimit) B/s for \(lowSpeedTime)", "maxRedirects: \(maxRedirects)",
            "crossOriginRedirects: \(crossOriginRedirects)",
            "maxResponseBytes: \(maxResponseBytes)", "acceptCompressed: \(acceptCompressed)",
            "userAgent: \(userAgent)",
        ]
        parts.append(verifyTLS ? "TLS verification: on" : "TLS verification: OFF (insecure)")
        if let caInfo { parts.append("caInfo: \(caInfo)") }
        return "HTTPClientConfiguration(" + parts.joined(separator: ", ") + ")"
    }
}

extension Duration {
    /// Whole milliseconds, at least `minimum`, as libcurl's `long`.
    func curlMilliseconds(minimum: Int = 1) -> Int {
        let (seconds, attoseconds) = components
        let millis = seconds.multipliedReportingOverflow(by: 1000)
        guard !millis.overflow else { return Int.max }
        return max(minimum, Int(millis.partialValue) + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// Whole seconds rounded up, at least one.
    func curlSecondsRoundedUp() -> Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
