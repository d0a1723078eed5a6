/// What `quire fetch nyt` does, given valid options (see `FetchNYTOptions.swift`).
enum FetchNYTCommand {
    static func run(_ options: FetchNYTOptions, context: CommandContext) async throws {
        throw RuntimeError("fetch nyt", "not implemented yet")
    }
}
