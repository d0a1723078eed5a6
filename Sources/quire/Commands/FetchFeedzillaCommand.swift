/// What `quire fetch feedzilla` does, given valid options (see `FetchFeedzillaOptions.swift`).
enum FetchFeedzillaCommand {
    static func run(_ options: FetchFeedzillaOptions, context: CommandContext) async throws {
        throw RuntimeError("fetch feedzilla", "not implemented yet")
    }
}
