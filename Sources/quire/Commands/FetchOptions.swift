import Foundation
import QuireFetch

/// `quire fetch`: only groups its sources.
enum FetchGroup {
    static let spec = CommandSpec(
        name: "fetch",
        abstract: "Fetch articles from a news API into the store.",
        subcommands: [FetchNYTOptions.spec, FetchFeedzillaOptions.spec])
}

/// `--refresh` and `--restart`, which exclude each other.
enum FetchModeFlags {
    static func parse(_ arguments: ParsedArguments) throws(UsageError) -> FetchMode {
        let refresh = arguments.flag("refresh")
        let restart = arguments.flag("restart")
        if refresh && restart {
            throw UsageError(command: arguments.commandName, message: "'--refresh' and '--restart' exclude each other")
        }
        return restart ? .restart : refresh ? .refresh : .resume
    }
}

/// The order of NYT results.
enum NYTSortOrder: String, CaseIterable, Sendable {
    case newest, oldest, relevance
}

/// `quire fetch nyt --query Q [--begin DATE] [--end DATE] [--sort ...] [--fq EXPR] [--max-pages N]
/// [--base-url URL] [--rate N/min]`
struct FetchNYTOptions: CommandOptions {
    var query: String
    var begin: Date?
    var end: Date?
    var sort: NYTSortOrder?
    var filterQuery: String?
    var maxPages: Int?
    var baseURL: URL?
    /// Requests a minute.
    var ratePerMinute: Int
    /// From `--api-key`, else `$NYT_API_KEY`; nil when neither is set. Never printed.
    var apiKey: String?
    var keepRaw: Bool
    var quiet: Bool
    var json: Bool
    var mode: FetchMode
    var waitForQuota: Bool
    /// From `--daily-budget`: requests in 24 hours (`Int.max` for `none`); nil for the default.
    var dailyBudget: Int?

    static let defaultRatePerMinute = 5
    static let defaultRatePerDay = 500

    /// The daily budget of a run against `endpoint`: `--daily-budget`, else the NYT's 500 a day,
    /// except for a server on this machine (the fixture API), which is not the NYT's.
    func requestsPerDay(endpoint: String) -> Int {
        if let dailyBudget { return dailyBudget }
        return LoopbackURL.isLoopback(endpoint) ? Int.max : Self.defaultRatePerDay
    }

    static let spec = CommandSpec(
        name: "nyt",
        abstract: "Fetch from the New York Times Article Search API (v2).",
        discussion: """
            ENVIRONMENT:
              NYT_API_KEY             The API key (the documented way to pass it; it is never printed).

            Each page is stored with the query's checkpoint in one transaction, so an interrupted
            fetch (Ctrl-C, a crash) resumes where it stopped when run again with the same query.
            A document that cannot be mapped is quarantined (one stderr line each; see
            'quire rejects' and 'quire remap') and the rest of its page is stored. A page that
            fails for good (an HTML 403, a body that cannot be read) is set aside and the others
            fetched; the next run fetches the pages set aside. A query fetched to the end does
            nothing until --refresh (only what is newer) or --restart. When the
            API keeps answering 429, the run stops after about half a minute with its checkpoint
            intact; the daily budget (500 requests; none for a server on this machine, such as
            'quire fixtures') is kept in the store. --wait waits instead.

            EXAMPLE:
              NYT_API_KEY=... quire fetch nyt --query "election" --begin 2016-11-01 --end 20161110
            """,
        options: [
            .required("query", "q", help: "The search terms (the API's q parameter)."),
            .value("begin", "date", help: "Earliest publication date, YYYY-MM-DD or YYYYMMDD."),
            .value("end", "date", help: "Latest publication date, YYYY-MM-DD or YYYYMMDD."),
            .value(
                "sort", "order", help: "Result order: newest, oldest or relevance.", default: "the API's",
                choices: ["newest", "oldest", "relevance"]),
            .value("fq", "expr", help: "A filter query in Lucene syntax (the API's fq parameter)."),
            .value("max-pages", "n", help: "Stop after this many pages of this run (10 articles a page); the next run goes on."),
            .value("base-url", "url", help: "The API's base URL (for a proxy or the fixture server)."),
            .value("rate", "n/min", help: "Requests a minute at most.", default: "\(defaultRatePerMinute)/min"),
            .value(
                "daily-budget", "n",
                help: "Requests in 24 hours at most, counted in the store; 'none' for no budget.",
                default: "\(defaultRatePerDay), none for a server on this machine"),
            .value("api-key", "key", help: "The API key; prefer $NYT_API_KEY (a command line is visible to others)."),
            .flag("keep-raw", help: "Keep each document's raw JSON (compressed), to re-map later without refetching."),
            .flag("refresh", help: "For a query fetched to the end: fetch only what is newer than its last run."),
            .flag("restart", help: "Ignore the stored checkpoint and fetch the query from the start."),
            .flag("wait", help: "Wait out rate limits and a spent daily quota instead of stopping."),
            CommonOptions.quiet, CommonOptions.json,
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        query = try arguments.required("query")
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw arguments.invalid("query", query, "must not be empty")
        }
        begin = try arguments.date("begin")
        end = try arguments.date("end")
        if let begin, let end, begin > end {
            throw UsageError(command: arguments.commandName, message: "'--begin' is after '--end'")
        }
        sort = try arguments.choice("sort", as: NYTSortOrder.self)
        filterQuery = arguments.value("fq")
        maxPages = try arguments.integer("max-pages", in: 1...Int.max)
        baseURL = try arguments.url("base-url")
        ratePerMinute = try Self.parseRate(arguments) ?? Self.defaultRatePerMinute
        apiKey = arguments.value("api-key")
        keepRaw = arguments.flag("keep-raw")
        quiet = arguments.flag("quiet")
        json = arguments.flag("json")
        mode = try FetchModeFlags.parse(arguments)
        waitForQuota = arguments.flag("wait")
        dailyBudget = try Self.parseDailyBudget(arguments)
    }

