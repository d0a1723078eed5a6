import Foundation
import Quire
import QuireFixtures
import QuireNews
import QuireTestSupport
import Testing

/// JSON Lines of generated articles (hard unicode included), as a user's file would hold them.
func generatedJSONL(count: Int, seed: UInt64 = 42) throws -> Data {
    var generator = ArticleGenerator(seed: seed)
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    var out = Data()
    for i in 0..<count {
        out.append(try encoder.encode(generator.article(index: i)))
        out.append(0x0A)
    }
    return out
}

/// A scratch directory holding `quire.db`, removed afterwards.
func withScratch<R>(_ body: (URL) throws -> R) throws -> R {
    try withTemporaryDirectoryURL("cmd", body)
}

/// ``withScratch(_:)`` for async bodies.
func withScratch<R>(_ body: (URL) async throws -> R) async throws -> R {
    try await withTemporaryDirectoryURL("cmd", body)
}

func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

@Suite struct StoreCommandTests {
    @Test func loadThenDumpGetStatsVerify() async throws {
        try await withScratch { dir in
            let load = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 300), directory: dir)
            #expect(load.status == 0, "\(load)")
            let dump = try await runQuire(["dump"], directory: dir)
            #expect(dump.status == 0)
            #expect(dump.stderr.isEmpty)
            let records = lines(dump.stdout)
            #expect(records.count == 300)
            let first = try JSONSerialization.jsonObject(with: Data(records[0].utf8)) as? [String: Any]
            let id = try #require(first?["id"] as? String)
            #expect((first?["publishedAt"] as? String)?.hasSuffix("Z") == true)
            // An absent value is omitted, never written as "".
            #expect(!dump.stdout.contains("\"\""))

            let get = try await runQuire(["get", id], directory: dir)
            #expect(get.status == 0)
            #expect(lines(get.stdout) == [records[0]])
            let table = try await runQuire(["get", id, "--format", "table"], directory: dir)
            #expect(table.stdout.contains("id"))
            #expect(table.stdout.contains(id))

            let stats = try await runQuire(["stats", "--json"], directory: dir)
            #expect(stats.status == 0)
            let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
            let collections = object?["collections"] as? [[String: Any]]
            #expect(collections?.first { $0["name"] as? String == "articles" }?["records"] as? Int == 300)
            // The total, as the text's `records` line: every collection's records.
            let total = collections?.reduce(0) { $0 + ($1["records"] as? Int ?? 0) }
            #expect(object?["records"] as? Int == total && (total ?? 0) >= 300)
            let text = try await runQuire(["stats"], directory: dir)
            #expect(text.stdout.contains("articles: 300 records"))
            #expect(lines(text.stdout).contains { $0.hasPrefix("records") && $0.hasSuffix(" \(total ?? -1)") }, "\(text)")

            let verify = try await runQuire(["verify", "--quiet"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
        }
    }

