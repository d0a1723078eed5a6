/// How `quire get` prints one record.
enum GetFormat: String, CaseIterable, Sendable {
    case json, table
}

/// `quire get ID [--format json|table]`
struct GetOptions: CommandOptions {
    var id: String
    var format: GetFormat
    var collection: String?

    static let spec = CommandSpec(
        name: "get",
        abstract: "Print one record by its id.",
        discussion: "Exits with status 1 and a message on stderr when there is no record with that id.",
        options: [
            .value("format", "format", help: "json or table.", default: "json", choices: ["json", "table"]),
            CommonOptions.collection,
        ],
        arguments: [ArgumentSpec("id", help: "The record's id, e.g. nyt://article/… or a 24-hex id.")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        id = try arguments.requiredPositional(0, "id")
        guard !id.isEmpty else { throw UsageError(command: arguments.commandName, message: "the id is empty") }
        format = try arguments.choice("format", as: GetFormat.self) ?? .json
        collection = try arguments.name("collection")
    }

    func run(_ context: CommandContext) async throws { try await GetCommand.run(self, context: context) }
}
