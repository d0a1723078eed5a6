/// How `quire watch` prints the change feed.
enum WatchFormat: String, CaseIterable, Sendable {
    case jsonl, table
}

/// `quire watch [--since N] [--format jsonl|table]`
struct WatchOptions: CommandOptions {
    var since: UInt64?
    var format: WatchFormat

    static let spec = CommandSpec(
        name: "watch",
        abstract: "Follow the store's durable change feed: one line per commit.",
        discussion: """
            Without --since, prints the commits made from now on; with --since N, every commit after
            sequence N that the feed still holds (a trimmed range is printed as a gap). Runs until
            Ctrl-C. Works while another process writes the store.
            """,
        options: [
            .value("since", "n", help: "Start after this commit sequence number (0: the oldest kept)."),
            .value("format", "format", help: "jsonl or table.", default: "jsonl", choices: ["jsonl", "table"]),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        if let text = arguments.value("since") {
            guard let number = UInt64(text) else { throw arguments.invalid("since", text, "expected a sequence number") }
            since = number
        }
        format = try arguments.choice("format", as: WatchFormat.self) ?? .jsonl
    }

    func run(_ context: CommandContext) async throws { try await WatchCommand.run(self, context: context) }
}