    @Test func dumpLoadDumpIsIdentical() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["--store", "a.db", "load", "-", "--quiet"], stdin: try generatedJSONL(count: 250, seed: 9), directory: dir)
            let first = try await runQuire(["--store", "a.db", "dump", "--format", "jsonl"], directory: dir)
            #expect(lines(first.stdout).count == 250)
            let load = try await runQuire(["--store", "b.db", "load", "-", "--quiet"], stdin: Data(first.stdout.utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            let second = try await runQuire(["--store", "b.db", "dump", "--format", "jsonl"], directory: dir)
            #expect(second.stdout == first.stdout)
        }
    }

    @Test func loadReadsTheJSONArrayDumpToo() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["--store", "a.db", "load", "-", "--quiet"], stdin: try generatedJSONL(count: 40, seed: 11), directory: dir)
            let json = try await runQuire(["--store", "a.db", "dump", "--format", "json"], directory: dir)
            let load = try await runQuire(["--store", "b.db", "load", "-", "--quiet"], stdin: Data(json.stdout.utf8), directory: dir)
            #expect(load.status == 0, "\(load)")
            let a = try await runQuire(["--store", "a.db", "dump"], directory: dir).stdout
            let b = try await runQuire(["--store", "b.db", "dump"], directory: dir).stdout
            #expect(lines(b).count == 40)
            #expect(a == b)
        }
    }

    @Test func dumpFiltersAndFormats() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 200, seed: 3), directory: dir)
            let all = lines(try await runQuire(["dump"], directory: dir).stdout).map {
                try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
            }
            let since = try await runQuire(["dump", "--since", "2016-01-01", "--until", "20181231"], directory: dir)
            let expected = all.filter {
                guard let d = $0["publishedAt"] as? String else { return false }
                return d >= "2016-01-01" && d < "2019-01-01"
            }
            let got = lines(since.stdout)
            #expect(got.count == expected.count)
            #expect(got.allSatisfy { $0.contains("\"publishedAt\":\"201") })
            let dates = got.compactMap { line -> String? in
                guard let r = line.range(of: "\"publishedAt\":\"") else { return nil }
                return String(line[r.upperBound...].prefix(20))
            }
            #expect(dates == dates.sorted())

            let section = try #require(all.compactMap { $0["section"] as? String }.first)
            let bySection = lines(try await runQuire(["dump", "--section", section], directory: dir).stdout)
            #expect(bySection.count == all.filter { $0["section"] as? String == section }.count)
            // A section and a date range: the range's records of that section, in date order.
            let window = lines(try await runQuire(["dump", "--since", "2010-01-01"], directory: dir).stdout)
            let both = try await runQuire(["dump", "--section", section, "--since", "2010-01-01"], directory: dir)
            #expect(both.status == 0, "\(both)")
            let inSection = window.filter { line in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["section"] as? String == section
            }
            #expect(lines(both.stdout) == inSection && !inSection.isEmpty)
            let none = try await runQuire(["dump", "--section", "No such section", "--since", "2010-01-01"], directory: dir)
            #expect(none.status == 0 && none.stdout.isEmpty, "\(none)")

            #expect(lines(try await runQuire(["dump", "--limit", "5"], directory: dir).stdout).count == 5)
            let json = try await runQuire(["dump", "--format", "json", "--limit", "3"], directory: dir)
            let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any]
            #expect(array?.count == 3)
            let table = try await runQuire(["dump", "--format", "table", "--limit", "2"], directory: dir)
            #expect(lines(table.stdout).count == 3)
            #expect(table.stdout.hasPrefix("id "))
            // The whole table (its fields read on every core) has the rows of the walk through the
            // date index (each record decoded), in key order, and the undated records too.
            let wholeTable = lines(try await runQuire(["dump", "--format", "table"], directory: dir).stdout)
            let datedTable = lines(try await runQuire(["dump", "--format", "table", "--since", "1900-01-01"], directory: dir).stdout)
            let undated = all.filter { $0["publishedAt"] == nil }.count
            #expect(wholeTable.count == all.count + 1 && datedTable.count == all.count + 1 - undated)
            #expect(Set(datedTable).isSubset(of: Set(wholeTable)))
            let ids = wholeTable.dropFirst().map { String($0.prefix(50)).trimmingCharacters(in: .whitespaces) }
            let shown = all.map { $0["id"] as! String }.map { $0.count > 50 ? $0.prefix(49) + "…" : $0 }
            #expect(ids == shown)
        }
    }

    @Test func missingAndCorruptStoresFailClearly() async throws {
        try await withScratch { dir in
            for command in [["dump"], ["get", "x"], ["stats"], ["verify"]] {
                let result = try await runQuire(["--store", "nowhere.db"] + command, directory: dir)
                #expect(result.status == 1)
                #expect(result.stderr.hasPrefix("quire: \(command[0]): nowhere.db: no store at this path"), "\(result)")
                #expect(result.stdout.isEmpty)
            }
            // A file (a store's own data.mdb named by mistake) is not a store, and never becomes
            // one: serve refuses it too instead of answering 503 until a store appears.
            try Data("x".utf8).write(to: dir.appendingPathComponent("data.mdb"))
            for command in [["stats"], ["serve", "--port", "0"]] {
                let result = try await runQuire(["--store", "data.mdb"] + command, directory: dir)
                #expect(result.status == 1 && result.stdout.isEmpty, "\(result)")
                #expect(result.stderr.hasPrefix("quire: \(command[0]): data.mdb: is a file, not a store"), "\(result)")
            }
            let corrupt = dir.appendingPathComponent("corrupt.db")
            try FileManager.default.createDirectory(at: corrupt, withIntermediateDirectories: true)
            try Data(repeating: 0xAB, count: 65_536).write(to: corrupt.appendingPathComponent("data.mdb"))
            let result = try await runQuire(["--store", "corrupt.db", "dump"], directory: dir)
            #expect(result.status == 1)
            #expect(result.stderr.hasPrefix("quire: dump: corrupt.db: "), "\(result)")
        }
    }

    @Test func getOfAMissingIdAndBadLoadLines() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 3), directory: dir)
            let missing = try await runQuire(["get", "no-such-id"], directory: dir)
            #expect(missing.status == 1)
            #expect(missing.stderr == "quire: get: no-such-id: no such record\n")
            var bad = try generatedJSONL(count: 2)
            bad.append(Data("{\"id\": \"x\"\n".utf8))
            let load = try await runQuire(["load", "-", "--quiet"], stdin: bad, directory: dir)
            #expect(load.status == 1)
            #expect(load.stderr.contains("quire: load: line 3:"), "\(load)")
            let noID = try await runQuire(["load", "-", "--quiet"], stdin: Data("{\"url\":\"y\"}\n".utf8), directory: dir)
            #expect(noID.status == 1 && noID.stderr.contains("line 1: missing field 'id'"), "\(noID)")
            let missingFile = try await runQuire(["load", "nope.jsonl"], directory: dir)
            #expect(missingFile.status == 1)
            #expect(missingFile.stderr.hasPrefix("quire: load: nope.jsonl: No such file"))
        }
    }

    @Test func dumpIntoHeadEndsQuietly() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 3000), directory: dir)
            let binary = try QuireBinary.url().path
            let script = "'\(binary)' dump | head -1; echo \"status=${PIPESTATUS[0]}\" >&2"
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script]
            process.currentDirectoryURL = dir
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(lines(stdout).count == 1)
            #expect(stderr == "status=0\n")
        }
    }

    @Test func dumpWhileAnotherProcessLoads() async throws {
        try await withScratch { dir in
            _ = try await runQuire(["load", "-", "--quiet"], stdin: try generatedJSONL(count: 10), directory: dir)
            let big = dir.appendingPathComponent("big.jsonl")
            try generatedJSONL(count: 6000, seed: 77).write(to: big)
            let loader = ChildProcess()
            loader.executableURL = try QuireBinary.url()
            loader.arguments = ["load", big.path, "--quiet"]
            loader.currentDirectoryURL = dir
            try loader.run()
            var counts: [Int] = []
            while loader.isRunning || counts.isEmpty {
                let dump = try await runQuire(["dump"], directory: dir)
                #expect(dump.status == 0, "\(dump)")
                counts.append(lines(dump.stdout).count)
            }
            loader.waitUntilExit()
            #expect(loader.terminationStatus == 0)
            #expect(counts == counts.sorted())  // snapshots only move forward
            #expect(lines(try await runQuire(["dump"], directory: dir).stdout).count == 6010)
        }
    }
}

