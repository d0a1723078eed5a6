import Foundation
import Quire
import QuireLMDB
import Synchronization
import QuireTestSupport
import Testing

/// A small tmpfs mounted for one test, when the machine allows it (root on Linux, mount(8) present).
private struct SmallDisk {
    let path: String

    /// Whether a tmpfs can be mounted here; probed once by mounting and unmounting one.
    static let available: Bool = {
        #if os(Linux)
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        guard let probe = try? SmallDisk(megabytes: 1) else { return false }
        probe.unmount()
        return true
        #else
        return false
        #endif
    }()

    init(megabytes: Int) throws {
        path = NSTemporaryDirectory() + "quire-full-disk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard runSystemTool("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func unmount() {
        // Lazily when busy (a store's file still open somewhere): detached now, freed once
        // closed, instead of a mount left behind for good (seven after a few full runs).
        if runSystemTool("/bin/umount", [path]) != 0 { _ = runSystemTool("/bin/umount", ["-l", path]) }
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite struct FullDiskTests {
    private static let payload = String(repeating: "full disk ", count: 100)  // about 1 kB a record

    /// The records a load's progress reports acknowledged so far.
    private final class Acknowledged: Sendable {
        let records = Atomic<Int>(0)
    }

    /// Runs `load` on a store on a fresh 4 MB tmpfs, passing it the store and the counter that
    /// its progress reports set; returns the disk (to unmount), the store's path, what was
    /// acknowledged and what `load` threw.
    private func loadUntilFull(
        registering register: (Store) throws -> Void = { try $0.register(rows) },
        _ load: (Store, Acknowledged) async throws -> Void
    ) async throws -> (disk: SmallDisk, path: String, acknowledged: Int, failure: (any Error)?) {
        let disk = try SmallDisk(megabytes: 4)
        let path = disk.path + "/store"
        let acknowledged = Acknowledged()
        var failure: (any Error)?
        do {
            let store = try openStore(path) { $0.initialMapSize = 64 << 20 }
            defer { store.close() }
            try register(store)
            try await load(store, acknowledged)
        } catch {
            failure = error
        }
        return (disk, path, acknowledged.records.load(ordering: .relaxed), failure)
    }

    /// Reopens the store on the (still full) disk: rows 0..<committed are there, nothing else.
    private func expectExactly(_ committed: Int, at path: String) throws {
        let reopened = try openStore(path)
        defer { reopened.close() }
        try reopened.register(rows)
        try reopened.read { snap throws in
            #expect(try snap.count(of: rows) == committed)
            for id in stride(from: 0, to: committed, by: 97) {
                #expect(try snap.get(.int(Int64(id)), from: rows)?.name == Self.payload)
            }
            #expect(try snap.get(.int(Int64(committed)), from: rows) == nil)
        }
        let report = try reopened.verify()
        #expect(report.isSound, "\(report.problems)")
        #expect(report.records >= committed)
    }

    /// Bulk inserts into a store on a 4 MB tmpfs until the disk is full: the failure is a typed
    /// storage error carrying ENOSPC, and the reopened store holds exactly the acknowledged chunks.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskIsAClearErrorAndLosesNothingCommitted() async throws {
        let (disk, path, committed, failure) = try await loadUntilFull { store, acknowledged in
            var next = 0
            // Many calls of many chunks each; stops at the first failure (4 MB cannot hold 40 MB).
            for _ in 0..<400 {
                let batch = (next..<next + 100).map { Row(id: $0, name: Self.payload, group: $0 % 7) }
                let before = next
                try await store.bulkInsert(batch, into: rows, options: BulkInsertOptions(chunkSize: 25)) { progress in
                    // Reported after each committed chunk; ids ascend, so the committed ones are 0..<n.
                    acknowledged.records.store(before + progress.records, ordering: .relaxed)
                }
                next += 100
            }
        }
        defer { disk.unmount() }
        let error = try #require(failure, "4 MB of tmpfs held 40 MB of records")
        // The bulk insert passes the LMDBError up unwrapped.
        let lmdb = try #require((error as? LMDBError) ?? ((error as? StoreError)?.underlying as? LMDBError), "\(type(of: error)): \(error)")
        #expect(lmdb.code == ENOSPC, "\(lmdb)")
        #expect("\(error)".contains("the disk is full"), "\(error)")
        #expect(committed > 0)
        try expectExactly(committed, at: path)
    }

    /// Commits of megabytes, whose last write on the full disk is short: LMDB says EIO, and the
    /// error says the disk is full (it read "Input/output error").
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func aShortWriteOnAFullDiskIsSaidAsAFullDisk() async throws {
        let (disk, path, committed, failure) = try await loadUntilFull { store, acknowledged in
            let batch = (0..<6_000).map { Row(id: $0, name: Self.payload, group: $0 % 7) }
            try await store.bulkInsert(batch, into: rows, options: BulkInsertOptions(chunkSize: 1_500)) { progress in
                acknowledged.records.store(progress.records, ordering: .relaxed)
            }
        }
        defer { disk.unmount() }
        let error = try #require(failure, "4 MB of tmpfs held 6 MB of records")
        let lmdb = try #require((error as? LMDBError) ?? ((error as? StoreError)?.underlying as? LMDBError), "\(type(of: error)): \(error)")
        #expect(lmdb.code == ENOSPC, "\(lmdb)")
        #expect("\(error)".contains(path), "the error names the store: \(error)")
        #expect(committed > 0)
        try expectExactly(committed, at: path)
    }

    /// One load of keys in random order (held, then merged into one run) that fills the disk
    /// halfway through its merged run: what it reported before failing is what the store holds.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskDuringAMergedRunReportsExactlyWhatCommitted() async throws {
        let count = 8_000  // about 8 MB of records
        let (disk, path, committed, failure) = try await loadUntilFull { store, acknowledged in
            let scrambled = (0..<count).map { i in Row(id: (i * 7919) % count, name: Self.payload, group: i % 7) }
            try await store.bulkInsert(scrambled, into: rows, options: BulkInsertOptions(chunkSize: 250)) { progress in
                acknowledged.records.store(progress.records, ordering: .relaxed)
            }
        }
        defer { disk.unmount() }
        #expect(failure != nil, "4 MB of tmpfs held 8 MB of records")
        // The merged run ascends by id, so the committed chunks hold ids 0..<committed.
        #expect(committed > 0 && committed < count)
        try expectExactly(committed, at: path)
    }

    /// A load of keys in random order larger than its sort window, whose sorted runs fill the
    /// disk while one is written in the background: a typed storage error, and a store that
    /// reopens sound with only whole records.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskWhileASortedRunIsSpilledIsAClearError() async throws {
        let count = 8_000  // about 8 MB of records, spilled in windows of about 300 kB
        let (disk, path, _, failure) = try await loadUntilFull { store, _ in
            let scrambled = (0..<count).map { i in Row(id: (i * 7919) % count, name: Self.payload, group: i % 7) }
            try await store.bulkInsert(
                scrambled, into: rows, options: BulkInsertOptions(chunkSize: 250, sortWindow: 300_000))
        }
        defer { disk.unmount() }
        let error = try #require(failure as? StoreError, "\(String(describing: failure))")
        #expect(error.code == .storage && "\(error)".contains("sorted run"), "\(error)")
        let reopened = try openStore(path)
        defer { reopened.close() }
        try reopened.register(rows)
        let stored = try reopened.read { snap in try snap.values(of: rows) }
        #expect(stored.count < count)
        #expect(stored.allSatisfy { $0.name == Self.payload && (0..<count).contains($0.id) })
        #expect(try reopened.verify().isSound)
    }

