/// `quire demo [--articles N]`
struct DemoOptions: CommandOptions {
    var articles: Int
    var quiet: Bool

    static let defaultArticles = 2_000

    static let spec = CommandSpec(
        name: "demo",
        abstract: "Fetch generated articles from a built-in local server into a store and show them.",
        discussion: """
            The demo needs no network and no key: it starts the fixture API server on 127.0.0.1,
            fetches through the real HTTP path into the store, then prints what it fetched and a few
            stored articles. Use --store to keep the result somewhere other than ./quire.db.
            """,
        options: [
            .value("articles", "n", help: "How many articles to generate and fetch (1 to 10,000,000).", default: "\(defaultArticles)"),
            CommonOptions.quietOnly,
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        articles = try arguments.integer("articles", in: 1...10_000_000) ?? Self.defaultArticles
        quiet = arguments.flag("quiet")
    }

    func run(_ context: CommandContext) async throws { try await DemoCommand.run(self, context: context) }
}
