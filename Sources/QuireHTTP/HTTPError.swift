/// A failed HTTP transfer: no complete response was received.
///
/// A response with a non-2xx status is *not* an error at this layer; it comes back as an
/// ``HTTPResponse`` and the caller decides. Every URL in an error is redacted with
/// ``URLRedaction/redact(_:)``, and so is the message.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on: a struct over a private enum (as
    /// swift-nio's error codes), so new codes do not break a caller's `switch`. Match one with
    /// `error.code == .timeout` or `catch HTTPError.Code.timeout`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Wrapped: Sendable, Hashable {
            case timeout, connectionFailed, connectionLost, tooManyRedirects, crossOriginRedirect, unsupportedProtocol, responseTooLarge
            case undecodableBody, malformedReply, cancelled, tls, badURL, invalidRequest
            case transport(Int32)
        }

        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// The connect, total or low-speed timeout expired (`CURLE_OPERATION_TIMEDOUT`).
        public static let timeout = Code(.timeout)
        /// The host could not be resolved or the connection was refused (`CURLE_COULDNT_CONNECT`,
        /// `CURLE_COULDNT_RESOLVE_HOST`).
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection broke before the response was complete: a truncated body, an empty
        /// reply, a reset (`CURLE_PARTIAL_FILE`, `CURLE_GOT_NOTHING`, `CURLE_RECV_ERROR`…).
        public static let connectionLost = Code(.connectionLost)
        /// The body arrived but its `Content-Encoding` could not be decoded (a gzip header over
        /// bytes that are not gzip: `CURLE_BAD_CONTENT_ENCODING`). Retried: a proxy may mend it.
        public static let undecodableBody = Code(.undecodableBody)
        /// What came back is not a well-formed HTTP reply (`CURLE_WEIRD_SERVER_REPLY`, or bytes
        /// that are not HTTP at all: libcurl's "HTTP/0.9"). Retried: libcurl closes the connection
        /// it failed on, and bytes left over from a reply longer than its `Content-Length` cause
        /// it on a reused one.
        public static let malformedReply = Code(.malformedReply)
        /// More redirects than ``HTTPClientConfiguration/maxRedirects`` (`CURLE_TOO_MANY_REDIRECTS`).
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// A redirect to another origin (scheme, host or port; an http → https upgrade of the same
        /// host is none), not followed: the URL's query (an API key) would go where it was not meant
        /// to (see ``HTTPClientConfiguration/crossOriginRedirects``).
        public static let crossOriginRedirect = Code(.crossOriginRedirect)
        /// The URL or a redirect used a scheme other than http or https (`CURLE_UNSUPPORTED_PROTOCOL`).
        public static let unsupportedProtocol = Code(.unsupportedProtocol)
        /// The decoded body would exceed ``HTTPClientConfiguration/maxResponseBytes``.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The task was cancelled or the client was shut down; the transfer was aborted.
        public static let cancelled = Code(.cancelled)
        /// TLS handshake or certificate verification failed.
        public static let tls = Code(.tls)
        /// The URL could not be parsed (`CURLE_URL_MALFORMAT`).
        public static let badURL = Code(.badURL)
        /// A request header contained a line break or the request could not be built.
        public static let invalidRequest = Code(.invalidRequest)
        /// Any other libcurl failure, with its `CURLcode`.
        public static func transport(_ curlCode: Int32) -> Code { Code(.transport(curlCode)) }

        /// Whether repeating the same request later may succeed (see ``HTTPError/isRetryable``).
        var isRetryable: Bool {
            switch wrapped {
            case .timeout, .connectionFailed, .connectionLost, .undecodableBody, .malformedReply, .transport: true
            case .tooManyRedirects, .crossOriginRedirect, .unsupportedProtocol, .responseTooLarge, .cancelled, .tls, .badURL,
                .invalidRequest:
                false
            }
        }

        public var description: String {
            switch wrapped {
            case .timeout: "timeout"
            case .connectionFailed: "connection failed"
            case .connectionLost: "connection lost"
            case .tooManyRedirects: "too many redirects"
            case .crossOriginRedirect: "redirect to another origin"
            case .unsupportedProtocol: "unsupported protocol"
            case .responseTooLarge: "response too large"
            case .undecodableBody: "undecodable body"
            case .malformedReply: "malformed HTTP reply"
            case .cancelled: "cancelled"
            case .tls: "TLS failure"
            case .badURL: "bad URL"
            case .invalidRequest: "invalid request"
            case .transport(let code): "transport error \(code)"
            }
        }

        /// Lets `catch HTTPError.Code.timeout` match an HTTP error by its code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? HTTPError)?.code == code
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
    /// Whether the request reached the server: libcurl had written it on a connection
    /// (`CURLINFO_REQUEST_SIZE` above zero) before the failure.
    public var requestSent: Bool

    /// Creates an error; `url` and `message` are redacted here, so no caller can forget.
    public init(code: Code, message: String, url: String, curlCode: Int32? = nil, requestSent: Bool = false) {
        self.code = code
        self.message = URLRedaction.redact(message)
        self.url = URLRedaction.redact(url)
        self.curlCode = curlCode
        self.requestSent = requestSent
    }

    /// Whether the server got this request and answered with something that cannot be read, cut
    /// short, or nothing in time: a failure of the page, not of the network, when its neighbours
    /// work. A connect that failed, timed out or was reset is the network's.
    public var isUnreadableReply: Bool {
        switch code {
        case .undecodableBody, .malformedReply: true
        // Cut short or never finished: before the request went out, the network's.
        case .connectionLost, .timeout: requestSent
        default: false
        }
    }

    /// Whether repeating the same request later may succeed: timeouts, refused or broken
    /// connections and transient transport failures. Redirect loops, size caps, TLS failures,
    /// bad URLs and cancellation are not retryable.
    public var isRetryable: Bool { code.isRetryable }

    public var description: String {
        let curl = curlCode.map { " (curl \($0))" } ?? ""
        return "HTTP request to \(url) failed: \(code)\(curl): \(message)"
    }
}
