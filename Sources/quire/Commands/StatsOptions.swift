/// `quire stats [--json]`
struct StatsOptions: CommandOptions {
    var json: Bool

    static let spec = CommandSpec(
        name: "stats",
        abstract: "Show records, collections, indexes, sizes, free pages, the change feed, map use and readers.",
        options: [.flag("json", help: "Print one JSON object instead of text.")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws { try await StatsCommand.run(self, context: context) }
}