    /// Accepts a positive number of requests, or `none`.
    static func parseDailyBudget(_ arguments: ParsedArguments) throws(UsageError) -> Int? {
        guard let text = arguments.value("daily-budget") else { return nil }
        if text == "none" { return Int.max }
        guard let budget = Int(text), budget >= 1 else {
            throw arguments.invalid("daily-budget", text, "expected a number of requests (1 or more), or none")
        }
        return budget
    }

    /// Accepts `N/min` or a bare `N` (`fetch` and `node` alike).
    static func parseRate(_ arguments: ParsedArguments) throws(UsageError) -> Int? {
        guard let text = arguments.value("rate") else { return nil }
        let number = text.hasSuffix("/min") ? String(text.dropLast(4)) : text
        guard let rate = Int(number), rate >= 1 else {
            throw arguments.invalid("rate", text, "expected requests a minute, like 5/min")
        }
        return rate
    }

    /// The key to use: `--api-key`, else `$NYT_API_KEY`.
    func resolvedAPIKey(environment: [String: String]) -> String? {
        if let apiKey, !apiKey.isEmpty { return apiKey }
        if let key = environment["NYT_API_KEY"], !key.isEmpty { return key }
        return nil
    }

    func run(_ context: CommandContext) async throws { try await FetchNYTCommand.run(self, context: context) }
}

/// `quire fetch feedzilla [--category ID ...] [--base-url URL]`
struct FetchFeedzillaOptions: CommandOptions {
    /// The categories to fetch; empty means every category the API lists.
    var categories: [String]
    var baseURL: URL?
    var quiet: Bool
    var json: Bool
    var mode: FetchMode

    static let spec = CommandSpec(
        name: "feedzilla",
        abstract: "Fetch from a Feedzilla-style category API (v1).",
        discussion: """
            Without --category, every category listed by /v1/categories.json is fetched.
            """,
        options: [
            .repeated("category", "id", help: "A category id to fetch."),
            .value("base-url", "url", help: "The API's base URL."),
            .flag("refresh", help: "After a complete run: fetch the categories again."),
            .flag("restart", help: "Ignore the stored checkpoint and fetch from the start."),
            CommonOptions.quiet, CommonOptions.json,
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        categories = arguments.allValues("category")
        if let empty = categories.first(where: { $0.isEmpty }) {
            throw arguments.invalid("category", empty, "must not be empty")
        }
        baseURL = try arguments.url("base-url")
        quiet = arguments.flag("quiet")
        json = arguments.flag("json")
        mode = try FetchModeFlags.parse(arguments)
    }

    func run(_ context: CommandContext) async throws { try await FetchFeedzillaCommand.run(self, context: context) }
}
