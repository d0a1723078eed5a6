import Foundation

/// How `quire dump` writes records.
enum DumpFormat: String, CaseIterable, Sendable {
    /// One JSON object a line; what `quire load` reads.
    case jsonl
    /// One JSON array.
    case json
    /// An aligned text table for people.
    case table
    /// `mdb_dump`'s text format (`VERSION=3` … `DATA=END`), so `mdb_load` can restore it.
    case mdb
}

/// `quire dump [--format ...] [--collection NAME] [--since DATE] [--until DATE] [--section NAME] [--limit N]`
struct DumpOptions: CommandOptions {
    var format: DumpFormat
    var collection: String?
    var since: Date?
    var until: Date?
    var section: String?
    var limit: Int?
    /// The whole store: every collection and relation, for `quire load` to rebuild it.
    var all: Bool

    static let spec = CommandSpec(
        name: "dump",
        abstract: "Print the store's records.",
        discussion: """
            The store is opened read-only, so dump works while another process writes. Dates are
            UTC days, YYYY-MM-DD or YYYYMMDD; --until includes its whole day. A table shows an
            article's id (cut to 50 columns), date, section and headline (cut to 200 characters),
            and a record of another collection as its id and its JSON (cut to 160 columns).

            EXAMPLES:
              quire dump --format jsonl > backup.jsonl
              quire dump --format table --section Opinion --since 2016-01-01 --limit 20
              quire dump --format mdb > store.txt && mkdir restored.db && mdb_load -f store.txt restored.db
              quire --store old.db dump --all | quire --store new.db load -
            """,
        options: [
            .value(
                "format", "format", help: "jsonl, json, table or mdb (mdb_dump's format).", default: "jsonl",
                choices: DumpFormat.allCases.map(\.rawValue)),
            CommonOptions.collection,
            .value("since", "date", help: "Only records published on or after this day."),
            .value("until", "date", help: "Only records published on or before this day."),
            .value("section", "name", help: "Only records of this section."),
            .value("limit", "n", help: "Print at most this many records."),
            .flag("all", help: "The whole store (every collection and relation) as JSON Lines, for 'quire load'."),
        ])

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        format = try arguments.choice("format", as: DumpFormat.self) ?? .jsonl
        collection = try arguments.name("collection")
        since = try arguments.date("since")
        until = try arguments.date("until")
        if let since, let until, since > until {
            throw UsageError(command: arguments.commandName, message: "'--since' is after '--until'")
        }
        section = try arguments.name("section")
        limit = try arguments.integer("limit", in: 0...Int.max)
        all = arguments.flag("all")
        let filtered = collection != nil || since != nil || until != nil || section != nil || limit != nil
        if format == .mdb, filtered {
            throw UsageError(
                command: arguments.commandName, message: "'--format mdb' dumps the whole environment: it takes no filter")
        }
        if all {
            if format != .jsonl {
                throw UsageError(command: arguments.commandName, message: "'--all' writes JSON Lines only")
            }
            if filtered {
                throw UsageError(command: arguments.commandName, message: "'--all' dumps everything: it takes no filter")
            }
        }
    }

    func run(_ context: CommandContext) async throws { try await DumpCommand.run(self, context: context) }
}
