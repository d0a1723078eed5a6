import Foundation
import QuireTestSupport
import Testing
@testable import QuireLMDB

@Suite struct EnvironmentTests {
    @Test func putGetDeleteRoundTrip() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir + "/env")
            let db = try env.openDatabase("things")
            try env.write { txn throws in
                try txn.put(bytes("one"), forKey: bytes("k1"), in: db)
                try txn.put([0, 255, 7], forKey: bytes("k2"), in: db)
            }
            try env.read { txn throws in
                #expect(try txn.get(bytes("k1"), in: db) == bytes("one"))
                #expect(try txn.get(bytes("k2"), in: db) == [0, 255, 7])
                #expect(try txn.get(bytes("missing"), in: db) == nil)
                #expect(try txn.contains(bytes("k1"), in: db))
                #expect(try txn.count(of: db) == 2)
                let length = try txn.withValue(forKey: bytes("k1"), in: db) { $0.count }
                #expect(length == 3)
            }
            let deleted = try env.write { txn throws in
                (try txn.delete(bytes("k1"), in: db), try txn.delete(bytes("nope"), in: db))
            }
            #expect(deleted == (true, false))
            try env.read { txn throws in #expect(try txn.get(bytes("k1"), in: db) == nil) }
        }
    }

    @Test func noOverwriteAppendAndReserve() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            try env.write { txn throws in
                #expect(try txn.put(bytes("a"), forKey: bytes("k"), in: db, flags: .noOverwrite))
                #expect(try !txn.put(bytes("b"), forKey: bytes("k"), in: db, flags: .noOverwrite))
                try txn.put(bytes("1"), forKey: bytes("m1"), in: db, flags: .append)
                try txn.put(bytes("2"), forKey: bytes("m2"), in: db, flags: .append)
                #expect(throws: LMDBError.keyExists) {
                    try txn.put(bytes("0"), forKey: bytes("a0"), in: db, flags: .append)
                }
                try txn.reserve(4, forKey: bytes("r"), in: db) { buffer in
                    buffer.copyBytes(from: [1, 2, 3, 4])
                }
            }
            try env.read { txn throws in
                #expect(try txn.get(bytes("k"), in: db) == bytes("a"))
                #expect(try txn.get(bytes("r"), in: db) == [1, 2, 3, 4])
                #expect(try txn.get(bytes("a0"), in: db) == nil)
            }
        }
    }

    @Test func putEachStoresEveryPairInOrderAndKeepsPutsFlags() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("many")
            let keys = (0..<500).map { bytes(String(format: "key%04d", $0)) }
            let values = (0..<500).map { bytes("value \($0)") }
            // All pairs in two flat buffers, as a bulk loader holds them.
            let (keyBytes, valueBytes) = (keys.flatMap { $0 }, values.flatMap { $0 })
            let valueStarts = values.reduce(into: [0]) { $0.append($0.last! + $1.count) }
            try keyBytes.withUnsafeBytes { k throws in
                try valueBytes.withUnsafeBytes { v throws in
                    try env.write { txn throws in
                        try txn.putEach(count: keys.count, in: db, flags: .append) { i in
                            (UnsafeRawBufferPointer(rebasing: v[valueStarts[i]..<valueStarts[i + 1]]),
                             UnsafeRawBufferPointer(rebasing: k[(i * 7)..<(i * 7 + 7)]))
                        }
                    }
                }
            }
            try env.read { txn throws in
                #expect(try txn.count(of: db) == 500)
                for i in [0, 1, 250, 499] { #expect(try txn.get(keys[i], in: db) == values[i]) }
            }
            // `.noOverwrite` skips what is there and stores the rest; `.append` out of order fails.
            let fresh = bytes("key9999")
            try env.write { txn throws in
                let pairs = [(bytes("changed"), keys[3]), (bytes("new"), fresh)]
                try pairs[0].0.withUnsafeBytes { v0 in
                    try pairs[0].1.withUnsafeBytes { k0 in
                        try pairs[1].0.withUnsafeBytes { v1 in
                            try pairs[1].1.withUnsafeBytes { k1 in
                                try txn.putEach(count: 2, in: db, flags: .noOverwrite) { $0 == 0 ? (v0, k0) : (v1, k1) }
                                #expect(throws: LMDBError.keyExists) {
                                    try txn.putEach(count: 1, in: db, flags: .append) { _ in (v0, k0) }
                                }
                            }
                        }
                    }
                }
            }
            try env.read { txn throws in
                #expect(try txn.get(keys[3], in: db) == values[3])
                #expect(try txn.get(fresh, in: db) == bytes("new"))
            }
        }
    }

    @Test func bodyErrorAbortsTheTransaction() throws {
        struct Boom: Error {}
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            #expect(throws: Boom.self) {
                try env.write { txn throws in
                    try txn.put(bytes("v"), forKey: bytes("k"), in: db)
                    throw Boom()
                }
            }
            try env.read { txn throws in #expect(try txn.get(bytes("k"), in: db) == nil) }
        }
    }

    @Test func failedCommitFreesTheHandleAndTheNextWriteWorks() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            // An oversized key fails inside the transaction; the abort must not double free.
            let tooLong = [UInt8](repeating: 1, count: env.maxKeySize + 1)
            #expect(throws: LMDBError.badValueSize) {
                try env.write { txn throws in try txn.put(bytes("v"), forKey: tooLong, in: db) }
            }
            #expect(throws: LMDBError.badValueSize) {
                try env.write { txn throws in try txn.put(bytes("v"), forKey: [], in: db) }
            }
            try env.write { txn throws in try txn.put(bytes("ok"), forKey: bytes("k"), in: db) }
            try env.read { txn throws in #expect(try txn.get(bytes("k"), in: db) == bytes("ok")) }
        }
    }

    @Test func errorsCarryCodeOperationPathAndHint() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            do {
                try env.write { txn throws in try txn.put(bytes("v"), forKey: [], in: db) }
                Issue.record("an empty key must fail")
            } catch let error as LMDBError {
                #expect(error == .badValueSize)
                #expect(error.operation == "mdb_put")
                #expect(error.path == env.path)
                #expect(error.description.contains("MDB_BAD_VALSIZE"))
                #expect(error.hint != nil)
            }
            let missing = LMDBError(code: LMDBError.mapFull.code, operation: "mdb_put")
            #expect(missing.description.hasPrefix("mdb_put: MDB_MAP_FULL"))
            #expect(missing.description.contains("grow"))
        }
    }

    @Test func doubleOpenIsRefusedAndCloseReleasesThePath() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            #expect(throws: LMDBError.alreadyOpen) { _ = try Environment(path: dir) }
            // The same directory through another spelling is the same environment.
            #expect(throws: LMDBError.alreadyOpen) { _ = try Environment(path: dir + "/.") }
            env.close()
            env.close()
            #expect(env.isClosed)
            #expect(throws: LMDBError.self) { try env.read { _ in 1 } }
            #expect(throws: LMDBError.self) { try env.info() }
            let again = try Environment(path: dir)
            #expect(!again.isClosed)
        }
    }

    /// A bind mount shows one directory under a second canonical path: keyed by its path, the
    /// registry let it open twice, and closing either dropped the other's file locks.
    @Test(.enabled(if: BindMount.isPossible, "needs root and mount(8)"))
    func aDirectoryOpenUnderABindMountIsTheSameEnvironment() throws {
        try withTemporaryDirectory { dir throws in
            try FileManager.default.createDirectory(atPath: dir + "/env", withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: dir + "/mirror", withIntermediateDirectories: false)
            try BindMount.run(["--bind", dir + "/env", dir + "/mirror"])
            defer { try? BindMount.run([dir + "/mirror"], command: "/bin/umount") }
            let env = try Environment(path: dir + "/env")
            #expect(throws: LMDBError.alreadyOpen) { _ = try Environment(path: dir + "/mirror") }
            env.close()
            let again = try Environment(path: dir + "/mirror")
            #expect(!again.isClosed)
            again.close()
        }
    }

    /// The lock file has LMDB's size for the reader slots asked for, and every block of it is
    /// allocated: a sparse one got its blocks when a reader first wrote a slot, a SIGBUS on a
    /// full disk.
    @Test func theLockFileIsAllocatedAtTheSizeLMDBGivesIt() throws {
        try withTemporaryDirectory { dir throws in
            for readers in [126, 510] {
                var options = EnvironmentOptions()
                options.maxReaders = readers
                let env = try Environment(path: dir + "/env\(readers)", options: options)
                defer { env.close() }
                var info = stat()
                #expect(stat(dir + "/env\(readers)/lock.mdb", &info) == 0)
                #expect(Int(info.st_size) == LockFileSpace.size(maxReaders: readers))
                #expect(Int(info.st_blocks) * 512 >= Int(info.st_size), "\(info.st_blocks) blocks for \(info.st_size) bytes")
            }
        }
    }

    /// The fault handler's view of the maps: an address in an open environment's map (or just
    /// past it) is the store's, one elsewhere is not.
    @Test func mappedRegionsFollowOpensRemapsAndCloses() throws {
        // What the CLI's fault handler turns on; off again for the rest of the run (each open
        // then reads /proc/self/maps).
        MappedRegions.enable()
        defer { MappedRegions.disable() }
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir + "/env")
            let db = try env.openDatabase("things")
            try env.write { txn throws in try txn.put(bytes("value"), forKey: bytes("key"), in: db) }
            let inside = try env.read { txn throws in
                try txn.withValue(forKey: bytes("key"), in: db) { UInt(bitPattern: $0.baseAddress) }
            }
            let address = try #require(inside)
            #expect(MappedRegions.contains(address))
            #expect(!MappedRegions.contains(0) && !MappedRegions.contains(16))
            // This program's own code: mapped apart from every store (a stack or the heap may lie
            // within 64 MiB past the map of another test's store, followed too meanwhile).
            let ownCode: @convention(c) () -> Void = {}
            #expect(!MappedRegions.contains(unsafeBitCast(ownCode, to: UInt.self)))
            // (After the close, the address may belong to another test's map: not checked.)
            env.close()
        }
        // A fault near null at LMDB's own instruction is LMDB following a pointer from a damaged
        // page: the handler needs LMDB's code found, and told from other code. (Here, not in a
        // test of its own: two tests turning the following on and off would race.)
        let lmdb = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mdb_cursor_get"))
        let libc = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "strlen"))
        #expect(MappedRegions.isLMDBCode(UInt(bitPattern: lmdb)))
        #expect(!MappedRegions.isLMDBCode(UInt(bitPattern: libc)))
        #expect(!MappedRegions.isLMDBCode(0x188))
        let ownCode: @convention(c) () -> Void = {}
        #expect(!MappedRegions.isLMDBCode(unsafeBitCast(ownCode, to: UInt.self)))
    }

    @Test func readOnlyOpenOfMissingStoreFailsClearly() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.readOnly = true
            do {
                _ = try Environment(path: dir + "/absent", options: options)
                Issue.record("opening a missing read-only environment must fail")
            } catch let error as LMDBError {
                #expect(error == .noSuchFile)
                #expect(error.description.contains("absent"))
            }
        }
    }

    @Test func readOnlyEnvironmentRefusesWrites() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/env"
            do {
                let env = try Environment(path: path)
                let db = try env.openDatabase("x")
                try env.write { txn throws in try txn.put(bytes("v"), forKey: bytes("k"), in: db) }
                env.close()
            }
            var options = EnvironmentOptions()
            options.readOnly = true
            let env = try Environment(path: path, options: options)
            let db = try env.openDatabase("x")
            try env.read { txn throws in #expect(try txn.get(bytes("k"), in: db) == bytes("v")) }
            #expect(throws: LMDBError.accessDenied) { try env.write { _ in } }
            #expect(throws: LMDBError.notFound) { _ = try env.openDatabase("other") }
        }
    }

    @Test func closeWaitsForARunningReader() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            try env.write { txn throws in try txn.put(bytes("v"), forKey: bytes("k"), in: db) }
            let inside = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var readValue: [UInt8]?
            Thread.detachNewThread {
                try? env.read { txn throws in
                    inside.signal()
                    Thread.sleep(forTimeInterval: 0.2)
                    readValue = try txn.get(bytes("k"), in: db)
                }
                done.signal()
            }
            inside.wait()
            env.close()  // must wait for the reader, not pull the map from under it
            done.wait()
            #expect(readValue == bytes("v"))
            #expect(env.isClosed)
        }
    }

    @Test func readerSlotsReturnToZeroAfterWork() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("x")
            try env.write { txn throws in try txn.put(bytes("v"), forKey: bytes("k"), in: db) }
            DispatchQueue.concurrentPerform(iterations: 64) { _ in
                for _ in 0..<50 { _ = try? env.read { txn throws in try txn.get(bytes("k"), in: db) } }
            }
            let info = try env.info()
            #expect(info.activeReaders == 0)
            #expect(info.readerSlotsUsed <= env.readerPool.capacity)
            #expect(env.gate.activeReaders == 0)
        }
    }

    @Test func statisticsAndCopy() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir + "/src")
            let db = try env.openDatabase("x")
            try env.write { txn throws in
                for i in 0..<500 { try txn.put(Array(repeating: 7, count: 100), forKey: bytes(String(format: "%05d", i)), in: db) }
            }
            try env.write { txn throws in
                for i in 0..<250 { try txn.delete(bytes(String(format: "%05d", i)), in: db) }
            }
            let stats = try env.read { txn throws in try txn.statistics(of: db) }
            #expect(stats.entries == 250)
            #expect(stats.depth >= 1)
            #expect(stats.leafPages > 0)
            let info = try env.info()
            #expect(info.mapSize >= EnvironmentOptions().mapSize)
            #expect(info.usedBytes > 0 && info.usedBytes <= info.mapSize)
            try env.copy(to: dir + "/copy", compact: true)
            #expect(throws: LMDBError.self) { try env.copy(to: dir + "/copy") }
            let copy = try Environment(path: dir + "/copy")
            let copiedDB = try copy.openDatabase("x")
            try copy.read { txn throws in
                #expect(try txn.count(of: copiedDB) == 250)
                #expect(try txn.get(bytes("00400"), in: copiedDB) == Array(repeating: 7, count: 100))
            }
        }
    }

    @Test func storeFilesArePrivate() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir + "/env")
            _ = try env.openDatabase("x")
            let attributes = try FileManager.default.attributesOfItem(atPath: env.path + "/data.mdb")
            let mode = (attributes[.posixPermissions] as? Int) ?? -1
            #expect(mode & 0o077 == 0)
        }
    }
}

/// `mount --bind` for a test, possible only as root on a system that allows it.
enum BindMount {
    static let isPossible: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        let probe = NSTemporaryDirectory() + "quire-bind-probe-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? FileManager.default.createDirectory(atPath: probe + "/b", withIntermediateDirectories: true)) != nil,
            (try? run(["--bind", probe + "/b", probe + "/b"])) != nil
        else { return false }
        return (try? run([probe + "/b"], command: "/bin/umount")) != nil
    }()

    struct Failed: Error { let status: Int32 }

    static func run(_ arguments: [String], command: String = "/bin/mount") throws {
        let status = runSystemTool(command, arguments)
        guard status == 0 else { throw Failed(status: status) }
    }
}
