import QuireFixtures
import QuireHTTP
import Synchronization
import Testing

@Suite struct LoopbackServerTests {
    @Test func requestsArriveDecoded() async throws {
        let seen = Mutex<[FixtureRequest]>([])
        let server = try LoopbackServer { request in
            seen.withLock { $0.append(request) }
            return .json(body: "{}")
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(
            server.baseURL + "/svc/search.json?q=climate+change&fq=news_desk%3A%22Foreign%22&page=3",
            headers: [("X-Trace", "abc")])

        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        let request = try #require(seen.withLock { $0.first })
        #expect(request.method == "GET")
        #expect(request.path == "/svc/search.json")
        #expect(request.queryValue("q") == "climate change")
        #expect(request.queryValue("fq") == #"news_desk:"Foreign""#)
        #expect(request.queryValue("page") == "3")
        #expect(request.queryValue("missing") == nil)
        #expect(request.header("x-trace") == "abc")
        #expect(server.port > 0)
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
    }

    @Test func anEmptyGzippedBodyDecodesToNothing() async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 200).gzipped() }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(server.baseURL + "/")

        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.header("Content-Length") != "0")
    }

    @Test func releasingTheServerClosesItsPort() async throws {
        var server: LoopbackServer? = try LoopbackServer { _ in .text("up") }
        let url = try #require(server).baseURL + "/"
        let client = HTTPClient(configuration: quickConfiguration())
        #expect(try await client.get(url).bodyText == "up")

        server = nil
        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(url) })

        #expect(error.code == .connectionFailed || error.code == .connectionLost)
    }

    @Test func stopIsIdempotent() throws {
        let server = try LoopbackServer { _ in .text("up") }
        server.stop()
        server.stop()
        #expect(server.requestCount == 0)
    }
}
