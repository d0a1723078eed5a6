/// One HTTP request as the server's routes see it: the raw (still percent-encoded) path and
/// query, and the few request headers the routes use.
struct HTTPRequest: Sendable {
    /// `GET`, `HEAD`, `POST`…
    var method: String
    /// The path as sent, still percent-encoded, without the query.
    var rawPath: String
    /// The query's name/value pairs in order, as sent (still percent-encoded); a value is nil
    /// when the pair had no `=`.
    var rawQuery: [(name: String, value: String?)] = []
    var ifNoneMatch: String?
    var acceptEncoding: String?
    /// `Content-Length`, or "chunked" when the request has `Transfer-Encoding` (with or without it).
    var bodyLength: String?
    var lastEventID: String?
    /// The `Host` header, nil when absent (HTTP/1.0).
    var host: String?
    /// The request line's version, `HTTP/1.1` or `HTTP/1.0`.
    var version = ""
    /// How many `Host` headers the request has (RFC 9112: more than one is a 400).
    var hostHeaders = 0
    /// How many `Content-Length` headers it has: two could frame a request hidden in the body.
    var contentLengthHeaders = 0
    /// False when the path or the query held raw bytes that are not UTF-8 (a percent-encoded
    /// form is checked where it is decoded).
    var targetIsUTF8 = true
}

/// What a route answers.
struct HTTPResponse: Sendable {
    /// A body produced while it is sent (Server-Sent Events).
    enum Body: Sendable {
        case bytes([UInt8])
        case stream(any ResponseStream)
    }

    var status: Int
    var headers: [(String, String)]
    var body: Body

    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    init(status: Int, headers: [(String, String)], stream: any ResponseStream) {
        self.status = status
        self.headers = headers
        self.body = .stream(stream)
    }
}

/// A response body of unknown length, read by the daemon's threads as it becomes available.
///
/// A read must not block (a daemon thread serves many connections): with nothing to send it
/// calls `suspend` and returns 0, and the stream later calls the `resume` it was given in
/// ``attach(resume:peerHasClosed:)`` (from any thread) when it has bytes or has ended.
protocol ResponseStream: AnyObject, Sendable {
    /// Given once, before the first read: how to wake the connection after a `suspend`, and how
    /// to learn, without blocking, whether the client has closed its end (a suspended connection
    /// is not watched by the daemon, so it would not see the close until the next bytes sent).
    func attach(resume: @escaping @Sendable () -> Void, peerHasClosed: @escaping @Sendable () -> Bool)
    /// Fills `buffer` with the next bytes and returns how many; or calls `suspend` and returns
    /// 0 when there are none yet; or returns nil when the stream has ended.
    func read(into buffer: UnsafeMutableRawBufferPointer, suspend: () -> Void) -> Int?
    /// Called once when the connection no longer needs the stream (sent, closed, or stopped).
    func close()
}
