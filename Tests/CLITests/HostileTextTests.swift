import Foundation
import Testing

@testable import quire

/// Text from servers and stores never steers the terminal; JSON stays exact.
@Suite struct HostileTextTests {
    static let hostile = "Title\u{1B}]0;owned\u{07} \u{1B}[2J\r\nquire: forged\u{9B}\u{202E}end"

    @Test func diagnosticsShowControlCharactersEscaped() async throws {
        let result = try await withScratch { dir in
            _ = try await makeStore(in: dir, count: 2)
            return try await runQuire(["get", Self.hostile], directory: dir)
        }
        #expect(result.status == 1, "\(result)")
        #expect(!result.stderr.utf8.contains(0x1B))
        #expect(!result.stderr.utf8.contains(0x0D))
        #expect(result.stderr.contains("\\u001b]0;owned\\u0007 \\u001b[2J\\u000d\\u000aquire: forged\\u009b\\u202eend"))
        // One line: nothing can start a forged `quire:` line of its own.
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
    }

    @Test func tablesAreInertAndJSONIsExact() async throws {
        try await withScratch { dir in
            var line = String(decoding: try generatedJSONL(count: 1), as: UTF8.self)
            var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            object["headline"] = Self.hostile
            object["section"] = "A\u{1B}[31mred"
            line = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n"
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(line.utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            let id = try #require(object["id"] as? String)

            for args in [["dump", "--format", "table"], ["get", id, "--format", "table"]] {
                let table = try await runQuire(args, directory: dir)
                #expect(table.status == 0, "\(table)")
                let bytes = Array(table.stdout.utf8)
                #expect(!bytes.contains(0x1B) && !bytes.contains(0x0D) && !bytes.contains(0x07), "\(args)")
                #expect(table.stdout.contains("\\u001b[2J"), "\(args): \(table)")
            }
            let json = try await runQuire(["get", id], directory: dir)
            let back = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(back["headline"] as? String == Self.hostile)
            #expect(back["section"] as? String == "A\u{1B}[31mred")
            // JSON escapes what JSON does not require but a terminal acts on: a C1 CSI, a bidi override.
            #expect(!json.stdout.unicodeScalars.contains("\u{9B}") && !json.stdout.unicodeScalars.contains("\u{202E}"))
            #expect(json.stdout.contains("\\u009b\\u202eend"), "\(json)")
        }
    }

    /// A store path from the command line is shown inert too (`stats`, `copy`'s summary).
    @Test func storePathsAreShownInert() async throws {
        try await withScratch { dir in
            let store = dir.path + "/s\u{1B}[2J"
            let load = try await runQuire(["--store", store, "load", "-", "--quiet"], stdin: try generatedJSONL(count: 2))
            #expect(load.status == 0, "\(load)")
            let stats = try await runQuire(["--store", store, "stats"])
            #expect(stats.status == 0, "\(stats)")
            let copy = try await runQuire(["--store", store, "copy", store + "-copy"])
            #expect(copy.status == 0, "\(copy)")
            for output in [stats.stdout, copy.stderr] {
                #expect(!output.utf8.contains(0x1B) && output.contains("s\\u001b[2J"), "\(output)")
            }
        }
    }

    /// `--json` summaries and node events are JSON from Foundation's serializer, which leaves
    /// DEL, C1 and bidi controls raw: written as `\uXXXX`, the same JSON value.
    @Test func jsonSummariesAreInert() throws {
        let text = "server said \u{9B}2J\u{202E}evil\u{7F} “quoted”"
        let line = JSONSummary.object([("error", .string(text))])
        #expect(!line.unicodeScalars.contains { TerminalText.isUnsafe($0) }, "\(line)")
        let back = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(back["error"] == text)
    }

    @Test func escapingKeepsOrdinaryText() {
        #expect(TerminalText.escaped("façade — “quoted” \\ back") == "façade — “quoted” \\ back")
        #expect(TerminalText.escaped("a\u{0}b\u{7F}") == "a\\u0000b\\u007f")
        #expect(RecordWriter.cell("a\tb\nc\rd\u{1B}") == "a b c d\\u001b")
        // C1 controls and bidirectional marks share their lead bytes with ordinary text.
        #expect(RecordWriter.cell("½ é\u{85}x\u{202E}y “z”") == "½ é\\u0085x\\u202ey “z”")
        #expect(RecordWriter.cell("½ é “z” 上海") == "½ é “z” 上海")
    }

    /// Columns line up by characters, whatever the text: astral characters (two UTF-16 units),
    /// other scripts, cut cells and escaped ones; the headline always starts at character 82.
    /// Columns are counted as a terminal shows them: a CJK character or an emoji takes two, a
    /// combining accent none; escaped controls and line breaks stay on the line.
    @Test func tableColumnsLineUpInTerminalColumns() throws {
        let rows = [
            RecordWriter.tableRow(["plain-id", "2020-01-01", "World", "Headline"]),
            RecordWriter.tableRow(["émoji-🌍-id", "2020-01-01", "Ünïcödé 上海", "Headline"]),
            RecordWriter.tableRow([String(repeating: "x", count: 60), "2020-01-01T00:00", String(repeating: "🌍", count: 18), "Headline"]),
            RecordWriter.tableRow(["a\u{85}b", "", "s\u{202E}x", "Headline"]),
            RecordWriter.tableRow(["東京-e\u{301}", "2020-01-01", "line\nbreak", "Headline"]),
        ]
        for row in rows {
            let start = try #require(row.range(of: "Headline", options: .backwards))
            #expect(TerminalColumns.width(of: String(row[..<start.lowerBound])) == 82, "\(row)")
            #expect(!row.contains("\n"))
        }
        #expect(rows[2].contains(String(repeating: "x", count: 49) + "…  2020-01-0…  " + String(repeating: "🌍", count: 7) + "…   "))
        #expect(TerminalColumns.width(of: "東京-e\u{301}") == 6)
        // An NYT id (50 characters) is shown whole: it can be pasted into `quire get`.
        let nytID = "nyt://article/1b3c6d2e-0000-5000-8000-000000000001"
        #expect(RecordWriter.tableRow([nytID, "2020-01-01", "World", "Headline"]).hasPrefix(nytID + "  2020-01-01"))
        // Search's table: the snippet starts at the same column whatever the headline's script.
        let search = [
            SearchCommand.tableRow(["a1", "2020-01-01", "World", "Storm", "snippet"]),
            SearchCommand.tableRow(["nyt://article/00000000-1111-2222-3333-444444444444", "2020-01-01", "World", "Storm", "snippet"]),
            SearchCommand.tableRow(["記事", "2020-01-01", "世界", String(repeating: "台風", count: 40), "snippet"]),
            SearchCommand.tableRow(SearchCommand.tableHeader),
        ]
        // A whole NYT id, for `quire get`.
        #expect(search[1].hasPrefix("nyt://article/00000000-1111-2222-3333-444444444444  "), "\(search[1])")
        for row in search {
            let start = try #require(row.range(of: "snippet", options: .backwards))
            #expect(TerminalColumns.width(of: String(row[..<start.lowerBound])) == 144, "\(row)")
        }
    }
}
