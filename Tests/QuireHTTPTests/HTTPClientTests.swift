import QuireFixtures
import QuireHTTP
import Synchronization
import Testing

@Suite struct HTTPClientTests {
    @Test func getRoundTripsALargeBinaryBody() async throws {
        let payload = pseudoRandomBytes(count: 5 * 1024 * 1024)
        let server = try LoopbackServer { _ in
            FixtureResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: payload)
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(server.baseURL + "/blob")

        #expect(response.status == 200)
        #expect(response.body == payload)
        #expect(response.header("content-type") == "application/octet-stream")
        #expect(response.header("CONTENT-LENGTH") == "\(payload.count)")
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try LoopbackServer { request in .text("hello \(request.path)") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        // libcurl drops a connection idle for 118 s (CURLOPT_MAXAGE_CONN's default): a full run
        // on two cores once kept this test's task waiting that long between two requests.
        // Counted from one request's start to the next's (a task can also wait to resume).
        var idleGaps = 0
        var lastStart = ContinuousClock.now
        for index in 0..<6 {
            if ContinuousClock.now - lastStart > .seconds(100) { idleGaps += 1 }
            lastStart = ContinuousClock.now
            let response = try await client.get(server.baseURL + "/page/\(index)")
            #expect(response.bodyText == "hello /page/\(index)")
        }

        #expect(server.requestCount == 6)
        // Reused: one connection normally; a loaded machine (the suite runs in parallel) may see
        // libcurl open a second one when the first is not back in its cache yet, never one a request.
        #expect(server.connectionCount <= 2 + idleGaps, "connections: \(server.connectionCount), idle gaps: \(idleGaps)")
    }

    @Test func postSendsTheBodyAndHeaders() async throws {
        let server = try LoopbackServer { request in
            let echoed = "\(request.method) \(request.header("Content-Type") ?? "-") \(request.body.count)"
            return FixtureResponse(status: 201, headers: [("X-Echo", echoed)], body: request.body)
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())
        let body = pseudoRandomBytes(count: 200_000)

        let response = try await client.post(
            server.baseURL + "/submit", body: body, headers: [("Content-Type", "application/octet-stream")])

        #expect(response.status == 201)
        #expect(response.header("x-echo") == "POST application/octet-stream 200000")
        #expect(response.body == body)
    }

    @Test(arguments: [false, true])
    func gzipResponsesAreDecoded(incompressible: Bool) async throws {
        let plain: [UInt8] =
            incompressible
            ? pseudoRandomBytes(count: 300_000)
            : Array(String(repeating: #"{"headline":"Zeroes and runs","word_count":0000000} "#, count: 2000).utf8)
        let server = try LoopbackServer { request in
            let wantsGzip = request.header("Accept-Encoding")?.contains("gzip") ?? false
            let response = FixtureResponse.json(bytes: plain)
            return wantsGzip ? response.gzipped() : .text(status: 406, "gzip was not offered")
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(server.baseURL + "/compressed")

        #expect(response.status == 200)
        #expect(response.header("Content-Encoding") == "gzip")
        #expect(response.body == plain)
    }

    @Test func errorStatusesAreReturnedAsResponses() async throws {
        let server = try LoopbackServer { request in
            switch request.path {
            case "/missing": .notFound()
            case "/broken": .serverError()
            case "/limited": .tooManyRequests()
            case "/denied": .unauthorized()
            default: .htmlError(status: 403)
            }
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let statuses = [("/missing", 404), ("/broken", 500), ("/limited", 429), ("/denied", 401), ("/html", 403)]
        for (path, expected) in statuses {
            let response = try await client.get(server.baseURL + path)
            #expect(response.status == expected)
            #expect(!response.isSuccess)
            #expect(!response.body.isEmpty)
        }
        let limited = try await client.get(server.baseURL + "/limited")
        #expect(limited.header("Retry-After") == nil)
        #expect(limited.bodyText.contains("QuotaViolation"))
    }

    @Test func aTruncatedBodyIsATypedRetryableError() async throws {
        let server = try LoopbackServer { _ in
            FixtureResponse(status: 200, body: pseudoRandomBytes(count: 10_000), fault: .truncateBody(afterBytes: 1000))
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/cut") })

        #expect(error.code == .connectionLost)
        #expect(error.isRetryable)
        #expect(error.curlCode != nil)
    }

    @Test func aConnectionClosedWithoutAResponseIsAnError() async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 200, fault: .closeWithoutResponse) }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/") })

        #expect(error.code == .connectionLost)
    }

    @Test func aBodyStalledMidwayHitsTheLowSpeedTimeout() async throws {
        let server = try LoopbackServer { _ in
            FixtureResponse(
                status: 200, body: pseudoRandomBytes(count: 5000), fault: .stallMidBody(afterBytes: 100, seconds: 30))
        }
        defer { server.stop() }
        var configuration = quickConfiguration()
        // libcurl averages speed over a few seconds, so the limit sits well above what the
        // first 100 bytes contribute; the total timeout is far away.
        configuration.lowSpeedLimit = 1000
        configuration.lowSpeedTime = .seconds(1)
        configuration.totalTimeout = .seconds(30)
        let client = HTTPClient(configuration: configuration)

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/stall") })

        #expect(error.code == .timeout)
        #expect(error.message.contains("too slow"))
        #expect(error.isRetryable)
    }

    @Test func slowHeadersHitTheTotalTimeout() async throws {
        let server = try LoopbackServer { _ in .text("late").with(.slowHeaders(seconds: 30)) }
        defer { server.stop() }
        var configuration = quickConfiguration()
        configuration.totalTimeout = .milliseconds(500)
        let client = HTTPClient(configuration: configuration)

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/slow") })

        #expect(error.code == .timeout)
        // The server got the request and did not answer: the page's failure, not the network's.
        #expect(error.requestSent && error.isUnreadableReply)
    }

    /// Bytes that are not HTTP are a malformed reply (libcurl says "HTTP/0.9"), retried and, for
    /// a fetch, the page's own; not an unsupported protocol, which is not retried.
    @Test func aReplyThatIsNotHTTPIsAMalformedReply() async throws {
        let server = try LoopbackServer { _ in .text("x").with(.notHTTP(Array("THIS IS NOT HTTP\r\n\r\n".utf8))) }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())
        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/x") })
        #expect(error.code == .malformedReply && error.isRetryable && error.isUnreadableReply, "\(error)")
    }

    /// A reply header past libcurl's limit (it says "Out of memory") is a malformed reply, so a
    /// fetch sets that page aside instead of stopping there on every run.
    @Test func aReplyHeaderTooLongIsAMalformedReply() async throws {
        let server = try LoopbackServer { _ in
            FixtureResponse(status: 200, headers: [("X-Long", String(repeating: "a", count: 300_000))], body: Array("{}".utf8))
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())
        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/x") })
        #expect(error.code == .malformedReply && error.isUnreadableReply, "\(error)")
        #expect(error.message.contains("reply header"), "\(error)")
    }

    @Test func redirectsAreFollowedUpToTheLimit() async throws {
        let server = try LoopbackServer { request in
            switch request.path {
            case "/start": .redirect(to: "/final?from=start")
            case "/final": .text("arrived from \(request.queryValue("from") ?? "?")")
            default: FixtureResponse(status: 200, fault: .redirectLoop)
            }
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let followed = try await client.get(server.baseURL + "/start")
        #expect(followed.status == 200)
        #expect(followed.bodyText == "arrived from start")
        #expect(followed.effectiveURL == server.baseURL + "/final?from=start")

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/loop") })
        #expect(error.code == .tooManyRedirects)
        #expect(!error.isRetryable)
    }

    /// A redirect to another port or host is not followed: the URL's query (an API key) went
    /// wherever the server pointed. The same origin is followed, and so is any when allowed.
    @Test func redirectsToAnotherOriginAreNotFollowed() async throws {
        let other = try LoopbackServer { _ in .text("elsewhere") }
        defer { other.stop() }
        let server = try LoopbackServer { request in
            switch request.path {
            case "/away": .redirect(to: other.baseURL + "/landing?api-key=K3y")
            case "/home": .redirect(to: "/there", status: 307)
            default: .text("home")
            }
        }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())
        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/away") })
        #expect(error.code == .crossOriginRedirect && !error.isRetryable, "\(error)")
        #expect(!error.description.contains("K3y"), "\(error)")
        #expect(other.requestCount == 0)
        #expect(try await client.get(server.baseURL + "/home").bodyText == "home")

        var open = quickConfiguration()
        open.crossOriginRedirects = true
        #expect(try await HTTPClient(configuration: open).get(server.baseURL + "/away").bodyText == "elsewhere")
        #expect(other.requestCount == 1)
        // Following none returns the redirect itself.
        var none = quickConfiguration()
        none.maxRedirects = 0
        #expect(try await HTTPClient(configuration: none).get(server.baseURL + "/away").status == 302)
    }

    @Test func redirectsToOtherSchemesAreRefused() async throws {
        let server = try LoopbackServer { _ in .redirect(to: "file:///etc/passwd") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/escape") })

        #expect(error.code == .unsupportedProtocol)
        #expect(server.requestCount == 1)
    }

    @Test func nonHTTPURLsAreRefused() async throws {
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get("file:///etc/passwd") })

        #expect(error.code == .unsupportedProtocol)
    }

    @Test func aFailedTLSHandshakeIsATLSError() async throws {
        // The fixture server speaks plain HTTP and hangs up on a ClientHello.
        let server = try LoopbackServer { _ in .text("plain") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in
                try await client.get("https://127.0.0.1:\(server.port)/secure?api-key=SECRET123")
            })

        #expect(error.code == .tls)
        #expect(!error.isRetryable)
        #expect(!error.description.contains("SECRET123"))
    }

