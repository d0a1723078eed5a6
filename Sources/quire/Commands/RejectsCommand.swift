import Foundation
import Quire
import QuireFetch
import QuireNews

/// What `quire rejects` does, given valid options (see `RejectsOptions.swift`).
enum RejectsCommand {
    static func run(_ options: RejectsOptions, context: CommandContext) async throws {
        let store = try OpenStore.readOnly(context.storePath, command: "rejects")
        defer { store.close() }
        let out = context.output
        guard try store.storedCollections().contains(where: { $0.name == StoreFetchSink.rejects.name }) else {
            if options.format == .table { try out.line("no rejected documents") }
            return
        }
        var count = 0
        // The table in the order of fetching (source, page, document); the records' own order
        // is their ids' hashes.
        var rows: [(source: String, at: Date, index: Int, cells: [String])] = []
        try store.read { snap in
            for record in snap.records(in: StoreFetchSink.rejects) {
                if context.isInterrupted { break }
                let reject = try record.get().value
                switch options.format {
                case .jsonl:
                    try out.write(bytes: jsonLine(reject))
                case .table:
                    let source = shortSource(reject.source)
                    rows.append((source, reject.rejectedAt, reject.index, [source, reject.page, String(reject.index), reject.path, reject.message]))
                }
                count += 1
            }
        }
        if context.isInterrupted { throw InterruptedError(command: "rejects") }
        guard options.format == .table else { return }
        guard count > 0 else { return try out.line("no rejected documents") }
        try out.line(["source", "page", "index", "path", "message"].joined(separator: "  "))
        rows.sort { ($0.source, $0.at, $0.index) < ($1.source, $1.at, $1.index) }
        for row in rows {
            if context.isInterrupted { throw InterruptedError(command: "rejects") }
            try out.line(row.cells.map(TerminalText.escaped).joined(separator: "  "))
        }
    }

    /// A source as a table shows it: an NYT query's own part (`q=storms&fq=…`, after the
    /// endpoint and its first `@`: the query may hold more), another source whole.
    static func shortSource(_ source: String) -> String {
        guard let at = source.firstIndex(of: "@"), source.index(after: at) < source.endIndex else { return source }
        return String(source[source.index(after: at)...])
    }

    /// One reject as a JSON object on one line; the document is embedded as JSON when it parses.
    static func jsonLine(_ reject: RejectedDocument) -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("id", .string(reject.id)), ("source", .string(reject.source)), ("mapping", .string(reject.mapping)),
            ("page", .string(reject.page)), ("index", .int(reject.index)), ("path", .string(reject.path)),
            ("message", .string(reject.message)), ("rejectedAt", .string(NewsDate.iso8601String(reject.rejectedAt))),
        ]
        if let query = reject.query { members.insert(("query", .string(query)), at: 3) }
        var line = Array("{".utf8)
        for (i, (name, value)) in members.enumerated() {
            if i > 0 { line.append(UInt8(ascii: ",")) }
            line += JSONValue.string(name).jsonBytes + [UInt8(ascii: ":")] + value.jsonBytes
        }
        let raw = Array(reject.raw)
        line += Array(#","document":"#.utf8)
        if (try? JSONParser.parse(raw)) != nil {
            line += raw.filter { $0 != 0x0A && $0 != 0x0D }  // JSON whitespace only: strings cannot hold raw line breaks
        } else {
            line += JSONValue.string(String(decoding: raw, as: UTF8.self)).jsonBytes
        }
        line += Array("}\n".utf8)
        return line
    }
}
