/// Every command of the CLI, the tree the parser walks and the help text is drawn from.
enum CommandTable {
    static let version = "0.1.0"

    /// Leaf commands by their path (`["fetch", "nyt"]`).
    static let commands: [[String]: any CommandOptions.Type] = [
        ["demo"]: DemoOptions.self,
        ["fetch", "nyt"]: FetchNYTOptions.self,
        ["fetch", "feedzilla"]: FetchFeedzillaOptions.self,
        ["dump"]: DumpOptions.self,
        ["get"]: GetOptions.self,
        ["search"]: SearchOptions.self,
        ["load"]: LoadOptions.self,
        ["stats"]: StatsOptions.self,
        ["copy"]: CopyOptions.self,
        ["verify"]: VerifyOptions.self,
        ["rejects"]: RejectsOptions.self,
        ["remap"]: RemapOptions.self,
        ["watch"]: WatchOptions.self,
        ["serve"]: ServeOptions.self,
        ["node"]: NodeOptions.self,
        ["fixtures"]: FixturesOptions.self,
        ["completions"]: CompletionsOptions.self,
        ["manpage"]: ManpageOptions.self,
        ["help"]: HelpOptions.self,
    ]

    static let root = CommandSpec(
        name: "quire",
        abstract: "Dump, inspect, fill and back up a Quire article store.",
        discussion: """
            ENVIRONMENT:
              QUIRE_STORE             The store directory when --store is not given.
              NYT_API_KEY             The key for 'quire fetch nyt'.

            EXIT STATUS:
              0 success, 1 runtime failure, 64 usage error, 130 interrupted (what a writing command
              committed stays, whole; a reading command changed nothing).
              SIGTERM and SIGHUP stop a command as Ctrl-C does; serve, node and fixtures, which
              run until stopped, then exit 0. Output closed early by its reader
              ('quire dump | head') ends a command quietly with status 0.
            """,
        subcommands: [
            DemoOptions.spec, FetchGroup.spec, DumpOptions.spec, GetOptions.spec, SearchOptions.spec, LoadOptions.spec,
            StatsOptions.spec, CopyOptions.spec, VerifyOptions.spec, RejectsOptions.spec, RemapOptions.spec,
            WatchOptions.spec, ServeOptions.spec, NodeOptions.spec, FixturesOptions.spec, CompletionsOptions.spec, ManpageOptions.spec, HelpOptions.spec,
        ])

    static let parser = CommandLineParser(root: root, globalOptions: GlobalOptions.all)
    static let help = HelpFormatter(toolName: "quire", globalOptions: GlobalOptions.all)
}