/// A cluster member's store takes the log's records alone: a local load or fetch into it made
/// that member differ from the others for good (and `quire node` went on with it).
@Suite struct ReplicaStoreTests {
    private struct Marker: Codable, Sendable {
        var id: String
    }

    @Test func aClusterMembersStoreRefusesLocalWrites() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 3)
            do {
                let opened = try Store(path: store)
                defer { opened.close() }
                let cluster = StoreCollection<Marker>(name: "cluster", key: { .string($0.id) })
                try opened.register(cluster)
                try await opened.write { txn in try txn.put(Marker(id: "applied"), in: cluster) }
            }
            let input = dir.appendingPathComponent("in.jsonl")
            try generatedJSONL(count: 2, seed: 9).write(to: input)
            let load = try await runQuire(["--store", store, "load", input.path])
            #expect(load.status == 1 && load.stderr.contains("is a cluster member's store (quire node)"), "\(load)")
            let fetch = try await runQuire(
                ["--store", store, "fetch", "nyt", "--query", "x", "--base-url", "http://127.0.0.1:9"],
                environment: ["NYT_API_KEY": "k"])
            #expect(fetch.status == 1 && fetch.stderr.contains("is a cluster member's store"), "\(fetch)")
            // Reads go on as before.
            let dump = try await runQuire(["--store", store, "dump"])
            #expect(dump.status == 0 && lines(dump.stdout).count == 3, "\(dump)")
        }
    }
}

