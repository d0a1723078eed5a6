/// A complete HTTP response, whatever its status.
public struct HTTPResponse: Sendable {
    /// The status code of the final response (after redirects).
    public var status: Int
    /// The header fields of the final response, in the order received.
    public var headers: [(name: String, value: String)]
    /// The body, decoded when the server sent it compressed.
    public var body: [UInt8]
    /// The URL that produced this response after redirects, redacted with ``URLRedaction``.
    public var effectiveURL: String
    /// Where a redirect that was not followed points (absolute, not redacted: the client follows
    /// it itself when it is of the same origin).
    var redirectTarget: String?

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8], effectiveURL: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.effectiveURL = URLRedaction.redact(effectiveURL)
    }

    /// Whether the status is in 200...299.
    public var isSuccess: Bool { (200...299).contains(status) }

    /// The value of the first header field called `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// The body as UTF-8 text (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
