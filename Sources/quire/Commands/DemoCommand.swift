/// What `quire demo` does, given valid options (see `DemoOptions.swift`).
enum DemoCommand {
    static func run(_ options: DemoOptions, context: CommandContext) async throws {
        throw RuntimeError("demo", "not implemented yet")
    }
}
