import Foundation
import Quire
import Synchronization
import QuireFetch
import QuireNews
import Testing

@testable import QuireServe

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CursorAndParameterTests {
    @Test func cursorsRoundTripAndRejectAnythingElse() throws {
        let key = Array("nyt://article/x".utf8)
        for cursor in [
            PageCursor(sort: .newest, indexKey: [0x80, 0, 1, 2], key: key, filters: 42),
            PageCursor(sort: .id, indexKey: nil, key: Array(repeating: 0x61, count: 3000), filters: .max),
            PageCursor(sort: .newest, searchOffset: 30, filters: 7),
        ] {
            #expect(PageCursor(text: cursor.text) == cursor)
            #expect(!cursor.text.contains("+") && !cursor.text.contains("/") && !cursor.text.contains("="))
        }
        let good = PageCursor(sort: .oldest, indexKey: [1], key: key).text
        for bad in ["", "AAAA", String(good.dropLast(3)), good + "AA", "!!!!", "AgAAAAAAAAAAAAAAAAAB"] {
            #expect(PageCursor(text: bad) == nil, "\(bad)")
        }
    }

    @Test func percentDecodingIsStrict() {
        #expect(PercentDecoding.decode("a%20b+c", plusIsSpace: true) == "a b c")
        #expect(PercentDecoding.decode("a+b", plusIsSpace: false) == "a+b")
        #expect(PercentDecoding.decode("nyt%3A%2F%2Farticle%2F%C3%BC", plusIsSpace: false) == "nyt://article/ü")
        for bad in ["%", "%2", "%zz", "%C3", "%FF%FE", "a%G0"] {
            #expect(PercentDecoding.decode(Substring(bad), plusIsSpace: true) == nil, "\(bad)")
        }
    }

    @Test func listParametersAreCheckedStrictly() throws {
        let query = try ArticleQuery(parameters: [("since", "2020-01-31"), ("until", "20200201"), ("limit", "7")])
        #expect(query.since == Date(timeIntervalSince1970: 1_580_428_800))
        #expect(query.untilExclusive == Date(timeIntervalSince1970: 1_580_601_600))
        #expect(query.limit == 7 && query.sort == .newest)
        // Days are ISO 8601's proleptic Gregorian ones, before 1582 too, as stored dates are.
        for (text, seconds) in [("0001-01-01", -62_135_596_800.0), ("1582-10-10", -12_219_724_800), ("2000-02-29", 951_782_400)] {
            #expect(try ArticleQuery(parameters: [("since", text)]).since == Date(timeIntervalSince1970: seconds), "\(text)")
        }
        let bad: [[(name: String, value: String)]] = [
            [("since", "2019-02-29")], [("since", "1900-02-29")], [("since", "0000-01-01")], [("fields", "id,headline,id")],
            [("limit", "501")], [("limit", "-1")], [("sort", "best")], [("since", "2020-13-01")], [("since", "2020-1-1")],
            [("section", "")], [("page", "2")], [("limit", "1"), ("limit", "1")], [("since", "2021-01-01"), ("until", "2020-12-31")],
            [("sort", "id"), ("until", "2020-12-31")], [("cursor", "x")], [("sort", "relevance")],
            [("limit", "+5")], [("limit", " 5")], [("limit", "5 ")], [("limit", "")],
        ]
        for parameters in bad {
            #expect(throws: ArticleQuery.Invalid.self, "\(parameters)") { _ = try ArticleQuery(parameters: parameters) }
        }
        // A search ranks by relevance (a list's id order), within dates too.
        let ranked = try ArticleQuery(parameters: [("q", "storm"), ("sort", "relevance"), ("since", "2020-01-01")])
        #expect(ranked.sort == .id && ranked.text == "storm" && ranked.since != nil)
        // An empty search box asks for the list, whatever spaces it holds.
        for empty in ["", " ", "\t \n"] { #expect(try ArticleQuery(parameters: [("q", empty)]).text == nil, "\(empty)") }
        #expect(throws: ArticleQuery.Invalid.self) { _ = try ArticleQuery(parameters: [("q", " "), ("sort", "relevance")]) }
        // A cursor only works with the filters that made it.
        let arts = try ArticleQuery(parameters: [("section", "Arts")])
        let cursor = PageCursor(sort: .newest, indexKey: [1], key: [2], filters: arts.filterTag).text
        _ = try ArticleQuery(parameters: [("section", "Arts"), ("cursor", cursor)])
        #expect(throws: ArticleQuery.Invalid.self) { _ = try ArticleQuery(parameters: [("section", "World"), ("cursor", cursor)]) }
    }

    @Test func etagsAndEncodings() {
        #expect(Router.matches("W/\"ab\"", "W/\"ab\""))
        #expect(Router.matches("\"x\", \"ab\"", "W/\"ab\""))
        #expect(Router.matches("*", "W/\"ab\""))
        #expect(!Router.matches("W/\"abc\"", "W/\"ab\""))
        #expect(Gzip.isAccepted(by: "deflate, gzip;q=0.5"))
        #expect(!Gzip.isAccepted(by: "gzip;q=0"))
        #expect(!Gzip.isAccepted(by: "br") && !Gzip.isAccepted(by: nil))
        #expect(ContentHash.of(Array("abc".utf8)) != ContentHash.of(Array("abd".utf8)))
        #expect(ContentHash.of(Array(repeating: 1, count: 17)) != ContentHash.of(Array(repeating: 1, count: 16)))
        #expect(JSONText.string("<a\u{1}\"\\>") == "\"\\u003ca\\u0001\\\"\\\\\\u003e\"")
    }

    @Test func addresses() {
        #expect(SocketAddress("127.0.0.1")?.isLoopback == true)
        #expect(SocketAddress("127.8.9.10")?.isLoopback == true)
        #expect(SocketAddress("localhost")?.description == "127.0.0.1")
        #expect(SocketAddress("::1")?.isLoopback == true && SocketAddress("[::1]")?.isIPv6 == true)
        #expect(SocketAddress("0.0.0.0")?.isLoopback == false)
        #expect(SocketAddress("10.0.0.1")?.isLoopback == false)
        #expect(SocketAddress("example.com") == nil && SocketAddress("1.2.3") == nil && SocketAddress("") == nil)
    }
}

/// Reads from a loopback socket until `done` or `timeout` seconds pass without data.
private func exchange(
    _ port: Int, _ request: String, timeout seconds: Int = 10, until done: (String) -> Bool
) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(connected == 0)
    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !done(String(decoding: received, as: UTF8.self)) {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received += buffer[0..<n]
    }
    return String(decoding: received, as: UTF8.self)
}

