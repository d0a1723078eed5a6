import Foundation
import Quire
import QuireCodec

/// What `quire search` does, given valid options (see `SearchOptions.swift`).
enum SearchCommand {
    static func run(_ options: SearchOptions, context: CommandContext) async throws {
        let store = try OpenStore.readOnly(context.storePath, command: "search")
        defer { store.close() }
        let collection = options.collection ?? "articles"
        guard let definition = try store.storedCollections().first(where: { $0.name == collection }) else {
            throw RuntimeError("search", "the store has no '\(collection)' collection")
        }
        guard definition.search != nil else {
            throw RuntimeError("search", "collection '\(collection)' has no search index")
        }
        let query = options.query
        // Each hit is read, given its snippet and written in turn (a large --limit is not held
        // in memory first), and the first Ctrl-C stops the output between two hits.
        do {
            try store.read { snap in
                // Ranking every match of common words offers no point to stop at before the first
                // hit, and nothing is written yet: the first Ctrl-C ends it at once.
                let hits = try ImmediateStop.during("quire: search: interrupted\n") {
                    try snap.search(
                        query, inCollectionNamed: collection, limit: options.limit, sort: options.sort,
                        since: options.since, until: options.until.map(CommandLineDate.endOfDay),
                        filters: options.section.map { ["section": $0] } ?? [:])
                }
                var highlighter = try snap.searchHighlighter(for: query, inCollectionNamed: collection)
                if options.format == .table { try context.output.line(tableRow(tableHeader)) }
                for hit in hits {
                    if context.isInterrupted { return }
                    // The index and the records are written in one transaction: a hit without its
                    // record is damage, not a hit to leave out silently.
                    guard let value = try snap.genericValue(hit.key, inCollectionNamed: collection) else {
                        throw StoreError.hitWithoutRecord(hit.key, collection: collection)
                    }
                    try write(hit, value, &highlighter, options.format, context.output)
                }
            }
        } catch let error as SearchError {
            throw UsageError(command: "search", message: error.message)
        }
        if context.isInterrupted { throw InterruptedError(command: "search") }
    }

    /// The fields a snippet is looked for in, in order (a match in the keywords alone has none).
    static let snippetFields = ["abstract", "snippet", "leadParagraph", "headline", "byline"]

    /// Writes one hit: the record with its score and snippet (jsonl), or a table row.
    static func write(
        _ hit: SearchHit, _ value: CompactValue, _ highlighter: inout SearchHighlighter, _ format: SearchFormat,
        _ output: OutputWriter
    ) throws {
        var snippet: String?
        for field in snippetFields {
            if case .string(let text)? = value[field], let s = highlighter.snippet(of: text, fromRecordField: field) {
                snippet = s
                break
            }
        }
        switch format {
        case .jsonl:
            // The hit's `snippet` is the marked passage; it takes the place of the record's own
            // field of that name (a key twice is not JSON a client can trust), which stays when
            // no passage of the text fields matched (a match in the keywords).
            var fields: [CompactValue.Field] = []
            if case .object(let existing) = value { fields = existing.filter { $0.key != "snippet" } }
            fields.append(CompactValue.Field(key: "score", value: .double(hit.score)))
            fields.append(CompactValue.Field(key: "snippet", value: snippet.map { .string($0) } ?? value["snippet"] ?? .null))
            try output.write(bytes: CompactValue.object(fields).jsonBytes())
            try output.write("\n")
        case .table:
            let cells = [
                value["id"].map(RecordWriter.text) ?? hit.key.description,
                value["publishedAt"].map(RecordWriter.text).map { String($0.prefix(10)) } ?? "",
                value["section"].map(RecordWriter.text) ?? "",
                value["headline"].map(RecordWriter.text) ?? "",
                snippet ?? "",
            ].map(RecordWriter.cell)
            try output.line(tableRow(cells))
        }
    }

    /// The table's first line: the id (for `quire get`) and what a reader scans a hit by.
    static let tableHeader = ["id", "published", "section", "headline", "snippet"]

    /// Id 50 (a whole `nyt://article/<uuid>`, to pass to `quire get`), date 10, section 16,
    /// headline 60 (terminal columns), then the snippet; cells already made inert (line breaks as
    /// spaces, as dump's tables show them).
    static func tableRow(_ cells: [String]) -> String {
        TerminalColumns.row(cells, widths: [50, 10, 16, 60])
    }
}
