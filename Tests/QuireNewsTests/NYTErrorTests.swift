import QuireFixtures
import QuireNews
import Testing

@Suite struct NYTErrorTests {
    func error(_ body: [UInt8]) -> NewsMappingError? {
        do {
            _ = try NYTArticleSearch.parsePage(body)
            return nil
        } catch {
            return error
        }
    }

    @Test func errorBodiesGiveTypedErrors() throws {
        #expect(error(NYTErrorBody.invalidKey.body)?.kind == .apiFault(message: "Invalid ApiKey", code: "oauth.v2.InvalidApiKey"))
        #expect(error(NYTErrorBody.missingKey.body)?.kind == .apiFault(
            message: "Failed to resolve API Key variable request.queryparam.api-key", code: "steps.oauth.v2.FailedToResolveAPIKey"))
        let limited = try #require(error(NYTErrorBody.rateLimited.body))
        guard case .apiFault(let message, let code) = limited.kind else { Issue.record("\(limited)"); return }
        #expect(message.hasPrefix("Rate limit quota violation. Quota limit  exceeded."))
        #expect(code == "policies.ratelimit.QuotaViolation")
        #expect(error(NYTErrorBody.badRequest.body)?.kind == .apiError(messages: [#"error in fq: Cannot parse 'section_name:("Sports'"#]))
        #expect(error(NYTErrorBody.forbiddenHTML.body)?.kind == .html)
        #expect(error(NYTErrorBody.serverError.body)?.kind == .apiError(messages: ["Internal Server Error", "No message available"]))
        #expect(error(Array("<h1>Developer Over Rate</h1>".utf8))?.kind == .html)
        #expect(error(Array(#"{"status":"ERROR","errors":["Invalid Date: 2012","Not Found"],"results":[]}"#.utf8))?.kind
            == .apiError(messages: ["Invalid Date: 2012", "Not Found"]))
        #expect(error([])?.kind == .emptyBody)
        // An empty `errors` beside a success is no error: the page was refused as "no message".
        let ok = #"{"status":"OK","errors":[],"response":{"docs":[{"_id":"a1","pub_date":"2012-01-01T00:00:00Z"}],"meta":{"hits":1}}}"#
        #expect(try NYTArticleSearch.parsePage(Array(ok.utf8)).articles.map(\.id) == ["a1"])
        #expect(error(Array(#"{"status":"OK","errors":["quota"],"response":{"docs":[]}}"#.utf8))?.kind == .apiError(messages: ["quota"]))
    }

    /// The page's rejects, or the envelope error.
    func rejects(_ body: [UInt8]) throws -> [NewsMappingError] {
        try NYTArticleSearch.parsePage(body).rejects.map(\.error)
    }

    @Test func badPubDateIsQuarantinedWithItsPathAndTheRestMaps() throws {
        var docs = (0..<5).map { _ in doc(#""pub_date":"2012-01-01T18:46:02Z""#) }
        docs[3] = doc(#""pub_date":"2012-13-45T18:46:02Z""#)
        let parsed = try NYTArticleSearch.parsePage(page(docs))
        #expect(parsed.articles.count == 4)
        let failure = try #require(parsed.rejects.first)
        #expect(parsed.rejects.count == 1 && failure.index == 3)
        #expect(failure.error.kind == .invalidDate("2012-13-45T18:46:02Z"))
        #expect(failure.error.path == "response.docs[3].pub_date")
        #expect(failure.error.description.contains("response.docs[3].pub_date"))
        #expect(String(decoding: failure.rawDocument, as: UTF8.self).contains("2012-13-45T18:46:02Z"))
    }

    /// A reject's message quotes at most 200 characters of the value (a 1 MiB date made a 1 MiB
    /// line on stderr and in `quire rejects`); the kept document holds it whole.
    @Test func aRejectsMessageQuotesALongValueCut() throws {
        let long = String(repeating: "D", count: 1 << 20)
        let parsed = try NYTArticleSearch.parsePage(page([doc(#""pub_date":"\#(long)""#)]))
        let failure = try #require(parsed.rejects.first)
        #expect(failure.error.kind == .invalidDate(long))
        let message = failure.error.description
        #expect(message.count < 300 && message.contains("… (1048376 more characters)") && message.hasPrefix("response.docs[0].pub_date: not a date: \"DDD"))
        #expect(failure.rawDocument.count > 1 << 20)
        let shortMessage = NewsMappingError(.invalidValue("Ünïcödé 🎉"), at: [.key("x")]).description
        #expect(shortMessage == "x: invalid value: Ünïcödé 🎉")
    }

    @Test(arguments: [
        (#"{"response":{"docs":{}}}"#, NewsMappingError.Kind.typeMismatch(expected: "array", found: "object"), "response.docs"),
        (#"{"status":"OK"}"#, .missingField, "response"),
        (#"{"response":{"meta":{"hits":1}}}"#, .missingField, "response.docs"),
        (#"[1,2]"#, .typeMismatch(expected: "object", found: "array"), ""),
    ])
    func brokenEnvelopesNameTheirPath(text: String, kind: NewsMappingError.Kind, path: String) throws {
        let failure = try #require(error(Array(text.utf8)))
        #expect(failure.kind == kind)
        #expect(failure.path == path)
    }

    @Test(arguments: [
        (#"{"response":{"docs":[{"_id":"a","web_url":"u"},"x"]}}"#, NewsMappingError.Kind.typeMismatch(expected: "object", found: "string"), "response.docs[1]"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u"},{"headline":{"main":"no identity"}}]}}"#, .missingAll(["_id", "uri", "web_url"]), "response.docs[1].web_url"),
        // An id of white space only names no article (it was stored under "   ").
        (#"{"response":{"docs":[{"_id":"a","web_url":"u"},{"_id":"   ","uri":"\t","web_url":"\u00a0"}]}}"#, .missingAll(["_id", "uri", "web_url"]), "response.docs[1].web_url"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u"},{"_id":17,"web_url":"u"}]}}"#, .typeMismatch(expected: "string", found: "number"), "response.docs[1]._id"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","word_count":"many"}]}}"#, .invalidValue(#""many" is not an integer"#), "response.docs[0].word_count"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","keywords":[{"name":"s","value":"v","rank":"x1"}]}]}}"#, .invalidValue(#""x1" is not an integer"#), "response.docs[0].keywords[0].rank"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","word_count":"99999999999999999999"}]}}"#, .invalidValue(#""99999999999999999999" is too large for a whole number"#), "response.docs[0].word_count"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","word_count":99999999999999999999}]}}"#, .invalidValue("1e+20 is too large for a whole number"), "response.docs[0].word_count"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","word_count":"-"}]}}"#, .invalidValue(#""-" is not an integer"#), "response.docs[0].word_count"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","word_count":2.5}]}}"#, .invalidValue("2.5 is not an integer"), "response.docs[0].word_count"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","multimedia":"img"}]}}"#, .typeMismatch(expected: "array or object", found: "string"), "response.docs[0].multimedia"),
        (#"{"response":{"docs":[{"_id":"a","web_url":"u","pub_date":17}]}}"#, .typeMismatch(expected: "date string", found: "number"), "response.docs[0].pub_date"),
    ])
    func unmappableDocumentsAreRejectedWithTheirPath(text: String, kind: NewsMappingError.Kind, path: String) throws {
        let failures = try rejects(Array(text.utf8))
        #expect(failures.map(\.kind) == [kind])
        #expect(failures.map(\.path) == [path])
    }

    @Test func oddButMappableDocumentsAreStoredWithAbsentValues() throws {
        let text = #"""
            {"response":{"docs":[
              {"_id":"a"},
              {"_id":"  ","web_url":"https://www.nytimes.com/x.html","headline":{"main":"","print_headline":"  Printed <strong>Title</strong> "}},
              {"uri":"nyt://article/u","headline":"flat","pub_date":null,"abstract":null,"snippet":""},
              {"_id":"b","byline":{"original":null,"person":[{"firstname":"Ann","lastname":"Lee"},{"firstname":"Bo","lastname":"Ng"}]}},
              {"_id":"c","byline":{"person":[],"organization":"Reuters"}},
              {"_id":"d","headline":{"main":null,"print_headline":null,"seo":"SEO &amp; Headline","name":"Name"},"byline":{"person":[{"firstname":"Bob","middlename":"Q.","lastname":"Jones","qualifier":"Jr."}]}},
              {"_id":"e","headline":{"main":"","name":"Only a name"},"byline":{"person":[{"organization":"Reuters","role":"reported","rank":1}]},"keywords":[{"name":"subject","value":"Caf&eacute; Culture","rank":"1"}]}
            ]}}
            """#
        let parsed = try NYTArticleSearch.parsePage(Array(text.utf8))
        #expect(parsed.rejects.isEmpty)
        #expect(parsed.articles.map(\.id) == ["a", "https://www.nytimes.com/x.html", "nyt://article/u", "b", "c", "d", "e"])
        #expect(parsed.articles[0].url == nil && parsed.articles[0].headline == nil && parsed.articles[0].publishedAt == nil)
        #expect(parsed.articles[1].headline == "Printed Title")
        #expect(parsed.articles[2].headline == "flat" && parsed.articles[2].abstract == nil && parsed.articles[2].snippet == nil)
        #expect(parsed.articles[3].byline == "By Ann Lee and Bo Ng" && parsed.articles[3].authors == ["Ann Lee", "Bo Ng"])
        #expect(parsed.articles[4].byline == "By Reuters" && parsed.articles[4].authors == ["Reuters"])
        // A headline only in its SEO or name field, a qualifier, an agency listed as a person and a
        // keyword's character references: all were lost or kept raw.
        #expect(parsed.articles[5].headline == "SEO & Headline" && parsed.articles[6].headline == "Only a name")
        #expect(parsed.articles[5].byline == "By Bob Q. Jones Jr." && parsed.articles[5].authors == ["Bob Q. Jones Jr."])
        #expect(parsed.articles[6].byline == "By Reuters" && parsed.articles[6].authors == ["Reuters"])
        #expect(parsed.articles[6].keywords?.map(\.value) == ["Café Culture"])
    }

    @Test func truncatedPageNamesWhereItStopped() throws {
        var generator = ArticleGenerator(seed: 3)
        let body = nytPageBody(articles: generator.articles(count: 10), hits: 10, page: 0, era: .era2019)
        let failure = try #require(error(Array(body[..<(body.count * 3 / 4)])))
        #expect(failure.kind == .truncated(offset: body.count * 3 / 4))
        #expect(failure.path.hasPrefix("response.docs["))
    }
}
