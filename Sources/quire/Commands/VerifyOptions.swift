/// `quire verify`
struct VerifyOptions: CommandOptions {
    var quiet: Bool
    var json: Bool

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Decode every record and check every index entry.",
        discussion: "When the store is not consistent, lists the problems on stdout, one a line (in the summary with --json), says how many on stderr and exits with status 1.",
        options: [CommonOptions.quiet, CommonOptions.json])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        quiet = arguments.flag("quiet")
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws { try await VerifyCommand.run(self, context: context) }
}
