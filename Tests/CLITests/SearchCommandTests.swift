import Foundation
import QuireFixtures
import QuireNews
import Testing

@testable import quire

@Suite struct SearchCommandTests {
    @Test func searchPrintsRankedHitsWithScoresAndSnippets() async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 200), directory: dir)
            #expect(load.status == 0, "\(load)")
            // A word of the first article's headline finds it.
            let dump = lines(try await runQuire(["dump"], directory: dir).stdout)
            let first = try JSONSerialization.jsonObject(with: Data(dump[0].utf8)) as? [String: Any]
            let headline = try #require(first?["headline"] as? String)
            let word = try #require(
                headline.split(whereSeparator: { !$0.isLetter }).map(String.init).filter { $0.count >= 5 }.first)
            let found = try await runQuire(["search", word, "--limit", "500"], directory: dir)
            #expect(found.status == 0, "\(found)")
            let hits = try lines(found.stdout).map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(hits.contains { $0?["id"] as? String == first?["id"] as? String })
            let scores = hits.compactMap { $0?["score"] as? Double }
            #expect(scores.count == hits.count)
            #expect(scores == scores.sorted(by: >))
            #expect(hits.allSatisfy { ($0?["snippet"] as? String)?.contains("«") ?? true })
            // Newest first, as a table.
            let table = try await runQuire(["search", word, "--sort", "newest", "--format", "table", "--limit", "500"], directory: dir)
            #expect(table.status == 0)
            let rows = lines(table.stdout).map { $0.split(separator: " ").map(String.init) }
            #expect(rows.first == SearchCommand.tableHeader, "\(table)")
            // A row starts with the hit's id, for `quire get`, then its date.
            let ids = Set(hits.compactMap { $0?["id"] as? String })
            #expect(rows.count == hits.count + 1 && rows.dropFirst().allSatisfy { ids.contains($0[0]) }, "\(table)")
            let dates = rows.dropFirst().map { $0[1] }
            #expect(dates == dates.sorted(by: >))
            // A malformed query is a usage error that says where.
            let bad = try await runQuire(["search", "storm \"surge"], directory: dir)
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("unterminated phrase"))
            #expect(bad.stderr.contains("character"))
            // So is a window that ends before it starts, as for dump.
            let window = try await runQuire(["search", word, "--since", "2030-01-01", "--until", "2020-01-01"], directory: dir)
            #expect(window.status == 64 && window.stderr.contains("'--since' is after '--until'"), "\(window)")
            // verify checks the postings; stats shows the index.
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            let stats = try await runQuire(["stats"], directory: dir)
            #expect(stats.stdout.contains("search:post"))
        }
    }

    /// `--section` joins the parsed query: no query text escapes it (it was pasted into the
    /// text as `(query) section:"value"`, so `storm) OR (flood` found an Arts record), and a
    /// section with quotes in its name is found (they were dropped, finding nothing).
    @Test func theSectionFilterHoldsWhateverTheQueryAndTheSectionsName() async throws {
        try await withScratch { dir in
            let records = [
                #"{"id":"s1","headline":"storm over the coast","section":"Science"}"#,
                #"{"id":"a1","headline":"flood in the gallery","section":"Arts"}"#,
                #"{"id":"q1","headline":"storm chasers","section":"The \"Week\" in Review"}"#,
            ]
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data((records.joined(separator: "\n") + "\n").utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            let escape = try await runQuire(["search", "storm) OR (flood", "--section", "Science"], directory: dir)
            #expect(!escape.stdout.contains("a1"), "\(escape)")
            #expect(escape.status == 64 && escape.stderr.contains("character"), "\(escape)")
            let either = try await runQuire(["search", "storm OR flood", "--section", "Science"], directory: dir)
            #expect(lines(either.stdout).count == 1 && either.stdout.contains("\"s1\""), "\(either)")
            let quoted = try await runQuire(["search", "storm", "--section", #"The "Week" in Review"#], directory: dir)
            #expect(lines(quoted.stdout).count == 1 && quoted.stdout.contains("\"q1\""), "\(quoted)")
        }
    }

    @Test func untilKeepsItsWholeDayAndAHitHasOneSnippetKey() async throws {
        try await withScratch { dir in
            let records = [
                #"{"id":"a","headline":"storm one","snippet":"own text","publishedAt":"2025-05-31T12:00:00Z"}"#,
                #"{"id":"b","headline":"storm two","publishedAt":"2025-06-01T00:00:00Z"}"#,
                #"{"id":"c","headline":"storm three","publishedAt":"2025-06-01T23:59:59.9996Z"}"#,
                #"{"id":"d","headline":"storm four","publishedAt":"2025-06-02T00:00:00Z"}"#,
            ]
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(records.joined(separator: "\n").utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            func ids(_ args: [String]) async throws -> [String] {
                let result = try await runQuire(["search", "storm", "--sort", "oldest"] + args, directory: dir)
                #expect(result.status == 0, "\(result)")
                return try lines(result.stdout).map {
                    try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])["id"] as? String ?? ""
                }
            }
            #expect(try await ids(["--until", "2025-05-31"]) == ["a"])
            #expect(try await ids(["--since", "2025-06-01", "--until", "2025-06-01"]) == ["b", "c"])
            #expect(try await ids(["--since", "20250601"]) == ["b", "c", "d"])
            // One "snippet" key: the marked passage, in place of the record's own field.
            let first = try await runQuire(["search", "storm", "--sort", "oldest", "--limit", "1"], directory: dir)
            let line = try #require(lines(first.stdout).first)
            #expect(line.components(separatedBy: #""snippet":"#).count == 2, "\(line)")
            let hit = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect((hit["snippet"] as? String)?.contains("«storm»") == true, "\(line)")
            #expect(hit["id"] as? String == "a" && hit["score"] is Double, "\(line)")
        }
    }

    /// The snippet of a phrase or a field's word shows where it matched: `"the storm"` showed the
    /// abstract's `«the» wind and «the» rain` though the phrase was in the headline.
    @Test func theSnippetShowsWhereThePhraseOrTheFieldMatched() async throws {
        try await withScratch { dir in
            let records = [
                #"{"id":"p","headline":"the storm passed","abstract":"the wind and the rain","publishedAt":"2025-06-01T00:00:00Z"}"#,
                #"{"id":"f","headline":"storm warning","abstract":"the bay saw a storm surge","publishedAt":"2025-06-02T00:00:00Z"}"#,
                #"{"id":"b","headline":"nothing here","byline":"By Ann Storm","publishedAt":"2025-06-03T00:00:00Z"}"#,
            ]
            let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(records.joined(separator: "\n").utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            func snippets(_ query: String) async throws -> [String: String] {
                let result = try await runQuire(["search", "--", query], directory: dir)
                #expect(result.status == 0, "\(result)")
                var out: [String: String] = [:]
                for line in lines(result.stdout) {
                    let hit = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    out[hit["id"] as? String ?? ""] = hit["snippet"] as? String ?? "-"
                }
                return out
            }
            #expect(try await snippets("\"the storm\"") == ["p": "«the storm» passed"])
            #expect(try await snippets("headline:storm") == ["p": "the «storm» passed", "f": "«storm» warning"])
            #expect(try await snippets("byline:ann") == ["b": "By «Ann» Storm"])
        }
    }
}
