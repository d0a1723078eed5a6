import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireNews
import QuireTestSupport
import Testing

/// The fetch service against the real store sink (one transaction per page and checkpoint).
@Suite struct StoreSinkTests {
    @Test func pagesCheckpointsAndOfflineFallbackLiveInTheStore() async throws {
        let api = try makeAPI { $0.nytArticlesPerQuery = 35 }
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store, retainRawDocuments: true)
            let clock = TestClock()
            let service = makeService(clock: clock, retryPolicy: exactRetries(transientAttempts: 2))
            let source = nytSource(api)
            let online = await service.articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
            #expect(online.failure == nil)
            #expect(online.articles.count == 35)
            #expect(try await sink.checkpoint(for: source.sourceID) != nil)
            try store.read { snap throws in
                #expect(try snap.count(of: NewsSchema.articles) == 35)
                #expect(try snap.members(of: .string(source.queryTag), in: NewsSchema.queryArticles).count == 35)
                // Raw documents are kept (compressed) and still parse to the same article.
                let first = online.articles[0]
                let raw = try #require(try snap.get(.string(first.id), from: StoreFetchSink.rawDocuments))
                let reparsed = try NYTArticleSearch.parsePage(
                    Array("{\"status\":\"OK\",\"response\":{\"docs\":[".utf8) + Array(raw.json) + Array("]}}".utf8))
                #expect(reparsed.articles.first?.id == first.id)
            }
            api.stop()
            let offline = await service.articles(for: source, queryTag: source.queryTag, sink: sink, reader: sink)
            #expect(offline.isStale)
            #expect(Set(offline.articles.map(\.id)) == Set(online.articles.map(\.id)))
            #expect(offline.fetchedAt == online.fetchedAt)
            #expect(try store.verify().isSound)
        }
    }

    /// Ids that Swift's string equality calls equal but whose bytes differ (`café` composed and
    /// decomposed, the ohm sign and omega) are two articles, as they are to the store: the
    /// page's de-duplication merged them, and one was lost.
    @Test func idsEqualOnlyCanonicallyAreDistinctArticles() async throws {
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let ids = ["caf\u{E9}", "cafe\u{301}", "\u{2126}", "\u{3A9}"]
            #expect(ids[0] == ids[1] && ids[2] == ids[3])  // what Swift says
            let page = FetchedPage(
                sourceID: "nyt:q=x", articles: ids.enumerated().map { Article(id: $1, headline: "headline \($0)") },
                queryTag: "nyt:q=x", checkpoint: Data("{}".utf8), fetchedAt: Date(timeIntervalSince1970: 1_700_000_000))
            let outcome = try await sink.commit(page)
            #expect(outcome.newArticles == 4)
            try store.read { snap throws in
                #expect(try snap.count(of: NewsSchema.articles) == 4)
                for (index, id) in ids.enumerated() {
                    #expect(try snap.get(.string(id), from: NewsSchema.articles)?.headline == "headline \(index)")
                }
            }
        }
    }

    @Test func feedzillaListsResolveTheirArticles() async throws {
        let api = try makeAPI()
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let source = FeedzillaSource(baseURL: api.feedzillaBaseURL)
            let summary = try await makeService().run(source, into: sink)
            #expect(summary.isComplete)
            try store.read { snap throws in
                let lists = try snap.values(of: NewsSchema.lists)
                #expect(lists.count == api.feedzillaCategories.count)
                // The category list's names are stored, by id.
                let categories = try snap.values(of: NewsSchema.categories)
                #expect(categories.map(\.id).sorted() == api.feedzillaCategories.map(\.id).sorted())
                #expect(Set(categories) == Set(api.feedzillaCategories), "\(categories)")
                for list in lists {
                    let members = try snap.members(of: .string(list.id), in: NewsSchema.listArticles)
                    #expect(Set(members) == Set(list.articleIDs.map { StoreKey.string($0) }))
                    #expect(try members.allSatisfy { try snap.contains($0, in: NewsSchema.articles) })
                }
            }
        }
    }
}
