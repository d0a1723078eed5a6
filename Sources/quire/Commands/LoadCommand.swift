/// What `quire load` does, given valid options (see `LoadOptions.swift`).
enum LoadCommand {
    static func run(_ options: LoadOptions, context: CommandContext) async throws {
        throw RuntimeError("load", "not implemented yet")
    }
}
