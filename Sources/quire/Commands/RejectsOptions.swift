/// How `quire rejects` prints the quarantine.
enum RejectsFormat: String, CaseIterable, Sendable {
    case jsonl, table
}

/// `quire rejects [--format jsonl|table]`
struct RejectsOptions: CommandOptions {
    var format: RejectsFormat

    static let spec = CommandSpec(
        name: "rejects",
        abstract: "List the fetched documents that could not be mapped (the quarantine).",
        discussion: """
            Each line names the source, the page, the document's index in it, the JSON path of the
            failure and why; jsonl also carries the document itself. 'quire remap' maps them again.
            """,
        options: [.value("format", "format", help: "jsonl or table.", default: "table", choices: ["jsonl", "table"])])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        format = try arguments.choice("format", as: RejectsFormat.self) ?? .table
    }

    func run(_ context: CommandContext) async throws { try await RejectsCommand.run(self, context: context) }
}