@Suite struct EmbeddedServerTests {
    func scratchPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("quire-serve-\(UUID().uuidString)").path
    }

    /// A new store at a scratch path holding `first`, served by an embedded server on a free port.
    func embeddedServer(first: Article, maxEventStreams: Int = 64) async throws -> (String, Store, ArticleServer) {
        let path = scratchPath()
        let store = try Store(path: path)
        try NewsSchema.register(in: store)
        try await store.put(first, in: NewsSchema.articles)
        var configuration = ArticleServer.Configuration()
        configuration.port = 0
        configuration.maxEventStreams = maxEventStreams
        return (path, store, try ArticleServer(store: store, configuration: configuration))
    }

    /// An embedding program that writes to its store sees each commit's keys on /api/changes.
    @Test func sharedStoreStreamsInProcessChangesWithKeys() async throws {
        let (path, store, server) = try await embeddedServer(
            first: Article(id: "first", headline: "one", publishedAt: Date(timeIntervalSince1970: 1e9)))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        #expect(server.port > 0 && server.url == "http://127.0.0.1:\(server.port)/")
        let record = try exchange(server.port, "GET /api/articles/first HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
        #expect(record.hasPrefix("HTTP/1.1 200") && record.contains("\"headline\":\"one\""))

        let port = server.port
        // The stream is read on a thread of its own: a blocking read on the cooperative pool
        // (two threads on a two-core machine) could starve the put it waits for.
        let streamed = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread {
            let text = try? exchange(port, "GET /api/changes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout: 30) {
                $0.contains("event: change") && $0.contains("second")
            }
            streamed.withLock { $0 = text }
            finished.signal()
        }
        reader.start()
        try await Task.sleep(for: .milliseconds(300))
        try await store.put(Article(id: "second", headline: "two"), in: NewsSchema.articles)
        while finished.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(20)) }
        let text = try #require(streamed.withLock { $0 })
        #expect(text.contains("event: hello"))
        #expect(text.contains("{\"collection\":\"articles\",\"kind\":\"upsert\",\"keys\":[\"second\"],\"more\":0}"), "\(text)")
    }

    /// A client that closes its change stream frees its slot at the next poll, not at the next
    /// 15 s heartbeat (a suspended connection is not watched by libmicrohttpd): with one slot,
    /// the next client is served within seconds instead of getting 503s.
    @Test func aClosedChangeStreamFreesItsSlotAtOnce() async throws {
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "one"), maxEventStreams: 1)
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        let request = "GET /api/changes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let first = try exchange(server.port, request, timeout: 5) { $0.contains("event: hello") }
        #expect(first.hasPrefix("HTTP/1.1 200") && first.contains("event: hello"), "\(first)")
        // `exchange` closed its socket; the slot is free once the feed's next poll sees that.
        // Tries, not a time window: a full run can hold this test back for minutes, which would end
        // any window early; on a quiet machine 50 tries last about 5 s, under the heartbeat's 15 s
        // (which freed the slot before).
        var answers: [String] = []
        for _ in 0..<50 {
            let next = try exchange(server.port, request, timeout: 5) { $0.contains("event: hello") || $0.contains("\r\n\r\n") && $0.hasPrefix("HTTP/1.1 503") }
            answers.append(String(next.prefix(12)))
            if next.contains("event: hello") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(answers.last == "HTTP/1.1 200", "\(answers)")
        #expect(answers.dropLast().allSatisfy { $0 == "HTTP/1.1 503" }, "\(answers)")
    }

    /// HEAD /api/changes answers headers alone: nothing of a stream (its chunked end) comes
    /// before the next answer on the connection. An empty section filter is a 400 (it names no
    /// section, as `section=` does), a section no article has finds nothing; neither fails the read.
    @Test func headOfTheChangeStreamHasNoBodyAndAnEmptySectionFindsNothing() async throws {
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "storm"))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        let both = try exchange(
            server.port,
            "HEAD /api/changes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        ) { _ in false }
        let answers = both.components(separatedBy: "HTTP/1.1 ")
        #expect(answers.count == 3 && answers[1].hasPrefix("200") && answers[2].hasPrefix("200"), "\(both)")
        // The headers' blank line ends the first answer: no `0\r\n\r\n` after it.
        #expect(answers[1].hasSuffix("\r\n\r\n") && !answers[1].hasSuffix("\r\n0\r\n\r\n"), "\(both)")
        #expect(answers[1].contains("text/event-stream"), "\(both)")
        for query in ["q=storm%20section:%22%22", "q=storm&section=%22"] {
            let answer = try exchange(server.port, "GET /api/articles?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
            let empty = query.hasSuffix("%22%22")
            #expect(answer.hasPrefix(empty ? "HTTP/1.1 400" : "HTTP/1.1 200"), "\(query): \(answer)")
            #expect(answer.contains(empty ? "'section:' has nothing to apply to" : "{\"articles\":[],\"count\":0"), "\(query): \(answer)")
        }
    }

    /// A server on a loopback address answers only requests naming a loopback host: a page of
    /// a name an attacker points at 127.0.0.1 (DNS rebinding) cannot read the store.
    @Test func aLoopbackServerAnswersLoopbackHostsOnly() async throws {
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "storm"))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        for (host, status) in [
            ("Host: attacker.example\r\n", "421"), ("Host: 127.0.0.1.evil.example:80\r\n", "421"),
            ("Host: 127.+0.+0.+1\r\n", "421"), ("Host: 127.255.3.4\r\n", "200"),
            ("Host: localhost:\(server.port)\r\n", "200"), ("Host: [::1]:\(server.port)\r\n", "200"),
            // No Host at all: RFC 9112 wants a 400 for HTTP/1.1 (HTTP/1.0 has none to send).
            ("Host: 127.0.0.1\r\n", "200"), ("", "400"),
            // Two Host headers (RFC 9112: a 400), whichever the first is.
            ("Host: 127.0.0.1\r\nHost: attacker.example\r\n", "400"), ("Host: localhost\r\nhost: localhost\r\n", "400"),
            // A host and a port, nothing after: what followed was ignored.
            ("Host: [::1]evil.com\r\n", "400"), ("Host: 127.0.0.1:80:evil\r\n", "400"), ("Host: localhost:99999\r\n", "400"),
            ("Host: :80\r\n", "400"), ("Host: localhost.\r\n", "200"),
            // Spaces and tabs around a field value are not part of it (RFC 9110 §5.5).
            ("Host: 127.0.0.1 \r\n", "200"), ("Host:\tlocalhost\t \r\n", "200"), ("Host: attacker.example \r\n", "421"),
        ] {
            let answer = try exchange(server.port, "GET /api/stats HTTP/1.1\r\n\(host)Connection: close\r\n\r\n") { _ in false }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(host): \(answer.prefix(200))")
        }
        let old = try exchange(server.port, "GET /api/stats HTTP/1.0\r\n\r\n") { _ in false }
        #expect(old.contains(" 200 "), "\(old.prefix(200))")
        // A target in absolute form (RFC 9112 §3.2.2) is served; its authority is the host checked.
        for (target, status) in [
            ("http://127.0.0.1:\(server.port)/api/articles/first", "200"), ("HTTP://localhost/api/articles/first?fields=id", "200"),
            ("http://attacker.example/api/articles/first", "421"), ("http://127.0.0.1", "200"),
        ] {
            let answer = try exchange(server.port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(target): \(answer.prefix(200))")
            if status == "200", target.contains("first") { #expect(answer.contains("\"id\":\"first\""), "\(target)") }
        }
    }

    /// `?&&limit=1` was a 400 (`unknown parameter ''`) where a trailing `&` was not: an empty
    /// piece names nothing; a piece with a value and no name is still refused.
    @Test func emptyPiecesOfAQueryStringNameNothing() async throws {
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "storm"))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        for (query, status) in [("&&sort=id", "200"), ("sort=id&&fields=id&", "200"), ("q=&sort=id", "200"), ("=x&sort=id", "400")] {
            let answer = try exchange(server.port, "GET /api/articles?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(query): \(answer.prefix(300))")
            if status == "200" { #expect(answer.contains("\"id\":\"first\""), "\(query): \(answer.prefix(300))") }
        }
    }

    /// Two lengths, or a length beside chunked framing, could hide a second request in the
    /// body (the first length won, and the "body" was answered as a request of its own): such a
    /// request gets one answer, an error, and its connection is closed.
    @Test func conflictingBodyFramingGetsOneErrorAndNothingMore() async throws {
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "storm"))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        let hidden = "GET /api/zzz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        for (framing, status) in [
            ("Content-Length: 0\r\nContent-Length: \(hidden.utf8.count)\r\n", "400"),
            ("Content-Length: \(hidden.utf8.count)\r\nContent-Length: 0\r\n", "400"),
            ("Content-Length: 0\r\nTransfer-Encoding: chunked\r\n", "413"),
        ] {
            let answer = try exchange(server.port, "GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\n\(framing)\r\n\(hidden)") { _ in false }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(framing): \(answer.prefix(200))")
            #expect(answer.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer only: \(answer)")
        }
    }

    /// Beyond the loopback (`--host 0.0.0.0`) the Host check stayed off: a page of any name
    /// pointed at the server (DNS rebinding) read the store. Now a name must be allowed.
    @Test func aServerBeyondTheLoopbackAnswersAddressesAndAllowedNamesOnly() {
        let open = Router.HostPolicy(loopbackOnly: false, names: ["News.Example"])
        for host in ["192.0.2.7", "10.1.2.3", "::1", "fe80::1", "2001:db8::5", "localhost", "news.example", "NEWS.EXAMPLE"] {
            #expect(open.allows(host), "\(host)")
        }
        #expect(open.allows("news.example.") && Router.HostPolicy(loopbackOnly: false, names: ["news.example:8080"]).allows("news.example"))
        for host in ["attacker.example", "192.0.2.7.evil.example", "news.example.evil", "1.2.3", "", "+1.+2.+3.+4", "１.２.３.４", "fe80::zz"] {
            #expect(!open.allows(host), "\(host)")
        }
        #expect(open.refusal(of: "attacker.example").contains("--allow-host"))
        let loopback = Router.HostPolicy(loopbackOnly: true, names: ["news.example"])
        #expect(loopback.allows("127.0.0.1") && !loopback.allows("192.0.2.7") && !loopback.allows("other.example"))
        #expect(loopback.allows("news.example"))  // behind a reverse proxy that passes its name on
        // The refusal names what is allowed, so an operator sees which name is missing.
        #expect(loopback.refusal(of: "other.example").contains("'news.example'"))
        #expect(!Router.HostPolicy(loopbackOnly: true, names: []).refusal(of: "x").contains("''"))
    }

    @Test func gzipIsRefusedByAZeroQualityWhateverItsCase() {
        #expect(Gzip.isAccepted(by: "gzip") && Gzip.isAccepted(by: "br, gzip;q=0.5"))
        #expect(!Gzip.isAccepted(by: "gzip;q=0") && !Gzip.isAccepted(by: "gzip;Q=0") && !Gzip.isAccepted(by: "GZIP ; Q=0.000"))
        #expect(!Gzip.isAccepted(by: nil) && !Gzip.isAccepted(by: "br"))
    }

    /// The cluster's snapshot server hands out a whole store: on a loopback address it answers
    /// loopback hosts only, as the article server does.
    @Test func aLoopbackSnapshotServerAnswersLoopbackHostsOnly() throws {
        let server = try SnapshotServer { Array("store bytes".utf8) }
        defer { server.stop() }
        for (host, status) in [("Host: attacker.example\r\n", "421"), ("Host: 127.0.0.1:\(server.port)\r\n", "200")] {
            let answer = try exchange(server.port, "GET /snapshot HTTP/1.1\r\n\(host)Connection: close\r\n\r\n") { _ in false }
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(host): \(answer.prefix(200))")
            #expect(answer.hasSuffix("store bytes") == (status == "200"))
        }
    }

    /// A search with a section gets a full page of that section's matches, even when they rank
    /// below a hundred matches of other sections (the section is answered by its index).
    @Test func aSearchInARareSectionGetsAFullPage() async throws {
        let day = Date(timeIntervalSince1970: 1e9)
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "calm", publishedAt: day))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        let filler = Array(repeating: "harbour tide wind rain", count: 30).joined(separator: " ")
        let common = (0..<100).map { Article(id: "c\($0)", headline: "storm warning", section: "Weather") }
        let rare = (0..<6).map { Article(id: "r\($0)", abstract: "storm " + filler, section: "Science") }
        try await store.write { try $0.put(contentsOf: common + rare, in: NewsSchema.articles) }
        let answer = try exchange(
            server.port, "GET /api/articles?q=storm&section=Science&limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        ) { _ in false }
        let body = try #require(answer.range(of: "\r\n\r\n").map { answer[$0.upperBound...] })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let ids = try #require(json["articles"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(ids.count == 5 && ids.allSatisfy { $0.hasPrefix("r") }, "\(ids)")
    }

    /// A search pages through all its hits with `next`, each once, ranked across pages; its
    /// cursor is refused by a list without `q` and by another query.
    @Test func aSearchPagesThroughEveryHitOnce() async throws {
        let day = Date(timeIntervalSince1970: 1e9)
        let (path, store, server) = try await embeddedServer(first: Article(id: "first", headline: "calm", publishedAt: day))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        // Fewer words, higher score: storm0 ranks first, storm69 last.
        let values = (0..<70).map { i in
            Article(id: "storm\(i)", abstract: "storm " + Array(repeating: "tide", count: i).joined(separator: " "), publishedAt: day)
        }
        try await store.write { try $0.put(contentsOf: values, in: NewsSchema.articles) }
        func page(_ target: String) throws -> (status: Int, ids: [String], next: String?) {
            let answer = try exchange(server.port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
            let status = Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
            let body = try #require(answer.range(of: "\r\n\r\n").map { answer[$0.upperBound...] })
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            let ids = (json["articles"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            return (status, ids, json["next"] as? String)
        }
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let answer = try page("/api/articles?q=storm&sort=id&limit=30" + (cursor.map { "&cursor=" + $0 } ?? ""))
            #expect(answer.status == 200, "\(answer)")
            seen += answer.ids
            cursor = answer.next
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(seen == (0..<70).map { "storm\($0)" })
        let second = try #require(try page("/api/articles?q=storm&sort=id&limit=30").next)
        #expect(try page("/api/articles?sort=id&limit=30&cursor=" + second).status == 400)
        #expect(try page("/api/articles?q=tide&sort=id&limit=30&cursor=" + second).status == 400)
    }

    /// Answers reused from the cache are never older than the store's last commit.
    @Test func cachedAnswersFollowEveryCommit() async throws {
        let day = Date(timeIntervalSince1970: 1e9)
        let (path, store, server) = try await embeddedServer(first: Article(id: "a", headline: "first", publishedAt: day))
        defer { server.stop(); store.close(); try? FileManager.default.removeItem(atPath: path) }
        func get(_ target: String) throws -> String {
            try exchange(server.port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
        }
        func etag(_ answer: String) -> Substring? {
            answer.split(separator: "\r\n").first { $0.hasPrefix("ETag: ") }?.dropFirst(6)
        }
        let before = try get("/api/articles/a")
        #expect(etag(try get("/api/articles/a")) == etag(before) && etag(before) != nil)
        #expect(try get("/api/articles?limit=5").contains("\"headline\":\"first\""))
        for round in 0..<3 {
            try await store.put(Article(id: "a", headline: "edit \(round)", publishedAt: day), in: NewsSchema.articles)
            let record = try get("/api/articles/a")
            #expect(record.contains("\"headline\":\"edit \(round)\""), "\(record)")
            #expect(etag(record) != etag(before))
            #expect(try get("/api/articles?limit=5").contains("\"headline\":\"edit \(round)\""))
        }
        try await store.delete(.string("a"), from: NewsSchema.articles)
        #expect(try get("/api/articles/a").hasPrefix("HTTP/1.1 404"))
    }

    @Test func theResponseCacheIsBoundedAndKeyedByTransaction() {
        let cache = ResponseCache(capacity: 8 * 1024)
        let body = [UInt8](repeating: 7, count: 900)
        cache.store(.init(body: body, tag: "t"), for: "k", transaction: 5)
        #expect(cache.lookup("k", transaction: 5)?.body == body)
        #expect(cache.lookup("k", transaction: 6) == nil)
        // An answer made from an older state never replaces a newer cache.
        cache.store(.init(body: [1], tag: "u"), for: "k2", transaction: 6)
        cache.store(.init(body: [2], tag: "v"), for: "k3", transaction: 5)
        #expect(cache.lookup("k3", transaction: 5) == nil && cache.lookup("k3", transaction: 6) == nil)
        #expect(cache.lookup("k", transaction: 6) == nil && cache.lookup("k2", transaction: 6)?.tag == "u")
        // Past the capacity the oldest entries go first; one too large is not kept at all.
        for i in 0..<20 { cache.store(.init(body: body, tag: "\(i)"), for: "n\(i)", transaction: 6) }
        #expect(cache.lookup("n19", transaction: 6)?.tag == "19")
        #expect(cache.lookup("n0", transaction: 6) == nil && cache.lookup("k2", transaction: 6) == nil)
        #expect((0..<20).filter { cache.lookup("n\($0)", transaction: 6) != nil }.count == 8 * 1024 / 903)
        cache.store(.init(body: [UInt8](repeating: 0, count: 2000), tag: "big"), for: "big", transaction: 6)
        #expect(cache.lookup("big", transaction: 6) == nil)
        let off = ResponseCache(capacity: 0)
        off.store(.init(body: [1], tag: "x"), for: "k", transaction: 1)
        #expect(off.lookup("k", transaction: 1) == nil)
    }

    /// Targets are told apart by their bytes: a raw UTF-8 target naming an id decomposed
    /// (`cafe\u{301}`) was answered with the composed id's record, which `String` keys took for
    /// the same target.
    @Test func theResponseCacheTellsCanonicallyEquivalentTargetsApart() {
        let cache = ResponseCache(capacity: 8 * 1024)
        cache.store(.init(body: [1], tag: "composed"), for: "/api/articles/caf\u{E9}", transaction: 3)
        #expect(cache.lookup("/api/articles/cafe\u{301}", transaction: 3) == nil)
        cache.store(.init(body: [2], tag: "decomposed"), for: "/api/articles/cafe\u{301}", transaction: 3)
        #expect(cache.lookup("/api/articles/caf\u{E9}", transaction: 3)?.tag == "composed")
        #expect(cache.lookup("/api/articles/cafe\u{301}", transaction: 3)?.tag == "decomposed")
    }

    /// Settings out of their range are a `ServeError` that names them: a port past 65535 was
    /// wrapped to another port, a negative timeout or connection count trapped.
    @Test(arguments: [
        ("port", 70_000, "port 70000 is not a TCP port"), ("port", -1, "port -1 is not a TCP port"),
        ("connectionTimeout", -1, "connectionTimeout -1 is not"), ("maxConnections", 0, "maxConnections 0 is not"),
        ("pollInterval", 0, "pollInterval"),
    ])
    func settingsOutOfRangeAreRefusedByName(setting: String, value: Int, message: String) throws {
        var configuration = ArticleServer.Configuration()
        configuration.port = 0
        switch setting {
        case "port": configuration.port = value
        case "connectionTimeout": configuration.connectionTimeout = value
        case "maxConnections": configuration.maxConnections = value
        default: configuration.pollInterval = .milliseconds(value)
        }
        let error = #expect(throws: ServeError.self) { _ = try ArticleServer(storePath: scratchPath(), configuration: configuration) }
        #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        if setting == "port" {
            // Every server of the HTTP layer refuses it, not only the article server.
            let fixed = #expect(throws: ServeError.self) { _ = try FixedBodyServer(body: [], port: value) }
            #expect(fixed?.message.hasPrefix(message) == true, "\(String(describing: fixed))")
        }
    }

    @Test func aMissingStoreAnswers503AndTheFixedServerItsBody() throws {
        var configuration = ArticleServer.Configuration()
        configuration.port = 0
        let server = try ArticleServer(storePath: scratchPath(), configuration: configuration)
        defer { server.stop() }
        let answer = try exchange(server.port, "GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
        #expect(answer.hasPrefix("HTTP/1.1 503") && answer.contains("\"status\":503"))
        // The page needs no store.
        let page = try exchange(server.port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
        #expect(page.hasPrefix("HTTP/1.1 200") && page.contains("<title>Quire</title>"))

        let fixed = try FixedBodyServer(body: Array("{\"x\":1}".utf8))
        defer { fixed.stop() }
        let body = try exchange(fixed.port, "GET /anything HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") { _ in false }
        #expect(body.hasPrefix("HTTP/1.1 200") && body.hasSuffix("{\"x\":1}"))
    }

    @Test func aTakenPortIsAServeError() throws {
        let first = try FixedBodyServer(body: [])
        defer { first.stop() }
        #expect(throws: ServeError.self) { _ = try FixedBodyServer(body: [], port: first.port) }
    }
}

/// A section list by date or by id: a small section's records are sorted from the section
/// index, a large one's found by walking the date index or the records; both give the walk's
/// order (by id, undated records too).
@Suite struct SectionListTests {
    @Test func aSectionListsItsRecordsInTheWalksOrderWhateverItsSize() async throws {
        // 2,600 articles over 1,000 instants (ties, told apart by id), a few undated; "Rare"
        // has 200 (sorted from the section index), "Big" 2,400 (more than the 2,000 that allows).
        let base = Date(timeIntervalSince1970: 1_500_000_000)
        var articles: [Article] = []
        for i in 0..<2_600 {
            let hours = Double((i * 31) % 1_000)
            let date: Date? = i % 97 == 0 ? nil : base.addingTimeInterval(hours * 3_600)
            let id = String(format: "a%05d", (i * 7_919) % 2_600)
            articles.append(Article(id: id, publishedAt: date, section: i % 13 == 0 ? "Rare" : "Big"))
        }
        try await checkPages(of: ["Rare", "Big", "Absent"], in: articles, window: ("2017-07-23", "2017-08-13"))
    }

    /// A large section whose records all lie past where the walk starts (older than the rest,
    /// ids after theirs): the walk reads four times the section's size, then gives way to the
    /// section listed from its index, in the same order.
    @Test func aLargeSectionFarFromTheWalksStartIsListedInTheSameOrder() async throws {
        let base = Date(timeIntervalSince1970: 1_500_000_000)
        var articles: [Article] = []
        for i in 0..<8_600 {
            articles.append(Article(id: String(format: "a%05d", i), publishedAt: base.addingTimeInterval(Double(i % 700) * 3_600), section: "New"))
        }
        for i in 0..<2_050 {
            let date: Date? = i % 101 == 0 ? nil : base.addingTimeInterval(-Double(1 + i % 300) * 3_600)
            articles.append(Article(id: String(format: "z%05d", (i * 7_919) % 2_050), publishedAt: date, section: "Old"))
        }
        try await checkPages(of: ["Old"], in: articles, window: ("2017-07-02", "2017-07-10"))
    }

    /// Ids of 7,000 and 20,000 bytes: a page ending at one gave a cursor holding the whole id,
    /// longer than a request target may be (414), so no walk went past it. A cursor holds a long
    /// key's compact form; every walk lists every record once.
    @Test func aPageEndingAtALongIdHasACursorThatWorks() async throws {
        let base = Date(timeIntervalSince1970: 1_500_000_000)
        let ids = ["a", String(repeating: "l", count: 7_000) + "1", String(repeating: "l", count: 7_000) + "2", "m",
                   String(repeating: "x", count: 20_000), "z"]
        let articles = ids.enumerated().map { i, id in
            Article(id: id, publishedAt: base.addingTimeInterval(Double(i % 3) * 3_600), section: "Long")
        }
        try await withAccess(to: articles) { access in
            for sort in ["newest", "oldest", "id"] {
                let parameters: [(name: String, value: String)] = [("section", "Long"), ("sort", sort), ("limit", "1")]
                var query = try ArticleQuery(parameters: parameters)
                var listed: [String] = []
                for _ in 0..<20 {
                    let page = try access.page(query)
                    for record in page.records {
                        let object = try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any]
                        listed.append(try #require(object?["id"] as? String))
                    }
                    guard let next = page.next else { break }
                    #expect(next.text.utf8.count < 1_024, "\(sort): a cursor of \(next.text.utf8.count) bytes")
                    query = try ArticleQuery(parameters: parameters + [("cursor", next.text)])
                }
                #expect(listed.sorted() == ids.sorted(), "\(sort): \(listed.map { $0.prefix(3) })")
            }
        }
    }

    /// Ids of 481 to 530 bytes published at one instant: those stored by their hashed form sort
    /// by it past byte 495, and a walk resumed by the logical id lost or repeated them (a third
    /// of 150 listed with `limit=1`), or walked the date index's last key back to its start and
    /// took that for damage. Every walk, by pages of one or seven, lists what one page lists.
    @Test func pagesOfLongIdsListEveryRecordOnceInTheStoresOrder() async throws {
        let day = Date(timeIntervalSince1970: 1_600_000_000)
        let articles = (481...530).flatMap { n in
            ["a", "b", "c"].map { Article(id: String(repeating: "k", count: n) + $0, publishedAt: day, section: n % 2 == 0 ? "Long" : "Odd") }
        }
        try await withAccess(to: articles) { access in
            let long = Set(articles.filter { $0.section == "Long" }.map(\.id))
            for sort in ["newest", "oldest", "id"] {
                var unfiltered: [String] = []
                for section in [nil, "Long"] as [String?] {
                    let base: [(name: String, value: String)] = [("sort", sort)] + (section.map { [("section", $0)] } ?? [])
                    func ids(_ page: ArticlePage) throws -> [String] {
                        try page.records.map { record in
                            let object = try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any]
                            return try #require(object?["id"] as? String)
                        }
                    }
                    let whole = try ids(access.page(try ArticleQuery(parameters: base + [("limit", "500")])))
                    #expect(whole.count == (section == nil ? 150 : 75), "\(sort) \(section ?? "all")")
                    // A small section is listed from its index, in the order the walk has.
                    if section == nil { unfiltered = whole } else { #expect(whole == unfiltered.filter(long.contains), "\(sort)") }
                    for limit in ["1", "7"] {
                        var query = try ArticleQuery(parameters: base + [("limit", limit)])
                        var listed: [String] = []
                        for _ in 0..<200 {
                            let page = try access.page(query)
                            listed += try ids(page)
                            guard let next = page.next else { break }
                            query = try ArticleQuery(parameters: base + [("limit", limit), ("cursor", next.text)])
                        }
                        #expect(listed == whole, "\(sort) \(section ?? "all") limit \(limit): \(listed.count) listed")
                    }
                }
            }
        }
    }

    /// A page of huge records ends once it passes 8 MiB, with a cursor to the next: whole pages
    /// of 4 MB abstracts held for slow readers took gigabytes. A walk still lists each once.
    @Test func aPageOfHugeRecordsEndsEarlyWithItsCursor() async throws {
        let day = Date(timeIntervalSince1970: 1_600_000_000)
        let abstract = String(repeating: "word ", count: 600_000)  // 3 MB
        let articles = (0..<6).map { Article(id: "big\($0)", abstract: abstract, publishedAt: day.addingTimeInterval(Double($0))) }
        try await withAccess(to: articles) { access in
            var query = try ArticleQuery(parameters: [("sort", "oldest"), ("limit", "10")])
            var pages: [[String]] = []
            for _ in 0..<10 {
                let page = try access.page(query)
                pages.append(try page.records.map { record in
                    let object = try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any]
                    return try #require(object?["id"] as? String)
                })
                guard let next = page.next else { break }
                query = try ArticleQuery(parameters: [("sort", "oldest"), ("limit", "10"), ("cursor", next.text)])
            }
            #expect(pages.map(\.count) == [2, 2, 2], "\(pages)")
            #expect(pages.flatMap { $0 } == articles.map(\.id))
        }
    }

    /// A search pages through its first 10,000 hits; the last page says when more matched, so a
    /// client (the web page's "+") can tell a cut list from a whole one.
    @Test func aSearchCutAtItsDepthSaysSo() async throws {
        let day = Date(timeIntervalSince1970: 1e9)
        let depth = ArticleQuery.maxSearchDepth
        let articles = (0...depth).map { i in
            Article(id: String(format: "s%05d", i), headline: "storm \(i)", publishedAt: day, section: i == 0 ? "Odd" : "Even")
        }
        try await withAccess(to: articles) { access in
            for (section, truncated) in [(nil, true), ("Even", false)] as [(String?, Bool)] {
                let parameters: [(name: String, value: String)] = [("q", "storm"), ("sort", "id"), ("limit", "10")]
                    + (section.map { [("section", $0)] } ?? [])
                let filters = try ArticleQuery(parameters: parameters).filterTag
                let cursor = PageCursor(sort: .id, searchOffset: depth - 10, filters: filters)
                let last = try access.page(try ArticleQuery(parameters: parameters + [("cursor", cursor.text)]))
                #expect(last.records.count == 10 && last.next == nil)
                #expect(last.truncated == truncated, "\(section ?? "all")")
                #expect(try access.page(try ArticleQuery(parameters: parameters)).truncated == false)
            }
        }
    }

    /// `body` with the articles served from a new store (removed after).
    private func withAccess(to articles: [Article], _ body: (StoreAccess) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quire-serve-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(path: path)
        defer { store.close() }
        try NewsSchema.register(in: store)
        try await store.bulkInsert(articles, into: NewsSchema.articles)
        try await body(StoreAccess(store: store))
    }

    /// Pages `sections` by date both ways (also within `window`) and by id, seven records a
    /// page, through their cursors, and checks them against the walk's order.
    private func checkPages(of sections: [String], in articles: [Article], window: (String, String)) async throws {
        try await withAccess(to: articles) { access in
            for section in sections {
                for sort in ["newest", "oldest", "id"] {
                    for windowed in sort == "id" ? [false] : [false, true] {
                        var parameters: [(name: String, value: String)] = [("section", section), ("sort", sort), ("limit", "7")]
                        if windowed { parameters += [("since", window.0), ("until", window.1)] }
                        let first = try ArticleQuery(parameters: parameters)
                        // What the date index holds, in its order: date key, then id.
                        var dated: [(date: StoreKey, id: String)] = []
                        for article in articles where article.section == section {
                            guard let date = article.publishedAt ?? (sort == "id" ? Date.distantPast : nil) else { continue }
                            if let since = first.since, date < since { continue }
                            if let until = first.untilExclusive, date >= until { continue }
                            dated.append((StoreKey.date(date), article.id))
                        }
                        dated.sort { a, b in a.date == b.date || sort == "id" ? a.id < b.id : a.date < b.date }
                        var expected = dated.map(\.id)
                        if sort == "newest" { expected.reverse() }
                        var listed: [String] = []
                        var query = first
                        for _ in 0..<1_000 {
                            let page = try access.page(query)
                            #expect(page.records.count <= 7)
                            for record in page.records {
                                let object = try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any]
                                listed.append(try #require(object?["id"] as? String))
                            }
                            guard let next = page.next else { break }
                            query = try ArticleQuery(parameters: parameters + [("cursor", next.text)])
                        }
                        #expect(listed == expected, "\(section) \(sort) window: \(windowed)")
                        #expect(section == "Absent" ? listed.isEmpty : listed.count > (windowed ? 7 : 100), "\(section) \(sort)")
                    }
                }
            }
        }
    }
}

@Suite struct ChangeFeedResumeTests {
    /// What a stream opened with `lastEventID` queues at once (its `hello`, and any `commit`).
    private func opening(_ feed: QuireServe.ChangeFeed, lastEventID: String?) throws -> String {
        let stream = try #require(feed.subscribe(lastEventID: lastEventID))
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { stream.read(into: $0, suspend: {}) } ?? 0
        return String(decoding: buffer.prefix(n), as: UTF8.self)
    }

    /// A client that reconnects with the current mark hears nothing new; one with an older id,
    /// or an id past the mark (a store restored from a backup), gets a `commit` at once.
    @Test func aReconnectGetsACommitWhenTheMarkIsNotItsID() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quire-feed-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store(path: path)
        defer { store.close() }
        try NewsSchema.register(in: store)
        try await store.put(Article(id: "a", headline: "one"), in: NewsSchema.articles)
        let access = StoreAccess(store: store)
        let feed = QuireServe.ChangeFeed(access: access, interval: .seconds(60), maxSubscribers: 8)
        feed.start()
        defer { feed.stop() }
        let mark = try access.commitMark().lastTransaction
        #expect(try opening(feed, lastEventID: nil).contains("event: hello"))
        #expect(!(try opening(feed, lastEventID: "\(mark)")).contains("event: commit"))
        #expect(try opening(feed, lastEventID: "\(mark - 1)").contains("event: commit"))
        #expect(try opening(feed, lastEventID: "\(mark + 1_000)").contains("event: commit"))
        // An id that is not a transaction number is no id.
        #expect(!(try opening(feed, lastEventID: "later")).contains("event: commit"))
    }
}
