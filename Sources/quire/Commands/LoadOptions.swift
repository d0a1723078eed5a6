import Quire
import QuireFetch

/// `quire load [--collection NAME] FILE|-`
struct LoadOptions: CommandOptions {
    /// The file to read, or nil for stdin (`-`).
    var path: String?
    /// The collection a plain dump's records go into (`dump --collection NAME` of it); nil for
    /// articles or a whole-store dump.
    var collection: String?
    var quiet: Bool
    var json: Bool

    static let spec = CommandSpec(
        name: "load",
        abstract: "Load records from a JSON Lines dump into the store (upserting by id).",
        discussion: """
            Reads what 'quire dump' writes: JSON Lines (each line up to 64 MiB), the JSON array of
            --format json (one record a line, separated by one comma each), or the whole-store form
            of --all (every collection and relation). Lines
            are parsed on every core and written in chunks, each one transaction. A line that cannot be stored (a
            fraction where a whole number belongs, a number for a string, an empty id, a field an
            article lacks) stops the load with its line number and field; every record before it
            is committed. An id read twice is one record, the last line kept, and the summary
            counts it once (and says how many lines were read). Ctrl-C stops between transactions
            and leaves the store consistent, saying how many records were committed: those of the
            transactions written so far, which a load fills in id order, so they need not be the
            first lines read (an input larger than the sort window, about 85,000 articles, is
            sorted through a temporary file and committed only at its end); loading the input
            again finishes the work, so resume by loading the whole input, not its rest. A dump of
            another collection ('dump --collection lists') loads with the same --collection. The
            relations of a whole-store dump are written once its records are: a load that stops at
            a bad article writes the entries whose articles it loaded.

            EXAMPLES:
              quire --store old.db dump | quire --store new.db load -
              quire --store old.db dump --all | quire --store new.db load -
              quire --store old.db dump --collection lists | quire --store new.db load --collection lists -
            """,
        options: [
            .value(
                "collection", "name",
                help: "The collection of a plain dump's records (default: articles; also lists, categories, sources, tags, raw, rejects, budgets)."),
            CommonOptions.quiet, CommonOptions.json,
        ],
        arguments: [ArgumentSpec("file", help: "The dump to read, or - for stdin.")])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        let file = try arguments.requiredPositional(0, "file")
        guard !file.isEmpty else { throw UsageError(command: arguments.commandName, message: "the file name is empty") }
        path = file == "-" ? nil : file
        if let name = arguments.value("collection") {
            guard WholeStoreLoad.loadableCollections.contains(name) else {
                let names = WholeStoreLoad.loadableCollections.joined(separator: ", ")
                throw UsageError(command: arguments.commandName, message: "--collection: no collection '\(name)' (one of: \(names))")
            }
            collection = name == NewsSchema.articles.name ? nil : name
        }
        quiet = arguments.flag("quiet")
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws { try await LoadCommand.run(self, context: context) }
}
