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
            let notes = Self.notes
            // One transaction: every page of the collection is live, none freed.
            try await writeNotes(at: path)
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

    private static let notes = StoreCollection<Article>(name: "notes", key: { .string($0.id) })

    /// Writes 300 notes `k00000`… of 900 bytes (four a leaf page) into the store at `path`, a
    /// transaction a round (each round's text ends with its number when there are several);
    /// `large` adds a note of 10,000 bytes (an overflow run) to each.
    private func writeNotes(at path: String, rounds: Int = 1, large: Bool = false) async throws {
        let store = try Store(path: path)
        defer { store.close() }
        try store.register(Self.notes)
        let filler = String(repeating: "x", count: 900)
        for round in 0..<rounds {
            try await store.write { txn in
                for i in 0..<300 {
                    try txn.put(Article(id: String(format: "k%05d", i), headline: filler + (rounds > 1 ? "\(round)" : "")), in: Self.notes)
                }
                if large { try txn.put(Article(id: "large", headline: String(repeating: "y", count: 10_000)), in: Self.notes) }
            }
        }
    }

    /// The file's bytes, one function to change them, and the newest meta page's offset.
    private func editFile(_ path: String, _ edit: (inout [UInt8], _ newestMeta: Int) throws -> Void) throws {
        let file = path + "/data.mdb"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        let newest = word(4096 + 144) > word(144) ? 4096 : 0
        try edit(&bytes, newest)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    /// The pages of the file whose header has `flags`, by offset.
    private func pages(_ bytes: [UInt8], flags: UInt8) -> [Int] {
        (2..<(bytes.count / 4096)).map { $0 * 4096 }.filter { at in
            (0..<8).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } == at / 4096 && bytes[at + 10] == flags && bytes[at + 11] == 0
        }
    }

    /// Damage no read through LMDB notices and the page-header checks passed: a separator key
    /// of a branch page (lookups by key went to the wrong child: records unreachable by id,
    /// searches reading other terms' postings), a free list naming a live page (the next write
    /// overwrote committed records), an overflow run shorter than its value. Verify said "ok".
    @Test(arguments: ["separator", "free list", "overflow"])
    func verifyFindsDamageThatReadsDoNotSee(damage: String) async throws {
        try await withTemporaryStorePath { path in
            let notes = Self.notes
            // Written twice: the first version's pages are free after the second commit.
            try await writeNotes(at: path, rounds: 2, large: true)
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(notes)
                #expect(try store.verify().isSound)
            }
            try editFile(path) { bytes, meta in
                func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
                switch damage {
                case "separator":
                    // Node 2's key made smaller than node 1's: "k…" becomes "\0…".
                    let branch = try #require(pages(bytes, flags: 0x01).first { u16($0 + 12) >= 16 + 2 * 3 })
                    bytes[branch + u16(branch + 16 + 4) + 8] = 0
                case "free list":
                    // The free list's root (a leaf) names the main database's root, a live page.
                    let freeRoot = (0..<8).reduce(0) { $0 | Int(bytes[meta + 80 + $1]) << (8 * $1) }
                    let mainRoot = (0..<8).reduce(0) { $0 | Int(bytes[meta + 128 + $1]) << (8 * $1) }
                    let leaf = freeRoot * 4096
                    #expect(bytes[leaf + 10] == 0x02)
                    let node = leaf + u16(leaf + 16)
                    let firstID = node + 8 + u16(node + 6) + 8
                    for i in 0..<8 { bytes[firstID + i] = UInt8(truncatingIfNeeded: mainRoot >> (8 * i)) }
                default:
                    let run = try #require(pages(bytes, flags: 0x04).first)
                    #expect(bytes[run + 12] == 3)
                    bytes[run + 12] = 1
                }
            }
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            let expected = ["separator": "out of the order", "free list": "which a tree uses", "overflow": "a run of 1 pages for a value of"][damage]!
            let problems = try store.verify().problems
            #expect(problems.contains { $0.hasPrefix("page structure:") && $0.contains(expected) }, "\(problems)")
        }
    }

    /// A separator raised past its child's first key (the branch still in order) sends a seek
    /// for a key between the two to the child on its left, whose sibling's first key is then
    /// below the key sought: a range read took it for its own (a search answered thousands of
    /// hits for a term of two). The read stops on the damage now.
    @Test func aRangeReadThatASeparatorSendsAstrayStopsOnTheDamage() async throws {
        try await withTemporaryStorePath { path in
            let notes = Self.notes
            try await writeNotes(at: path)
            var sought = ""
            try editFile(path) { bytes, _ in
                func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
                let branch = try #require(pages(bytes, flags: 0x01).first { u16($0 + 12) >= 16 + 2 * 4 })
                let node = branch + u16(branch + 16 + 2 * 2)
                let end = node + 8 + u16(node + 6)
                let first = try #require(Int(String(decoding: bytes[(end - 5)..<end], as: UTF8.self)))
                // Leaves of four records: the next separator is `first + 4`, above the new one.
                bytes.replaceSubrange((end - 5)..<end, with: Array(String(format: "%05d", first + 2).utf8))
                sought = String(format: "k%05d", first + 1)
            }
            let store = try Store(path: path)
            defer { store.close() }
            try store.register(notes)
            var firstRead: String?
            #expect {
                try store.read { snap in firstRead = try snap.values(of: notes, range: .from(.string(sought)), limit: 1).first?.id }
            } throws: { error in
                (error as? StoreError)?.code == .corrupted && "\(error)".contains("a seek landed before the key it sought")
            }
            #expect(firstRead == nil)
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