    /// With a full-text index two transactions may be queued on the writer, and later ones
    /// commit two chunks: when one fails, neither its chunks nor the transaction queued after it
    /// are written, so what committed is still a prefix of the input.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskDuringASearchIndexedLoadReportsExactlyWhatCommitted() async throws {
        let count = 6_000  // about 7 MB of records and postings
        let values = (0..<count).map { i in
            note(String(format: "k%05d", i), "storm \(i) surge w\(i % 89)", Self.payload + "tide\(i % 31) x\(i)")
        }
        let (disk, path, committed, failure) = try await loadUntilFull(registering: { try $0.register(notes) }) {
            store, acknowledged in
            try await store.bulkInsert(values, into: notes, options: BulkInsertOptions(chunkSize: 200)) { progress in
                acknowledged.records.store(progress.records, ordering: .relaxed)
            }
        }
        defer { disk.unmount() }
        #expect(failure != nil, "4 MB of tmpfs held 7 MB of notes")
        #expect(committed > 0 && committed < count)
        let reopened = try openStore(path)
        defer { reopened.close() }
        try reopened.register(notes)
        try reopened.read { snap throws in
            #expect(try snap.count(of: notes) == committed)
            #expect(try snap.get(.string(String(format: "k%05d", committed - 1)), from: notes) != nil)
            #expect(try snap.get(.string(String(format: "k%05d", committed)), from: notes) == nil)
            #expect(try snap.search("storm", in: notes, limit: count).count == committed)
        }
        let report = try reopened.verify()
        #expect(report.isSound, "\(report.problems)")
    }

    /// A lock file made on a full disk has the blocks of its reader slots, or the open fails
    /// saying so: LMDB's sparse lock file got them only when a reader first wrote its slot,
    /// through the map, and on a full disk that was a SIGBUS reported as a damaged store.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func aLockFileOnAFullDiskIsAnErrorAtOpenNotAFault() async throws {
        let disk = try SmallDisk(megabytes: 2)
        defer { disk.unmount() }
        let path = disk.path + "/store"
        do {
            let store = try openStore(path) { $0.initialMapSize = 1 << 20 }
            try store.register(rows)
            try await store.bulkInsert((0..<50).map { Row(id: $0, name: "row \($0)", group: 0) }, into: rows)
            store.close()
        }
        // The lock file is emptied (as a tool that resets it leaves it), the disk fills.
        #expect(truncate(path + "/lock.mdb", 0) == 0)
        let filler = disk.path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        for size in [64 << 10, 4 << 10, 512] {
            let block = Data(count: size)
            while (try? handle.write(contentsOf: block)) != nil {}
        }
        try? handle.close()
        // The open is refused, saying why (it was a SIGBUS when the reader slots' page was
        // first written, or a "corrupted" store).
        #expect {
            try openStore(path) { $0.readOnly = true }.close()
        } throws: { error in
            "\(error)".contains("no room") && "\(error)".contains("lock.mdb")
        }
        // With room again, the store opens and holds everything.
        try FileManager.default.removeItem(atPath: filler)
        let store = try openStore(path) { $0.readOnly = true }
        defer { store.close() }
        #expect(try store.read { try $0.count(of: rows) } == 50)
    }
}
