/// A runnable command: its declaration (for parsing and help) and its typed, validated options.
///
/// Each command has two files: `<Name>Options.swift` (the declaration and the parsed struct,
/// all usage checks happen there) and `<Name>Command.swift` (what it does, given valid options).
protocol CommandOptions: Sendable {
    /// The command's name, options, arguments and help text.
    static var spec: CommandSpec { get }
    /// Builds the typed options, or throws a usage error for a bad or missing value.
    init(parsing arguments: ParsedArguments) throws(UsageError)
    /// Does the work. Throws ``RuntimeError`` (exit 1), ``InterruptedError`` (exit 130) or
    /// ``OutputError``; anything else is reported as a runtime failure.
    func run(_ context: CommandContext) async throws
}

/// Options shared by several commands, declared once so their help reads the same everywhere.
enum CommonOptions {
    static let quiet = OptionSpec.flag("quiet", short: "q", help: "Print no progress and no summary line (errors still show, --json still answers).")
    /// `quiet` for a command without `--json`.
    static let quietOnly = OptionSpec.flag("quiet", short: "q", help: "Print no progress and no summary line (errors still show).")
    static let json = OptionSpec.flag("json", help: "Print the summary as one JSON object on stdout, for scripts.")
    static let collection = OptionSpec.value(
        "collection", "name",
        help: "The collection to read (default: articles; also lists, categories, sources, tags, raw, rejects, budgets, demo; a cluster member's cluster, cluster_pages).",
        choices: ["articles", "lists", "categories", "sources", "tags", "raw", "rejects", "budgets", "demo", "cluster", "cluster_pages"])
    /// Search's: only a collection with a full-text index (the news store's is `articles`).
    static let searchCollection = OptionSpec.value(
        "collection", "name", help: "The collection to search (default: articles, the one with a full-text index).")
}

/// The options accepted by every command, before or after its name.
struct GlobalOptions: Sendable, Equatable {
    /// The store directory: `--store`, else `$QUIRE_STORE`, else `./quire.db`.
    let storePath: String

    static let store = OptionSpec.value(
        "store", "path", help: "The store directory (default: $QUIRE_STORE, else ./quire.db).")
    static let all = [store]
    static let defaultStorePath = "./quire.db"

    init(storePath: String) { self.storePath = storePath }

    init(parsing arguments: ParsedArguments, environment: [String: String]) throws(UsageError) {
        if let path = arguments.value("store") {
            guard !path.isEmpty else { throw arguments.invalid("store", path, "must not be empty") }
            storePath = path
        } else if let path = environment["QUIRE_STORE"], !path.isEmpty {
            storePath = path
        } else {
            storePath = Self.defaultStorePath
        }
    }
}
