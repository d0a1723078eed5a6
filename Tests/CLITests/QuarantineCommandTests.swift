import Foundation
import QuireFixtures
import QuireNews
import Testing

private let key = "quarantine-KEY-91ab"

/// `quire fetch` over documents of every odd shape, then `rejects`, `remap`, `get` and `demo`.
@Suite struct QuarantineCommandTests {
    private func mutatedAPI(era: NYTEra) throws -> FixtureAPI {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = 120
        configuration.apiKey = key
        configuration.era = era
        configuration.mutations = DocumentMutationPlan(seed: 2026, percent: 30)
        return try FixtureAPI(configuration: configuration)
    }

    /// A page of 100,000 bad documents printed 100,000 lines: a run lists the first 100, says
    /// the others are not listed, and its summary and `quire rejects` count them all.
    @Test func aRunListsAtMostAHundredRejects() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = 600
        configuration.apiKey = key
        configuration.mutations = DocumentMutationPlan(seed: 7, percent: 100)
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "odd", "--base-url", api.baseURL, "--rate", "100000/min", "--json"]
            let fetch = try await runQuire(args, environment: ["NYT_API_KEY": key], directory: dir)
            let rejected = api.servedDocuments.filter { $0.rejectedAt != nil }.count
            #expect(fetch.status == 0 && rejected > 150, "\(rejected) \(fetch.stderr.suffix(300))")
            let listed = lines(fetch.stderr).filter { $0.hasPrefix("quire: fetch nyt: rejected document ") }
            #expect(listed.count == 100)
            #expect(lines(fetch.stderr).filter { $0.contains("more than 100 documents rejected") }.count == 1)
            #expect(fetch.stdout.contains("\"rejected\":\(rejected),"), "\(fetch.stdout)")
            let table = try await runQuire(["rejects"], directory: dir)
            #expect(lines(table.stdout).count == rejected + 1)
        }
    }

    @Test(arguments: [NYTEra.era2016, .era2025])
    func fetchStoresTheMappableReportsEachRejectAndExitsZero(era: NYTEra) async throws {
        let api = try mutatedAPI(era: era)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "odd", "--base-url", api.baseURL, "--rate", "100000/min", "--keep-raw"]
            let fetch = try await runQuire(args, environment: ["NYT_API_KEY": key], directory: dir)
            let served = api.servedDocuments
            let rejected = served.filter { $0.rejectedAt != nil }
            let stored = Set(served.compactMap(\.storedID))
            #expect(fetch.status == 0, "\(fetch)")
            #expect(!rejected.isEmpty)
            let rejectLines = lines(fetch.stderr).filter { $0.hasPrefix("quire: fetch nyt: rejected document ") }
            #expect(rejectLines.count == rejected.count, "\(fetch.stderr)")
            #expect(rejectLines.allSatisfy { $0.contains("response.docs[") })
            #expect(fetch.stderr.contains("stored \(stored.count), rejected \(rejected.count) ("), "\(fetch.stderr)")
            #expect(stored.count + rejected.count == served.count)
            #expect(!fetch.stderr.contains(key) && !fetch.stdout.contains(key))

            let dump = try await runQuire(["dump"], directory: dir)
            #expect(lines(dump.stdout).count == stored.count)
            let table = try await runQuire(["rejects"], directory: dir)
            #expect(table.status == 0 && lines(table.stdout).count == rejected.count + 1)
            // Each row names its query, in the order the pages were fetched.
            let rows = lines(table.stdout)
            #expect(rows.first == "source  page  index  path  message" && rows.dropFirst().allSatisfy { $0.hasPrefix("q=odd  page ") })
            let pages = rows.dropFirst().compactMap { Int($0.split(separator: " ")[2]) }
            #expect(pages.count == rejected.count && pages == pages.sorted(), "\(pages)")
            let jsonl = try await runQuire(["rejects", "--format", "jsonl"], directory: dir)
            let objects = try lines(jsonl.stdout).map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(objects.count == rejected.count)
            let paths = Set(objects.compactMap { $0?["path"] as? String })
            #expect(paths == Set(rejected.map { "response.docs[\($0.index)]" + ($0.rejectedAt!.isEmpty ? "" : "." + $0.rejectedAt!) }))
            #expect(objects.allSatisfy { $0?["document"] != nil && $0?["page"] is String && $0?["index"] is Int })

            // A long id is retrievable by its exact value (the seed serves at least one).
            let long = try #require(stored.first { $0.utf8.count > 511 })
            let get = try await runQuire(["get", long], directory: dir)
            #expect(get.status == 0 && get.stdout.contains(long))
            let remap = try await runQuire(["remap"], directory: dir)
            #expect(remap.status == 0)
            #expect(remap.stderr.contains("remapped 0, still rejected \(rejected.count)"), "\(remap)")
            #expect(remap.stderr.contains("\(stored.count) unchanged"), "\(remap)")
            let again = try await runQuire(["remap"], directory: dir)
            // The same summary (a progress line, with its rate, comes only when the run is slow).
            func summary(_ text: String) -> [String] { lines(text).filter { !$0.hasPrefix("quire: remapping:") } }
            #expect(summary(again.stderr) == summary(remap.stderr), "\(again.stderr)")

            // Fetched to the end: a second run requests nothing and says how to get more.
            let before = api.requestCount
            let idle = try await runQuire(args, environment: ["NYT_API_KEY": key], directory: dir)
            #expect(idle.status == 0 && api.requestCount == before)
            #expect(idle.stderr.contains("--refresh") && idle.stderr.contains("--restart"))
            let restart = try await runQuire(args + ["--restart", "--quiet"], environment: ["NYT_API_KEY": key], directory: dir)
            #expect(restart.status == 0 && api.requestCount > before)
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == stored.count)
            let both = try await runQuire(args + ["--restart", "--refresh"], environment: ["NYT_API_KEY": key], directory: dir)
            #expect(both.status == 64)
        }
    }

    /// A fetch without rejects leaves an empty quarantine: `rejects` says so, with no header.
    @Test func anEmptyQuarantineIsOneLineWithoutAHeader() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = 15
        configuration.apiKey = key
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "clean", "--base-url", api.baseURL, "--rate", "100000/min", "--quiet"]
            #expect(try await runQuire(args, environment: ["NYT_API_KEY": key], directory: dir).status == 0)
            let table = try await runQuire(["rejects"], directory: dir)
            #expect(table.status == 0 && lines(table.stdout) == ["no rejected documents"], "\(table)")
            let jsonl = try await runQuire(["rejects", "--format", "jsonl"], directory: dir)
            #expect(jsonl.status == 0 && jsonl.stdout.isEmpty, "\(jsonl)")
        }
    }

    @Test func theDemoNeverWritesIntoAStoreItDidNotMake() async throws {
        let api = try mutatedAPI(era: .era2019)
        defer { api.stop() }
        try await withScratch { dir in
            let fetch = try await runQuire(
                ["fetch", "nyt", "--query", "climate", "--base-url", api.baseURL, "--rate", "100000/min", "--quiet"],
                environment: ["NYT_API_KEY": key], directory: dir)
            #expect(fetch.status == 0, "\(fetch)")
            let before = try await runQuire(["dump"], directory: dir).stdout
            let demo = try await runQuire(["demo", "--articles", "30", "--quiet"], directory: dir)
            #expect(demo.status == 1)
            #expect(demo.stderr.contains("the demo did not write"), "\(demo)")
            #expect(try await runQuire(["dump"], directory: dir).stdout == before)
            // Its own store, again and again, is fine.
            let first = try await runQuire(["--store", "demo.db", "demo", "--articles", "30", "--quiet"], directory: dir)
            let second = try await runQuire(["--store", "demo.db", "demo", "--articles", "30", "--quiet"], directory: dir)
            #expect(first.status == 0 && second.status == 0, "\(first) \(second)")
        }
    }

    /// `remap` works on a store's quarantine: a mistyped store path is an error, and no empty
    /// store is made there.
    @Test func remapOfAMissingStoreIsAnError() async throws {
        try await withScratch { dir in
            let result = try await runQuire(["--store", "typo.db", "remap"], directory: dir)
            #expect(result.status == 1 && result.stderr.contains("no store at this path"), "\(result)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("typo.db").path))
        }
    }
}
