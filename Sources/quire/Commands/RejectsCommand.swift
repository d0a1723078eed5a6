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
        try store.read { snap in
            for record in snap.records(in: StoreFetchSink.rejects) {
                if context.isInterrupted { break }
                let reject = try record.get().value
                switch options.format {
                case .jsonl:
                    try out.write(bytes: jsonLine(reject))
                case .table:
                    // The header with the first row: an empty quarantine says so instead.
                    if count == 0 { try out.line(["page", "index", "path", "message"].joined(separator: "  ")) }
                    try out.line(
                        [reject.page, String(reject.index), reject.path, reject.message].map(TerminalText.escaped)
                            .joined(separator: "  "))
                }
                count += 1
            }
        }
        if context.isInterrupted { throw InterruptedError(command: "rejects") }
        if options.format == .table && count == 0 { try out.line("no rejected documents") }
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
