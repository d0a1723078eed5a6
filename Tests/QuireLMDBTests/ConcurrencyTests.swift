import Foundation
import Synchronization
import Testing
@testable import QuireLMDB

@Suite struct ConcurrencyTests {
    /// Writes `rounds` transactions; each sets ten keys to the round number and a counter key.
    /// Readers on other threads must always see the ten keys agree (a consistent snapshot).
    @Test func readersSeeConsistentSnapshotsDuringWrites() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("snap")
            let stop = Atomic<Bool>(false)
            let violations = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    while !stop.load(ordering: .relaxed) {
                        let ok = (try? env.read { txn -> Bool in
                            let values = try (0..<10).map { try txn.get(bytes("k\($0)"), in: db) }
                            return Set(values).count == 1
                        }) ?? false
                        if !ok { violations.add(1, ordering: .relaxed) }
                        reads.add(1, ordering: .relaxed)
                    }
                }
            }
            try env.write { txn throws in for k in 0..<10 { try txn.put(bytes("0"), forKey: bytes("k\(k)"), in: db) } }
            for round in 1...300 {
                try env.write { txn throws in
                    for k in 0..<10 { try txn.put(bytes("\(round)"), forKey: bytes("k\(k)"), in: db) }
                }
            }
            stop.store(true, ordering: .relaxed)
            group.wait()
            #expect(violations.load(ordering: .relaxed) == 0)
            #expect(reads.load(ordering: .relaxed) > 0)
            try env.read { txn throws in #expect(try txn.get(bytes("k3"), in: db) == bytes("300")) }
        }
    }

    /// Starts from a tiny map and writes far more than fits while readers scan; the map must grow
    /// by itself, with no error reaching the writer and no record lost or corrupted.
    @Test func mapGrowsUnderConcurrentReaders() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.mapSize = 256 << 10
            let env = try Environment(path: dir, options: options)
            let db = try env.openDatabase("grow")
            let stop = Atomic<Bool>(false)
            let badSnapshots = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<3 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    while !stop.load(ordering: .relaxed) {
                        // Every committed batch is complete: the count is a multiple of 500 and
                        // each value matches its key.
                        let ok = (try? env.read { txn -> Bool in
                            var n = 0
                            for entry in txn.entries(in: db) {
                                guard entry.value.count == 300, entry.value.first == entry.key.last else { return false }
                                n += 1
                            }
                            return n % 500 == 0
                        }) ?? false
                        if !ok { badSnapshots.add(1, ordering: .relaxed) }
                    }
                }
            }
            for batch in 0..<20 {
                try env.write { txn throws in
                    for i in 0..<500 {
                        let key = bytes(String(format: "%08d", batch * 500 + i))
                        try txn.put([UInt8](repeating: key.last!, count: 300), forKey: key, in: db)
                    }
                }
            }
            stop.store(true, ordering: .relaxed)
            group.wait()
            #expect(badSnapshots.load(ordering: .relaxed) == 0)
            #expect(env.mapGrowthCount > 0)
            #expect(try env.info().mapSize > options.mapSize)
            try env.read { txn throws in
                #expect(try txn.count(of: db) == 10_000)
                let v = try txn.get(bytes("00009999"), in: db)
                #expect(v == [UInt8](repeating: bytes("9")[0], count: 300))
            }
        }
    }

    /// A single transaction larger than the whole map is retried after growth.
    @Test func oneLargeTransactionOnATinyMap() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.mapSize = 128 << 10
            let env = try Environment(path: dir, options: options)
            let db = try env.openDatabase("big")
            var runs = 0
            try env.write { txn throws in
                runs += 1
                for i in 0..<5_000 { try txn.put([UInt8](repeating: 1, count: 200), forKey: bytes("\(100_000 + i)"), in: db) }
            }
            #expect(runs > 1)
            try env.read { txn throws in #expect(try txn.count(of: db) == 5_000) }
        }
    }

    @Test func maxMapSizeStopsGrowthWithAClearError() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.mapSize = 128 << 10
            options.maxMapSize = 256 << 10
            let env = try Environment(path: dir, options: options)
            let db = try env.openDatabase("cap")
            do {
                try env.write { txn throws in
                    for i in 0..<5_000 { try txn.put([UInt8](repeating: 1, count: 200), forKey: bytes("\(i)"), in: db) }
                }
                Issue.record("the write must fail at maxMapSize")
            } catch let error as LMDBError {
                #expect(error == .mapFull)
                #expect(error.hint?.contains("maxMapSize") == true)
            }
            // Committed data stays readable and small writes still work.
            try env.write { txn throws in try txn.put([1], forKey: bytes("small"), in: db) }
            try env.read { txn throws in #expect(try txn.get(bytes("small"), in: db) == [1]) }
        }
    }

    @Test func manyMoreReadersThanSlotsWaitInsteadOfFailing() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.maxReaders = 12
            let env = try Environment(path: dir, options: options)
            let db = try env.openDatabase("r")
            try env.write { txn throws in try txn.put([42], forKey: bytes("k"), in: db) }
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 200) { _ in
                let v = try? env.read { txn -> [UInt8]? in
                    Thread.sleep(forTimeInterval: 0.001)
                    return try txn.get(bytes("k"), in: db)
                }
                if v != [42] { failures.add(1, ordering: .relaxed) }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
        }
    }

    /// Idle read transactions wait in the shard of the thread that last used one, each holding
    /// its reader slot: more threads than shards all read, and the pool keeps no more idle
    /// transactions than may be active at once.
    @Test func moreThreadsThanShardsReadAndThePoolKeepsNoMoreThanTheReaderLimit() throws {
        try withTemporaryDirectory { dir throws in
            var options = EnvironmentOptions()
            options.maxReaders = 24  // 16 may read at once, 16 may wait reset in the pool
            let env = try Environment(path: dir, options: options)
            let db = try env.openDatabase("r")
            try env.write { txn throws in try txn.put([7], forKey: bytes("k"), in: db) }
            let failures = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
            let finished = DispatchSemaphore(value: 0)
            let threads = 24  // more than the 16 shards
            for _ in 0..<threads {
                Thread.detachNewThread {
                    for _ in 0..<10 {
                        do {
                            let value = try env.read { txn -> [UInt8]? in
                                usleep(200)
                                return try txn.get(bytes("k"), in: db)
                            }
                            if value == [7] { reads.add(1, ordering: .relaxed) } else { failures.add(1, ordering: .relaxed) }
                        } catch {
                            failures.add(1, ordering: .relaxed)
                        }
                    }
                    finished.signal()
                }
            }
            for _ in 0..<threads { finished.wait() }
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(reads.load(ordering: .relaxed) == threads * 10)
            #expect(env.readerPool.count <= 16)
        }
    }
}
