import Foundation
import Quire
import QuireFetch
import QuireFixtures
import QuireHTTP
import QuireNews

/// What `quire demo` does: the whole pipeline with no network and no key.
///
/// Starts the fixture API on 127.0.0.1 (generated NYT and Feedzilla responses), fetches a query
/// through libcurl into the store (paging and date-window splitting included), fetches the
/// Feedzilla categories, then prints what was fetched and a few stored articles.
enum DemoCommand {
    static let query = "climate"
    static let demoKey = "demo-key-not-a-secret"

    static func run(_ options: DemoOptions, context: CommandContext) async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = options.articles
        configuration.apiKey = demoKey
        configuration.feedzillaCategoryCount = 5
        configuration.feedzillaArticlesPerCategory = 20
        let api: FixtureAPI
        do {
            api = try FixtureAPI(configuration: configuration)
        } catch {
            throw RuntimeError("demo", "cannot start the local fixture server: \(error)")
        }
        defer { api.stop() }
        let store = try OpenStore.readWrite(context.storePath, command: "demo")
        defer { store.close() }
        try await DemoMarker.claim(store)
        let client = HTTPClient()
        defer { client.shutdown() }
        let service = FetchService(client: client, rateLimiter: .unlimited)
        let out = context.output

        // Quiet: no progress and no report (the shared --quiet's promise); errors still show.
        if !options.quiet {
            try out.line("Quire demo: a local NYT-style API on \(api.baseURL), \(options.articles) articles for \"\(query)\"")
            try out.flush()
        }
        let start = ContinuousClock.now
        let nyt = NYTSource(query: NYTQuery(query: query, sort: .newest), key: APIKey(demoKey), endpoint: api.nytSearchURL)
        let nytSummary = try await FetchRunner.run(
            nyt, store: store, service: service, command: "demo", quiet: options.quiet, mode: .restart, context: context)
        let nytSeconds = seconds(since: start)
        let feedzilla = FeedzillaSource(baseURL: api.feedzillaBaseURL)
        let feedStart = ContinuousClock.now
        let feedSummary = try await FetchRunner.run(
            feedzilla, store: store, service: service, command: "demo", quiet: true, mode: .restart, context: context)
        let feedSeconds = seconds(since: feedStart)

        guard !options.quiet else { return }
        // The hints name the store unless a plain `quire` finds it (the default, $QUIRE_STORE).
        let path = context.storePath
        let environment = context.environment["QUIRE_STORE"].flatMap { $0.isEmpty ? nil : $0 }
        let found = path == (environment ?? GlobalOptions.defaultStorePath)
        let quire = found ? "quire" : "quire --store \(ShellWord.quoted(path))"
        let rate = Double(nytSummary.records) / max(nytSeconds, 0.001)
        try out.line(
            "fetched NYT:       \(nytSummary.pages) pages, \(nytSummary.records) articles in \(String(format: "%.2f", nytSeconds))s (\(Int(rate)) articles/s) through libcurl")
        try out.line(
            "fetched Feedzilla: \(feedSummary.pages) pages, \(feedSummary.records) articles in \(String(format: "%.2f", feedSeconds))s")
        let stats = try store.storeStatistics()
        for c in stats.collections where c.records > 0 {
            try out.line("stored \(c.name): \(c.records) records, \(c.bytes) bytes")
        }
        try out.line("store: \(store.path)")
        try out.line("")
        try out.line("newest stored articles (publication-date index, newest first):")
        let newest = try store.read { snap in
            try snap.values(in: NewsSchema.byDate, of: NewsSchema.articles, reverse: true, limit: 5)
        }
        for article in newest {
            let day = article.publishedAt.map { NewsDate.iso8601String($0).prefix(10) } ?? "----------"
            try out.line("  \(day)  \((article.section ?? "").padding(toLength: 14, withPad: " ", startingAt: 0))  \(article.headline ?? article.id)")
        }
        if let first = newest.first {
            try out.line("")
            try out.line("one record, as `\(quire) get \(ShellWord.quoted(first.id))` prints it:")
            if let value = try store.read({ try $0.genericValue(.string(first.id), inCollectionNamed: "articles") }) {
                try out.line(value.jsonString())
            }
        }
        try out.line("")
        let next = ["dump --format table | head", "search climate", "watch", "stats", "verify", "serve"].map { "\(quire) \($0)" }
        try out.line("next: \(next.joined(separator: ", ")) (then open http://127.0.0.1:8080/)")
    }
}
