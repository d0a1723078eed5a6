/// What `quire dump` does, given valid options (see `DumpOptions.swift`).
enum DumpCommand {
    static func run(_ options: DumpOptions, context: CommandContext) async throws {
        throw RuntimeError("dump", "not implemented yet")
    }
}
