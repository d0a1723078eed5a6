import Foundation
import QuireFetch
import QuireNews
import Testing

/// What a source makes of odd pages, page by page (`process` is a pure function of the body and
/// the checkpoint), and what it keeps of its URL in its identity.
@Suite struct SourcePagingTests {
    private let source = NYTSource(
        query: NYTQuery(query: "storm", begin: day("2020-01-01"), end: day("2020-12-31"), sort: .newest), key: APIKey("K"))

    private func body(documents: Int, from first: Int = 0, hits: Int?, date: String = "2020-06-01") -> [UInt8] {
        let docs = (0..<documents).map { i in
            #"{"_id":"d\#(first + i)","web_url":"https://x/\#(first + i)","pub_date":"\#(date)T00:00:00Z","headline":{"main":"h"}}"#
        }
        let meta = hits.map { #","meta":{"hits":\#($0),"offset":0,"time":1}"# } ?? ""
        return Array(#"{"status":"OK","response":{"docs":[\#(docs.joined(separator: ","))]\#(meta)}}"#.utf8)
    }

    /// A window too large for the page cap is split, and the page that showed it is stored.
    @Test func thePageThatSplitsAWindowIsStored() throws {
        let start = source.initialCheckpoint
        let request = try #require(source.nextRequest(after: start))
        let page = try source.process(body(documents: 10, hits: 5_000), for: request, at: start)
        #expect(page.articles.map(\.id) == (0..<10).map { "d\($0)" })
        #expect(page.checkpoint.window != start.window && page.checkpoint.pendingWindows.count == 1)
        #expect(page.checkpoint.nextPage == 0 && !page.checkpoint.isFinished)
    }

    /// A server that ignores `begin_date`/`end_date` (the same results for every range) was
    /// halved down to single days, 100 pages each: millions of requests. A window answered with
    /// results none of which is near it stops the halving; the rest is unreachable, and said so.
    @Test func anAPIThatIgnoresTheDatesIsNotHalvedForEver() throws {
        let start = source.initialCheckpoint
        var checkpoint = try source.process(body(documents: 10, hits: 5_000), for: try #require(source.nextRequest(after: start)), at: start).checkpoint
        let window = try #require(checkpoint.window)
        #expect(checkpoint.pendingWindows.count == 1 && !checkpoint.datesIgnored)
        // The newer half (July on) answered with June's results: the range was ignored.
        #expect(window.begin >= day("2020-07-01"))
        var requests = 1
        while !checkpoint.isFinished, requests < 1_000 {
            let request = try #require(source.nextRequest(after: checkpoint))
            checkpoint = try source.process(body(documents: 10, from: requests * 10, hits: 5_000), for: request, at: checkpoint).checkpoint
            requests += 1
        }
        #expect(checkpoint.isFinished && checkpoint.datesIgnored)
        #expect(requests == 101 && checkpoint.unreachableResults == 4_000 && checkpoint.truncatedDayCount == 0)
        #expect(source.datesIgnored(in: checkpoint))
        // A range the results are in is split as before.
        let honoured = try source.process(body(documents: 10, hits: 5_000), for: try #require(source.nextRequest(after: start)), at: start)
        #expect(!honoured.checkpoint.datesIgnored)
    }

    /// An eight-day query paged one page a window (ten results reachable), answered with the
    /// same 50 undated results whatever the dates: undated results cannot show the range was
    /// ignored, so the walk halved down to every single day, paging each. The first single day
    /// that reports as many results as the whole query ends the walk.
    @Test func undatedResultsOfAnAPIThatIgnoresTheDatesEndTheWalkAtTheFirstSingleDay() throws {
        let source = NYTSource(
            query: NYTQuery(query: "topic", begin: day("2019-01-01"), end: day("2019-01-08")), key: APIKey("K"), pageCap: 1)
        let undated = Array(
            #"{"status":"OK","response":{"docs":[\#((0..<10).map { #"{"_id":"t\#($0)","web_url":"https://x/t\#($0)"}"# }.joined(separator: ","))],"meta":{"hits":50}}}"#.utf8)
        var checkpoint = source.initialCheckpoint
        var windows: [NYTDateWindow] = []
        while !checkpoint.isFinished, windows.count < 100 {
            let request = try #require(source.nextRequest(after: checkpoint))
            windows.append(try #require(checkpoint.window))
            checkpoint = try source.process(undated, for: request, at: checkpoint).checkpoint
        }
        #expect(windows.map(\.dayCount) == [8, 4, 2, 1], "\(windows)")
        #expect(checkpoint.isFinished && checkpoint.datesIgnored && checkpoint.unreachableResults == 40, "\(checkpoint)")
        #expect(checkpoint.queryHits == 50)
        // A walk resumed from an older build's checkpoint, past its split, has no such count: a
        // half's page 0 is not taken for the whole query's, and the pending half is kept.
        var resumed = source.initialCheckpoint
        resumed.window = NYTDateWindow(begin: day("2019-01-01"), end: day("2019-01-04"))
        resumed.pendingWindows = [NYTDateWindow(begin: day("2019-01-05"), end: day("2019-01-08"))]
        let half = try source.process(undated, for: try #require(source.nextRequest(after: resumed)), at: resumed).checkpoint
        #expect(half.queryHits == nil && half.pendingWindows.count == 2, "\(half)")
    }

    /// A window whose page 0 fails for good (its `hits` decide the split) is asked as its two
    /// halves; a single day waits at the end of the walk, once, so the other windows are
    /// fetched; failing again there, it is set aside by its page 0, and the retry of that page
    /// asks the day's other pages after it. It stopped every later window, and every result of
    /// its own, on every run (and a day failing again stopped every run for good).
    @Test func aWindowWhoseFirstPageFailsIsHalvedOrWaitsAtTheEndOnce() throws {
        func failed(at checkpoint: NYTCheckpoint) throws -> NYTCheckpoint? {
            source.skipping(try #require(source.nextRequest(after: checkpoint)), at: checkpoint)
        }
        let start = source.initialCheckpoint
        // The query's first page stops the run (a bad query is said at once).
        #expect(try failed(at: start) == nil)
        let first = try #require(source.nextRequest(after: start))
        let split = try source.process(body(documents: 10, hits: 5_000), for: first, at: start).checkpoint
        #expect(split.window == NYTDateWindow(begin: day("2020-07-02"), end: day("2020-12-31")))
        let halved = try #require(try failed(at: split))
        #expect(halved.window == NYTDateWindow(begin: day("2020-10-02"), end: day("2020-12-31")), "\(halved)")
        #expect(halved.pendingWindows.map(\.end) == [day("2020-10-01"), day("2020-07-01")], "\(halved)")
        #expect(halved.nextPage == 0 && halved.deferredWindows.isEmpty)

        var days = start
        (days.window, days.pendingWindows) = (NYTDateWindow(begin: day("2020-03-01"), end: day("2020-03-01")),
                                              [NYTDateWindow(begin: day("2020-03-02"), end: day("2020-03-02"))])
        days.pagesFetched = 7
        let one = try #require(days.window)
        let other = try #require(days.pendingWindows.first)
        let deferred = try #require(try failed(at: days))
        #expect(deferred.window == other && deferred.pendingWindows == [one] && deferred.nextPage == 0)
        #expect(deferred.deferredWindows == [one] && deferred.setAsidePages.isEmpty)
        let both = try #require(try failed(at: deferred))
        #expect(both.window == one && both.pendingWindows == [other])
        // The deferral is kept across runs.
        let decoded = try JSONDecoder().decode(NYTCheckpoint.self, from: JSONEncoder().encode(both))
        #expect(decoded == both)
        // The first day fails again at the end, then the other: each is set aside by its page 0.
        let aside = try #require(try failed(at: both))
        #expect(aside.setAsidePages == [NYTPageRef(window: one, page: 0)] && aside.window == other && aside.nextPage == 0)
        let walked = try #require(try failed(at: aside))
        #expect(walked.isFinished && walked.setAsidePages == [NYTPageRef(window: one, page: 0), NYTPageRef(window: other, page: 0)])
        // Their retry: a day of 25 results answers, and its pages 1 and 2 are asked before the other day.
        let retry = try #require(source.retryCheckpoint(after: walked))
        let answered = try source.process(body(documents: 10, hits: 25), for: try #require(source.nextRequest(after: retry)), at: retry)
        let pages = answered.checkpoint
        #expect(pages.window == one && pages.nextPage == 1, "\(pages)")
        #expect(pages.retryQueue == [NYTPageRef(window: one, page: 2), NYTPageRef(window: other, page: 0)], "\(pages)")
    }

    /// Two pages in a row refused with a 400 past pages that answered are the server's own page
    /// cap: the window is asked as its halves and every later window fits the learned cap; one
    /// refused page alone is set aside. Setting every page past the cap aside cost two pages a
    /// run and an error each run, and never reached the results past it.
    @Test func twoPagesRefusedInARowTeachTheServersPageCap() throws {
        let refusal = FetchError(code: .badRequest, message: "page: must be less than or equal to 3", location: .init(sourceID: "s"), httpStatus: 400)
        let other = FetchError(code: .forbidden, message: "403", location: .init(sourceID: "s"), httpStatus: 403)
        func refused(at checkpoint: NYTCheckpoint, _ error: FetchError) throws -> NYTCheckpoint? {
            source.skipping(try #require(source.nextRequest(after: checkpoint)), at: checkpoint, after: error)
        }
        var walk = source.initialCheckpoint
        walk.pagesFetched = 3
        walk.nextPage = 3
        let once = try #require(try refused(at: walk, refusal))
        #expect(once.setAsidePages == [NYTPageRef(window: walk.window, page: 3)] && once.nextPage == 4 && once.refusedPage == 3)
        #expect(once.learnedPageCap == nil)
        let twice = try #require(try refused(at: once, refusal))
        #expect(twice.learnedPageCap == 3 && twice.setAsidePages.isEmpty && twice.refusedPage == nil, "\(twice)")
        #expect(twice.window == NYTDateWindow(begin: day("2020-07-02"), end: day("2020-12-31")) && twice.nextPage == 0)
        #expect(twice.pendingWindows == [NYTDateWindow(begin: day("2020-01-01"), end: day("2020-07-01"))])
        // A later window of more hits than three pages reach is split; one that fits ends at page 2.
        let page0 = try #require(source.nextRequest(after: twice))
        #expect(try source.process(body(documents: 10, hits: 31, date: "2020-09-01"), for: page0, at: twice).checkpoint.pendingWindows.count == 2)
        var paging = try source.process(body(documents: 10, hits: 30), for: page0, at: twice).checkpoint
        for page in 1...2 {
            #expect(paging.window == twice.window && paging.nextPage == page)
            paging = try source.process(body(documents: 10, from: page * 10, hits: 30), for: try #require(source.nextRequest(after: paging)), at: paging).checkpoint
        }
        #expect(paging.window == twice.pendingWindows.first && paging.nextPage == 0)
        // The learned cap is kept across runs.
        #expect(try JSONDecoder().decode(NYTCheckpoint.self, from: JSONEncoder().encode(twice)) == twice)

        // A refusal, then a page that answers, then a refusal: two pages set aside, no cap.
        let answered = try source.process(body(documents: 10, from: 40, hits: 900), for: try #require(source.nextRequest(after: once)), at: once).checkpoint
        #expect(answered.refusedPage == nil && answered.nextPage == 5)
        let apart = try #require(try refused(at: answered, refusal))
        #expect(apart.learnedPageCap == nil && apart.setAsidePages.map(\.page) == [3, 5])
        // Another failure after a refusal is no cap either.
        let forbidden = try #require(try refused(at: once, other))
        #expect(forbidden.learnedPageCap == nil && forbidden.setAsidePages.map(\.page) == [3, 4] && forbidden.refusedPage == nil)
        // A single day refused past its pages ends there, counted as cut short.
        var day1 = walk
        day1.window = NYTDateWindow(begin: day("2020-03-01"), end: day("2020-03-01"))
        day1.pendingWindows = [NYTDateWindow(begin: day("2020-03-02"), end: day("2020-03-02"))]
        let dayOnce = try #require(try refused(at: day1, refusal))
        let ended = try #require(try refused(at: dayOnce, refusal))
        #expect(ended.window == day1.pendingWindows.first && ended.nextPage == 0 && ended.truncatedDayCount == 1 && ended.learnedPageCap == 3)
    }

    /// A short or empty page before the end `hits` announces is not the end (the API has
    /// answered pages empty while the next ones worked); the announced end, or a short page
    /// without `hits`, is.
    @Test func aShortPageBeforeTheAnnouncedEndIsNotTheEnd() throws {
        var checkpoint = source.initialCheckpoint
        for (documents, hits) in [(10, 40), (0, 40), (4, 40)] {
            let request = try #require(source.nextRequest(after: checkpoint))
            checkpoint = try source.process(body(documents: documents, hits: hits), for: request, at: checkpoint).checkpoint
            #expect(!checkpoint.isFinished, "\(checkpoint)")
        }
        #expect(checkpoint.nextPage == 3)
        let last = try #require(source.nextRequest(after: checkpoint))
        checkpoint = try source.process(body(documents: 5, hits: 40), for: last, at: checkpoint).checkpoint
        #expect(checkpoint.isFinished)

        let unknown = source.initialCheckpoint
        let request = try #require(source.nextRequest(after: unknown))
        #expect(try source.process(body(documents: 3, hits: nil), for: request, at: unknown).checkpoint.isFinished)
    }

    /// A `hits` that overstates does not cost every page up to the cap: three empty pages in a
    /// row end the window, while fewer, followed by documents, do not (and the count starts over).
    @Test func threeEmptyPagesInARowEndAWindow() throws {
        var checkpoint = source.initialCheckpoint
        var requests = 0
        for documents in [10, 0, 0, 10, 0, 0, 0, 10] {
            guard let request = source.nextRequest(after: checkpoint) else { break }
            requests += 1
            checkpoint = try source.process(body(documents: documents, hits: 900), for: request, at: checkpoint).checkpoint
        }
        #expect(requests == 7 && checkpoint.isFinished, "\(checkpoint)")
        #expect(NYTSource.emptyPagesEndingAWindow == 3)
        let decoded = try JSONDecoder().decode(NYTCheckpoint.self, from: JSONEncoder().encode(checkpoint))
        #expect(decoded == checkpoint)
    }

    /// A `hits` that a page shows to be too low (ten documents where five were announced) is
    /// not taken for the end: the window goes on to a short page, as without `hits`.
    @Test func aHitsThatUnderstatesDoesNotEndTheWindowEarly() throws {
        var checkpoint = source.initialCheckpoint
        var requests = 0
        for documents in [10, 10, 3, 10] {
            guard let request = source.nextRequest(after: checkpoint) else { break }
            requests += 1
            checkpoint = try source.process(body(documents: documents, hits: 5), for: request, at: checkpoint).checkpoint
        }
        #expect(requests == 3 && checkpoint.isFinished, "\(checkpoint)")
        // A count the page agrees with still ends the window at once.
        let start = source.initialCheckpoint
        let request = try #require(source.nextRequest(after: start))
        #expect(try source.process(body(documents: 5, hits: 5), for: request, at: start).checkpoint.isFinished)
    }

    /// A proxy URL's user and password never reach a source's identity (its checkpoint's key,
    /// its query tag, errors, rejects).
    @Test func credentialsInAURLStayOutOfTheIdentity() {
        let nyt = NYTSource(query: NYTQuery(query: "q"), key: APIKey("K"), endpoint: "http://alice:hunter2@127.0.0.1:8080/svc/x.json")
        let feedzilla = FeedzillaSource(baseURL: "https://bob:fzsecret@example.com/v1", categories: [3])
        for identity in [nyt.sourceID, nyt.queryTag, nyt.budgetID, feedzilla.sourceID, feedzilla.budgetID] {
            #expect(!identity.contains("hunter2") && !identity.contains("fzsecret") && !identity.contains("@127"), "\(identity)")
        }
        #expect(nyt.sourceID == "nyt:127.0.0.1:8080/svc/x.json@q=q")
        #expect(feedzilla.sourceID == "feedzilla:https://example.com/v1?categories=3")
    }

    /// A request holds the key in its URL (it is what is sent); printing, dumping or mirroring
    /// the request shows the URL redacted.
    @Test func aPrintedRequestShowsNoSecret() throws {
        let nyt = NYTSource(query: NYTQuery(query: "q"), key: APIKey("Sekr3tKey"), endpoint: "http://alice:hunter2@127.0.0.1:8080/svc/x.json")
        let request = try #require(nyt.nextRequest(after: nyt.initialCheckpoint))
        #expect(request.url.contains("Sekr3tKey"))
        var dumped = ""
        dump(request, to: &dumped)
        let mirrored = Mirror(reflecting: request).children.map { "\($0.value)" }.joined(separator: " ")
        for shown in ["\(request)", String(reflecting: request), dumped, mirrored] {
            #expect(!shown.contains("Sekr3tKey") && !shown.contains("hunter2"), "\(shown)")
            #expect(shown.contains("127.0.0.1:8080"), "\(shown)")
        }
    }
}
