import Foundation
import Synchronization
import Testing
@testable import QuireLMDB

@Suite struct MultiProcessTests {
    /// Another process grows the map far beyond this one's size; this process adopts the new
    /// size (`MDB_MAP_RESIZED`) on its next read and write instead of failing.
    @Test func mapGrownByAnotherProcessIsAdopted() async throws {
        let (dir, env, db) = try smallEnvironment("quire-resize")
        defer { try? FileManager.default.removeItem(atPath: dir) }
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

    /// A plain copy begins LMDB's own read transaction, which meets a map another process grew
    /// as `MDB_MAP_RESIZED`: the size is adopted and the copy made (a backup beside a growing
    /// load failed once per doubling). Both copy paths: straight into the file and through a pipe.
    @Test(arguments: [false, true])
    func aCopyAdoptsAMapGrownByAnotherProcess(cancellable: Bool) async throws {
        let (dir, env, _) = try smallEnvironment("quire-resize-copy")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        await #expect(processExitsWith: .success) { [dir = dir as String] in try growFromAnotherProcess(dir) }
        let copy = dir + "-copy"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try env.copy(to: copy, isCancelled: cancellable ? { false } : nil)
        let copied = try Environment(path: copy)
        defer { copied.close() }
        let copiedDB = try copied.openDatabase("x")
        #expect(try copied.read { txn throws in try txn.count(of: copiedDB) } == 10_001)
    }

    /// The meta pages are read through the map: asking for the last transaction (and `info`)
    /// while another thread adopts a map grown by another process must wait for the remap,
    /// not read unmapped memory. Its answers only ever grow.
    @Test func lastTransactionIsReadSafelyWhileTheMapIsAdopted() async throws {
        let (dir, env, db) = try smallEnvironment("quire-resize-info")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = try env.lastTransactionID()
        let stop = Atomic<Bool>(false)
        let seen = Mutex<(ids: [Int], failures: Int)>(([], 0))
        let done = DispatchGroup()
        for role in 0..<2 {
            done.enter()
            Thread {
                defer { done.leave() }
                repeat {  // at least once, however late the thread is scheduled
                    do {
                        if role == 0 {
                            _ = try env.read { txn throws in try txn.count(of: db) }  // adopts the grown map
                        } else {
                            let id = try env.lastTransactionID()
                            _ = try env.info()
                            seen.withLock { $0.ids.append(id) }
                        }
                    } catch {
                        seen.withLock { $0.failures += 1 }
                    }
                } while !stop.load(ordering: .relaxed)
            }.start()
        }
        await #expect(processExitsWith: .success) { [dir = dir as String] in try growFromAnotherProcess(dir) }
        stop.store(true, ordering: .relaxed)
        done.wait()
        let (ids, failures) = seen.withLock { $0 }
        #expect(failures == 0)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 <= $1 })
        let after = try env.lastTransactionID()
        #expect(after >= before + 10, "the child's ten commits")  // and its database open
        #expect(after >= ids.last ?? 0 && !ids.isEmpty)
    }

    /// A process that died inside a read transaction left its slot holding its snapshot, so the
    /// pages it saw were never reused while a writer went on (a load beside a killed `dump` grew
    /// the file 2.2×, for good). A write begun a second after the last check clears it.
    @Test func aDeadProcesssReaderSlotIsClearedByALaterWrite() async throws {
        let dir = NSTemporaryDirectory() + "quire-dead-reader-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = try Environment(path: dir)
        let db = try env.openDatabase("x")
        try put(env, db, "first")
        await #expect(processExitsWith: .success) { [dir = dir as String] in
            let env = try Environment(path: dir)
            _ = try env.read { _ in exit(0) }
        }
        #expect(try env.info().activeReaders == 1)
        try await Task.sleep(for: .milliseconds(1_100))
        try put(env, db, "second")
        #expect(try env.info().activeReaders == 0)
    }

    /// Another process holds every reader slot but those that this process's idle transactions
    /// keep, one in each of eight threads' shards. A new thread, whose shard is empty, gets
    /// `MDB_READERS_FULL` from `mdb_txn_begin` and must renew one of those idle transactions:
    /// waiting would last until the other process let go (the read would fail after 5 s).
    @Test func aThreadFindingTheReaderTableFullRenewsAnotherThreadsIdleTransaction() async throws {
        let dir = NSTemporaryDirectory() + "quire-slots-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let env = try Environment(path: dir, options: slotOptions)
        let db = try env.openDatabase("x")
        try put(env, db, "first")
        for _ in 0..<8 {
            #expect(onNewThread { (try? env.read { txn in try txn.get(Array("first".utf8), in: db) }) != nil })
        }
        let holders = slotOptions.maxReaders - env.readerPool.count
        let release = dir + "/release"
        async let child = #expect(processExitsWith: .success) { [dir = dir as String, holders = holders as Int] in
            try holdReaderSlots(dir, count: holders)
        }
        // Waits without blocking a thread of the pool, which starts the child; it can take minutes
        // while the whole suite runs on two cores.
        var ready = false
        for _ in 0..<300_000 where !ready {
            try await Task.sleep(for: .milliseconds(2))
            ready = FileManager.default.fileExists(atPath: dir + "/ready")
        }
        #expect(ready)
        let value = onNewThread { try? env.read { txn in try txn.get(Array("first".utf8), in: db) } }
        #expect(value == [1])
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        _ = await child
    }
}

/// Reader slots exactly one page of lock file holds, so LMDB rounds nothing up.
private let slotOptions = {
    var options = EnvironmentOptions()
    options.maxReaders = 62
    return options
}()

/// Child process: `count` threads each hold a read transaction (a reader slot) until the file
/// `release` appears; the file `ready` says they all hold one.
private func holdReaderSlots(_ dir: String, count: Int) throws {
    let env = try Environment(path: dir, options: slotOptions)
    let inside = Atomic<Int>(0)
    let done = DispatchGroup()
    for _ in 0..<count {
        done.enter()
        Thread {
            defer { done.leave() }
            _ = try? env.read { _ in
                inside.add(1, ordering: .relaxed)
                _ = waitForFile(dir + "/release")
            }
        }.start()
    }
    while inside.load(ordering: .relaxed) < count { usleep(1_000) }
    _ = FileManager.default.createFile(atPath: dir + "/ready", contents: nil)
    done.wait()
    env.close()
}

/// Waits up to ten minutes for `path` to exist; whether it does.
private func waitForFile(_ path: String) -> Bool {
    let deadline = Date().addingTimeInterval(600)
    while !FileManager.default.fileExists(atPath: path) {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

/// `body`'s result, run on a thread of its own (a new thread has its own shard of idle
/// read transactions).
private func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        result.withLock { $0 = body() }
        done.signal()
    }.start()
    done.wait()
    return result.withLock { $0! }
}

/// A new environment with a 128 KiB map, database `x` and one key written.
private func smallEnvironment(_ prefix: String) throws -> (String, Environment, Database) {
    let dir = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
    var options = EnvironmentOptions()
    options.mapSize = 128 << 10
    let env = try Environment(path: dir, options: options)
    let db = try env.openDatabase("x")
    try put(env, db, "first")
    return (dir, env, db)
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
