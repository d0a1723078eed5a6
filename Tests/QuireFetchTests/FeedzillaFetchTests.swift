import Synchronization
import Foundation
import QuireFetch
import QuireFixtures
import QuireNews
import Testing

@Suite struct FeedzillaFetchTests {
    @Test func fetchesCategoriesThenEachArticleList() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 4
            $0.feedzillaArticlesPerCategory = 10
        }
        let sink = InMemoryFetchSink()
        let summary = try await makeService().run(FeedzillaSource(baseURL: api.feedzillaBaseURL), into: sink)
        #expect(summary.isComplete)
        #expect(summary.pages == 5)  // the category list, then four lists

        let categories = api.feedzillaCategories
        #expect(sink.lists.count == 4)
        var expectedIDs: [String] = []
        for category in categories {
            let articles = api.feedzillaArticles(categoryID: category.id)
            let list = try #require(sink.lists[Feedzilla.listID(categoryID: category.id)])
            #expect(list == feedzillaExpectedList(categoryID: category.id, articles: articles))
            #expect(sink.queryIndex[FeedzillaSource.queryTag(categoryID: category.id)] == list.articleIDs)
            for id in list.articleIDs where !expectedIDs.contains(id) { expectedIDs.append(id) }
        }
        // Stories shared by neighbouring categories are stored once.
        #expect(sink.articles.map(\.id) == expectedIDs)
        #expect(expectedIDs.count < 40)
        // Each stored article is the last category's rendering (upsert by id), query string removed.
        for article in sink.articles {
            #expect(!(article.url ?? "?").contains("?"))
            #expect(article.id.hasPrefix("feedzilla:"))
        }
        #expect(api.requestLog.first == "/v1/categories.json")
        #expect(api.requestLog.dropFirst().allSatisfy { $0.hasSuffix("/articles.json?count=100") })
    }

    @Test func onlyTheRequestedCategories() async throws {
        let api = try makeAPI { $0.feedzillaCategoryCount = 5 }
        // A category the API does not list is said, and nothing is fetched (it was skipped in silence).
        let typo = InMemoryFetchSink()
        let unknown = FeedzillaSource(baseURL: api.feedzillaBaseURL, categories: [api.feedzillaCategories[1].id, 99_999])
        let error = await runExpectingFailure(makeService(), unknown, into: typo)
        #expect(error?.description.contains("category 99999 is not among the 5 categories the API lists") == true, "\(String(describing: error))")
        #expect(error?.description.contains("retries") == false)
        // Not a "malformed response (HTTP 200)": the response was fine, the request was not.
        #expect(error?.code == .invalidQuery && error?.httpStatus == nil, "\(String(describing: error))")
        #expect(typo.lists.isEmpty && typo.articles.isEmpty && api.requestCount == 1)

        let wanted = [api.feedzillaCategories[1].id, api.feedzillaCategories[3].id]
        let sink = InMemoryFetchSink()
        let source = FeedzillaSource(baseURL: api.feedzillaBaseURL, categories: wanted)
        _ = try await makeService().run(source, into: sink)
        #expect(Set(sink.lists.keys) == Set(wanted.map { Feedzilla.listID(categoryID: $0) }))
        #expect(api.requestCount == 1 + 3)
        let checkpoint = try JSONDecoder().decode(
            FeedzillaCheckpoint.self, from: try #require(sink.checkpoints[source.sourceID]))
        #expect(checkpoint.doneCategoryIDs == wanted)
        #expect(checkpoint.isFinished)
    }

    /// Categories are independent: one whose page is broken is set aside, the others fetched,
    /// and the next run fetches it alone.
    @Test func aBrokenCategoryIsSetAsideAndTheNextRunRetriesIt() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 3
            $0.faults = [.init(.feedzillaCategory(1307), .truncatedJSON, times: 1)]
        }
        let ids = api.feedzillaCategories.map(\.id)
        #expect(ids.count == 3 && ids[1] == 1307)
        let sink = InMemoryFetchSink()
        let source = FeedzillaSource(baseURL: api.feedzillaBaseURL)
        let log = ProgressLog()
        let first = try await makeService().run(source, into: sink, progress: log.handler)
        #expect(first.isComplete && first.skipped == 1, "\(first)")
        #expect(sink.lists.keys.sorted() == [ids[0], ids[2]].map(Feedzilla.listID(categoryID:)).sorted())
        #expect(log.all.contains { if case .skipped("category 1307", let message) = $0 { message.contains("malformed") } else { false } })
        let checkpoint = try JSONDecoder().decode(
            FeedzillaCheckpoint.self, from: try #require(sink.checkpoints[source.sourceID]))
        #expect(checkpoint.failedCategoryIDs == [1307])
        let requests = api.requestCount
        let second = try await makeService().run(source, into: sink)
        #expect(second.isComplete && second.skipped == 0 && second.pages == 1, "\(second)")
        #expect(api.requestCount == requests + 1)
        #expect(Set(sink.lists.keys) == Set(ids.map(Feedzilla.listID(categoryID:))))
        let third = try await makeService().run(source, into: sink)
        #expect(third.alreadyComplete)
    }

    /// Three pages failing in a row look like an outage, not one bad category: the run stops.
    @Test func threeBrokenCategoriesInARowStopTheRun() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 4
            $0.faults = [1300, 1307, 1314].map { .init(.feedzillaCategory($0), .malformedJSON) }
        }
        let sink = InMemoryFetchSink()
        let error = await runExpectingFailure(makeService(), FeedzillaSource(baseURL: api.feedzillaBaseURL), into: sink)
        #expect(error?.code == .mapping)
        #expect(sink.lists.isEmpty)
    }

    /// A run over set-aside categories that ends in an outage counts those it had not fetched
    /// again as still set aside (it counted only those that failed again).
    @Test func aRetryRunCutShortCountsTheCategoriesItDidNotFetch() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 8
            $0.faults = [1300, 1314, 1328, 1342].map { .init(.feedzillaCategory($0), .dropConnectionMidBody) }
        }
        let sink = InMemoryFetchSink()
        let source = FeedzillaSource(baseURL: api.feedzillaBaseURL)
        let first = try await makeService().run(source, into: sink)
        #expect(first.isComplete && first.setAside == 4, "\(first)")
        let error = await runExpectingFailure(makeService(), source, into: sink)
        #expect(error?.code == .transport)
        #expect(error?.committed.setAside == 4, "\(String(describing: error?.committed))")
    }

    /// A category the list names twice is fetched once (it was requested twice in a run).
    @Test func aCategoryListedTwiceIsFetchedOnce() async throws {
        let requests = Mutex<[String]>([])
        let server = try LoopbackServer { request in
            requests.withLock { $0.append(request.path) }
            if request.path.hasSuffix("/categories.json") {
                let entry = { (id: Int) in #"{"category_id":\#(id),"english_category_name":"C\#(id)","url_category_name":"c\#(id)"}"# }
                return .json(body: "[" + [26, 27, 26].map(entry).joined(separator: ",") + "]")
            }
            let id = request.path.split(separator: "/").dropLast().last.map(String.init) ?? "?"
            return .json(body: #"{"articles":[{"title":"t\#(id)","url":"http://example.com/\#(id)","publish_date":"Mon, 01 Jun 2020 10:00:00 +0000"}]}"#)
        }
        defer { server.stop() }
        let summary = try await makeService().run(FeedzillaSource(baseURL: server.baseURL), into: InMemoryFetchSink())
        #expect(summary.isComplete && summary.articles == 2, "\(summary)")
        let fetched = requests.withLock { $0 }.filter { $0.hasSuffix("/articles.json") }
        #expect(fetched.count == 2 && Set(fetched).count == 2, "\(fetched)")
    }

    @Test func aBrokenCategoryListStopsBeforeItIsCommitted() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 3
            $0.faults = [.init(.feedzillaCategories, .truncatedJSON)]
        }
        let sink = InMemoryFetchSink()
        let error = await runExpectingFailure(makeService(), FeedzillaSource(baseURL: api.feedzillaBaseURL), into: sink)
        #expect(error?.code == .mapping)
        #expect(sink.lists.isEmpty && sink.commitCount == 0)
    }
}
