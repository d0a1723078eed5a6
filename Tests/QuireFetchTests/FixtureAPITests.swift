import Foundation
import QuireFixtures
import QuireHTTP
import QuireNews
import Testing

@Suite struct FixtureAPITests {
    @Test func theSameQueryGivesTheSameArticles() throws {
        let a = try FixtureAPI(configuration: .init())
        let b = try FixtureAPI(configuration: .init())
        #expect(a.nytArticles(query: "river") == b.nytArticles(query: "river"))
        #expect(a.nytArticles(query: "river").map(\.id) != a.nytArticles(query: "rivers").map(\.id))
        #expect(a.nytArticles(query: "river").count == 120)
    }

    @Test func filtersByDateAndSorts() async throws {
        let api = try FixtureAPI(configuration: .init())
        let client = HTTPClient()
        let response = try await client.get(
            api.nytSearchURL + "?q=river&begin_date=20150101&end_date=20181231&sort=oldest&page=0")
        let page = try NYTArticleSearch.parsePage(response.body)
        let expected = api.nytArticles(query: "river").filter {
            let day = NYTDay(date: $0.publishedAt!)
            return day >= NYTDay(string: "20150101")! && day <= NYTDay(string: "20181231")!
        }
        #expect(page.hits == expected.count)
        let dates = page.articles.compactMap(\.publishedAt)
        #expect(dates == dates.sorted())
        #expect(dates.first == expected.compactMap(\.publishedAt).min())
    }

    @Test func keyChecksAndPageCap() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.apiKey = "k-123"
        configuration.maxPage = 3
        let api = try FixtureAPI(configuration: configuration)
        let client = HTTPClient()
        let missing = try await client.get(api.nytSearchURL + "?q=a")
        #expect(missing.status == 401)
        #expect(missing.bodyText.contains("FailedToResolveAPIKey"))
        let wrong = try await client.get(api.nytSearchURL + "?q=a&api-key=nope")
        #expect(wrong.status == 401)
        #expect(!wrong.bodyText.contains("nope"))
        let beyond = try await client.get(api.nytSearchURL + "?q=a&page=4&api-key=k-123")
        #expect(beyond.status == 400)
        #expect(beyond.bodyText.contains(#""status":"ERROR""#))
        let past = try await client.get(api.nytSearchURL + "?q=a&page=3&api-key=k-123")
        #expect(past.status == 200)
        #expect(try NYTArticleSearch.parsePage(past.body).articles.isEmpty == false)
        #expect(!api.requestLog.joined().contains("k-123"))
    }

    @Test func faultsFireByRequestNumberAndAreSpent() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.faults = [.init(.requestNumbers(2...3), .serverError)]
        let api = try FixtureAPI(configuration: configuration)
        let client = HTTPClient()
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await client.get(api.nytSearchURL + "?q=a").status) }
        #expect(statuses == [200, 500, 500, 200])
        api.inject(.init(.everyNYTRequest, .rateLimited, times: 1))
        let limited = try await client.get(api.nytSearchURL + "?q=a")
        #expect(limited.status == 429)
        #expect(limited.header("Retry-After") == nil)
        #expect(try await client.get(api.nytSearchURL + "?q=a").status == 200)
    }

    @Test func feedzillaStoriesShareIDsButNotURLsAcrossCategories() async throws {
        let api = try FixtureAPI(configuration: .init())
        let client = HTTPClient()
        let first = api.feedzillaCategories[0].id
        let second = api.feedzillaCategories[1].id
        let a = try await client.get(api.feedzillaBaseURL + "/categories/\(first)/articles.json")
        let b = try await client.get(api.feedzillaBaseURL + "/categories/\(second)/articles.json")
        let listA = try Feedzilla.parseArticleList(a.body, categoryID: first)
        let listB = try Feedzilla.parseArticleList(b.body, categoryID: second)
        let shared = Set(listA.list.articleIDs).intersection(listB.list.articleIDs)
        #expect(shared.count == 10)
        #expect(a.bodyText.contains("category=\(first)"))
        #expect(b.bodyText.contains("category=\(second)"))
        let categories = try Feedzilla.parseCategories(try await client.get(api.feedzillaBaseURL + "/categories.json").body)
        #expect(categories == api.feedzillaCategories)
    }
}
