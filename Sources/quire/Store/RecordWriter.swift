import Foundation
import Quire
import QuireCodec

/// Writes generic records as JSON Lines, one JSON array, or an aligned table.
final class RecordWriter {
    let format: DumpFormat
    let output: OutputWriter
    private var count = 0

    init(format: DumpFormat, output: OutputWriter) {
        self.format = format
        self.output = output
    }

    func begin() throws(OutputError) {
        switch format {
        case .json: try output.write("[")
        case .table: try output.line(Self.tableRow(["id", "published", "section", "headline"]))
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
        case .table:
            try output.line(
                Self.tableRow([
                    value["id"].map(Self.text) ?? key.description,
                    value["publishedAt"].map(Self.text).map { String($0.prefix(10)) } ?? "",
                    value["section"].map(Self.text) ?? "",
                    value["headline"].map(Self.text) ?? "",
                ]))
        }
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

    /// A field as plain text: strings bare, anything else as JSON.
    static func text(_ value: CompactValue) -> String {
        if case .string(let s) = value { return s }
        let json = value.jsonString()
        return json.hasPrefix("\"") && json.hasSuffix("\"") ? String(json.dropFirst().dropLast()) : json
    }

    /// A table cell: tabs and line breaks become spaces, other control characters are escaped
    /// (`\u001b`), so a stored value can neither break the row nor steer the terminal.
    static func cell(_ text: String) -> String {
        let spaced = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 }))
        return TerminalText.escaped(spaced)
    }

    /// Fixed-width columns (id 40, date 10, section 16), the headline last; one line, inert.
    static func tableRow(_ cells: [String]) -> String {
        let widths = [40, 10, 16]
        var parts: [String] = []
        for (i, cell) in cells.enumerated() {
            let clean = Self.cell(cell)
            if i < widths.count {
                let cut = clean.count > widths[i] ? String(clean.prefix(widths[i] - 1)) + "…" : clean
                parts.append(cut.padding(toLength: widths[i], withPad: " ", startingAt: 0))
            } else {
                parts.append(clean)
            }
        }
        return parts.joined(separator: "  ")
    }
}
