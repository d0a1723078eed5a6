import Foundation
import Quire
import Testing

/// Options out of their range, set by an embedding program: an error or the nearest sensible
/// value, never a trap that ends the program.
@Suite struct OptionBoundsTests {
    /// A reader table of `Int.max` slots made a lock file as large as the disk's free space
    /// (its slots are reserved on disk) before anything failed.
    @Test(arguments: [-1, 0, Int.min, Int.max, (1 << 16) + 1])
    func aReaderTableOutOfRangeIsRefusedBeforeAnythingIsMade(_ maxReaders: Int) async throws {
        try await withTemporaryStorePath { path in
            #expect {
                try openStore(path) { $0.maxReaders = maxReaders }.close()
            } throws: { error in
                "\(error)".contains("maxReaders is \(maxReaders)")
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test(arguments: [-1, 0, Int.min, Int.max, 1 << 15])
    func aDatabaseCountOutOfRangeIsRefused(_ maxDatabases: Int) async throws {
        _ = try await withTemporaryStorePath { path in
            #expect {
                try openStore(path) { $0.maxDatabases = maxDatabases }.close()
            } throws: { error in
                "\(error)".contains("maxDatabases is \(maxDatabases)")
            }
        }
    }

    @Test func theLargestReaderTableAndDatabaseCountOpen() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path) {
                $0.maxReaders = 1 << 16
                $0.maxDatabases = (1 << 15) - 1
            }
            defer { store.close() }
            try store.register(rows)
            try await store.put(Row(id: 1, name: "one", group: 0), in: rows)
            #expect(try store.read { try $0.get(.int(1), from: rows)?.name } == "one")
        }
    }

    @Test func chunkAndWindowSizesSetBelowTheirRangeTakeTheLeast() async throws {
        var options = BulkInsertOptions()
        options.chunkSize = 0
        options.sortWindow = -5
        #expect(options.chunkSize == 1 && options.sortWindow == 0)
        options.chunkSize = -1
        #expect(options.chunkSize == 1)
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            try store.register(rows)
            let report = try await store.bulkInsert((0..<5).map { Row(id: $0, name: "r\($0)", group: 0) }, into: rows, options: options)
            #expect(report.records == 5)
            #expect(try store.read { try $0.count(of: rows) } == 5)
        }
    }
}
