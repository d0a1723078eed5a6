import Foundation
import Quire
import QuireLMDB
import Synchronization
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
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    func unmount() {
        _ = Self.run("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

@Suite struct FullDiskTests {
    /// Bulk inserts into a store on a 4 MB tmpfs until the disk is full: the failure is a typed
    /// storage error carrying ENOSPC, and the reopened store holds exactly the acknowledged chunks.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskIsAClearErrorAndLosesNothingCommitted() async throws {
        let disk = try SmallDisk(megabytes: 4)
        defer { disk.unmount() }
        let path = disk.path + "/store"
        let payload = String(repeating: "full disk ", count: 100)  // about 1 kB a record
        let acknowledged = Atomic<Int>(0)
        var failure: (any Error)?
        do {
            let store = try openStore(path) { $0.initialMapSize = 64 << 20 }
            defer { store.close() }
            try store.register(rows)
            var next = 0
            // Many calls of many chunks each; stops at the first failure (4 MB cannot hold 40 MB).
            for _ in 0..<400 {
                let batch = (next..<next + 100).map { Row(id: $0, name: payload, group: $0 % 7) }
                let before = next
                try await store.bulkInsert(batch, into: rows, options: BulkInsertOptions(chunkSize: 25)) { progress in
                    // Reported after each committed chunk; ids ascend, so the committed ones are 0..<n.
                    acknowledged.store(before + progress.records, ordering: .relaxed)
                }
                next += 100
            }
        } catch {
            failure = error
        }
        let error = try #require(failure, "4 MB of tmpfs held 40 MB of records")
        // What comes out (Linux, tmpfs): LMDB's commit fails on a short write, which it reports
        // as EIO rather than ENOSPC; the bulk insert passes the LMDBError up unwrapped.
        let lmdb = try #require((error as? LMDBError) ?? ((error as? StoreError)?.underlying as? LMDBError), "\(type(of: error)): \(error)")
        #expect(lmdb.code == ENOSPC || lmdb.code == EIO, "\(lmdb)")
        #expect("\(error)".contains(path), "the error names the store: \(error)")
        let committed = acknowledged.load(ordering: .relaxed)
        #expect(committed > 0)

        // Reopened on the same (still full) disk: everything acknowledged is there, nothing else.
        let reopened = try openStore(path)
        defer { reopened.close() }
        try reopened.register(rows)
        try reopened.read { snap throws in
            #expect(try snap.count(of: rows) == committed)
            for id in stride(from: 0, to: committed, by: 97) {
                #expect(try snap.get(.int(Int64(id)), from: rows)?.name == payload)
            }
            #expect(try snap.get(.int(Int64(committed)), from: rows) == nil)
        }
        let report = try reopened.verify()
        #expect(report.isSound, "\(report.problems)")
        #expect(report.records >= committed)
    }

    /// One load of keys in random order (held, then merged into one run) that fills the disk halfway
    /// through its merged run: what it reported before failing is exactly what the store holds.
    @Test(.enabled(if: SmallDisk.available, "needs root and mount(8) to create a small tmpfs"))
    func fullDiskDuringAMergedRunReportsExactlyWhatCommitted() async throws {
        let disk = try SmallDisk(megabytes: 4)
        defer { disk.unmount() }
        let path = disk.path + "/store"
        let payload = String(repeating: "full disk ", count: 100)
        let count = 8_000  // about 8 MB of records
        let acknowledged = Atomic<Int>(0)
        var failure: (any Error)?
        do {
            let store = try openStore(path) { $0.initialMapSize = 64 << 20 }
            defer { store.close() }
            try store.register(rows)
            let scrambled = (0..<count).map { i in Row(id: (i * 7919) % count, name: payload, group: i % 7) }
            try await store.bulkInsert(scrambled, into: rows, options: BulkInsertOptions(chunkSize: 250)) { progress in
                acknowledged.store(progress.records, ordering: .relaxed)
            }
        } catch {
            failure = error
        }
        #expect(failure != nil, "4 MB of tmpfs held 8 MB of records")
        let committed = acknowledged.load(ordering: .relaxed)
        #expect(committed > 0 && committed < count)
        let reopened = try openStore(path)
        defer { reopened.close() }
        try reopened.register(rows)
        try reopened.read { snap throws in
            // The merged run ascends by id, so the committed chunks hold ids 0..<committed.
            #expect(try snap.count(of: rows) == committed)
            #expect(try snap.get(.int(Int64(max(0, committed - 1))), from: rows)?.name == (committed > 0 ? payload : nil))
            #expect(try snap.get(.int(Int64(committed)), from: rows) == nil)
        }
        #expect(try reopened.verify().isSound)
    }
}
