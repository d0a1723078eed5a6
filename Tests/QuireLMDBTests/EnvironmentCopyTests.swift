import Foundation
import Testing

@testable import QuireLMDB

/// `Environment.copy` is atomic and can be stopped midway.
@Suite struct EnvironmentCopyTests {
    private func filledEnvironment(_ path: String) throws -> Environment {
        let env = try Environment(path: path)
        let db = try env.openDatabase("data")
        try env.write { txn in
            for i in 0..<3_000 { try txn.put(Array(repeating: UInt8(i % 251), count: 400), forKey: bytes("k\(i)"), in: db) }
        }
        return env
    }

    @Test(arguments: [false, true])
    func cancelledCopyLeavesNothingBehind(compact: Bool) throws {
        signal(SIGPIPE, SIG_IGN)  // as `quire` does: LMDB's write into the closed pipe fails instead
        try withTemporaryDirectory { dir in
            let env = try filledEnvironment(dir + "/source")
            defer { env.close() }
            let destination = dir + "/backup"
            #expect(throws: LMDBError(code: ECANCELED)) {
                try env.copy(to: destination, compact: compact, isCancelled: { true })
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination).isEmpty)
            // Not cancelled, the same path copies everything.
            var polls = 0
            try env.copy(to: destination, compact: compact, isCancelled: { polls += 1; return false })
            #expect(polls > 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: destination) == ["data.mdb"])
            let attributes = try FileManager.default.attributesOfItem(atPath: destination + "/data.mdb")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let copy = try Environment(path: destination)
            defer { copy.close() }
            let db = try copy.openDatabase("data", flags: [])
            #expect(try copy.read { txn in try txn.count(of: db) } == 3_000)
        }
    }
}

/// A new environment's data file appears whole or not at all.
@Suite struct EnvironmentCreationTests {
    @Test func aNewEnvironmentLeavesOnlyItsTwoFiles() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/fresh"
            let env = try Environment(path: path)
            let db = try env.openDatabase("x")
            try env.write { txn in try txn.put([1], forKey: [1], in: db) }
            env.close()
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == ["data.mdb", "lock.mdb"])
            let size = try #require(FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int)
            #expect(size >= 2 * 4096)
            // An empty data file is never taken for a new environment.
            try Data().write(to: URL(fileURLWithPath: path + "/data.mdb"))
            #expect(throws: LMDBError.corrupted) { _ = try Environment(path: path) }
        }
    }

    struct Stop: Error {}

    @Test func createShowsTheFileOnlyOnceInitialized() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/store"
            // An initializer that fails leaves nothing behind.
            #expect(throws: Stop.self) {
                try Environment.create(at: path) { env in
                    _ = try env.openDatabase("meta")
                    throw Stop()
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
            try Environment.create(at: path) { env in
                let meta = try env.openDatabase("meta")
                try env.write { txn in try txn.put(bytes("2"), forKey: bytes("format"), in: meta) }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["data.mdb"])
            let env = try Environment(path: path)
            defer { env.close() }
            let meta = try env.openDatabase("meta", flags: [])
            #expect(try env.read { txn in try txn.get(bytes("format"), in: meta) } == bytes("2"))
        }
    }

    /// The staging directories of first opens killed midway are removed by a later writable
    /// open once they are a minute old: one whose lock file no process holds, one without a lock
    /// file; a fresh one (its process may be creating the store right now) stays.
    @Test func aWritableOpenRemovesTheStagingDirectoriesOfKilledOnes() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/store"
            try Environment.create(at: path) { _ in }
            let (unlocked, bare, fresh) = (
                Environment.creationPrefix + "Aaaaaa", Environment.creationPrefix + "Bbbbbb",
                Environment.creationPrefix + "Cccccc"
            )
            for name in [unlocked, bare, fresh] {
                try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: false)
            }
            for name in [unlocked, fresh] {
                try Data(repeating: 0, count: 4_096).write(to: URL(fileURLWithPath: path + "/" + name + "/lock.mdb"))
                try Data(repeating: 0, count: 8_192).write(to: URL(fileURLWithPath: path + "/" + name + "/data.mdb"))
            }
            let anHourAgo = Date().addingTimeInterval(-3_600)
            for name in [unlocked, bare] {
                try FileManager.default.setAttributes([.modificationDate: anHourAgo], ofItemAtPath: path + "/" + name)
            }
            var readOnly = EnvironmentOptions()
            readOnly.readOnly = true
            let reader = try Environment(path: path, options: readOnly)
            reader.close()
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).count == 5)  // a reader leaves them
            let env = try Environment(path: path)
            env.close()
            let left = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            #expect(left == [fresh, "data.mdb", "lock.mdb"].sorted())
        }
    }

    /// A compacted copy's map can be exactly as large as its pages (LMDB maps at least the
    /// file): creating a database in it must grow the map, as a put would (`quire copy
    /// --compact` of a large store failed with MDB_MAP_FULL when it opened its scratch database).
    @Test func creatingADatabaseInAFullMapGrowsIt() throws {
        try withTemporaryDirectory { dir in
            var options = EnvironmentOptions()
            options.mapSize = 1 << 20
            options.maxDatabases = 64
            let source = try Environment(path: dir + "/source", options: options)
            let db = try source.openDatabase("data")
            try source.write { txn in
                for i in 0..<6_000 { try txn.put(Array(repeating: UInt8(i % 251), count: 400), forKey: bytes("k\(i)"), in: db) }
            }
            try source.copy(to: dir + "/copy", compact: true)
            source.close()

            let copy = try Environment(path: dir + "/copy", options: options)
            defer { copy.close() }
            let before = try copy.info()
            let names = (0..<40).map { "new\($0)" }
            for name in names { _ = try copy.openDatabase(name) }
            #expect(try copy.info().mapSize >= before.mapSize)
            let data = try copy.openDatabase("data", flags: [])
            #expect(try copy.read { txn in try txn.count(of: data) } == 6_000)
            let created = try copy.openDatabase("new39", flags: [])
            try copy.write { txn in try txn.put(bytes("v"), forKey: bytes("k"), in: created) }
            #expect(try copy.read { txn in try txn.get(bytes("k"), in: created) } == bytes("v"))
        }
    }
}
