/// `quire verify`
struct VerifyOptions: CommandOptions {
    var quiet: Bool
    var json: Bool

    static let spec = CommandSpec(
        name: "verify",
        abstract: "Decode every record and check every index entry.",
        discussion: "Exits with status 1 and lists the problems on stderr when the store is not consistent.",
        options: [CommonOptions.quiet, CommonOptions.json])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        quiet = arguments.flag("quiet")
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws { try await VerifyCommand.run(self, context: context) }
}
