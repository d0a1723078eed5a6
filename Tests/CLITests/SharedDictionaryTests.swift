import Foundation
import Testing

/// A compression dictionary trained by one process is the store's for every other: the first
/// one stored is kept (two loads into a new store train at once), and a process opened before
/// it was trained reads the records compressed with it.
@Suite struct SharedDictionaryTests {
    /// Generated articles as JSON Lines, their ids made distinct by `prefix`.
    private func articles(_ count: Int, seed: UInt64, prefix: String) throws -> Data {
        let text = String(decoding: try generatedJSONL(count: count, seed: seed), as: UTF8.self)
        return Data(text.replacingOccurrences(of: #"{"id":""#, with: #"{"id":"\#(prefix)"#).utf8)
    }

    @Test func twoLoadsIntoANewStoreAtOnceKeepEveryRecordReadable() async throws {
        try await withScratch { dir in
            // Each is past the training threshold in its first block: both train at once.
            let (a, b) = (try articles(1_500, seed: 71, prefix: "a-"), try articles(1_500, seed: 72, prefix: "b-"))
            async let first = runQuire(["load", "-", "--quiet"], stdin: a, directory: dir)
            async let second = runQuire(["load", "-", "--quiet"], stdin: b, directory: dir)
            let (one, two) = try await (first, second)
            #expect(one.status == 0 && two.status == 0, "\(one) \(two)")
            let verify = try await runQuire(["verify"], directory: dir)
            #expect(verify.status == 0, "\(verify)")
            let dump = try await runQuire(["dump"], directory: dir)
            #expect(dump.status == 0 && lines(dump.stdout).count == 3_000, "\(dump.stderr)")
            let stats = try await runQuire(["stats"], directory: dir)
            #expect(stats.stdout.contains("compression zstd+dictionary"), "\(stats)")
        }
    }

    @Test func aServerStartedBeforeTheDictionaryReadsTheRecordsCompressedWithIt() async throws {
        try await withScratch { dir in
            let store = dir.appendingPathComponent("s.db").path
            let few = try await runQuire(["--store", store, "load", "-", "--quiet"], stdin: try articles(20, seed: 73, prefix: "f-"))
            try #require(few.status == 0, "\(few)")
            let server = try ServeProcess(store: store)
            defer { server.stop() }
            #expect(try allPages(server.port, "limit=50").count == 20)
            // Past the threshold: the load trains the dictionary and compresses with it.
            let many = try await runQuire(["--store", store, "load", "-", "--quiet"], stdin: try articles(1_500, seed: 74, prefix: "m-"))
            try #require(many.status == 0, "\(many)")
            let stats = try await runQuire(["--store", store, "stats"])
            #expect(stats.stdout.contains("compression zstd+dictionary"), "\(stats)")
            #expect(try allPages(server.port, "limit=500").count == 1_520)
            let search = try get(server.port, "/api/articles?q=the&limit=5")
            #expect(search.status == 200, "\(search)")
        }
    }
}
