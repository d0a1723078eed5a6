/// An async HTTP client over libcurl.
///
/// All transfers of a client run on one dedicated thread that drives a curl multi handle, so
/// no blocking call ever runs on Swift's cooperative pool, and connections are reused across
/// requests. Policies (timeouts, redirects, size cap, TLS) come from ``HTTPClientConfiguration``.
///
/// A response with any status is returned as an ``HTTPResponse``; only transport failures throw
/// ``HTTPError``. Cancelling the calling task aborts the transfer and throws
/// ``HTTPError/Code/cancelled``. URLs in errors and responses are redacted.
///
/// Each client owns one thread and one connection cache: create one client and share it (it is
/// `Sendable`) rather than one per request.
public final class HTTPClient: Sendable {
    /// The policies every request of this client follows.
    public let configuration: HTTPClientConfiguration
    private let engine: TransferEngine?

    /// Creates a client and starts its transfer thread.
    public init(configuration: HTTPClientConfiguration = .init()) {
        self.configuration = configuration
        self.engine = TransferEngine()
    }

    deinit {
        engine?.shutdown()
    }

    /// Fetches `url` with GET.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - headers: Extra request header fields.
    /// - Returns: The final response after redirects, whatever its status.
    /// - Throws: ``HTTPError`` when no complete response arrives.
    public func get(_ url: String, headers: [(String, String)] = []) async throws(HTTPError) -> HTTPResponse {
        try await perform(method: "GET", url: url, body: nil, headers: headers)
    }

    /// Sends `body` to `url` with POST.
    ///
    /// - Parameters:
    ///   - url: An http or https URL.
    ///   - body: The request body, sent as is.
    ///   - headers: Extra request header fields (for example `Content-Type`).
    /// - Returns: The final response, whatever its status.
    /// - Throws: ``HTTPError`` when no complete response arrives.
    public func post(_ url: String, body: [UInt8], headers: [(String, String)] = []) async throws(HTTPError)
        -> HTTPResponse
    {
        try await perform(method: "POST", url: url, body: body, headers: headers)
    }

    /// Stops the transfer thread. Requests in flight and later requests fail with
    /// ``HTTPError/Code/cancelled``. Also happens when the client is released.
    public func shutdown() {
        engine?.shutdown()
    }

    private func perform(method: String, url: String, body: [UInt8]?, headers: [(String, String)])
        async throws(HTTPError) -> HTTPResponse
    {
        var (method, url, body) = (method, url, body)
        var redirects = 0
        while true {
            let response = try await transfer(method: method, url: url, body: body, headers: headers)
            // libcurl follows redirects itself when any origin will do; none are followed at 0.
            guard configuration.maxRedirects > 0, !configuration.crossOriginRedirects, let target = response.redirectTarget,
                [301, 302, 303, 307, 308].contains(response.status)
            else { return response }
            guard redirects < configuration.maxRedirects else {
                throw HTTPError(
                    code: .tooManyRedirects, message: "more than \(configuration.maxRedirects) redirects", url: url)
            }
            guard let from = Origin(url), let to = Origin(target) else {
                throw HTTPError(
                    code: .unsupportedProtocol, message: "a redirect to a scheme other than http or https", url: url)
            }
            guard to == from || to.isUpgrade(of: from) else {
                throw HTTPError(
                    code: .crossOriginRedirect,
                    message: "the server redirected to \(to) (another origin than \(from)); not followed, so the request is not sent there",
                    url: url)
            }
            redirects += 1
            // As browsers and libcurl do: 307 and 308 repeat the request, the others fetch with GET.
            if ![307, 308].contains(response.status) { (method, body) = ("GET", nil) }
            url = target
        }
    }

    private func transfer(method: String, url: String, body: [UInt8]?, headers: [(String, String)])
        async throws(HTTPError) -> HTTPResponse
    {
        guard let engine else {
            throw HTTPError(code: .transport(-1), message: "libcurl could not be initialised", url: url)
        }
        let transfer = try Transfer(
            method: method, url: url, body: body, headers: headers, configuration: configuration)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.attach(continuation)
                engine.submit(transfer)
            }
        } onCancel: {
            transfer.cancel()
            engine.wake()
        }
        return try result.get()
    }
}
