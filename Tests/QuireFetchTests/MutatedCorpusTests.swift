import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireNews
import QuireTestSupport
import Testing

/// Fetches of corpora where a seeded share of the documents has every odd shape the APIs send:
/// the mappable ones are stored, the others quarantined with their JSON path, nothing stops.
@Suite struct MutatedCorpusTests {
    private func rejects(_ store: Store) throws -> [RejectedDocument] {
        try store.read { try $0.values(of: StoreFetchSink.rejects) }
    }

    @Test(arguments: NYTEra.allCases)
    func everyEraStoresTheMappableAndQuarantinesTheRest(era: NYTEra) async throws {
        let api = try makeAPI {
            $0.era = era
            $0.nytArticlesPerQuery = 240
            $0.mutations = DocumentMutationPlan(seed: 0xBAD_D0C5 ^ UInt64(NYTEra.allCases.firstIndex(of: era)!), percent: 30)
        }
        defer { api.stop() }
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store, retainRawDocuments: true)
            let source = nytSource(api, query: NYTQuery(query: "mixed", sort: .newest))
            let summary = try await makeService().run(source, into: sink)
            let served = api.servedDocuments
            let expectedStored = Set(served.compactMap(\.storedID))
            let expectedRejected = served.filter { $0.rejectedAt != nil }
            #expect(served.count == 240)
            #expect(Set(served.compactMap(\.mutation)).count >= 8, "the seed exercises most mutations")
            #expect(!expectedRejected.isEmpty)
            #expect(summary.isComplete)
            #expect(summary.articles == expectedStored.count && summary.rejected == expectedRejected.count)
            #expect(summary.articles + summary.rejected == served.count)

            let storedIDs = try store.read { snap in try snap.values(of: NewsSchema.articles).map(\.id) }
            #expect(Set(storedIDs) == expectedStored)
            let quarantined = try rejects(store)
            #expect(quarantined.count == expectedRejected.count)
            let expectedPaths = Set(expectedRejected.map { doc in
                "response.docs[\(doc.index)]" + (doc.rejectedAt!.isEmpty ? "" : "." + doc.rejectedAt!)
            })
            #expect(Set(quarantined.map(\.path)) == expectedPaths)
            #expect(quarantined.allSatisfy { $0.source == source.sourceID && $0.mapping == "nyt" && !$0.raw.isEmpty })
            try checkValues(store, served: served)

