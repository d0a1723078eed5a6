import Foundation
import Quire
import QuireFetch
import QuireHTTP
import QuireNews

/// What `quire fetch nyt` does, given valid options (see `FetchNYTOptions.swift`).
enum FetchNYTCommand {
    static func run(_ options: FetchNYTOptions, context: CommandContext) async throws {
        guard let key = options.resolvedAPIKey(environment: context.environment) else {
            // A server on this machine is most likely `quire fixtures`, which takes any key.
            let local = LoopbackURL.isLoopback(endpoint(options.baseURL))
            throw RuntimeError(
                "fetch nyt",
                "no API key: set NYT_API_KEY (\(local ? "'quire fixtures' takes any value" : "get one at developer.nytimes.com"))")
        }
        let query = NYTQuery(
            query: options.query, filter: options.filterQuery, begin: options.begin.map(NYTDay.init(date:)),
            end: options.end.map(NYTDay.init(date:)), sort: options.sort.flatMap { NYTQuery.Sort(rawValue: $0.rawValue) })
        do {
            try query.validate()
        } catch {
            throw RuntimeError("fetch nyt", "invalid query: \(error)")
        }
        let source = NYTSource(
            query: query, key: APIKey(key), endpoint: endpoint(options.baseURL))
        let store = try OpenStore.readWrite(context.storePath, command: "fetch nyt")
        defer { store.close() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var retry = RetryPolicy()
        retry.waitForQuota = options.waitForQuota
        let service = FetchService(
            client: client,
            rateLimiter: RateLimiter(perMinute: options.ratePerMinute, perDay: options.requestsPerDay(endpoint: source.endpoint)),
            retryPolicy: retry)
        let start = ContinuousClock.now
        let summary = try await FetchRunner.run(
            source, store: store, service: service, command: "fetch nyt", quiet: options.quiet, mode: options.mode,
            keepRaw: options.keepRaw, pageLimit: options.maxPages, json: options.json, context: context)
        if options.json {
            try context.output.line(FetchRunner.json(summary, seconds: seconds(since: start)))
        } else if !options.quiet {
            Diagnostics.write("quire: fetch nyt: \(FetchRunner.describe(summary, seconds: seconds(since: start)))\n")
        }
    }

    /// The search endpoint under a base URL: `http://host:port`, `…/svc/search/v2` and the full
    /// `…/articlesearch.json` URL all work.
    static func endpoint(_ base: URL?) -> String {
        guard let base else { return NYTSource.defaultEndpoint }
        var text = base.absoluteString
        if let query = text.firstIndex(of: "?") { text = String(text[..<query]) }
        if text.hasSuffix(".json") { return text }
        while text.hasSuffix("/") { text.removeLast() }
        for suffix in ["/svc/search/v2", "/svc/search", "/svc"] where text.hasSuffix(suffix) {
            text.removeLast(suffix.count)
            break
        }
        return text + "/svc/search/v2/articlesearch.json"
    }
}

/// Seconds elapsed since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
