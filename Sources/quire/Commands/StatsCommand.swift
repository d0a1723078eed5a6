/// What `quire stats` does, given valid options (see `StatsOptions.swift`).
enum StatsCommand {
    static func run(_ options: StatsOptions, context: CommandContext) async throws {
        throw RuntimeError("stats", "not implemented yet")
    }
}
