import Foundation
import QuireFixtures
import QuireNews
import Testing
import QuireTestSupport

private let crashKey = "k3y-CRASH-77d1e0"
private let crashRounds = Int(ProcessInfo.processInfo.environment["QUIRE_CRASH_ROUNDS"] ?? "")

/// Records in the load file: more than two of `quire load`'s 16 MiB blocks (about 10,600 articles
/// each). Their ids are random, so the blocks are held in the sort window and written merged, in
/// commits of `ArticleLoader`'s 12,000-record chunks: a kill leaves a whole number of them.
private let loadRecords = 30_000
private let loadChunk = 12_000
private let fetchArticles = 1_200

/// The long crash harness, run by `scripts/crash-test.sh` (off unless `QUIRE_CRASH_ROUNDS` is set).
///
/// Alternates `quire fetch nyt` and `quire load` child processes and kills each with SIGKILL at a
/// random instant. After every kill: the store opens and `quire verify` passes; the record count
/// never goes down (what was committed stays); a load's count is a whole number of chunks (each
/// chunk is one transaction). At the end, a resumed fetch and a completed load give stores whose
/// dumps equal those of uninterrupted runs.
@Suite struct LongCrashTests {
    @Test(.enabled(if: crashRounds != nil, "set QUIRE_CRASH_ROUNDS (see scripts/crash-test.sh)"))
    func killedFetchesAndLoadsLoseNothingCommitted() async throws {
        let rounds = max(2, crashRounds ?? 0)
        var configuration = FixtureAPI.Configuration()
        configuration.nytArticlesPerQuery = fetchArticles
        configuration.apiKey = crashKey
        let api = try FixtureAPI(configuration: configuration)
        defer { api.stop() }
        let seed = UInt64(ProcessInfo.processInfo.environment["QUIRE_CRASH_SEED"] ?? "") ?? 2026
        var random = SplitMix64(seed: seed)
        var tally = CrashTally()

        try await withScratch { dir in
            let fetchArgs = ["fetch", "nyt", "--query", "crash", "--base-url", api.baseURL, "--rate", "1000000/min", "--quiet"]
            let env = ["NYT_API_KEY": crashKey]
            try generatedJSONL(count: loadRecords, seed: 77).write(to: dir.appendingPathComponent("load.jsonl"))
            let loadArgs = ["load", "load.jsonl", "--quiet"]

            // References, timed so kills land anywhere in a run (and sometimes after it ends).
            var start = Date()
            let refFetch = try await runQuire(["--store", "ref-fetch.db"] + fetchArgs, environment: env, directory: dir)
            let fetchSeconds = Date().timeIntervalSince(start)
            start = Date()
            let refLoad = try await runQuire(["--store", "ref-load.db"] + loadArgs, directory: dir)
            let loadSeconds = Date().timeIntervalSince(start)
            #expect(refFetch.status == 0 && refLoad.status == 0, "\(refFetch)\n\(refLoad)")

            var lastFetchCount = 0
            var lastLoadCount = 0
            for round in 0..<rounds {
                let isLoad = round % 2 == 1
                let store = isLoad ? "crash-load.db" : "crash-fetch.db"
                let seconds = (isLoad ? loadSeconds : fetchSeconds) * 1.1
                let delay = 0.005 + Double(random.next() % 1_000_000) / 1_000_000 * seconds
                let run = try runAndKill(
                    ["--store", store] + (isLoad ? loadArgs : fetchArgs), environment: isLoad ? [:] : env,
                    directory: dir, after: delay)
                tally.rounds += 1
                if run.killed {
                    tally.kills += 1
                    if isLoad { tally.loadKills += 1 } else { tally.fetchKills += 1 }
                } else if run.status != 0 {
                    tally.findings.append("round \(round) (\(store)): a run that was not killed exited \(run.status)")
                }
                guard FileManager.default.fileExists(atPath: dir.appendingPathComponent(store + "/data.mdb").path) else {
                    continue
                }
                let verify = try await runQuire(["--store", store, "verify"], directory: dir)
                tally.verifies += 1
                guard verify.status == 0, let count = recordCount(verify.stdout) else {
                    tally.findings.append("round \(round) (\(store), killed after \(delay)s): verify failed: \(verify)")
                    continue
                }
                if isLoad {
                    if count < lastLoadCount { tally.findings.append("round \(round): load count fell \(lastLoadCount) -> \(count)") }
                    if count % loadChunk != 0 && count != loadRecords {
                        tally.findings.append("round \(round): \(count) records is not a whole number of chunks")
                    }
                    lastLoadCount = max(lastLoadCount, count)
                } else {
                    if count < lastFetchCount { tally.findings.append("round \(round): fetch count fell \(lastFetchCount) -> \(count)") }
                    lastFetchCount = max(lastFetchCount, count)
                    if !run.killed {
                        // A resumed fetch finished: it must equal the uninterrupted one. Start over,
                        // so later rounds kill fetches again instead of resuming a finished one.
                        tally.completedResumes += 1
                        if let finding = try await compareDumps("crash-fetch.db", "ref-fetch.db", expected: fetchArticles, in: dir) {
                            tally.findings.append("round \(round): \(finding)")
                        }
                        try FileManager.default.removeItem(at: dir.appendingPathComponent(store))
                        lastFetchCount = 0
                    }
                }
            }

            // Resume and finish both; each must equal its uninterrupted reference.
            let finishFetch = try await runQuire(["--store", "crash-fetch.db"] + fetchArgs, environment: env, directory: dir)
            let finishLoad = try await runQuire(["--store", "crash-load.db"] + loadArgs, directory: dir)
            #expect(finishFetch.status == 0 && finishLoad.status == 0, "\(finishFetch)\n\(finishLoad)")
            for (crashed, reference, expected) in [
                ("crash-fetch.db", "ref-fetch.db", fetchArticles), ("crash-load.db", "ref-load.db", loadRecords),
            ] {
                if let finding = try await compareDumps(crashed, reference, expected: expected, in: dir) { tally.findings.append(finding) }
            }
            let storeBytes = try Data(contentsOf: dir.appendingPathComponent("crash-fetch.db/data.mdb"))
            if storeBytes.range(of: Data(crashKey.utf8)) != nil { tally.findings.append("the API key reached the store") }
        }
        // One line the script picks up for its summary.
        print("LongCrashTests: \(tally.summary) seed=\(seed)")
        for finding in tally.findings { print("LongCrashTests finding: \(finding)") }
        #expect(tally.kills > 0)
        #expect(tally.findings.isEmpty, "\(tally.findings.joined(separator: "\n"))")
    }
}

