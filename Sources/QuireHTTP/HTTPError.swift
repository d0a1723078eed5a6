/// A failed HTTP transfer: no complete response was received.
///
/// A response with a non-2xx status is *not* an error at this layer; it comes back as an
/// ``HTTPResponse`` and the caller decides. Every URL in an error is redacted with
/// ``URLRedaction/redact(_:)``, and so is the message.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The connect, total or low-speed timeout expired (`CURLE_OPERATION_TIMEDOUT`).
        case timeout
        /// The host could not be resolved or the connection was refused (`CURLE_COULDNT_CONNECT`,
        /// `CURLE_COULDNT_RESOLVE_HOST`).
        case connectionFailed
        /// The connection broke before the response was complete: a truncated body, an empty
        /// reply, a reset (`CURLE_PARTIAL_FILE`, `CURLE_GOT_NOTHING`, `CURLE_RECV_ERROR`…).
        case connectionLost
        /// More redirects than ``HTTPClientConfiguration/maxRedirects`` (`CURLE_TOO_MANY_REDIRECTS`).
        case tooManyRedirects
        /// The URL or a redirect used a scheme other than http or https (`CURLE_UNSUPPORTED_PROTOCOL`).
        case unsupportedProtocol
        /// The decoded body would exceed ``HTTPClientConfiguration/maxResponseBytes``.
        case responseTooLarge
        /// The task was cancelled or the client was shut down; the transfer was aborted.
        case cancelled
        /// TLS handshake or certificate verification failed.
        case tls
        /// The URL could not be parsed (`CURLE_URL_MALFORMAT`).
        case badURL
        /// A request header contained a line break or the request could not be built.
        case invalidRequest
        /// Any other libcurl failure, with its `CURLcode`.
        case transport(Int32)

        public var description: String {
            switch self {
            case .timeout: "timeout"
            case .connectionFailed: "connection failed"
            case .connectionLost: "connection lost"
            case .tooManyRedirects: "too many redirects"
            case .unsupportedProtocol: "unsupported protocol"
            case .responseTooLarge: "response too large"
            case .cancelled: "cancelled"
            case .tls: "TLS failure"
            case .badURL: "bad URL"
            case .invalidRequest: "invalid request"
            case .transport(let code): "transport error \(code)"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation: `curl_easy_strerror` plus libcurl's error buffer, redacted.
    public var message: String
    /// The request URL, redacted.
    public var url: String
    /// The libcurl result code, when libcurl reported the failure.
    public var curlCode: Int32?

    /// Creates an error; `url` and `message` are redacted here, so no caller can forget.
    public init(code: Code, message: String, url: String, curlCode: Int32? = nil) {
        self.code = code
        self.message = URLRedaction.redact(message)
        self.url = URLRedaction.redact(url)
        self.curlCode = curlCode
    }

    /// Whether repeating the same request later may succeed: timeouts, refused or broken
    /// connections and transient transport failures. Redirect loops, size caps, TLS failures,
    /// bad URLs and cancellation are not retryable.
    public var isRetryable: Bool {
        switch code {
        case .timeout, .connectionFailed, .connectionLost: true
        case .transport: true
        case .tooManyRedirects, .unsupportedProtocol, .responseTooLarge, .cancelled, .tls, .badURL,
            .invalidRequest:
            false
        }
    }

    public var description: String {
        let curl = curlCode.map { " (curl \($0))" } ?? ""
        return "HTTP request to \(url) failed: \(code)\(curl): \(message)"
    }
}
