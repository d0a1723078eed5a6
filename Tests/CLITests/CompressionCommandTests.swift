import Foundation
import Testing

/// Articles are compressed by default: the store trains its dictionary during a load (before it
/// writes, once the load reaches the threshold), `stats` says so, and `copy --compact` rewrites
/// what was written before the dictionary.
@Suite struct CompressionCommandTests {
    @Test func aLoadTrainsTheDictionaryStatsShowItAndACompactCopyKeepsEveryRecord() async throws {
        try await withScratch { dir in
            // 500 articles stay below the training threshold (1,000) and are written without a
            // dictionary; the next load reaches it and trains before it writes.
            let lines1500 = lines(String(decoding: try generatedJSONL(count: 1_500, seed: 21), as: UTF8.self))
            let first = lines1500[..<500].joined(separator: "\n") + "\n"
            let rest = lines1500[500...].joined(separator: "\n") + "\n"
            for part in [first, rest] {
                let load = try await runQuire(["load", "-", "--quiet"], stdin: Data(part.utf8), directory: dir)
                #expect(load.status == 0, "\(load)")
            }
            let stats = try await runQuire(["stats"], directory: dir)
            let line = try #require(lines(stats.stdout).first { $0.hasPrefix("collection   articles:") }, "\(stats)")
            #expect(line.contains("1,500 records") && line.contains("bytes/record"), "\(line)")
            #expect(line.contains("compression zstd+dictionary ("), "\(line)")

            let json = try await runQuire(["stats", "--json"], directory: dir)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let collections = try #require(object["collections"] as? [[String: Any]])
            let articles = try #require(collections.first { $0["name"] as? String == "articles" })
            #expect(articles["compression"] as? String == "zstd+dictionary")
            let perRecord = try #require(articles["bytes_per_record"] as? Int)
            #expect(perRecord > 0 && perRecord < 1_500)

            let copy = try await runQuire(["copy", "--compact", "--quiet", "copied"], directory: dir)
            #expect(copy.status == 0, "\(copy)")
            let original = try await runQuire(["dump"], directory: dir)
            let copied = try await runQuire(["--store", "copied", "dump"], directory: dir)
            #expect(copied.status == 0 && !original.stdout.isEmpty)
            #expect(copied.stdout == original.stdout)
            let verify = try await runQuire(["--store", "copied", "verify"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            let copiedStats = try await runQuire(["--store", "copied", "stats", "--json"], directory: dir)
            let copiedObject = try #require(try JSONSerialization.jsonObject(with: Data(copiedStats.stdout.utf8)) as? [String: Any])
            let copiedArticles = try #require((copiedObject["collections"] as? [[String: Any]])?.first { $0["name"] as? String == "articles" })
            // The 500 records written before the dictionary are smaller in the copy.
            #expect(try #require(copiedArticles["bytes"] as? Int) < (try #require(articles["bytes"] as? Int)))
        }
    }
}
