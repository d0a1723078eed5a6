import Foundation
import QuireHTTP

/// Why a fetch stopped.
///
/// Shaped like swift-nio's `FileSystemError`: a ``Code`` that wraps a private enum (new codes do
/// not break callers), a message, the underlying error, and where it happened. Everything textual
/// is redacted: URLs go through `URLRedaction` and the service also blanks the literal API key,
/// so no description, message or location can carry it.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure, for a caller to act on.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Wrapped: Sendable, Hashable {
            case unauthorized, badRequest, forbidden, rateLimited, quotaExhausted, serverError, unexpectedStatus
            case transport, htmlBody, mapping, invalidQuery, checkpoint, concurrentRun, sink, cancelled
        }

        private let wrapped: Wrapped
        private init(_ wrapped: Wrapped) { self.wrapped = wrapped }

        /// HTTP 401: the API key is missing or invalid. Not retried.
        public static let unauthorized = Code(.unauthorized)
        /// HTTP 400: the API rejected a parameter (`"status": "ERROR"`). Not retried.
        public static let badRequest = Code(.badRequest)
        /// HTTP 403 with a fault body. Not retried.
        public static let forbidden = Code(.forbidden)
        /// HTTP 429 (or the old gateway's 403 "developer over rate") until the run gave up: the
        /// quota is most likely exhausted; resume later.
        public static let rateLimited = Code(.rateLimited)
        /// The daily request budget kept in the store is spent; the message says when it frees.
        public static let quotaExhausted = Code(.quotaExhausted)
        /// HTTP 5xx on every attempt.
        public static let serverError = Code(.serverError)
        /// Another non-2xx status (404, a redirect left unfollowed…). Not retried.
        public static let unexpectedStatus = Code(.unexpectedStatus)
        /// No complete response on every attempt: timeout, refused or broken connection, or a
        /// non-retryable transport failure (TLS, size cap). ``FetchError/curlCode`` tells which.
        public static let transport = Code(.transport)
        /// The body is an HTML page, not JSON (a gateway's 403 page, for example).
        public static let htmlBody = Code(.htmlBody)
        /// The body could not be mapped; ``FetchError/jsonPath`` names where.
        public static let mapping = Code(.mapping)
        /// The query cannot be sent (a page out of range, end before begin).
        public static let invalidQuery = Code(.invalidQuery)
        /// The stored checkpoint cannot be decoded or belongs to another query.
        public static let checkpoint = Code(.checkpoint)
        /// Another run of the same source committed a page since this run read the checkpoint
        /// (two fetches of one query at once): this run stops before storing its page, and the
        /// other's pages are kept; a later run goes on from them.
        public static let concurrentRun = Code(.concurrentRun)
        /// The sink failed to read a checkpoint or to commit a page.
        public static let sink = Code(.sink)
        /// The task was cancelled; everything committed before stays committed.
        public static let cancelled = Code(.cancelled)

        /// Whether this failure means the network or the server is unavailable, so stored data is
        /// the best answer (the offline fallback).
        public var isNetworkFailure: Bool {
            switch wrapped {
            case .transport, .serverError, .rateLimited, .quotaExhausted: true
            default: false
            }
        }

        public var description: String {
            switch wrapped {
            case .unauthorized: "authentication failed"
            case .badRequest: "bad request"
            case .forbidden: "forbidden"
            case .rateLimited: "rate limited"
            case .quotaExhausted: "daily quota used"
            case .serverError: "server error"
            case .unexpectedStatus: "unexpected status"
            case .transport: "transport failure"
            case .htmlBody: "malformed response (HTML)"
            case .mapping: "malformed response"
            case .invalidQuery: "invalid query"
            case .checkpoint: "bad checkpoint"
            case .concurrentRun: "concurrent runs"
            case .sink: "sink failure"
            case .cancelled: "cancelled"
            }
        }
    }

    /// Where a failure happened.
    public struct Location: Sendable, Hashable, CustomStringConvertible {
        /// The source (``FetchSource/sourceID``).
        public var sourceID: String
        /// The request, redacted (no key), when one was being made.
        public var request: String?

        /// Creates a location; `request` is redacted here.
        public init(sourceID: String, request: String? = nil) {
            self.sourceID = URLRedaction.redact(sourceID)
            self.request = request.map(URLRedaction.redact)
        }

        public var description: String { request.map { "\(sourceID) at \($0)" } ?? sourceID }
    }

    /// What kind of failure.
    public var code: Code
    /// A readable explanation, redacted.
    public var message: String
    /// The underlying error (an `HTTPError`, a mapping error, a sink error), when there is one.
    public var cause: (any Error & Sendable)?
    /// Where it happened.
    public var location: Location
    /// The last HTTP status received, when a response arrived.
    public var httpStatus: Int?
    /// The libcurl result code, when the transfer itself failed.
    public var curlCode: Int32?
    /// For a mapping failure, the JSON path of the bad value (`response.docs[3].pub_date`).
    public var jsonPath: String?
    /// How many attempts were made for the failing request.
    public var attempts: Int

    /// Creates an error; `message` is redacted here.
    public init(
        code: Code, message: String, cause: (any Error & Sendable)? = nil, location: Location, httpStatus: Int? = nil,
        curlCode: Int32? = nil, jsonPath: String? = nil, attempts: Int = 1
    ) {
        self.code = code
        self.message = URLRedaction.redact(message)
        self.cause = cause
        self.location = location
        self.httpStatus = httpStatus
        self.curlCode = curlCode
        self.jsonPath = jsonPath
        self.attempts = attempts
    }

    /// What a run had committed when it failed (its pages stay; the next run resumes after
    /// them): set by ``FetchService/run(_:into:startOver:mode:pageLimit:progress:)``, empty
    /// for an error made elsewhere.
    public var committed = FetchSummary()

    public var description: String { "fetch \(location): \(what)" }

    /// The failure without its source, the request last: what a command that already names
    /// its source prints (`transport failure (curl 7) after 4 attempts: … (request https://…)`).
    public var reason: String {
        location.request.map { "\(what) (request \($0))" } ?? what
    }

    /// The code, the status or curl code, the attempts, the message and the JSON path.
    private var what: String {
        var text = "\(code)"
        if let httpStatus { text += " (HTTP \(httpStatus))" }
        if let curlCode { text += " (curl \(curlCode))" }
        if attempts > 1 { text += " after \(attempts) attempts" }
        text += ": \(message)"
        if let jsonPath, !jsonPath.isEmpty, !message.contains(jsonPath) { text += " at \(jsonPath)" }
        return text
    }

    /// This error with every occurrence of `secret` blanked in its texts, the cause included
    /// (the cause is replaced by its scrubbed description when it would show the secret), in
    /// any of its percent-encoded, JSON-escaped or case-folded forms.
    func scrubbing(_ secret: String?) -> FetchError {
        guard let secret, !secret.isEmpty else { return self }
        func scrub(_ text: String) -> String { URLRedaction.scrubSecret(secret, from: text) }
        var copy = self
        copy.message = scrub(message)
        copy.location.sourceID = scrub(location.sourceID)
        copy.location.request = location.request.map(scrub)
        copy.jsonPath = jsonPath.map(scrub)
        if let cause, URLRedaction.containsSecret(secret, in: String(describing: cause)) {
            copy.cause = ScrubbedError(description: scrub(String(describing: cause)))
        }
        return copy
    }
}

/// An error whose text had to be scrubbed of a secret.
struct ScrubbedError: Error, Sendable, CustomStringConvertible {
    var description: String
}
