import Foundation
import Quire

/// How `quire search` prints its hits.
enum SearchFormat: String, CaseIterable, Sendable {
    case jsonl, table
}

/// `quire search QUERY [--since DATE] [--until DATE] [--section NAME] [--sort relevance|newest|oldest]
/// [--limit N] [--format jsonl|table]`
struct SearchOptions: CommandOptions {
    var query: String
    var since: Date?
    var until: Date?
    var section: String?
    var sort: SearchSort
    var limit: Int
    var format: SearchFormat
    var collection: String?

    static let spec = CommandSpec(
        name: "search",
        abstract: "Full-text search of the articles, ranked by BM25F or by date.",
        discussion: """
            QUERY: words (all must match), OR, NOT or -word, "a phrase", prefix*, field:word
            (headline, abstract, snippet, lead, keywords, byline), section:Name, (groups).
            jsonl prints each hit's record with its score, its snippet field the marked passage of the first
            text field where the query matched (abstract, snippet, lead, headline, byline); table prints a header
            row, then the id, date, section, headline and snippet of each hit. A malformed query exits with status 64 and its position;
            so does one of more than 64 words (a phrase's each counted), or one whose words match too many
            postings to rank in bounded memory (leave out the commonest words).
            """,
        options: [
            .value("since", "date", help: "Only articles published on or after this day (YYYY-MM-DD or YYYYMMDD, UTC)."),
            .value("until", "date", help: "Only articles published on or before this day (its whole day)."),
            .value("section", "name", help: "Only articles of this section (exact)."),
            .value("sort", "order", help: "relevance, newest or oldest.", default: "relevance", choices: ["relevance", "newest", "oldest"]),
            .value("limit", "n", help: "At most this many hits (1 to 100,000).", default: "20"),
            .value("format", "format", help: "jsonl or table.", default: "jsonl", choices: ["jsonl", "table"]),
            CommonOptions.searchCollection,
        ],
        arguments: [ArgumentSpec("query", help: "The query, e.g. 'storm surge -rain' or '\"climate change\"'.")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        query = try arguments.requiredPositional(0, "query")
        since = try arguments.date("since")
        until = try arguments.date("until")
        // As `dump` and `serve` say it: an empty window is a mistake, not an empty answer.
        if let since, let until, since > until {
            throw UsageError(command: arguments.commandName, message: "'--since' is after '--until'")
        }
        section = try arguments.name("section")
        sort = try arguments.choice("sort", as: SearchSort.self) ?? .relevance
        limit = try arguments.integer("limit", in: 1...100_000) ?? 20
        format = try arguments.choice("format", as: SearchFormat.self) ?? .jsonl
        collection = try arguments.name("collection")
    }

    func run(_ context: CommandContext) async throws { try await SearchCommand.run(self, context: context) }
}