@Suite struct InterruptTests {
    /// The `id` of a JSON line.
    static func id(of line: String) -> String {
        ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["id"] as? String ?? ""
    }

    /// Ctrl-C during a load stops between transactions: exit 130, the store verifies, and it
    /// holds whole records of the input only (the lines read before the signal committed too).
    @Test func interruptedLoadLeavesAConsistentStore() async throws {
        try await withScratch { dir in
            let file = dir.appendingPathComponent("big.jsonl")
            try generatedJSONL(count: 12_000, seed: 5).write(to: file)
            let process = ChildProcess()
            process.executableURL = try QuireBinary.url()
            process.arguments = ["load", file.path, "--quiet"]
            process.currentDirectoryURL = dir
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Signalled once the store exists: `main` installs its handlers before it opens the
            // store, and a child still starting on a busy machine (seconds, inside a full
            // two-core `swift test`) died of the signal's default action, status 2.
            let data = dir.appendingPathComponent("quire.db/data.mdb").path
            let deadline = ContinuousClock.now + .seconds(60)
            while !FileManager.default.fileExists(atPath: data) && process.isRunning && ContinuousClock.now < deadline {
                usleep(10_000)
            }
            usleep(400_000)
            let interrupted = process.isRunning
            if interrupted { kill(process.processIdentifier, SIGINT) }
            process.waitUntilExit()
            #expect(process.terminationStatus == (interrupted ? 130 : 0))
            let verify = try await runQuire(["verify", "--quiet"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            let stored = lines(try await runQuire(["dump"], directory: dir).stdout)
            let input = Set(lines(String(decoding: try Data(contentsOf: file), as: UTF8.self)).map(Self.id(of:)))
            #expect(stored.count <= 12_000)
            #expect(stored.allSatisfy { input.contains(Self.id(of: $0)) })
        }
    }

    /// Ctrl-C during a dump (batches rendering in the background) stops it: exit 130, and what
    /// it printed is a whole JSON array of whole records, the first ones in key order.
    @Test func interruptedDumpEndsItsOutputWhole() async throws {
        try await withScratch { dir in
            let file = dir.appendingPathComponent("big.jsonl")
            try generatedJSONL(count: 12_000, seed: 9).write(to: file)
            #expect(try await runQuire(["load", file.path, "--quiet"], directory: dir).status == 0)
            let full = try await runQuire(["dump", "--format", "json"], directory: dir)
            let all = try #require(try JSONSerialization.jsonObject(with: Data(full.stdout.utf8)) as? [[String: Any]])
            #expect(all.count == 12_000)
            let output = dir.appendingPathComponent("out.json")
            try Data().write(to: output)
            let handle = try FileHandle(forWritingTo: output)
            defer { try? handle.close() }
            let process = try startQuire(["dump", "--format", "json"], directory: dir, stdout: handle)
            // Signalled once the first records are out.
            while process.isRunning, (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0 < 4096 {
                usleep(1_000)
            }
            let interrupted = process.isRunning
            if interrupted { kill(process.processIdentifier, SIGINT) }
            process.waitUntilExit()
            #expect(process.terminationStatus == (interrupted ? 130 : 0))
            let printed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [[String: Any]])
            #expect(!printed.isEmpty)
            #expect(printed.count <= all.count)
            #expect(printed.map { $0["id"] as? String } == all.prefix(printed.count).map { $0["id"] as? String })
        }
    }
}