/// Counts of one crash run.
private struct CrashTally {
    var rounds = 0
    var kills = 0
    var fetchKills = 0
    var loadKills = 0
    var verifies = 0
    /// Fetches that, resumed after kills, ran to the end and were compared with the reference.
    var completedResumes = 0
    var findings: [String] = []

    var summary: String {
        "rounds=\(rounds) kills=\(kills) fetch-kills=\(fetchKills) load-kills=\(loadKills) verifies=\(verifies) completed-resumes=\(completedResumes) findings=\(findings.count)"
    }
}

/// The record count from `quire verify`'s "ok: N records, ..." line.
private func recordCount(_ stdout: String) -> Int? {
    guard let line = lines(stdout).first(where: { $0.hasPrefix("ok: ") }) else { return nil }
    let number = line.dropFirst(4).prefix { $0.isNumber || $0 == "," }.filter(\.isNumber)
    return Int(number)
}

/// Nil when `crashed` verifies and dumps exactly like `reference` with `expected` records; else what differs.
private func compareDumps(_ crashed: String, _ reference: String, expected: Int, in dir: URL) async throws -> String? {
    let got = try await runQuire(["--store", crashed, "dump"], directory: dir).stdout
    let want = try await runQuire(["--store", reference, "dump"], directory: dir).stdout
    if lines(got).count != expected || got != want {
        return "\(crashed): \(lines(got).count) records, differs from \(reference)"
    }
    if try await runQuire(["--store", crashed, "verify", "--quiet"], directory: dir).status != 0 {
        return "\(crashed): final verify failed"
    }
    return nil
}

/// Starts `quire`, sends it SIGKILL after `delay` seconds unless it ended, and says which happened.
private func runAndKill(
    _ args: [String], environment: [String: String], directory: URL, after delay: Double
) throws -> (killed: Bool, status: Int32) {
    let process = ChildProcess()
    process.executableURL = try QuireBinary.url()
    process.arguments = args
    process.currentDirectoryURL = directory
    var env = ProcessInfo.processInfo.environment
    env["QUIRE_STORE"] = nil
    env["NYT_API_KEY"] = nil
    for (name, value) in environment { env[name] = value }
    process.environment = env
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    usleep(UInt32(delay * 1_000_000))
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    return (killed, process.terminationStatus)
}