            // Fetching the same stories again (from the start) duplicates nothing.
            let again = try await makeService().run(source, into: sink, mode: .restart)
            #expect(again.newArticles == 0 && again.articles == expectedStored.count)
            #expect(try store.read { try $0.count(of: NewsSchema.articles) } == expectedStored.count)
            #expect(try rejects(store).count == expectedRejected.count)
            // Today's mapping still rejects them: remap moves nothing, twice.
            let remap = try await sink.remap()
            #expect(remap.remapped == 0 && remap.stillRejected == expectedRejected.count)
            #expect(remap.rawUnchanged == expectedStored.count && remap.rawUpdated == 0)
            #expect(try await sink.remap() == remap)
        }
    }

    /// The values of mutated but mappable documents: absent, never invented; text kept exactly.
    private func checkValues(_ store: Store, served: [ServedDocument]) throws {
        try store.read { snap in
            for doc in served {
                guard let mutation = doc.mutation, let id = doc.storedID else { continue }
                let article = try #require(try snap.get(.string(id), from: NewsSchema.articles))
                switch mutation {
                case .noHeadline: #expect(article.headline == nil)
                case .noPublicationDate: #expect(article.publishedAt == nil)
                case .emptyMainHeadline: #expect(article.headline == "The Printed Headline")
                case .noIDButWebURL: #expect(article.id == article.url && article.id.hasPrefix("http"))
                case .longID: #expect(article.id.utf8.count > 700)
                case .controlCharacters:
                    #expect(article.headline == DocumentMutation.controlHeadline)
                    #expect(article.abstract == DocumentMutation.controlAbstract)
                case .hugeValue: #expect((article.abstract?.utf8.count ?? 0) > 200_000)
                case .nullsAndEmptyStrings:
                    #expect(article.abstract == nil && article.snippet == nil && article.leadParagraph == nil)
                    #expect(article.newsDesk == nil && article.section == nil)
                default: Issue.record("\(mutation) should have been quarantined")
                }
            }
        }
    }

    @Test func feedzillaStoresTheMappableStoriesOnceAndQuarantinesTheRest() async throws {
        let api = try makeAPI {
            $0.feedzillaCategoryCount = 6
            $0.feedzillaArticlesPerCategory = 30
            $0.mutations = DocumentMutationPlan(seed: 77, percent: 35)
        }
        defer { api.stop() }
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let source = FeedzillaSource(baseURL: api.feedzillaBaseURL)
            let summary = try await makeService().run(source, into: sink)
            let served = api.servedDocuments
            #expect(served.count == 6 * 30)
            let expectedStored = Set(served.compactMap(\.storedID))
            let expectedRejected = served.filter { $0.rejectedAt != nil }
            #expect(!expectedRejected.isEmpty)
            // Stories repeat across categories (with other URL queries): stored once each.
            let stored = try store.read { try $0.values(of: NewsSchema.articles) }
            #expect(Set(stored.map(\.id)) == expectedStored && stored.count == expectedStored.count)
            #expect(summary.articles == expectedStored.count && summary.documents == served.count)
            #expect(summary.rejected == expectedRejected.count)
            // A story quarantined in one category and stored from a later one is retired.
            let retired = served.indices.filter { i in
                served[i].namedID.map { named in served[(i + 1)...].contains { $0.storedID == named } } ?? false
            }
            #expect(!retired.isEmpty)
            let quarantined = try rejects(store)
            #expect(quarantined.count == expectedRejected.count - retired.count)
            #expect(Set(quarantined.map(\.path)).isSubset(of: Set(expectedRejected.map { doc in
                "articles[\(doc.index)]" + (doc.rejectedAt!.isEmpty ? "" : "." + doc.rejectedAt!)
            })))
            for doc in served where doc.mutation == .feedzillaEncodedTitle {
                let article = try #require(stored.first { $0.id == doc.storedID })
                // The same story may be served plain in another category; the last one wins.
                #expect(article.headline == "Café & Bar opens — “finally”" || article.headline?.contains("&") == false)
            }
        }
    }

    /// A category of the list that cannot be mapped is quarantined and the others are fetched
    /// (it stopped every Feedzilla fetch for good); remap leaves it, since it is not an article.
    @Test func anOddCategoryIsQuarantinedAndTheOthersAreFetched() async throws {
        let body = Array(#"""
            [{"category_id":1314,"display_category_name":"","english_category_name":"Sports","url_category_name":""},
             {"display_category_name":"No id","english_category_name":"None"},
             {"category_id":"1307","english_category_name":["Art"]},
             {"category_id":1309,"english_category_name":"Arts","more":
            """#.utf8) + Array(repeating: UInt8(ascii: "["), count: 600) + Array(repeating: UInt8(ascii: "]"), count: 600)
            + Array(#"},{"category_id":"1311","display_category_name":"Business"}]"#.utf8)
        #expect(throws: NewsMappingError.self) { try Feedzilla.parseCategories(body) }
        let source = FeedzillaSource(baseURL: "http://127.0.0.1:1/v1")
        let page = try source.process(body, for: try #require(source.nextRequest(after: source.initialCheckpoint)), at: source.initialCheckpoint)
        #expect(page.checkpoint.categoryIDs == [1314, 1311])
        #expect(page.rejects.map(\.error.path) == ["[1].category_id", "[2].english_category_name", "[3].more"])

        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            let fetched = FetchedPage(
                sourceID: source.sourceID, articles: [], rejects: page.rejects, pageLabel: FeedzillaSource.categoriesLabel,
                mappingKind: source.mappingKind, queryTag: nil, checkpoint: Data("{}".utf8),
                fetchedAt: Date(timeIntervalSince1970: 1_700_000_000))
            #expect(try await sink.commit(fetched).rejects == 3)
            let remap = try await sink.remap()
            #expect(remap.remapped == 0 && remap.stillRejected == 3)
            // Each keeps the category mapping's reason, not an article mapping's.
            let paths = try rejects(store).map(\.path).sorted()
            #expect(paths.prefix(2) == ["[1].category_id", "[2].english_category_name"], "\(paths)")
            #expect(paths.count == 3 && paths[2].hasPrefix("[3].more[0][0]"), "\(paths)")
            #expect(try store.read { try $0.count(of: NewsSchema.articles) } == 0)
        }
    }

    @Test func remapMovesDocumentsThatMapTodayAndIsIdempotent() async throws {
        try await withTemporaryStore { store in
            let sink = try StoreFetchSink(store: store)
            // Quarantined by an earlier, stricter mapping (say, one that required a headline):
            // today's mapping stores them.
            let mappable = Array(#"{"_id":"5786a15c38f0d80e646b3a0b","web_url":"https://www.nytimes.com/a.html"}"#.utf8)
            let broken = Array(#"{"_id":"x","pub_date":17}"#.utf8)
            let page = FetchedPage(
                sourceID: "nyt:q=x", articles: [],
                rejects: [
                    DocumentReject(index: 0, error: NewsMappingError(.missingField, at: [.key("headline")]), rawDocument: mappable),
                    DocumentReject(index: 4, error: NewsMappingError(.missingField), rawDocument: broken),
                ],
                pageLabel: "page 0", mappingKind: "nyt", queryTag: "nyt:q=x", checkpoint: Data("{}".utf8),
                fetchedAt: Date(timeIntervalSince1970: 1_700_000_000))
            let outcome = try await sink.commit(page)
            #expect(outcome.rejects == 2 && outcome.newArticles == 0)
            #expect(try rejects(store).count == 2)

            let first = try await sink.remap()
            #expect(first.remapped == 1 && first.stillRejected == 1)
            let article = try #require(try store.read { try $0.get(.string("5786a15c38f0d80e646b3a0b"), from: NewsSchema.articles) })
            #expect(article.url == "https://www.nytimes.com/a.html")
            #expect(try store.read { try $0.members(of: .string("nyt:q=x"), in: NewsSchema.queryArticles) } == [.string(article.id)])
            let left = try rejects(store)
            #expect(left.count == 1 && left.first?.path == "response.docs[4].pub_date")

            let second = try await sink.remap()
            #expect(second.remapped == 0 && second.stillRejected == 1)
            #expect(try store.read { try $0.count(of: NewsSchema.articles) } == 1)
        }
    }
}
