import Foundation
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews
import Synchronization
import Testing

@Suite struct FaultTests {
    @Test func rateLimitBurstBacksOffTwelveSecondsThenSucceeds() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 25
            $0.faults = [.init(.nytPage(1), .rateLimited, times: 2)]
        }
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let summary = try await makeService(clock: clock).run(nytSource(api), into: sink, progress: log.handler)

        #expect(clock.sleptSeconds == [12, 12])
        #expect(summary.retries == 2)
        #expect(summary.backoffSeconds == 24)
        #expect(sink.articles.count == 25)
        #expect(api.requestCount == 5)
        let retries = log.all.compactMap { event -> Int? in
            if case .retrying(.rateLimited, let attempt, _) = event { return attempt }
            return nil
        }
        #expect(retries == [2, 3])
    }

    @Test func aJobThatWaitsForTheQuotaBacksOffFurtherAndHonoursRetryAfter() async throws {
        let served = Mutex(0)
        let server = try LoopbackServer { _ in
            let number = served.withLock { count in
                count += 1
                return count
            }
            if number <= 4 {
                // The last refusal names its own wait, longer than the back-off.
                let headers = number == 4 ? [("Retry-After", "300")] : []
                return FixtureResponse(status: 429, headers: headers, body: NYTErrorBody.rateLimited.body)
            }
            return .json(body: #"{"status":"OK","response":{"docs":[{"_id":"a"}],"meta":{"hits":1,"offset":0}}}"#)
        }
        var policy = exactRetries()
        policy.waitForQuota = true
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let summary = try await makeService(clock: clock, retryPolicy: policy).run(source, into: sink)
        #expect(clock.sleptSeconds == [12, 24, 48, 300])
        #expect(summary.articles == 1 && sink.articles.map(\.id) == ["a"])
    }

    /// A proxy that turns the gateway's 429 into a 200 keeps its fault body: waited out and
    /// retried, not a page set aside that stopped the run.
    @Test func aRateLimitFaultWithASuccessStatusIsWaitedOut() async throws {
        let requests = Mutex(0)
        let server = try LoopbackServer { _ in
            let number = requests.withLock { count in
                count += 1
                return count
            }
            if number <= 2 { return .json(body: String(decoding: NYTErrorBody.rateLimited.body, as: UTF8.self)) }
            return .json(body: #"{"status":"OK","response":{"docs":[{"_id":"a"}],"meta":{"hits":1,"offset":0}}}"#)
        }
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let summary = try await makeService(clock: clock, retryPolicy: exactRetries()).run(source, into: sink)
        // The waits of a 429's (FaultTests' first test).
        #expect(clock.sleptSeconds == [12, 12])
        #expect(summary.articles == 1 && summary.setAside == 0 && sink.articles.map(\.id) == ["a"])
        // Any other fault with a 200 is still a page that cannot be mapped.
        let other = try LoopbackServer { _ in .json(body: #"{"fault":{"faultstring":"Invalid ApiKey","detail":{"errorcode":"oauth.v2.InvalidApiKey"}}}"#) }
        let failed = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: other.baseURL + "/s")
        let error = try #require(await runExpectingFailure(makeService(clock: TestClock()), failed, into: InMemoryFetchSink()))
        #expect(error.code == .mapping && error.description.contains("Invalid ApiKey"), "\(error)")
    }

    /// A reply over the size cap stops the run; its message names the request and the curl
    /// code once (both were said twice).
    @Test func aResponseOverTheCapNamesItsRequestOnce() async throws {
        let server = try LoopbackServer { _ in .json(body: String(repeating: " ", count: 50_000)) }
        var configuration = HTTPClientConfiguration()
        configuration.maxResponseBytes = 10_000
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let service = makeService(client: HTTPClient(configuration: configuration))
        let error = try #require(await runExpectingFailure(service, source, into: InMemoryFetchSink()))
        let text = error.description
        #expect(error.code == .transport && text.contains("response too large"), "\(text)")
        #expect(text.components(separatedBy: server.baseURL).count == 2, "\(text)")
        #expect(text.components(separatedBy: "curl ").count == 2 && !text.contains(testKey), "\(text)")
    }

    @Test func theOldGatewaysDeveloperOverRateIsARateLimitNotAnAuthenticationFailure() async throws {
        let server = try LoopbackServer { _ in
            FixtureResponse(
                status: 403, headers: [("Content-Type", "text/xml"), ("X-Mashery-Error-Code", "ERR_403_DEVELOPER_OVER_RATE")],
                body: Array("<h1>Developer Over Rate</h1>".utf8))
        }
        let clock = TestClock()
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let error = try #require(await runExpectingFailure(makeService(clock: clock), source, into: InMemoryFetchSink()))
        #expect(error.code == .rateLimited)
        #expect(error.description.contains("quota likely exhausted") && error.description.contains("resume later"))
        #expect(clock.sleptSeconds == [12, 12])
    }

    @Test func jitterIsSeededAndBounded() async throws {
        var policy = RetryPolicy()
        policy.jitter = 0.2
        var a = JitterRandom(seed: 7)
        var b = JitterRandom(seed: 7)
        for attempt in 1...4 {
            let first = try #require(policy.delay(after: .rateLimited, failedAttempts: attempt, random: &a))
            let second = try #require(policy.delay(after: .rateLimited, failedAttempts: attempt, random: &b))
            #expect(first == second)
                // A rate-limit wait never drops below the API's 12 s; jitter only lengthens it.
            let seconds = Double(first.components.seconds) + Double(first.components.attoseconds) / 1e18
            #expect(seconds >= 12 && seconds <= 12 * 1.2)
            var c = JitterRandom(seed: UInt64(attempt))
            let transient = try #require(policy.delay(after: .serverError(500), failedAttempts: min(attempt, 3), random: &c))
            let base = Double(1 << (min(attempt, 3) - 1))
            let transientSeconds = Double(transient.components.seconds) + Double(transient.components.attoseconds) / 1e18
            #expect(transientSeconds >= base * 0.8 && transientSeconds <= base * 1.2)
        }
        #expect(policy.delay(after: .rateLimited, failedAttempts: 5, random: &a) == nil)
        var capped = RetryPolicy()
        capped.jitter = 0
        capped.waitForQuota = true
        #expect(capped.delay(after: .rateLimited, failedAttempts: 10, random: &a) == .seconds(120))
    }

    @Test func serverErrorsAreRetriedThenSucceed() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 15
            $0.faults = [.init(.nytPage(0), .serverError, times: 2)]
        }
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let summary = try await makeService(clock: clock).run(nytSource(api), into: sink)
        #expect(clock.sleptSeconds == [1, 2])
        #expect(summary.retries == 2)
        #expect(sink.articles.count == 15)
    }

    /// Three pages in a row failing after their retries look like an outage: the first two are
    /// set aside (the checkpoint past them, nothing of them stored) and the third stops the run.
    @Test func exhaustedRetriesStopWithATypedErrorAndCommitNothingOfThatPage() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 55
            $0.faults = (1...3).map { .init(.nytPage($0), .serverError) }
        }
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .serverError)
        #expect(error.httpStatus == 500)
        #expect(error.attempts == 4)
        #expect(error.code.isNetworkFailure)
        #expect(sink.commitCount == 3)  // page 0, then the checkpoint past each page set aside
        #expect(sink.articles.count == 10)
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
        #expect(checkpoint.nextPage == 3)
        #expect(checkpoint.setAsidePages.map(\.page) == [1, 2])
    }

    /// One NYT page that fails for good while its neighbours work (an HTML 403: API_NOTES §1)
    /// is set aside and the walk goes on; the next run fetches it alone, and then the query is
    /// done. It stopped every run at that page, for ever.
    @Test func aPageThatFailsForGoodIsSetAsideAndFetchedByTheNextRun() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 45
            $0.faults = [.init(.nytPage(1), .htmlForbidden, times: 1)]
        }
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let first = try await makeService(clock: TestClock(start: start)).run(nytSource(api), into: sink, progress: log.handler)
        #expect(first.isComplete && first.skipped == 1 && first.setAside == 1 && first.pages == 4 && first.articles == 35, "\(first)")
        #expect(log.all.contains { if case .skipped(let label, _) = $0 { label.hasPrefix("page 1") } else { false } })
        // A month later: the set-aside page alone.
        let later = TestClock(start: start.addingTimeInterval(30 * 86_400))
        let second = try await makeService(clock: later).run(nytSource(api), into: sink)
        #expect(second.isComplete && second.skipped == 0 && second.setAside == 0 && second.pages == 1 && second.articles == 10, "\(second)")
        #expect(Set(sink.articles.map(\.id)).count == 45)
        // The walk's time is kept: a --refresh starts from it, not from the retry's.
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
        #expect(checkpoint.setAsidePages.isEmpty && checkpoint.retryQueue == nil)
        #expect(try #require(checkpoint.completedAt) < start.addingTimeInterval(86_400))
        let third = try await makeService(clock: later).run(nytSource(api), into: sink)
        #expect(third.alreadyComplete)
    }

    /// A page whose body always arrives cut short of its declared length (the connection drops
    /// mid-body, every attempt) is the page's failure, set aside like a body that cannot be read:
    /// it stopped every run of the query at that page.
    @Test func aPageAlwaysCutShortIsSetAside() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 45
            $0.faults = [.init(.nytPage(1), .dropConnectionMidBody)]
        }
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(nytSource(api), into: sink)
        #expect(first.isComplete && first.skipped == 1 && first.pages == 4 && first.articles == 35, "\(first)")
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
        #expect(checkpoint.setAsidePages.map(\.page) == [1])
    }

    /// An NYT query of 25 results in three pages (10, 10, 5 documents), page 1's reply passed
    /// through `page1` (a fault of that page alone).
    private func threePageServer(page1: @escaping @Sendable (FixtureResponse) -> FixtureResponse) throws -> LoopbackServer {
        try LoopbackServer { request in
            let page = Int(request.queryValue("page") ?? "0") ?? 0
            let docs = (0..<(page == 2 ? 5 : 10)).map { #"{"_id":"p\#(page)-\#($0)","pub_date":"2020-01-01T00:00:00Z"}"# }
            let response = FixtureResponse.json(
                body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":25,"offset":\#(page * 10)}}}"#)
            return page == 1 ? page1(response) : response
        }
    }

    /// A page whose body cannot be decoded (a gzip header over plain bytes: a proxy's fault) is
    /// set aside like one cut short; it stopped every run of the query at that page.
    @Test func aPageWhoseEncodingCannotBeDecodedIsSetAside() async throws {
        let server = try threePageServer { page1 in
            var response = page1
            response.headers.append(("Content-Encoding", "gzip"))
            return response
        }
        defer { server.stop() }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let summary = try await makeService().run(source, into: sink, progress: log.handler)
        #expect(summary.isComplete && summary.skipped == 1 && summary.pages == 2 && summary.articles == 15, "\(summary)")
        let skipped = log.all.compactMap { event -> String? in
            if case .skipped(_, let message) = event { return message } else { return nil }
        }
        #expect(skipped.count == 1 && skipped[0].contains("undecodable body"), "\(skipped)")
    }

    /// A later page refused with the API's 400 envelope (the older spec's `page: must be less
    /// than or equal to 10` while `hits` announced more) is that page's failure, set aside; it
    /// stopped every run of the query at that page.
    @Test func aLaterPageRefusedWith400IsSetAside() async throws {
        let server = try threePageServer { _ in
            .json(status: 400, body: #"{"status":"ERROR","copyright":"c","errors":["page: must be less than or equal to 0"]}"#)
        }
        defer { server.stop() }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let log = ProgressLog()
        let summary = try await makeService().run(source, into: InMemoryFetchSink(), progress: log.handler)
        #expect(summary.isComplete && summary.skipped == 1 && summary.pages == 2 && summary.articles == 15, "\(summary)")
        #expect(log.all.contains { if case .skipped(_, let message) = $0 { message.contains("less than or equal") } else { false } })
    }

    /// A server that answers three pages a window and refuses every later one with a 400 (an
    /// older spec's cap of 10) while `hits` announces more: the walk learns the cap from two
    /// refusals in a row and narrows its windows to fit, so one run stores every result. It set
    /// every page past the cap aside, two a run, each run ending in an error.
    @Test func aServerThatCapsItsPagesIsWalkedInWindowsThatFit() async throws {
        // Ten articles a day over twelve days, dated by the request's window.
        let server = try LoopbackServer { request in
            let page = Int(request.queryValue("page") ?? "0") ?? 0
            guard page < 3 else {
                return .json(status: 400, body: #"{"status":"ERROR","copyright":"c","errors":["page: must be less than or equal to 2"]}"#)
            }
            let begin = Int(request.queryValue("begin_date") ?? "20200101").map { $0 % 100 } ?? 1
            let end = Int(request.queryValue("end_date") ?? "20200112").map { $0 % 100 } ?? 12
            let ids = (max(1, begin)...min(12, end)).flatMap { day in (0..<10).map { "d\(day)-\($0)" } }
            let docs = ids.dropFirst(page * 10).prefix(10).map { id in
                let day = id.dropFirst().prefix { $0 != "-" }
                return #"{"_id":"\#(id)","pub_date":"2020-01-\#(day.count == 1 ? "0" + day : day)T12:00:00Z"}"#
            }
            return .json(body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":\#(ids.count),"offset":\#(page * 10)}}}"#)
        }
        defer { server.stop() }
        let query = NYTQuery(query: "x", begin: day("2020-01-01"), end: day("2020-01-12"), sort: .oldest)
        let source = NYTSource(query: query, key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let summary = try await makeService().run(source, into: sink, progress: log.handler)
        #expect(summary.isComplete && summary.setAside == 0 && summary.skipped == 0 && summary.rerouted == 1, "\(summary)")
        #expect(summary.unreachable == 0, "\(summary)")
        #expect(Set(sink.articles.map(\.id)).count == 120, "\(summary)")
        #expect(log.all.contains { if case .rerouted(_, let message) = $0 { message.contains("less than or equal") && message.contains("not retried") } else { false } })
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
        #expect(checkpoint.learnedPageCap == 3 && checkpoint.setAsidePages.isEmpty)
    }

    /// A page over the response size limit (one document of 33 MiB, a few KB compressed) is that
    /// page's failure, set aside; it stopped every run of the query at that page.
    @Test func aPageOverTheSizeLimitIsSetAside() async throws {
        let server = try threePageServer { page1 in
            var response = page1
            response.body = Array(#"{"status":"OK","response":{"docs":[{"_id":"big","abstract":""#.utf8)
                + [UInt8](repeating: UInt8(ascii: "a"), count: 20_000) + Array(#""}],"meta":{"hits":25}}}"#.utf8)
            return response
        }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maxResponseBytes = 16_384
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let log = ProgressLog()
        let summary = try await makeService(client: HTTPClient(configuration: configuration))
            .run(source, into: InMemoryFetchSink(), progress: log.handler)
        #expect(summary.isComplete && summary.skipped == 1 && summary.pages == 2 && summary.articles == 15, "\(summary)")
        #expect(log.all.contains { if case .skipped(_, let message) = $0 { message.contains("too large") } else { false } })
    }

    /// A page whose server closes without a reply, or never answers in time, while its
    /// neighbours work, is set aside too: one Feedzilla category that never answered kept every
    /// other category from being fetched, on every run.
    @Test(arguments: [Fault.closeWithoutResponse, .slowHeaders(seconds: 2), .notHTTP(Array("THIS IS NOT HTTP\r\n".utf8))])
    func aPageThatIsNeverAnsweredIsSetAside(fault: Fault) async throws {
        let server = try threePageServer { $0.with(fault) }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.totalTimeout = .milliseconds(300)
        let service = makeService(client: HTTPClient(configuration: configuration))
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let summary = try await service.run(source, into: InMemoryFetchSink())
        #expect(summary.isComplete && summary.skipped == 1 && summary.pages == 2 && summary.articles == 15, "\(summary)")
    }

    /// A walk resumed after a page was set aside, completed by a later run: that run says the
    /// page is still set aside (it said "complete, nothing skipped" while ten results were missing).
    @Test func theRunThatCompletesAResumedWalkSaysWhatItSetAside() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 45
            $0.faults = [.init(.nytPage(1), .htmlForbidden, times: 1)]
        }
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(nytSource(api), into: sink, pageLimit: 2)
        #expect(!first.isComplete && first.skipped == 1 && first.setAside == 1, "\(first)")
        let second = try await makeService().run(nytSource(api), into: sink)
        #expect(second.isComplete && second.skipped == 0 && second.setAside == 1 && second.pages == 3, "\(second)")
        let third = try await makeService().run(nytSource(api), into: sink)
        #expect(third.isComplete && third.setAside == 0 && third.pages == 1, "\(third)")
    }

    /// A single day with more results than the page cap, fetched over two runs: the run that
    /// completes the walk says how many results were out of reach (it said none).
    @Test func theRunThatCompletesAResumedWalkSaysWhatIsUnreachable() async throws {
        let server = try LoopbackServer { request in
            let page = Int(request.queryValue("page") ?? "0") ?? 0
            let docs = (0..<10).map { #"{"_id":"d\#(page)-\#($0)","pub_date":"2019-06-15T00:00:00Z"}"# }
            return .json(body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":2000,"offset":\#(page * 10)}}}"#)
        }
        defer { server.stop() }
        let query = NYTQuery(query: "x", begin: day("2019-06-15"), end: day("2019-06-15"))
        let source = NYTSource(query: query, key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(source, into: sink, pageLimit: 3)
        #expect(!first.isComplete && first.unreachable == 1_000, "\(first)")
        let second = try await makeService().run(source, into: sink)
        #expect(second.isComplete && second.resumed && second.unreachable == 1_000, "\(second)")
    }

    /// Pages set aside far apart in the walk that fail again in the run that retries them are
    /// no outage: all stay set aside and the run ends (three of them stopped every other run;
    /// two refused and then one cut short stopped it as three failures of the transfer).
    @Test(arguments: [false, true])
    func setAsidePagesThatFailAgainStaySetAside(lastCutShort: Bool) async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 65
            $0.faults = [1, 3, 5].map { .init(.nytPage($0), lastCutShort && $0 == 5 ? .dropConnectionMidBody : .htmlForbidden) }
        }
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(nytSource(api), into: sink)
        #expect(first.isComplete && first.skipped == 3 && first.articles == 35, "\(first)")
        let again = try await makeService().run(nytSource(api), into: sink)
        #expect(again.isComplete && again.skipped == 3 && again.pages == 0, "\(again)")
        let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
        #expect(checkpoint.isFinished && checkpoint.setAsidePages.map(\.page) == [1, 3, 5])
    }

    /// A run over set-aside pages that ends in an outage still counts every page set aside:
    /// those that failed again, the one it stopped at and those it had not asked again (it
    /// counted only the first, two of four).
    @Test func aRetryRunCutShortCountsThePagesItDidNotAsk() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 85
            $0.faults = [1, 3, 5, 7].map { .init(.nytPage($0), .dropConnectionMidBody) }
        }
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(nytSource(api), into: sink)
        #expect(first.isComplete && first.setAside == 4, "\(first)")
        let error = await runExpectingFailure(makeService(), nytSource(api), into: sink)
        #expect(error?.code == .transport)
        #expect(error?.committed.setAside == 4 && error?.committed.isComplete == false, "\(String(describing: error?.committed))")
    }

    /// A `--refresh` after a walk that set a page aside retries the page and then refreshes, in
    /// one run: the retry alone ran, so a page failing for good starved every refresh (new
    /// articles never came, status 0). The page stays set aside for the next run.
    @Test func aRefreshGoesOnPastAPageThatFailsForGood() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 45
            $0.faults = [.init(.nytPage(1), .htmlForbidden)]
        }
        let sink = InMemoryFetchSink()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let first = try await makeService(clock: TestClock(start: start)).run(nytSource(api), into: sink)
        #expect(first.isComplete && first.skipped == 1 && first.articles == 35, "\(first)")
        for run in 1...2 {
            let later = TestClock(start: start.addingTimeInterval(Double(run) * 30 * 86_400))
            let refresh = try await makeService(clock: later).run(nytSource(api), into: sink, mode: .refresh)
            // The page retried (and refused), then the refresh's own walk: at least its first page.
            #expect(refresh.isComplete && refresh.skipped == 1 && refresh.pages >= 1, "run \(run): \(refresh)")
            let checkpoint = try JSONDecoder().decode(NYTCheckpoint.self, from: try #require(sink.checkpoints.values.first))
            #expect(checkpoint.isFinished && checkpoint.setAsidePages.map(\.page) == [1], "run \(run): \(checkpoint)")
            #expect(try #require(checkpoint.completedAt) >= later.now.addingTimeInterval(-60), "run \(run)")
        }
    }

    /// A single day whose page 0 fails for good, after waiting at the end of the walk once, is set
    /// aside by that page: the run completes, and the run that retries it asks the day's other
    /// pages after it. It stopped every run of the query there, for good.
    @Test func aDayWhoseFirstPageFailsForGoodIsSetAsideWhole() async throws {
        let refusing = Atomic<Bool>(true)
        // Four days of 15 results; windows of two pages (20 results): every window is split to days.
        let server = try LoopbackServer { request in
            let (begin, end) = (Int(request.queryValue("begin_date") ?? "") ?? 0, Int(request.queryValue("end_date") ?? "") ?? 0)
            let page = Int(request.queryValue("page") ?? "0") ?? 0
            if begin == 20200302, end == 20200302, page == 0, refusing.load(ordering: .relaxed) {
                return FixtureResponse(status: 403, headers: [("Content-Type", "text/html")], body: Array("<html>Forbidden</html>".utf8))
            }
            let days = (max(begin, 20200301)...min(end, 20200304)).map { $0 % 100 }
            let all = days.flatMap { day in (0..<15).map { #"{"_id":"d\#(day)-\#($0)","pub_date":"2020-03-0\#(day)T12:00:00Z"}"# } }
            let docs = all.dropFirst(page * 10).prefix(10)
            return .json(body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":\#(all.count),"offset":\#(page * 10)}}}"#)
        }
        defer { server.stop() }
        let source = NYTSource(
            query: NYTQuery(query: "x", begin: day("2020-03-01"), end: day("2020-03-04")), key: APIKey(testKey),
            endpoint: server.baseURL + "/s", pageCap: 2)
        let sink = InMemoryFetchSink()
        let first = try await makeService().run(source, into: sink)
        #expect(first.isComplete && first.setAside == 1, "\(first)")
        #expect(Set(sink.articles.map(\.id)).count == 45 && !sink.articles.contains { $0.id.hasPrefix("d2-") })
        refusing.store(false, ordering: .relaxed)
        let second = try await makeService().run(source, into: sink)
        #expect(second.isComplete && second.setAside == 0 && second.pages == 2, "\(second)")
        #expect(Set(sink.articles.map(\.id)).count == 60)
    }

    /// A page redirected to itself is the page's failure, set aside: "more than 5 redirects"
    /// stopped every run of the query there.
    @Test func aPageRedirectedInALoopIsSetAside() async throws {
        let server = try LoopbackServer { request in
            let page = Int(request.queryValue("page") ?? "0") ?? 0
            if page == 1 || request.path.hasSuffix("/loop") { return FixtureResponse(status: 302, headers: [("Location", "/loop")]) }
            let docs = (0..<(page == 2 ? 5 : 10)).map { #"{"_id":"p\#(page)-\#($0)","pub_date":"2020-01-01T00:00:00Z"}"# }
            return .json(body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":25,"offset":\#(page * 10)}}}"#)
        }
        defer { server.stop() }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let log = ProgressLog()
        let summary = try await makeService().run(source, into: InMemoryFetchSink(), progress: log.handler)
        #expect(summary.isComplete && summary.skipped == 1 && summary.articles == 15, "\(summary)")
        #expect(log.all.contains { if case .skipped(_, let message) = $0 { message.contains("redirects") } else { false } })
    }

    /// A server's own words in an error are cut: 100 KB of messages made one 100 KB line of
    /// every error and log.
    @Test func aServersLongErrorTextIsCut() async throws {
        let long = String(repeating: "x", count: 100_000)
        let server = try LoopbackServer { _ in
            .json(status: 400, body: #"{"status":"ERROR","errors":["bad request: \#(long)"]}"#)
        }
        defer { server.stop() }
        let source = NYTSource(
            query: NYTQuery(query: "election"), key: APIKey(testKey), endpoint: server.baseURL + "/svc/search/v2/articlesearch.json")
        let error = try #require(await runExpectingFailure(makeService(), source, into: InMemoryFetchSink()))
        #expect(error.httpStatus == 400)
        #expect(error.message.contains("bad request: xxx") && error.message.contains("more characters"), "\(error.message.prefix(200))")
        #expect(error.description.utf8.count < 2_000)
    }

    /// A 503 whose body is a proxy's JSON or text (not the API's error shape) is said in its
    /// words, not as an "unreadable body (38 bytes)".
    @Test(arguments: [#"{"message":"upstream connect error"}"#, "upstream connect error\n"])
    func aServerErrorsOwnWordsAreSaid(body: String) async throws {
        let server = try LoopbackServer { _ in FixtureResponse(status: 503, body: Array(body.utf8)) }
        defer { server.stop() }
        let source = NYTSource(
            query: NYTQuery(query: "election"), key: APIKey(testKey), endpoint: server.baseURL + "/svc/search/v2/articlesearch.json")
        let error = try #require(await runExpectingFailure(makeService(), source, into: InMemoryFetchSink()))
        #expect(error.code == .serverError && error.httpStatus == 503)
        #expect(error.message.contains("upstream connect error") && !error.message.contains("unreadable"), "\(error.message)")
    }

    /// A window's first page fetched again after a split holds articles this run stored
    /// already: they are no articles more, so new, updated and unchanged add up to those stored
    /// (10 stored read "10 new, 20 unchanged").
    @Test func articlesARunStoredTwiceAreCountedOnce() async throws {
        let docs = (0..<10).map { #"{"_id":"r\#($0)","headline":{"main":"h\#($0)"},"pub_date":"2020-01-01T00:00:00Z"}"# }
        let server = try LoopbackServer { request in
            // Two days announce more hits than ten pages reach: the window is split in two days.
            let oneDay = request.queryValue("begin_date") == request.queryValue("end_date")
            let hits = oneDay ? 10 : 5_000
            return .json(status: 200, body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":\#(hits)}}}"#)
        }
        defer { server.stop() }
        let query = NYTQuery(query: "x", begin: day("2020-01-01"), end: day("2020-01-02"))
        let source = NYTSource(query: query, key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let summary = try await makeService().run(source, into: InMemoryFetchSink())
        #expect(summary.pages == 3 && summary.articles == 10)
        #expect(summary.newArticles == 10 && summary.unchangedArticles == 0 && summary.updatedArticles == 0, "\(summary)")
    }

    /// A run over stored articles where a later page repeats one of them changed: that one is
    /// updated and the others unchanged (each repeat was taken for unchanged, so an unchanged
    /// article was counted updated: "2 updated, 1 unchanged"). Through the store's sink and the
    /// in-memory one.
    @Test(arguments: [false, true])
    func aRepeatThatChangedIsTheOnlyUpdate(intoStore: Bool) async throws {
        let server = try LoopbackServer { request in
            let docs =
                request.queryValue("page") == "1"
                ? [#"{"_id":"a1","abstract":"changed"}"#, #"{"_id":"a3"}"#] : [#"{"_id":"a1"}"#, #"{"_id":"a2"}"#]
            return .json(body: #"{"status":"OK","response":{"docs":["# + docs.joined(separator: ",") + #"],"meta":{"hits":20}}}"#)
        }
        defer { server.stop() }
        let source = NYTSource(
            query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s", pageCap: 2)
        func twice(_ sink: some FetchSink) async throws -> FetchSummary {
            let first = try await makeService().run(source, into: sink)
            #expect(first.newArticles == 3 && first.articles == 3, "\(first)")
            return try await makeService().run(source, into: sink, startOver: true)
        }
        let again =
            if intoStore {
                try await withTemporaryStore { store in try await twice(try StoreFetchSink(store: store)) }
            } else {
                try await twice(InMemoryFetchSink())
            }
        #expect(again.articles == 3 && again.newArticles == 0, "\(again)")
        #expect(again.updatedArticles == 1 && again.unchangedArticles == 2, "\(again)")
    }

    /// A bad document served again (a window's first page after a split) is one reject, as it is
    /// quarantined once; a bad value that is no object is told apart by its place.
    @Test func aRejectServedTwiceIsCountedOnce() async throws {
        let good = (0..<8).map { #"{"_id":"r\#($0)","pub_date":"2020-01-01T00:00:00Z"}"# }
        let bad = [#"{"_id":"bad","pub_date":"yesterday"}"#, "42"]
        let server = try LoopbackServer { request in
            let oneDay = request.queryValue("begin_date") == request.queryValue("end_date")
            let hits = oneDay ? 10 : 5_000
            return .json(status: 200, body: #"{"status":"OK","response":{"docs":["# + (good + bad).joined(separator: ",") + #"],"meta":{"hits":\#(hits)}}}"#)
        }
        defer { server.stop() }
        let query = NYTQuery(query: "x", begin: day("2020-01-01"), end: day("2020-01-02"))
        let source = NYTSource(query: query, key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        let summary = try await makeService().run(source, into: sink)
        let quarantined = Set(sink.committedPages.flatMap { page in page.rejects.map { RejectedDocument($0, of: page).id } })
        #expect(summary.pages == 3 && summary.articles == 8)
        // The object once, the number once a page: as many as the quarantine holds.
        #expect(summary.rejected == 4 && summary.rejected == quarantined.count, "\(summary)")
    }

    @Test func rateLimitThatNeverEndsIsATypedError() async throws {
        let api = try makeAPI { $0.faults = [.init(.everyNYTRequest, .rateLimited)] }
        let clock = TestClock()
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(clock: clock), nytSource(api), into: sink))
        #expect(error.code == .rateLimited)
        #expect(error.httpStatus == 429)
        // Gives up within about half a minute of waiting (two 12 s waits), checkpoint untouched.
        #expect(error.attempts == 3)
        #expect(clock.sleptSeconds == [12, 12])
        #expect(error.description.contains("rate limited (quota likely exhausted); resume later"))
        #expect(!error.description.contains(testKey))
        #expect(sink.commitCount == 0)
    }

    /// A `Retry-After` past the give-up time stops the run at once and says what was asked.
    @Test func aLongRetryAfterIsSaidWhenTheRunStops() async throws {
        let api = try makeAPI { $0.faults = [.init(.everyNYTRequest, .rateLimitedRetryAfter(seconds: 120))] }
        let clock = TestClock()
        let error = try #require(await runExpectingFailure(makeService(clock: clock), nytSource(api), into: InMemoryFetchSink()))
        #expect(error.code == .rateLimited && clock.sleptSeconds.isEmpty)
        #expect(error.description.contains("the server asked to wait 120s; resume later"), "\(error)")
    }

    @Test func connectionDroppedMidBodyIsRetriedThenATransportError() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 15
            $0.faults = [.init(.nytPage(0), .dropConnectionMidBody)]
        }
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .transport)
        #expect(error.curlCode != nil)
        #expect(error.attempts == 4)
        #expect(sink.commitCount == 0)
    }

    /// A request that reached no server used none of the API's budget: its retries wait their
    /// back-off only (a refused connection waited 12 s a try for the rate limit, 35 s in all),
    /// and the error says why once, without the URL twice.
    @Test func aRefusedConnectionIsRetriedWithoutWaitingForTheRateLimit() async throws {
        // A port bound and never listened on refuses every connection, and no other test's
        // server can take it meanwhile (a stopped server's port could be).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let endpoint = "http://127.0.0.1:\(port)/svc/search/v2/articlesearch.json"
        let source = NYTSource(query: NYTQuery(query: "election"), key: APIKey(testKey), endpoint: endpoint)
        let clock = TestClock()
        let limiter = RateLimiter(perMinute: 5, perDay: 500)
        let error = try #require(
            await runExpectingFailure(makeService(clock: clock, rateLimiter: limiter), source, into: InMemoryFetchSink()))
        #expect(error.code == .transport && error.attempts == 4)
        #expect(clock.sleptSeconds == [1, 2, 4], "\(clock.sleptSeconds)")
        #expect(limiter.usage(at: clock.now).lastDay == 0)
        let text = error.description
        #expect(text.contains("connection failed") && !text.contains("HTTP request to"), "\(text)")
        #expect(text.components(separatedBy: "Couldn't connect to server").count == 2, "\(text)")
    }

    @Test func aStalledResponseTimesOutAndIsRetried() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 5
            $0.faults = [.init(.nytPage(0), .stall(seconds: 5), times: 1)]
        }
        var configuration = HTTPClientConfiguration()
        configuration.totalTimeout = .milliseconds(400)
        let sink = InMemoryFetchSink()
        let log = ProgressLog()
        let service = makeService(client: HTTPClient(configuration: configuration))
        let summary = try await service.run(nytSource(api), into: sink, progress: log.handler)
        #expect(summary.retries == 1)
        #expect(sink.articles.count == 5)
        #expect(log.all.contains { if case .retrying(.transport, 2, _) = $0 { true } else { false } })
    }

    @Test func unauthorizedStopsAtOnce() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 15 }
        let sink = InMemoryFetchSink()
        let error = try #require(
            await runExpectingFailure(makeService(), nytSource(api, key: "wrong-key-0000"), into: sink))
        #expect(error.code == .unauthorized)
        #expect(error.httpStatus == 401)
        #expect(error.attempts == 1)
        #expect(error.message.contains("Invalid ApiKey"))
        #expect(api.requestCount == 1)
        #expect(sink.commitCount == 0)
        #expect(!error.code.isNetworkFailure)
    }

    @Test func badRequestStopsAtOnce() async throws {
        let api = try makeAPI { $0.faults = [.init(.nytPage(0), .badRequest)] }
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .badRequest)
        #expect(error.httpStatus == 400)
        #expect(error.message.contains("error in fq"))
        #expect(api.requestCount == 1)
        #expect(sink.commitCount == 0)
    }

    @Test func htmlForbiddenPagesStopWithoutCommittingThem() async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 55
            $0.faults = (1...3).map { .init(.nytPage($0), .htmlForbidden) }
        }
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .forbidden)
        #expect(error.httpStatus == 403)
        #expect(error.message.contains("HTML"))
        #expect(api.requestCount == 4)
        #expect(sink.commitCount == 3 && sink.articles.count == 10)
    }

    @Test(arguments: [FixtureAPIFault.truncatedJSON, .malformedJSON])
    func brokenJSONIsAMappingErrorAndThePageIsNotCommitted(fault: FixtureAPIFault) async throws {
        let api = try makeAPI {
            $0.nytArticlesPerQuery = 55
            $0.faults = (1...3).map { .init(.nytPage($0), fault) }
        }
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .mapping)
        #expect(error.jsonPath != nil)
        #expect(error.cause is NewsMappingError)
        #expect(sink.commitCount == 3)
        #expect(sink.articles.count == 10)
        #expect(api.requestCount == 4)
    }

    @Test func aBadDocumentIsQuarantinedWithItsJSONPathAndThePageCommits() async throws {
        // A 200 body whose third document has a date that is not a date, and echoes the key.
        let body = #"{"status":"OK","response":{"docs":[{"_id":"a","web_url":"u"},{"_id":"b","web_url":"u"},"#
            + #"{"_id":"c","web_url":"u?api-key="# + testKey.lowercased() + #"","pub_date":"yesterday"}],"meta":{"hits":3,"offset":0}}}"#
        let server = try LoopbackServer { _ in .json(body: body) }
        let sink = InMemoryFetchSink()
        let source = NYTSource(
            query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/search")
        let log = ProgressLog()
        let summary = try await makeService().run(source, into: sink, progress: log.handler)
        #expect(summary.isComplete && summary.articles == 2 && summary.rejected == 1 && summary.documents == 3)
        #expect(sink.articles.map(\.id) == ["a", "b"])
        let page = try #require(sink.committedPages.first)
        #expect(page.rejects.map(\.index) == [2])
        #expect(page.rejects.first?.error.path == "response.docs[2].pub_date")
        // The key is scrubbed from the kept bytes, in every case form.
        let raw = String(decoding: try #require(page.rejects.first).rawDocument, as: UTF8.self)
        #expect(!raw.lowercased().contains(testKey.lowercased()) && raw.contains("REDACTED"))
        #expect(log.all.contains { if case .rejected(_, 2, "response.docs[2].pub_date", _) = $0 { true } else { false } })
    }

    /// A page that cannot be mapped names the status the server sent (a 204 was called 200).
    @Test func anUnmappableBodyNamesTheStatusSent() async throws {
        let server = try LoopbackServer { _ in .json(status: 204, body: "") }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/search")
        let error = try #require(await runExpectingFailure(makeService(), source, into: InMemoryFetchSink()))
        #expect(error.code == .mapping && error.httpStatus == 204, "\(error)")
        #expect(error.description.contains("HTTP 204"), "\(error)")
    }

    @Test func anHTMLBodyWithStatus200IsAnHTMLError() async throws {
        let server = try LoopbackServer { _ in
            FixtureResponse(status: 200, headers: [("Content-Type", "text/html")], body: Array("<html>hi</html>".utf8))
        }
        let source = NYTSource(query: NYTQuery(query: "x"), key: APIKey(testKey), endpoint: server.baseURL + "/s")
        let sink = InMemoryFetchSink()
        let error = try #require(await runExpectingFailure(makeService(), source, into: sink))
        #expect(error.code == .htmlBody)
        // Page 0 is never set aside: its `hits` decide whether the window must be split.
        #expect(sink.commitCount == 0)
    }

    @Test func cancellationStopsBetweenPagesKeepingWhatWasCommitted() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 45 }
        let sink = InMemoryFetchSink()
        // One request a minute and a clock that really suspends: the run parks before page 1.
        let service = makeService(clock: SuspendingClock(), rateLimiter: RateLimiter(perMinute: 1, perDay: 100))
        let source = nytSource(api)
        let task = Task { try await service.run(source, into: sink) }
        while sink.commitCount < 1 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let result = await task.result
        guard case .failure(let failure) = result, let error = failure as? FetchError else {
            Issue.record("the run should have been cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(sink.commitCount == 1)
        #expect(api.requestCount == 1)
    }
}

@Suite struct SinkFailureTests {
    @Test func aSinkFailureKeepsTheSinksOwnErrorAsItsCause() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 25 }
        defer { api.stop() }
        let sink = InMemoryFetchSink(crashAfterCommits: 1)
        let error = try #require(await runExpectingFailure(makeService(), nytSource(api), into: sink))
        #expect(error.code == .sink)
        let crash = try #require(error.cause as? InMemoryFetchSink.SimulatedCrash)
        #expect(crash.committed == 1)
    }
}
