import Foundation
import QuireFixtures
import QuireNews
import Testing
import QuireTestSupport

private let secretKey = "k3y-SECRET-5f2a9c"

private func fixture(articles: Int = 150, era: NYTEra = .era2019) throws -> FixtureAPI {
    var configuration = FixtureAPI.Configuration()
    configuration.nytArticlesPerQuery = articles
    configuration.apiKey = secretKey
    configuration.era = era
    return try FixtureAPI(configuration: configuration)
}

/// Every byte the store holds, to check a secret never reaches it.
private func storeBytes(_ dir: URL, _ name: String = "quire.db") throws -> Data {
    try Data(contentsOf: dir.appendingPathComponent(name).appendingPathComponent("data.mdb"))
}

@Suite struct FetchCommandTests {
    @Test(arguments: NYTEra.allCases)
    func fetchNYTStoresEveryArticleAndNeverTheKey(era: NYTEra) async throws {
        let api = try fixture(articles: 45, era: era)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "mars rover", "--base-url", api.baseURL, "--rate", "100000/min"]
            let result = try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("quire: fetch nyt: stored 45, rejected 0 (45 new, 0 updated) from 5 pages"), "\(result)")
            #expect(!result.stdout.contains(secretKey) && !result.stderr.contains(secretKey))
            let dump = try await runQuire(["dump"], directory: dir)
            #expect(lines(dump.stdout).count == 45)
            #expect(try storeBytes(dir).range(of: Data(secretKey.utf8)) == nil)
            // Run again: resumes from the finished checkpoint, stores nothing twice.
            let again = try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(again.status == 0)
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == 45)
            #expect(try await runQuire(["verify"], directory: dir).status == 0)
        }
    }

    /// `--max-pages N` counts the pages of this run: a second run goes on with the next N.
    @Test func maxPagesCountsThisRunsPages() async throws {
        let api = try fixture(articles: 45)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min", "--max-pages", "2"]
            for (run, stored) in [(1, 20), (2, 40), (3, 45)] {
                let result = try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir)
                #expect(result.status == 0, "\(result)")
                #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == stored, "run \(run): \(result)")
                #expect(result.stderr.contains("(stopped before the end)") == (run < 3), "run \(run): \(result)")
            }
        }
    }

    /// The daily budget stops a run once spent and is kept in the store; `--daily-budget none`
    /// lifts it, and a server on this machine (the fixture API) has none by default.
    @Test func theDailyBudgetIsTheOptionsAndNoneForALocalServer() async throws {
        let api = try fixture(articles: 45)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min"]
            let spent = try await runQuire(args + ["--daily-budget", "2"], environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(spent.status == 1 && spent.stderr.contains("all 2 requests of the last 24 hours spent"), "\(spent)")
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == 20)
            let lifted = try await runQuire(args + ["--daily-budget", "none"], environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(lifted.status == 0, "\(lifted)")
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == 45)
            let bad = try await runQuire(args + ["--daily-budget", "0"], environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(bad.status == 64 && bad.stderr.contains("'--daily-budget'"), "\(bad)")
        }
    }

    /// A run that fails after some pages says what it committed (they stay; the next run
    /// resumes after them), in its JSON too: stdout was empty, so a script could not tell.
    /// (Three failing pages in a row: one or two are set aside and the run goes on.)
    @Test func aRunThatFailsSaysWhatItCommitted() async throws {
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = 45
        configuration.apiKey = secretKey
        configuration.faults = (2...4).map { FixtureAPIFaultRule(.nytPage($0), .serverError) }
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min", "--json", "--quiet"]
            let result = try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir, timeout: 120)
            #expect(result.status == 1, "\(result)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
            #expect(summary["complete"] as? Bool == false && summary["interrupted"] as? Bool == false)
            #expect(summary["pages"] as? Int == 2 && summary["stored"] as? Int == 20)
            // The keys of a finished run's summary, with the retries that failed.
            #expect(summary["new"] as? Int == 20 && summary["rejected"] as? Int == 0)
            // Pages 2 and 3 were set aside before page 4 stopped the run.
            #expect(summary["skipped"] as? Int == 2 && summary["set_aside"] as? Int == 2, "\(summary)")
            #expect((summary["retries"] as? Int ?? 0) >= 1 && summary["seconds"] is Double, "\(summary)")
            let error = try #require(summary["error"] as? String)
            #expect(error.hasPrefix("server error (HTTP 500)") && error.contains("(request http://"), "\(error)")
            // The command names its source once.
            #expect(result.stderr.contains("quire: fetch nyt: server error") && !result.stderr.contains("fetch nyt: fetch"))
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == 20)
            #expect(!result.stdout.contains(secretKey) && !result.stderr.contains(secretKey))
        }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min", "--quiet"]
            let plain = try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir, timeout: 120)
            #expect(plain.status == 1 && plain.stdout.isEmpty, "\(plain)")
            #expect(plain.stderr.contains("before it stopped, 2 pages committed (20 articles, 0 rejected)"), "\(plain)")
        }
    }

    @Test func keepRawStoresEachDocumentsJSON() async throws {
        let api = try fixture(articles: 12)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min", "--keep-raw"]
            #expect(try await runQuire(args, environment: ["NYT_API_KEY": secretKey], directory: dir).status == 0)
            let raw = lines(try await runQuire(["dump", "--collection", "raw"], directory: dir).stdout)
            #expect(raw.count == 12)
            #expect(raw.allSatisfy { $0.contains("\"json\":") })
        }
    }

    @Test func missingOrWrongKeyFailsWithoutEchoingIt() async throws {
        let api = try fixture()
        defer { api.stop() }
        try await withScratch { dir in
            let base = ["fetch", "nyt", "--query", "q", "--base-url", api.baseURL, "--rate", "100000/min"]
            let none = try await runQuire(base, directory: dir)
            #expect(none.status == 1)
            #expect(none.stderr.contains("quire: fetch nyt: no API key: set NYT_API_KEY ('quire fixtures' takes any value)"))
            let wrongKey = "wrong-KEY-0042"
            let wrong = try await runQuire(base, environment: ["NYT_API_KEY": wrongKey], directory: dir)
            #expect(wrong.status == 1, "\(wrong)")
            #expect(wrong.stderr.hasPrefix("quire: fetch nyt: "))
            #expect(wrong.stderr.contains("401"))
            #expect(!wrong.stderr.contains(wrongKey) && !wrong.stdout.contains(wrongKey))
            let viaOption = try await runQuire(base + ["--api-key", wrongKey], directory: dir)
            #expect(viaOption.status == 1)
            #expect(!viaOption.stderr.contains(wrongKey))
        }
    }

    @Test func unreachableServerIsARuntimeError() async throws {
        try await withScratch { dir in
            let result = try await runQuire(
                ["fetch", "nyt", "--query", "q", "--base-url", "http://127.0.0.1:9", "--rate", "100000/min"],
                environment: ["NYT_API_KEY": secretKey], directory: dir)
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("quire: fetch nyt: "))
            #expect(!result.stderr.contains(secretKey))
        }
    }

    @Test func fetchFeedzillaStoresListsAndArticlesOnce() async throws {
        let api = try fixture()
        defer { api.stop() }
        try await withScratch { dir in
            let ids = api.feedzillaCategories.prefix(2).map(\.id)
            #expect(ids.count == 2)
            let result = try await runQuire(
                ["fetch", "feedzilla", "--base-url", api.baseURL, "--category", "\(ids[0])", "--category", "\(ids[1])"],
                directory: dir)
            #expect(result.status == 0, "\(result)")
            let lists = lines(try await runQuire(["dump", "--collection", "lists"], directory: dir).stdout)
            #expect(lists.count == 2)
            // Lists have no section: --section on them says it matches none.
            let bySection = try await runQuire(["dump", "--collection", "lists", "--section", "World"], directory: dir)
            #expect(bySection.status == 0 && bySection.stdout.isEmpty, "\(bySection)")
            #expect(bySection.stderr.contains("no record of 'lists' has a section, so --section matches none"), "\(bySection)")
            // A table of lists shows each list's id and JSON, not an article's empty columns.
            let table = lines(try await runQuire(["dump", "--collection", "lists", "--format", "table"], directory: dir).stdout)
            #expect(table.first?.split(separator: " ", omittingEmptySubsequences: true) == ["id", "record"])
            #expect(table.count == 3 && table.dropFirst().allSatisfy { $0.contains("  {\"") }, "\(table)")
            let articles = lines(try await runQuire(["dump"], directory: dir).stdout)
            let expected = Set(ids.flatMap { api.feedzillaArticles(categoryID: $0, count: 20).map(\.id) })
            #expect(!expected.isEmpty)
            #expect(articles.count == expected.count)
            #expect(try await runQuire(["verify"], directory: dir).status == 0)
            // Fetched to the end: says what Feedzilla's --refresh does (no "what is newer").
            let again = try await runQuire(
                ["fetch", "feedzilla", "--base-url", api.baseURL, "--category", "\(ids[0])", "--category", "\(ids[1])"],
                directory: dir)
            #expect(again.status == 0 && again.stderr.contains("already fetched to the end"), "\(again)")
            #expect(again.stderr.contains("--refresh fetches each category's latest articles again"), "\(again)")
            let bad = try await runQuire(["fetch", "feedzilla", "--base-url", api.baseURL, "--category", "abc"], directory: dir)
            #expect(bad.status == 64)
        }
    }

    @Test func demoRunsOffline() async throws {
        try await withScratch { dir in
            let result = try await runQuire(["--store", "its own.db", "demo", "--articles", "300"], directory: dir)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("fetched NYT:"))
            #expect(result.stdout.contains("300 articles"))
            // Its hints work as printed: they name a store that is not the default.
            #expect(result.stdout.contains("next: quire --store 'its own.db' dump --format table | head,"), "\(result.stdout)")
            #expect(lines(try await runQuire(["--store", "its own.db", "dump"], directory: dir).stdout).count >= 300)
            // Quiet, as its help says: no progress and no report, the same store.
            let quiet = try await runQuire(["--store", "quiet.db", "demo", "--articles", "300", "--quiet"], directory: dir)
            #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
            #expect(lines(try await runQuire(["--store", "quiet.db", "dump"], directory: dir).stdout).count >= 300)
        }
    }

    /// Kills fetching processes with SIGKILL at pseudo-random instants; after each kill the store
    /// opens and verifies, and the final resumed store equals an uninterrupted run's.
    @Test func killedFetchesResumeToTheSameStore() async throws {
        let api = try fixture(articles: 1_200)
        defer { api.stop() }
        try await withScratch { dir in
            let args = ["fetch", "nyt", "--query", "crash", "--base-url", api.baseURL, "--rate", "100000/min", "--quiet"]
            let env = ["NYT_API_KEY": secretKey]
            let reference = try await runQuire(["--store", "ref.db"] + args, environment: env, directory: dir)
            #expect(reference.status == 0, "\(reference)")

            var random = SplitMix64(seed: 2026)
            var kills = 0
            for _ in 0..<12 {
                let process = ChildProcess()
                process.executableURL = try QuireBinary.url()
                process.arguments = ["--store", "crash.db"] + args
                process.currentDirectoryURL = dir
                var environment = ProcessInfo.processInfo.environment
                environment["NYT_API_KEY"] = secretKey
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(UInt32(20_000 + random.next() % 400_000))
                if process.isRunning {
                    kill(process.processIdentifier, SIGKILL)
                    kills += 1
                }
                process.waitUntilExit()
                if FileManager.default.fileExists(atPath: dir.appendingPathComponent("crash.db/data.mdb").path) {
                    let verify = try await runQuire(["--store", "crash.db", "verify", "--quiet"], directory: dir)
                    #expect(verify.status == 0, "\(verify)")
                }
            }
            let finish = try await runQuire(["--store", "crash.db"] + args, environment: env, directory: dir)
            #expect(finish.status == 0, "\(finish)")
            #expect(kills > 0)
            let expected = try await runQuire(["--store", "ref.db", "dump"], directory: dir).stdout
            let got = try await runQuire(["--store", "crash.db", "dump"], directory: dir).stdout
            #expect(lines(got).count == 1_200)
            #expect(got == expected)
            let refStats = try await runQuire(["--store", "ref.db", "stats"], directory: dir).stdout
            let crashStats = try await runQuire(["--store", "crash.db", "stats"], directory: dir).stdout
            let relationLine = { (text: String) in lines(text).filter { $0.hasPrefix("relation") }.map { $0.split(separator: ",")[0] } }
            #expect(relationLine(crashStats) == relationLine(refStats))
        }
    }
}
