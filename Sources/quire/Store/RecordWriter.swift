import Foundation
import Quire
import QuireCodec

/// Writes generic records as JSON Lines, one JSON array, or an aligned table.
final class RecordWriter {
    let format: DumpFormat
    let output: OutputWriter
    /// Whether a table row shows an article's date, section and headline; other collections
    /// (lists, sources, rejects) have none of them and show their record as JSON instead.
    let articleColumns: Bool
    private var count = 0

    init(format: DumpFormat, output: OutputWriter, articleColumns: Bool = true) {
        self.format = format
        self.output = output
        self.articleColumns = articleColumns
    }

    func begin() throws(OutputError) {
        switch format {
        case .json: try output.write("[")
        case .table:
            try output.line(
                articleColumns ? Self.tableRow(["id", "published", "section", "headline"]) : Self.recordRow("id", "record"))
        case .jsonl, .mdb: break
        }
    }

    func write(key: StoreKey, value: CompactValue) throws(OutputError) {
        switch format {
        case .jsonl, .mdb:
            try output.write(bytes: value.jsonBytes())
            try output.write("\n")
        case .json:
            try output.write(count == 0 ? "\n" : ",\n")
            try output.write(bytes: value.jsonBytes())
        case .table where articleColumns:
            try write(key: key, tableFields: Self.tableFields.map { value[$0] })
            return
        case .table:
            let id = value["id"].map(Self.text) ?? key.description
            try output.line(Self.recordRow(id, String(decoding: value.jsonBytes(), as: UTF8.self)))
        }
        count += 1
    }

    /// The fields a table row shows, in its columns' order.
    static let tableFields = ["id", "publishedAt", "section", "headline"]

    /// A table row of a record whose ``tableFields`` are `values` (nil where it has none).
    func write(key: StoreKey, tableFields values: [CompactValue?]) throws(OutputError) {
        precondition(format == .table && values.count == Self.tableFields.count, "a table row")
        try output.line(
            Self.tableRow([
                values[0].map(Self.text) ?? key.description,
                values[1].map(Self.text).map { String($0.prefix(10)) } ?? "",
                values[2].map(Self.text) ?? "",
                values[3].map(Self.text).map { Self.capped($0, 200) } ?? "",
            ]))
        count += 1
    }

    /// A record already written as JSON (the JSON formats only).
    func write(json: UnsafeBufferPointer<UInt8>) throws(OutputError) {
        precondition(format == .jsonl || format == .json, "JSON bytes for the \(format) format")
        if format == .json { try output.write(count == 0 ? "\n" : ",\n") }
        try output.write(bytes: json)
        if format == .jsonl { try output.write("\n") }
        count += 1
    }

    func end() throws(OutputError) {
        if format == .json { try output.write(count == 0 ? "]\n" : "\n]\n") }
    }

    /// `text` cut to its first `characters` characters and `…` when longer: one hostile
    /// headline of 50 MB made a 50 MB table line.
    static func capped(_ text: String, _ characters: Int) -> String {
        guard text.utf8.count > characters, let end = text.index(text.startIndex, offsetBy: characters, limitedBy: text.endIndex),
            end < text.endIndex
        else { return text }
        return text[..<end] + "…"
    }

    /// A field as plain text: strings bare, anything else as JSON.
    static func text(_ value: CompactValue) -> String {
        if case .string(let s) = value { return s }
        let json = value.jsonString()
        return json.hasPrefix("\"") && json.hasSuffix("\"") ? String(json.dropFirst().dropLast()) : json
    }

    /// A table cell: tabs and line breaks become spaces, other control characters are escaped
    /// (`\u001b`), so a stored value can neither break the row nor steer the terminal.
    static func cell(_ text: String) -> String {
        // Most cells hold none of them: no byte below 0x20, DEL, nor the lead bytes of C1
        // controls (0xC2) and of the bidirectional marks (0xE2) — a row was 10 µs without this.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        let spaced = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 }))
        return TerminalText.escaped(spaced)
    }

    /// The id's column: an NYT id (`nyt://article/` and a UUID) fits whole, so it can be
    /// pasted into `quire get`; a longer id is cut.
    static let idColumns = 50

    /// Fixed-width columns (id 50, date 10, section 16, counted in terminal columns: a CJK
    /// character takes two), the headline last; one line, inert.
    static func tableRow(_ cells: [String]) -> String {
        TerminalColumns.row(cells, widths: [idColumns, 10, 16], clean: Self.cell)
    }

    /// A row of a collection other than articles: the id in 50 columns, then the record's JSON
    /// cut to 160 (the whole record is what `--format jsonl` is for).
    static func recordRow(_ id: String, _ json: String) -> String {
        let record = cell(json)
        let shown = TerminalColumns.width(of: record) <= 160 ? record : TerminalColumns.fitted(record, 160)
        return TerminalColumns.row([id, shown], widths: [idColumns], clean: Self.cell)
    }
}
