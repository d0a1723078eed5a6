/// `quire copy DEST [--compact]`
struct CopyOptions: CommandOptions {
    var destination: String
    var compact: Bool
    /// The meta page to copy the store as (0 or 1), for a store one of whose meta pages is damaged.
    var metaPage: Int?
    var quiet: Bool

    static let spec = CommandSpec(
        name: "copy",
        abstract: "Write a consistent backup of the store, even while it is in use.",
        discussion: """
            Like mdb_copy: the copy is a snapshot taken in one read transaction.
            A store that cannot be opened because one of its two meta pages is damaged (a torn
            write at a power loss) is recovered with --meta-page N, which copies the file as its
            intact page N describes it: the newest commit or the one before (the error names the
            page). Stop the store's writers first, and run verify on the copy.
            """,
        options: [
            .flag("compact", help: "Omit free pages and renumber pages (smaller, a little slower)."),
            .value(
                "meta-page", "N", help: "Copy the store as its meta page N (0 or 1) describes it (the other one damaged).",
                choices: ["0", "1"]),
            CommonOptions.quietOnly,
        ],
        arguments: [ArgumentSpec("dest", help: "The directory to create for the copy (must not exist or be empty).")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        destination = try arguments.requiredPositional(0, "dest")
        guard !destination.isEmpty else {
            throw UsageError(command: arguments.commandName, message: "the destination is empty")
        }
        compact = arguments.flag("compact")
        metaPage = try arguments.integer("meta-page", in: 0...1)
        if metaPage != nil && compact {
            throw UsageError(command: arguments.commandName, message: "--meta-page copies the file as it is: copy the recovered store again with --compact")
        }
        quiet = arguments.flag("quiet")
    }

    func run(_ context: CommandContext) async throws { try await CopyCommand.run(self, context: context) }
}
