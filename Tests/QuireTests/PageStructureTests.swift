import Foundation
import Quire
import QuireNews
import Testing

/// A damaged page header (LMDB's free-space bound `mp_upper`) passed verify; then a write into
/// that page overwrote an intact record, and a compacting copy overran its heap. Verify reports
/// such pages now, and a compacting copy refuses them.
@Suite struct PageStructureTests {
    /// Sets the high byte of `mp_upper` (page offset 15) on every leaf page of the file, live or
    /// free, as one flipped byte of a disk would on one page; returns how many it changed.
    private func damageLeafBounds(_ path: String) throws -> Int {
        let file = path + "/data.mdb"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let pageSize = 4096
        var damaged = 0
        for page in 2..<(bytes.count / pageSize) {
            let at = page * pageSize
            let number = (0..<8).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
            let flags = Int(bytes[at + 10]) | Int(bytes[at + 11]) << 8
            guard number == page, flags == 0x02 else { continue }
            bytes[at + 15] = 0xD4
            damaged += 1
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return damaged
    }

    /// Two leaf pages of one collection with their contents swapped (headers kept): every
    /// header is sound and the entry count right, but a walk meets keys out of order. It gave
    /// a dump with records twice and others missing, and status 0; now the walk stops on it.
    @Test func aWalkThatMeetsKeysOutOfOrderStopsOnTheDamage() async throws {
        try await withTemporaryStorePath { path in
            let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })
            let filler = String(repeating: "x", count: 900)
            do {
                let store = try Store(path: path)
                try store.register(notes)
                // One transaction: every page of the collection is live, none freed.
                try await store.write { txn in
                    for i in 0..<300 { try txn.put(Article(id: String(format: "k%05d", i), headline: filler), in: notes) }
                }
                store.close()
            }
            let file = path + "/data.mdb"
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            var leaves: [Int] = []
            for page in 2..<(bytes.count / 4096) where leaves.count < 2 {
                let at = page * 4096
                let number = (0..<8).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
                guard number == page, bytes[at + 10] == 0x02, bytes[at + 11] == 0 else { continue }
                let node = Int(bytes[at + 16]) | Int(bytes[at + 17]) << 8
                let keySize = Int(bytes[at + node + 6]) | Int(bytes[at + node + 7]) << 8
                let key = bytes[(at + node + 8)..<(at + node + 8 + keySize)]
                if String(decoding: key, as: UTF8.self).contains("k0") { leaves.append(at) }
            }
            try #require(leaves.count == 2)
            for offset in 16..<4096 { bytes.swapAt(leaves[0] + offset, leaves[1] + offset) }
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            var keys: [StoreKey] = []
            #expect {
                try store.read { snap in try snap.forEachKey(inCollectionNamed: "notes") { keys.append($0); return true } }
            } throws: { error in
                "\(error)".contains("out of order")
            }
            #expect(keys.count < 300 && Set(keys).count == keys.count)
        }
    }

    @Test func verifyReportsADamagedPageBoundAndACompactingCopyRefusesIt() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)
                try await store.write { txn in for article in generatedArticles(300) { try txn.put(article, in: articles) } }
                // Healthy: no page is reported (the full suite verifies stores of every shape).
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
                store.close()
            }
            #expect(try damageLeafBounds(path) > 3)
            let store = try openStore(path)
            defer { store.close() }
            let report = try store.verify()
            #expect(report.problems.contains { $0.hasPrefix("page structure: page ") && $0.contains("bounds") }, "\(report.problems)")
            let compact = path + "-compact"
            defer { try? FileManager.default.removeItem(atPath: compact) }
            #expect {
                try store.backup(to: compact, compact: true)
            } throws: { error in
                (error as? StoreError)?.code == .corrupted && "\(error)".contains("without --compact")
            }
            #expect(!FileManager.default.fileExists(atPath: compact + "/data.mdb"))
            // A plain copy takes the pages as they are: the damage comes along, for verify to find.
            let plain = path + "-plain"
            defer { try? FileManager.default.removeItem(atPath: plain) }
            try store.backup(to: plain, compact: false)
            let copy = try openStore(plain)
            defer { copy.close() }
            #expect(try copy.verify().problems.contains { $0.hasPrefix("page structure:") })
        }
    }
}