    @Test func aResponseOverTheCapIsRefused() async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 200, body: pseudoRandomBytes(count: 50_000)) }
        defer { server.stop() }
        var configuration = quickConfiguration()
        configuration.maxResponseBytes = 10_000
        let client = HTTPClient(configuration: configuration)

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/big") })

        #expect(error.code == .responseTooLarge)
    }

    @Test func aCompressionBombStopsAtTheCap() async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 200, fault: .gzipBomb(decodedBytes: 256 << 20)) }
        defer { server.stop() }
        var configuration = quickConfiguration()
        configuration.maxResponseBytes = 4 << 20  // the encoded bomb (~1.7 MB) fits; its decoded form does not
        let client = HTTPClient(configuration: configuration)

        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/bomb") })

        #expect(error.code == .responseTooLarge)
        // The message names the limit as a user sets it, in MiB.
        #expect(error.description.contains("4 MiB (4194304 bytes)"), "\(error)")
    }

    @Test func aCompressionBombUnderTheCapDecodesCompletely() async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 200, fault: .gzipBomb(decodedBytes: 1_000_003)) }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(server.baseURL + "/small-bomb")

        #expect(response.body.count == 1_000_003)
        #expect(response.body.allSatisfy { $0 == 0 })
    }

    @Test func aRefusedConnectionIsConnectionFailed() async throws {
        let server = try LoopbackServer { _ in .text("gone") }
        let url = server.baseURL + "/nobody-home"
        server.stop()
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(url) })

        #expect(error.code == .connectionFailed)
        // No request reached a server: the network's failure, never a page's.
        #expect(!error.requestSent && !error.isUnreadableReply)
        #expect(error.isRetryable)
    }

    @Test func cancellingAStalledRequestAbortsIt() async throws {
        // Only the cancel may end this request: the stall and the timeouts outlast any delay of
        // the test's own task on a loaded machine (a 30 s stall ended first once in a full run).
        // The stall ends when the server stops or the client goes away, so it costs nothing.
        let server = try LoopbackServer { _ in
            FixtureResponse(
                status: 200, body: pseudoRandomBytes(count: 5000), fault: .stallMidBody(afterBytes: 10, seconds: 900))
        }
        defer { server.stop() }
        var configuration = quickConfiguration()
        configuration.totalTimeout = .seconds(900)
        configuration.lowSpeedTime = .seconds(900)
        let client = HTTPClient(configuration: configuration)

        let task = Task {
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/stalled") }
        }
        for _ in 0..<500 where server.requestCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server.requestCount == 1)
        task.cancel()
        let error = try #require(await task.value, "the stalled request completed instead of being cancelled")
        #expect(error.code == .cancelled)
        #expect(!error.isRetryable)
    }

    @Test func aRequestInAnAlreadyCancelledTaskIsCancelled() async throws {
        let server = try LoopbackServer { _ in .text("never") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/") }
        }
        let error = try #require(await task.value, "a cancelled task still completed its request")
        #expect(error.code == .cancelled)
    }

    @Test func apiKeysNeverAppearInErrorsOrResponses() async throws {
        let server = try LoopbackServer { request in .text("key seen: \(request.queryValue("api-key") != nil)") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let response = try await client.get(server.baseURL + "/search?q=x&api-key=SECRET123")
        #expect(response.bodyText == "key seen: true")
        #expect(!response.effectiveURL.contains("SECRET123"))
        #expect(response.effectiveURL.contains("api-key=REDACTED"))

        let refused = try LoopbackServer { _ in .text("gone") }
        let deadURL = refused.baseURL + "/search?api-key=SECRET123&q=x"
        refused.stop()
        let error = try #require(await failure { () async throws(HTTPError) in try await client.get(deadURL) })
        #expect(!error.description.contains("SECRET123"))
        #expect(!error.message.contains("SECRET123"))
        #expect(!error.url.contains("SECRET123"))
        #expect(!String(describing: error).contains("SECRET123"))
        #expect(!String(reflecting: error).contains("SECRET123"))
        #expect(error.url.contains("api-key=REDACTED&q=x"))
    }

    @Test func manyConcurrentRequestsAllSucceed() async throws {
        let server = try LoopbackServer { request in .text("item \(request.queryValue("i") ?? "?")") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())

        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<50 {
                group.addTask { (index, try await client.get(server.baseURL + "/item?i=\(index)").bodyText) }
            }
            var bodies: [Int: String] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }

        #expect(bodies.count == 50)
        for index in 0..<50 { #expect(bodies[index] == "item \(index)") }
        #expect(server.requestCount == 50)
    }

    @Test func aShutDownClientRefusesRequests() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        defer { server.stop() }
        let client = HTTPClient(configuration: quickConfiguration())
        #expect(try await client.get(server.baseURL + "/").status == 200)

        client.shutdown()
        let error = try #require(
            await failure { () async throws(HTTPError) in try await client.get(server.baseURL + "/") })

        #expect(error.code == .cancelled)
    }

    @Test func headersWithLineBreaksAreRejected() async throws {
        let client = HTTPClient(configuration: quickConfiguration())

        let error = try #require(
            await failure { () async throws(HTTPError) in
                try await client.get("http://127.0.0.1:9/", headers: [("X-Injected", "a\r\nHost: evil")])
            })

        #expect(error.code == .invalidRequest)
    }

    @Test func disablingTLSVerificationShowsInTheDescription() {
        var configuration = HTTPClientConfiguration()
        #expect(configuration.verifyTLS)
        #expect(configuration.description.contains("TLS verification: on"))
        configuration.verifyTLS = false
        #expect(configuration.description.contains("TLS verification: OFF"))
    }
}
