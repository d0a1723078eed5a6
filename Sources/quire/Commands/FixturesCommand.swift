import Foundation
import QuireFixtures
import QuireNews

/// What `quire fixtures` does, given valid options (see `FixturesOptions.swift`).
enum FixturesCommand {
    static func run(_ options: FixturesOptions, context: CommandContext) async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.seed = options.seed
        configuration.nytArticlesPerQuery = options.articles
        let api: FixtureAPI
        do {
            api = try FixtureAPI(configuration: configuration, port: options.port)
        } catch {
            throw RuntimeError("fixtures", "cannot start the fixture API: \(error)")
        }
        try context.output.line(api.baseURL)
        try context.output.flush()
        while !context.isInterrupted {
            try? await Task.sleep(for: .milliseconds(100))
        }
        api.stop()
        var articles: [String: [String]] = [:]
        for query in options.reportQueries { articles[query] = api.nytArticles(query: query).map(\.id) }
        let report: [String: Any] = [
            "requests": api.requestCount, "documents": api.servedDocuments.count, "articles": articles,
        ]
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        try context.output.line(String(decoding: data, as: UTF8.self))
        try context.output.flush()
    }
}
