import Foundation
import Testing
@testable import QuireLMDB

@Suite struct MultiProcessTests {
    /// Another process grows the map far beyond this one's size; this process adopts the new
    /// size (`MDB_MAP_RESIZED`) on its next read and write instead of failing.
    @Test func mapGrownByAnotherProcessIsAdopted() async throws {
        let dir = NSTemporaryDirectory() + "quire-resize-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = EnvironmentOptions()
        options.mapSize = 128 << 10
        let env = try Environment(path: dir, options: options)
        let db = try env.openDatabase("x")
        try put(env, db, "first")
        let before = try env.info().mapSize

        await #expect(processExitsWith: .success) { [dir = dir as String] in try growFromAnotherProcess(dir) }

        let (count, last) = try env.read { txn throws in
            (try txn.count(of: db), try txn.get(Array(String(format: "%08d", 9_999).utf8), in: db))
        }
        #expect(count == 10_001)
        #expect(last == [UInt8](repeating: 7, count: 400))
        try put(env, db, "after")
        #expect(try env.info().mapSize > before)
    }
}

/// Child process: opens the environment with the same small map and writes ~4 MB.
private func growFromAnotherProcess(_ dir: String) throws {
    var options = EnvironmentOptions()
    options.mapSize = 128 << 10
    let env = try Environment(path: dir, options: options)
    let db = try env.openDatabase("x")
    for batch in 0..<10 {
        try env.write { txn in
            for i in 0..<1_000 {
                try txn.put([UInt8](repeating: 7, count: 400), forKey: Array(String(format: "%08d", batch * 1000 + i).utf8), in: db)
            }
        }
    }
    env.close()
}

/// A one-key write, from synchronous code (writes are `noasync`).
private func put(_ env: Environment, _ db: Database, _ key: String) throws {
    try env.write { txn in try txn.put([1], forKey: Array(key.utf8), in: db) }
}
