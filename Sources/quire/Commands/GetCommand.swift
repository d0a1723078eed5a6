/// What `quire get` does, given valid options (see `GetOptions.swift`).
enum GetCommand {
    static func run(_ options: GetOptions, context: CommandContext) async throws {
        throw RuntimeError("get", "not implemented yet")
    }
}
