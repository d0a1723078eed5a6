/// `quire fixtures [--articles N] [--seed N] [--report-query Q…]`
struct FixturesOptions: CommandOptions {
    var reportQueries: [String]
    var articles: Int
    var seed: UInt64
    var port: Int

    static let spec = CommandSpec(
        name: "fixtures",
        abstract: "Serve the loopback fixture API (NYT and Feedzilla shapes) for tests and the cluster script.",
        discussion: """
            Prints its base URL on stdout (use it as --base-url; its NYT API takes any NYT_API_KEY,
            e.g. NYT_API_KEY=x quire fetch nyt --query climate --base-url URL), then serves generated articles
            on 127.0.0.1 (a free port, or --port: a fetch's source is named by host and port, so a
            fetch resumes against a restarted server on the same port) until Ctrl-C (SIGINT or SIGTERM). On stopping it prints
            one JSON line: how many requests and documents it served, and the ids of the articles
            of each --report-query, so a test can check that every served article was stored.
            """,
        options: [
            .value("articles", "n", help: "NYT articles per query (10 a page; 0 to 1,000,000).", default: "120"),
            .value("seed", "n", help: "The generator's seed.", default: "42"),
            .value("port", "n", help: "The port to listen on (0: a free one).", default: "0"),
            .repeated("report-query", "query", help: "A NYT query whose article ids to print on stopping."),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        reportQueries = arguments.allValues("report-query")
        articles = try arguments.integer("articles", in: 0...1_000_000) ?? 120
        let seedText = arguments.value("seed") ?? "42"
        guard let seed = UInt64(seedText) else { throw arguments.invalid("seed", seedText, "expected a whole number") }
        self.seed = seed
        port = try arguments.integer("port", in: 0...65_535) ?? 0
    }

    func run(_ context: CommandContext) async throws { try await FixturesCommand.run(self, context: context) }
}
