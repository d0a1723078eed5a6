/// What `quire verify` does, given valid options (see `VerifyOptions.swift`).
enum VerifyCommand {
    static func run(_ options: VerifyOptions, context: CommandContext) async throws {
        throw RuntimeError("verify", "not implemented yet")
    }
}
