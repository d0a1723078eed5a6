import Foundation
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import Testing

@Suite struct SecretTests {
    /// Every way a run can fail, each with the key in the request URL.
    static let faults: [FixtureAPIFault?] = [
        .rateLimited, .serverError, .unauthorized, .badRequest, .htmlForbidden, .dropConnectionMidBody, .truncatedJSON,
        .malformedJSON, nil,
    ]

    @Test(arguments: faults)
    func theKeyNeverAppearsInErrorsEventsOrStoredData(fault: FixtureAPIFault?) async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 25
            if let fault { $0.faults = [.init(.nytPage(1), fault)] }
        }
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let source = nytSource(api)
        let error = await runExpectingFailure(makeService(), source, into: sink, progress: log)
        // A page that fails for good is set aside (its error in a progress event) and the run
        // goes on; the others stop it.
        let setAside: [FixtureAPIFault?] = [.serverError, .badRequest, .htmlForbidden, .dropConnectionMidBody, .truncatedJSON, .malformedJSON]
        #expect((error == nil) == (fault == nil || setAside.contains(fault)))
        #expect(log.all.contains { if case .skipped = $0 { true } else { false } } == setAside.contains(fault))

        var texts = [String(describing: source), String(reflecting: source), source.sourceID]
        if let error {
            texts += [error.description, error.message, error.location.description, "\(error)", String(reflecting: error)]
            if let cause = error.cause { texts.append(String(describing: cause)) }
            var dumped = ""
            dump(error, to: &dumped)
            texts.append(dumped)
        }
        texts += log.all.map { String(describing: $0) }
        texts.append(try everythingStored(in: sink))
        for text in texts { #expect(!text.contains(testKey), "leaked in: \(text.prefix(200))") }
        // The request really carried the key (the server accepted it for page 0).
        #expect(sink.commitCount >= 1)
    }

    @Test func aKeyEchoedByTheServerIsScrubbedFromTheError() async throws {
        // A hostile server repeating the whole request, key included, in its error body.
        let server = try LoopbackServer { request in
            .json(status: 400, body: #"{"status":"ERROR","errors":["bad key "# + (request.queryValue("api-key") ?? "") + #""]}"#)
        }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let error = try #require(await runExpectingFailure(makeService(), source, into: InMemoryFetchSink()))
        #expect(error.code == .badRequest)
        #expect(!error.description.contains(testKey))
        #expect(error.description.contains(URLRedaction.placeholder))
    }

    /// A server echoing the key into its documents: the stored articles, their raw copies and
    /// the page's rejects hold none of it, and mapping the raw copies again gives the same
    /// articles (nothing becomes another article).
    @Test func aKeyEchoedIntoDocumentsIsStoredNowhere() async throws {
        let server = try LoopbackServer { request in
            let key = request.queryValue("api-key") ?? ""
            let doc = #"{"_id":"a1","web_url":"https://x/a1?api-key="# + key + #"","headline":{"main":"Key "# + key + #""}}"#
            let odd = #"{"_id":"a2","pub_date":17,"abstract":""# + key + #""}"#
            // As HTML character references, which mapping decodes into the key itself.
            let references = key.removingPercentEncoding!.unicodeScalars.map { "&#\($0.value);" }.joined()
            let spelled = #"{"_id":"a3","abstract":"Ref "# + references + #""}"#
            return .json(
                status: 200, body: #"{"status":"OK","response":{"docs":["# + doc + "," + odd + "," + spelled + #"],"meta":{"hits":3}}}"#)
        }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        _ = try await makeService().run(source, into: sink)
        var stored = try everythingStored(in: sink)
        for page in sink.committedPages { stored += page.rejects.map { String(decoding: $0.rawDocument, as: UTF8.self) }.joined() }
        #expect(!URLRedaction.containsSecret(testKey, in: stored), "\(stored.prefix(500))")
        #expect(sink.articles.map(\.id) == ["a1", "a3"] && sink.articles.first?.headline == "Key \(URLRedaction.placeholder)")
        #expect(sink.articles.last?.abstract == "Ref \(URLRedaction.placeholder)")
    }

    /// Mapping removes highlight tags and decodes escapes, which joins a key the body held only
    /// in pieces (`SeC<strong>rEt…</strong>`): it was stored whole. The mapped text is scrubbed too.
    @Test func aKeyJoinedByMappingIsStoredNowhere() async throws {
        let split = testKey.prefix(3) + "<strong>" + testKey.dropFirst(3) + "</strong>"
        let server = try LoopbackServer { _ in
            .json(body: #"{"status":"OK","response":{"docs":[{"_id":"a1","headline":{"main":"Key "# + split
                + #""},"snippet":"<b>"# + split + #"</b>"}],"meta":{"hits":1}}}"#)
        }
        defer { server.stop() }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        _ = try await makeService().run(source, into: sink)
        let stored = try everythingStored(in: sink)
        #expect(!URLRedaction.containsSecret(testKey, in: stored), "\(stored.prefix(500))")
        #expect(sink.articles.first?.headline == "Key \(URLRedaction.placeholder)")
    }

    @Test(arguments: ["lowercased", "uppercased", "percent-encoded", "json-escaped"])
    func aKeyEchoedInAnotherFormIsScrubbedFromTheError(form: String) async throws {
        let server = try LoopbackServer { request in
            let key = request.queryValue("api-key") ?? ""
            let echoed: String
            switch form {
            case "lowercased": echoed = key.lowercased()
            case "uppercased": echoed = key.uppercased()
            case "percent-encoded": echoed = key.utf8.map { "%" + String($0, radix: 16) }.joined()
            default: echoed = key.utf8.map { "\\u00" + String($0, radix: 16) }.joined()
            }
            return .json(status: 400, body: #"{"status":"ERROR","errors":["bad key "# + echoed + #""]}"#)
        }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let error = try #require(await runExpectingFailure(makeService(), source, into: InMemoryFetchSink()))
        #expect(error.code == .badRequest)
        for text in [error.description, String(reflecting: error), error.cause.map { "\($0)" } ?? ""] {
            #expect(!URLRedaction.containsSecret(testKey, in: text), "leaked in: \(text.prefix(300))")
        }
        #expect(error.description.contains(URLRedaction.placeholder))
    }

    @Test func theKeyIsHiddenInItsOwnDescriptions() {
        let key = APIKey(testKey)
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(reflecting: key), dumped] { #expect(!text.contains(testKey)) }
        #expect(key.value == testKey)
    }
}
