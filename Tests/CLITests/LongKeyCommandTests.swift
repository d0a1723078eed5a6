import Foundation
import QuireFixtures
import QuireNews
import Testing

@testable import Quire

/// Ids over LMDB's 511-byte key limit, as a long NYT `_id`/`web_url` would be: 600 and 5,000
/// bytes, multi-byte UTF-8, and two that share their first 495 bytes.
private let longIDs: [String] = [
    "nyt://article/" + String(repeating: "a", count: 586),
    "https://www.nytimes.com/" + String(repeating: "b", count: 4_976),
    "nyt://article/" + String(repeating: "ü", count: 300),
    String(repeating: "p", count: 495) + "-one" + String(repeating: "1", count: 30),
    String(repeating: "p", count: 495) + "-two" + String(repeating: "2", count: 30),
]
private let longSection = "Section " + String(repeating: "§", count: 300)

/// JSON Lines of generated articles: the first ones with long ids, two of them in a long section.
private func longIDJSONL() throws -> Data {
    var generator = ArticleGenerator(seed: 5)
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    var out = Data()
    for i in 0..<40 {
        var article = generator.article(index: i)
        if i < longIDs.count { article.id = longIDs[i] }
        if i == 1 || i == 3 { article.section = longSection }
        out.append(try encoder.encode(article))
        out.append(0x0A)
    }
    return out
}

private func ids(ofJSONL text: String) throws -> [String] {
    try lines(text).map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return try #require(object?["id"] as? String)
    }
}

@Suite struct LongKeyCommandTests {
    @Test func longIDsWorkThroughGetDumpVerifyAndACompactCopy() async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--quiet"], stdin: try longIDJSONL(), directory: dir)
            #expect(load.status == 0, "\(load)")
            try await checkStore("quire.db", in: dir)

            // The raw format shows what LMDB holds: the 511-byte stored forms and `_longkeys`.
            let mdb = try await runQuire(["dump", "--format", "mdb"], directory: dir)
            #expect(mdb.status == 0, "\(mdb.stderr)")
            #expect(mdb.stdout.contains("database=_longkeys"))
            let physical = LongKeys().physical(Array(longIDs[1].utf8))
            #expect(physical.count == 511)
            #expect(mdb.stdout.contains(" " + physical.map { String(format: "%02x", $0) }.joined() + "\n"))

            let copy = try await runQuire(["copy", "backup.db", "--compact", "--quiet"], directory: dir)
            #expect(copy.status == 0, "\(copy)")
            try await checkStore("backup.db", in: dir)
            let original = try await runQuire(["dump"], directory: dir)
            let copied = try await runQuire(["--store", "backup.db", "dump"], directory: dir)
            #expect(copied.stdout == original.stdout)
        }
    }

    /// `get`, every dump format but the raw one, the section filter and `verify` on one store.
    private func checkStore(_ store: String, in dir: URL) async throws {
        let dump = try await runQuire(["--store", store, "dump"], directory: dir)
        #expect(dump.status == 0, "\(dump)")
        let records = lines(dump.stdout)
        #expect(records.count == 40)
        let dumped = try ids(ofJSONL: dump.stdout)
        #expect(Set(dumped).isSuperset(of: longIDs))
        #expect(Set(dumped).count == 40)

        for id in longIDs {
            let get = try await runQuire(["--store", store, "get", id], directory: dir)
            #expect(get.status == 0, "\(get.stderr)")
            #expect(lines(get.stdout).count == 1)
            #expect(try ids(ofJSONL: get.stdout) == [id])
            #expect(records.contains(lines(get.stdout).first ?? "-"))
            let table = try await runQuire(["--store", store, "get", id, "--format", "table"], directory: dir)
            #expect(table.stdout.contains(id))
        }
        // A long id that shares the first 495 bytes of two stored ones is not one of them.
        let missing = String(repeating: "p", count: 495) + "-three" + String(repeating: "3", count: 30)
        let absent = try await runQuire(["--store", store, "get", missing], directory: dir)
        #expect(absent.status == 1)
        #expect(absent.stdout.isEmpty)

        let json = try await runQuire(["--store", store, "dump", "--format", "json"], directory: dir)
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(array?.compactMap { $0["id"] as? String } == dumped)
        let table = try await runQuire(["--store", store, "dump", "--format", "table"], directory: dir)
        #expect(lines(table.stdout).count == 41)
        #expect(table.stdout.contains(String(longIDs[0].prefix(49)) + "…"))

        let section = try await runQuire(["--store", store, "dump", "--section", longSection], directory: dir)
        #expect(section.status == 0, "\(section.stderr)")
        #expect(Set(try ids(ofJSONL: section.stdout)) == [longIDs[1], longIDs[3]])

        let verify = try await runQuire(["--store", store, "verify", "--quiet"], directory: dir)
        #expect(verify.status == 0, "\(verify)")
        let loud = try await runQuire(["--store", store, "verify"], directory: dir)
        #expect(loud.stdout.hasPrefix("ok: 40 records"), "\(loud)")
    }
}
