#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Maps requests to answers: the JSON API under `/api/`, the web page at `/`.
struct Router: Sendable {
    let access: StoreAccess
    let feed: ChangeFeed
    let cache: ResponseCache
    /// Which `Host`s are answered: a web page whose name an attacker points at this server (DNS
    /// rebinding) must not read the API.
    var hosts = HostPolicy(loopbackOnly: false, names: [])

    /// The longest path plus query a route reads; longer requests get 414.
    static let maxTargetBytes = 8192

    /// Headers every response carries.
    static let commonHeaders: [(String, String)] = [
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy", WebAssets.contentSecurityPolicy),
    ]

    func respond(to received: HTTPRequest) -> HTTPResponse {
        var request = received
        if let (authority, path) = Self.absoluteForm(request.rawPath) {
            // RFC 9112 §3.2.2: a server must accept a target in absolute form, whose authority
            // stands for the Host header (a browser never sends one: the Host check still holds).
            request.rawPath = path
            request.host = authority
        }
        if request.hostHeaders > 1 { return error(400, "the request has more than one Host header") }
        // RFC 9112 §3.2: a server must answer an HTTP/1.1 request without one with 400.
        if request.hostHeaders == 0, request.version == "HTTP/1.1" {
            return error(400, "an HTTP/1.1 request needs a Host header")
        }
        if request.contentLengthHeaders > 1 { return error(400, "the request has more than one Content-Length header") }
        // RFC 9110 §5.5: a field value's surrounding spaces and tabs are not part of it.
        if let host = request.host.map(Self.withoutSurroundingSpace) {
            guard let name = Self.hostName(host) else { return error(400, "the Host header is not a host and a port") }
            if !hosts.allows(name) { return error(421, hosts.refusal(of: String(host.prefix(100)))) }
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = error(405, "\(request.method) is not allowed: the server is read-only (use GET or HEAD)")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        guard request.targetIsUTF8 else { return error(400, "the request target holds bytes that are not UTF-8") }
        if let length = request.bodyLength, length != "0" {
            return error(413, "a GET request must not have a body")
        }
        // Each parameter is its name, `=` and its value when it has one, and a `?` or `&`.
        let targetBytes = request.rawPath.utf8.count
            + request.rawQuery.reduce(0) { $0 + 1 + $1.name.utf8.count + ($1.value.map { $0.utf8.count + 1 } ?? 0) }
        guard targetBytes <= Self.maxTargetBytes else {
            return error(414, "the request target is longer than \(Self.maxTargetBytes) bytes")
        }
        let path = request.rawPath
        if ["/api", "/api/", "/api/stats", "/api/sections", "/api/changes"].contains(path), !request.rawQuery.isEmpty {
            let names = request.rawQuery.map { String($0.name.prefix(100)) }.joined(separator: ", ")
            return error(400, "\(path) takes no parameter (got: \(names))")
        }
        switch path {
        case "/", "/index.html": return asset(WebAssets.html, "text/html; charset=utf-8", request)
        case "/app.js": return asset(WebAssets.script, "text/javascript; charset=utf-8", request)
        case "/app.css": return asset(WebAssets.style, "text/css; charset=utf-8", request)
        case "/api", "/api/": return json(Array(Self.index.utf8), request)
        case "/api/articles": return list(request)
        case "/api/stats": return answer(request) { try access.statisticsJSON() }
        case "/api/sections": return sections(request)
        case "/api/changes": return changes(request)
        default:
            if path.hasPrefix("/api/articles/") { return record(path.dropFirst("/api/articles/".count), request) }
            return error(404, "no such route: \(String(path.prefix(200)))")
        }
    }

    /// The authority and the path of a request target in absolute form (`http://host:port/path`),
    /// or nil for the usual origin form (`/path`).
    static func absoluteForm(_ target: String) -> (authority: String, path: String)? {
        let lowered = target.prefix(8).lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        let rest = target.dropFirst(scheme.count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return (String(rest[..<slash]), slash == rest.endIndex ? "/" : String(rest[slash...]))
    }

    /// Whether `host` is an address rather than a name: an IPv4 dotted quad or an IPv6 address,
    /// as `inet_pton` reads them (`+1.2.3.4` or fullwidth digits are names to a browser).
    static func isAddressLiteral(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Whether a host name or address is this machine's loopback: `localhost`, `127.x.x.x`, `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
        // 127.0.0.0/8, read as isAddressLiteral reads an address (`127.+0.+0.+1` is a name).
        var address = in_addr()
        return inet_pton(AF_INET, name, &address) == 1 && withUnsafeBytes(of: address) { $0[0] } == 127
    }

    /// The `Host`s a server answers: loopback names and the names given (a reverse proxy's), and
    /// when bound beyond the loopback any address literal too (a client that reached it by
    /// address), but no other name — a name is what a rebinding attacker's page sends.
    struct HostPolicy: Sendable {
        let loopbackOnly: Bool
        let names: Set<String>

        init(loopbackOnly: Bool, names: [String]) {
            self.loopbackOnly = loopbackOnly
            self.names = Set(names.map { Self.normalized(Router.hostName($0) ?? $0) })
        }

        func allows(_ host: String) -> Bool {
            if Router.isLoopback(Self.normalized(host)) || names.contains(Self.normalized(host)) { return true }
            return !loopbackOnly && Router.isAddressLiteral(host)
        }

        /// Lower case, without the trailing dot of a fully qualified name (`News.Example.`).
        static func normalized(_ name: String) -> String {
            let lower = name.lowercased()
            return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
        }

        func refusal(of host: String) -> String {
            // The names allowed too, so an operator behind a proxy sees which one is missing.
            let allowed = names.sorted().prefix(8).map { "'\($0)'" }
            let also = allowed.isEmpty ? "" : ", " + allowed.joined(separator: ", ") + (names.count > 8 ? ", …" : "")
            return loopbackOnly
                ? "this server answers requests for localhost, 127.0.0.1 or [::1]\(also) only, not '\(host)' (allow a name with --allow-host)"
                : "this server answers requests naming an IP address or localhost\(also), not the name '\(host)' (allow a name with --allow-host)"
        }
    }

    /// A header field's value without the spaces and tabs around it.
    static func withoutSurroundingSpace(_ value: String) -> String {
        var trimmed = Substring(value)
        while trimmed.first == " " || trimmed.first == "\t" { trimmed.removeFirst() }
        while trimmed.last == " " || trimmed.last == "\t" { trimmed.removeLast() }
        return String(trimmed)
    }

    /// The host of a `Host` header, without its port and an IPv6 address's brackets.
    /// Nil when the header is not a host and an optional port (RFC 9110: `[::1]evil.com` or
    /// `127.0.0.1:80:x` were read as their first part).
    static func hostName(_ header: String) -> String? {
        let name: Substring
        let rest: Substring
        if header.hasPrefix("[") {
            guard let close = header.firstIndex(of: "]") else { return nil }
            name = header[header.index(after: header.startIndex)..<close]
            rest = header[header.index(after: close)...]
        } else {
            let colon = header.firstIndex(of: ":") ?? header.endIndex
            name = header[..<colon]
            rest = header[colon...]
        }
        guard !name.isEmpty else { return nil }
        if !rest.isEmpty {
            let port = rest.dropFirst()
            guard rest.first == ":", !port.isEmpty, port.count <= 5, port.allSatisfy({ ("0"..."9").contains($0) }), let number = Int(port),
                number <= 65_535
            else { return nil }
        }
        return String(name)
    }

    static let index = """
        {"endpoints":["/api/articles","/api/articles/{id}","/api/stats","/api/sections","/api/changes"],\
        "documentation":"docs/HTTP.md"}

        """

    // MARK: Routes

    private func record(_ rawID: Substring, _ request: HTTPRequest) -> HTTPResponse {
        guard let id = PercentDecoding.decode(rawID, plusIsSpace: false) else {
            return error(400, "the id in the path is not valid percent-encoded UTF-8")
        }
        guard !id.isEmpty else { return error(404, "no article id in the path") }
        let fields: [String]?
        do {
            fields = try ArticleQuery.recordFields(try decodedQuery(request))
        } catch {
            return self.error(400, error.message)
        }
        return answer(request, reusable: true) {
            guard let bytes = try access.record(id: id, fields: fields) else { throw Failure.notFound("no article with id \(id)") }
            return bytes
        }
    }

    private func list(_ request: HTTPRequest) -> HTTPResponse {
        let query: ArticleQuery
        do {
            query = try ArticleQuery(parameters: try decodedQuery(request))
        } catch {
            return self.error(400, error.message)
        }
        return answer(request, reusable: true) {
            let page = try access.page(query)
            var out = Array("{\"articles\":[".utf8)
            out.reserveCapacity(page.records.reduce(64) { $0 + $1.count + 1 })
            for (i, record) in page.records.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out += record
            }
            out += Array("],\"count\":\(page.records.count),\"next\":".utf8)
            out += Array((page.next.map { JSONText.string($0.text) } ?? "null").utf8)
            if page.truncated { out += Array(",\"truncated\":true".utf8) }
            out += Array("}\n".utf8)
            return out
        }
    }

    private func sections(_ request: HTTPRequest) -> HTTPResponse {
        answer(request) {
            let parts = try access.sections().map { "{\"name\":\(JSONText.string($0.name)),\"count\":\($0.count)}" }
            return Array("{\"sections\":[\(parts.joined(separator: ","))]}\n".utf8)
        }
    }

    private func changes(_ request: HTTPRequest) -> HTTPResponse {
        let headers =
            Self.commonHeaders + [
                ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache"),
                ("X-Accel-Buffering", "no"),
            ]
        // HEAD: the headers alone. A stream's answer is chunked, and its end would be sent as a
        // body that the next answer on the connection would follow.
        if request.method == "HEAD" { return HTTPResponse(status: 200, headers: headers) }
        guard let stream = feed.subscribe(lastEventID: request.lastEventID) else {
            var busy = error(503, "too many open change streams; try again later")
            busy.headers.append(("Retry-After", "15"))  // a closed stream's slot is free by its next heartbeat
            return busy
        }
        return HTTPResponse(status: 200, headers: headers, stream: stream)
    }

    // MARK: Helpers

    private enum Failure: Error {
        case notFound(String)
    }

    /// Decodes the query strictly; a bad escape is a 400.
    private func decodedQuery(_ request: HTTPRequest) throws(ArticleQuery.Invalid) -> [(name: String, value: String)] {
        // `?&limit=1`, `a=1&&b=2`: an empty piece between separators names nothing (a trailing
        // `&` is dropped by libmicrohttpd already).
        try request.rawQuery.filter { !$0.name.isEmpty || $0.value != nil }.map { pair throws(ArticleQuery.Invalid) in
            guard let name = PercentDecoding.decode(Substring(pair.name), plusIsSpace: true),
                let value = PercentDecoding.decode(Substring(pair.value ?? ""), plusIsSpace: true)
            else { throw ArticleQuery.Invalid("the query string is not valid percent-encoded UTF-8") }
            return (name, value)
        }
    }

    /// Runs a read and turns its outcome into a JSON response. A `reusable` answer (a function
    /// of the request target and the store's state only) is taken from, or kept in, the cache.
    private func answer(_ request: HTTPRequest, reusable: Bool = false, _ read: () throws -> [UInt8]) -> HTTPResponse {
        // Every JSON response ends with a line break (a record's is then byte for byte `quire get`'s).
        func body() throws -> [UInt8] {
            var bytes = try read()
            if bytes.last != 10 { bytes.append(10) }
            return bytes
        }
        guard reusable, cache.capacity > 0, let transaction = try? access.cacheMark() else {
            do {
                return json(try body(), request)
            } catch {
                return failure(error)
            }
        }
        var key = request.rawPath
        for pair in request.rawQuery {
            key += "\u{0}" + pair.name + (pair.value.map { "\u{1}" + $0 } ?? "")
        }
        if let hit = cache.lookup(key, transaction: transaction) {
            return cached(hit.body, Self.jsonType, request, cacheControl: "no-cache", tag: hit.tag)
        }
        do {
            let bytes = try body()
            let tag = Self.tag(of: bytes)
            cache.store(ResponseCache.Entry(body: bytes, tag: tag), for: key, transaction: transaction)
            return cached(bytes, Self.jsonType, request, cacheControl: "no-cache", tag: tag)
        } catch {
            return failure(error)
        }
    }

    /// The error response of a failed read.
    private func failure(_ error: any Error) -> HTTPResponse {
        switch error {
        case let failure as AccessFailure:
            switch failure {
            case .unavailable(let message):
                var response = self.error(503, message)
                response.headers.append(("Retry-After", "1"))
                return response
            case .unsupported(let message): return self.error(400, message)
            }
        case Failure.notFound(let message):
            return self.error(404, message)
        default:
            return self.error(500, "\(error)")
        }
    }

    private static let jsonType = "application/json; charset=utf-8"

    private func json(_ body: [UInt8], _ request: HTTPRequest) -> HTTPResponse {
        cached(body, Self.jsonType, request, cacheControl: "no-cache")
    }

    private func asset(_ text: String, _ type: String, _ request: HTTPRequest) -> HTTPResponse {
        cached(Array(text.utf8), type, request, cacheControl: "no-cache")
    }

    /// A 200 with a weak ETag over the body (identity and gzip share it), a 304 when
    /// `If-None-Match` names it, gzip when the client accepts it and the body is worth it.
    private func cached(
        _ body: [UInt8], _ type: String, _ request: HTTPRequest, cacheControl: String, tag known: String? = nil
    ) -> HTTPResponse {
        let tag = known ?? Self.tag(of: body)
        var headers = Self.commonHeaders + [
            ("Content-Type", type), ("ETag", tag), ("Cache-Control", cacheControl), ("Vary", "Accept-Encoding"),
        ]
        if let condition = request.ifNoneMatch, Self.matches(condition, tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        if body.count >= 512, Gzip.isAccepted(by: request.acceptEncoding), let compressed = Gzip.compress(body) {
            headers.append(("Content-Encoding", "gzip"))
            return HTTPResponse(status: 200, headers: headers, body: compressed)
        }
        return HTTPResponse(status: 200, headers: headers, body: body)
    }

    /// The weak entity tag of a body.
    static func tag(of body: [UInt8]) -> String {
        "W/\"" + String(ContentHash.of(body), radix: 16) + "\""
    }

    /// Weak comparison (RFC 9110 13.1.2): `*`, or any listed tag equal once `W/` is dropped.
    static func matches(_ condition: String, _ tag: String) -> Bool {
        let bare = tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        for part in condition.split(separator: ",") {
            let candidate = part.strippingCharacters(" \t")
            if candidate == "*" { return true }
            let opaque = candidate.hasPrefix("W/") ? String(candidate.dropFirst(2)) : candidate
            if opaque == bare { return true }
        }
        return false
    }

    private func error(_ status: Int, _ message: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: Self.commonHeaders + [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")],
            body: JSONText.error(status, message))
    }
}
