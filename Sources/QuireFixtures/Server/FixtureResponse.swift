/// What the ``LoopbackServer`` sends back, optionally broken on purpose by a ``Fault``.
public struct FixtureResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields; `Content-Length` and `Connection` are added by the server unless present.
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]
    /// A misbehaviour to inject while sending, or nil for a well-formed response.
    public var fault: Fault?

    /// Creates a response.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], fault: Fault? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.fault = fault
    }

    /// A JSON response.
    public static func json(status: Int = 200, body: String) -> FixtureResponse {
        json(status: status, bytes: Array(body.utf8))
    }

    /// A JSON response from raw bytes (which need not be valid JSON: malformed bodies are fixtures too).
    public static func json(status: Int = 200, bytes: [UInt8]) -> FixtureResponse {
        FixtureResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: bytes)
    }

    /// A plain-text response.
    public static func text(status: Int = 200, _ body: String) -> FixtureResponse {
        FixtureResponse(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(body.utf8))
    }

    /// An HTML error page, as gateways send instead of JSON (for example a 403 or 503).
    public static func htmlError(status: Int = 403, title: String = "Forbidden") -> FixtureResponse {
        let page = "<html><head><title>\(status) \(title)</title></head><body><h1>\(title)</h1></body></html>\n"
        return FixtureResponse(status: status, headers: [("Content-Type", "text/html")], body: Array(page.utf8))
    }

    /// A 429 rate-limit fault in the NYT gateway's shape, deliberately without `Retry-After`.
    public static func tooManyRequests() -> FixtureResponse {
        json(
            status: 429,
            body:
                #"{"fault":{"faultstring":"Rate limit quota violation. Quota limit  exceeded. Identifier : 00000000-0000-0000-0000-000000000000","detail":{"errorcode":"policies.ratelimit.QuotaViolation"}}}"#
        )
    }

    /// A 500 with a backend error body.
    public static func serverError(status: Int = 500) -> FixtureResponse {
        json(
            status: status,
            body: #"{"status":\#(status),"error":"Internal Server Error","message":"fixture failure"}"#)
    }

    /// A 401 invalid-key fault in the NYT gateway's shape.
    public static func unauthorized() -> FixtureResponse {
        json(
            status: 401,
            body: #"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#)
    }

    /// A 404 with a short text body.
    public static func notFound() -> FixtureResponse { text(status: 404, "not found\n") }

    /// A redirect to `location` (absolute or relative).
    public static func redirect(to location: String, status: Int = 302) -> FixtureResponse {
        FixtureResponse(status: status, headers: [("Location", location)])
    }

    /// This response with its body gzip-compressed and `Content-Encoding: gzip` set.
    public func gzipped() -> FixtureResponse {
        var copy = self
        copy.body = FixtureGzip.compress(body)
        copy.headers.append(("Content-Encoding", "gzip"))
        return copy
    }

    /// This response with `fault` injected.
    public func with(_ fault: Fault) -> FixtureResponse {
        var copy = self
        copy.fault = fault
        return copy
    }
}

/// A way for the ``LoopbackServer`` to misbehave while answering.
public enum Fault: Sendable {
    /// Announce the full `Content-Length`, send only the first `afterBytes` body bytes, then close.
    case truncateBody(afterBytes: Int)
    /// Send the first `afterBytes` body bytes, go silent for `seconds`, then send the rest.
    case stallMidBody(afterBytes: Int, seconds: Double)
    /// Wait `seconds` before sending anything.
    case slowHeaders(seconds: Double)
    /// Close the connection without answering.
    case closeWithoutResponse
    /// Answer with these bytes instead of an HTTP reply, then close (a server that is not HTTP).
    case notHTTP([UInt8])
    /// Replace the body with a gzip stream that decodes to `decodedBytes` zero bytes.
    case gzipBomb(decodedBytes: Int)
    /// Answer 302 with a `Location` pointing back at the same request, forever.
    case redirectLoop
}
