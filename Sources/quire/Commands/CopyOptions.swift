/// `quire copy DEST [--compact]`
struct CopyOptions: CommandOptions {
    var destination: String
    var compact: Bool
    var quiet: Bool

    static let spec = CommandSpec(
        name: "copy",
        abstract: "Write a consistent backup of the store, even while it is in use.",
        discussion: "Like mdb_copy: the copy is a snapshot taken in one read transaction.",
        options: [
            .flag("compact", help: "Omit free pages and renumber pages (smaller, a little slower)."),
            CommonOptions.quietOnly,
        ],
        arguments: [ArgumentSpec("dest", help: "The directory to create for the copy (must not exist or be empty).")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        destination = try arguments.requiredPositional(0, "dest")
        guard !destination.isEmpty else {
            throw UsageError(command: arguments.commandName, message: "the destination is empty")
        }
        compact = arguments.flag("compact")
        quiet = arguments.flag("quiet")
    }

    func run(_ context: CommandContext) async throws { try await CopyCommand.run(self, context: context) }
}
