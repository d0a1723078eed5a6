/// What `quire copy` does, given valid options (see `CopyOptions.swift`).
enum CopyCommand {
    static func run(_ options: CopyOptions, context: CommandContext) async throws {
        throw RuntimeError("copy", "not implemented yet")
    }
}
