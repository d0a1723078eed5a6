import Foundation
import QuireLMDB
import Testing

/// Damage every page of a small store, one at a time, and run every reading command on it.
///
/// Each damaged copy gets 16 bytes inverted at the start of one page (its header), 16 in its
/// middle (node pointers, keys or record bytes), or one byte inside one record. Every command
/// must then either succeed with exactly the output it gave on the sound store, or exit 1 with
/// a one-line `quire: …` message: never a signal, never a hang, never changed output with
/// status 0. `dump --format mdb` copies index and metadata entries as bytes, like `mdb_dump`:
/// its output may differ only where `verify` fails. `verify` must fail for every changed record.
///
/// `swift test` sweeps a store of 20 articles; `QUIRE_PAGE_SWEEP=N` sweeps one of N articles
/// and every record.
@Suite struct PageSweepTests {
    static let articles = Int(ProcessInfo.processInfo.environment["QUIRE_PAGE_SWEEP"] ?? "") ?? 20
    static let isLong = ProcessInfo.processInfo.environment["QUIRE_PAGE_SWEEP"] != nil

    enum Damage: String, CaseIterable, Sendable {
        case pageHeader, pageMiddle, recordByte
    }

    @Test(arguments: Damage.allCases)
    func everyCommandFailsCleanlyOrAgreesOnADamagedStore(damage: Damage) async throws {
        try await withScratch { dir in
            let pristine = try await makeStore(in: dir, count: Self.articles)
            let data = try Data(contentsOf: URL(fileURLWithPath: pristine + "/data.mdb"))
            let pageSize = 4096
            let firstID = try #require(
                lines(try await runQuire(["--store", pristine, "dump"]).stdout).first.flatMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
                })
            let commands: [[String]] = [
                ["stats"], ["dump"], ["dump", "--format", "table"], ["get", firstID], ["verify"],
                ["dump", "--format", "mdb"],
            ]
            // The damaged copies live at one path, so path-bearing output (stats) compares equal.
            let store = dir.path + "/damaged.db"
            try FileManager.default.copyItem(atPath: pristine, toPath: store)
            var reference: [[String]: String] = [:]
            for command in commands { reference[command] = try await runQuire(["--store", store] + command).stdout }
            try FileManager.default.removeItem(atPath: store)

            // Each case: the byte ranges it inverts.
            var cases: [[(offset: Int, count: Int)]] = []
            switch damage {
            case .pageHeader: cases = stride(from: 0, to: data.count, by: pageSize).map { [($0, 16)] }
            case .pageMiddle: cases = stride(from: pageSize / 2, to: data.count, by: pageSize).map { [($0, 16)] }
            case .recordByte:
                let offsets = try recordOffsets(pristine, in: data)
                let step = Self.isLong ? 1 : max(1, offsets.count / 6)
                cases = stride(from: 0, to: offsets.count, by: step).map { offsets[$0].map { ($0, 1) } }
                #expect(!cases.isEmpty)
            }

            var tally: [String: Int] = [:]
            for ranges in cases {
                let offset = ranges[0].offset
                var damaged = data
                for (start, count) in ranges {
                    for i in start..<min(start + count, damaged.count) { damaged[i] ^= 0xFF }
                }
                try? FileManager.default.removeItem(atPath: store)
                try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
                try damaged.write(to: URL(fileURLWithPath: store + "/data.mdb"))
                var outcomes: [[String]: QuireResult] = [:]
                for command in commands {
                    let result = try await runQuire(["--store", store] + command, timeout: 60)
                    outcomes[command] = result
                    let what = "\(damage) at byte \(offset) (page \(offset / pageSize)): \(command.joined(separator: " "))"
                    #expect(!result.signaled && !result.timedOut, "\(what): \(result)")
                    #expect(result.status == 0 || result.status == 1, "\(what): \(result)")
                    if result.status == 1 {
                        #expect(result.stderr.hasPrefix("quire: "), "\(what): \(result)")
                        #expect(result.stderr.split(separator: "\n").count == 1, "\(what): \(result)")
                    }
                    let changed = result.status == 0 && result.stdout != reference[command]
                    let key = result.status == 0 ? (changed ? "changed" : "same") : "failed"
                    tally["\(command.joined(separator: " ")) \(key)", default: 0] += 1
                    if changed && command != ["dump", "--format", "mdb"] {
                        Issue.record("\(what): exit 0 with changed output")
                    }
                }
                let verified = outcomes[["verify"]]?.status == 0
                if outcomes[["dump", "--format", "mdb"]].map({ $0.status == 0 && $0.stdout != reference[["dump", "--format", "mdb"]] }) == true {
                    #expect(!verified, "\(damage) at byte \(offset): the raw dump changed and verify said ok")
                }
                if damage == .recordByte {
                    #expect(!verified, "record byte \(offset) changed and verify said ok")
                }
            }
            let summary = tally.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            print("page sweep \(damage): \(cases.count) damaged copies of a \(data.count / pageSize)-page store; \(summary)")
        }
    }
}

/// Where each record's value bytes sit in the data file: the middle byte of each copy. A page
/// LMDB reused keeps what it held before in its unused middle, so a record's bytes can also be
/// found in a page that no longer holds it; all of them are damaged.
private func recordOffsets(_ store: String, in data: Data) throws -> [[Int]] {
    let environment = try Environment(path: store, options: {
        var options = EnvironmentOptions()
        options.readOnly = true
        options.mapSize = 0
        return options
    }())
    defer { environment.close() }
    let records = try environment.openDatabase("c:articles", flags: [])
    let values: [[UInt8]] = try environment.read { txn in txn.entries(in: records).map(\.valueBytes) }
    return values.compactMap { value in
        var found: [Int] = []
        var searched = data.startIndex..<data.endIndex
        while let range = data.range(of: Data(value), in: searched) {
            found.append(range.lowerBound + value.count / 2)
            searched = range.upperBound..<data.endIndex
        }
        return found.isEmpty ? nil : found
    }
}
