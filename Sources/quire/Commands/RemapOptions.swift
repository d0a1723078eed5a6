/// `quire remap [--quiet]`
struct RemapOptions: CommandOptions {
    var quiet: Bool

    static let spec = CommandSpec(
        name: "remap",
        abstract: "Map the quarantined and the kept raw documents again, without refetching.",
        discussion: """
            After a fix to the mapping: rejects that map now move into the articles (with their
            query's index entries), the others stay in 'quire rejects' with today's reason; raw
            documents kept by 'fetch nyt --keep-raw' update their articles. Running it again
            changes nothing.
            """,
        options: [CommonOptions.quietOnly])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        quiet = arguments.flag("quiet")
    }

    func run(_ context: CommandContext) async throws { try await RemapCommand.run(self, context: context) }
}
