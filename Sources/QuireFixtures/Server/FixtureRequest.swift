/// A request as the ``LoopbackServer`` received it.
public struct FixtureRequest: Sendable {
    /// The method, for example `GET`.
    public var method: String
    /// The path without the query, for example `/svc/search/v2/articlesearch.json`.
    public var path: String
    /// The query parameters in order, percent-decoded (`+` decodes to a space).
    public var query: [(String, String)]
    /// The header fields in order.
    public var headers: [(String, String)]
    /// The body (empty without `Content-Length`).
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String, path: String, query: [(String, String)], headers: [(String, String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of the query parameter `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.0 == name }?.1
    }

    /// The first value of the header field `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }
}

extension FixtureRequest {
    /// Splits a request target into its path and decoded query.
    static func splitTarget(_ target: String) -> (path: String, query: [(String, String)]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, []) }
        let path = String(target[..<mark])
        var query: [(String, String)] = []
        for pair in target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: "=") {
                query.append((percentDecode(pair[..<equals]), percentDecode(pair[pair.index(after: equals)...])))
            } else {
                query.append((percentDecode(pair), ""))
            }
        }
        return (path, query)
    }

    static func percentDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
