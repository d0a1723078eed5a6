import Foundation
import Testing
@testable import QuireLMDB

@Suite struct CursorTests {
    /// An environment with keys "b", "d", "f", … "x" (every other letter) mapped to their uppercase.
    private func withLetters<R>(_ body: (Environment, Database) throws -> R) throws -> R {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("letters")
            try env.write { txn throws in
                for c in stride(from: 98, through: 120, by: 2) {
                    let s = String(UnicodeScalar(UInt8(c)))
                    try txn.put(bytes(s.uppercased()), forKey: bytes(s), in: db)
                }
            }
            return try body(env, db)
        }
    }

    private func keys(_ env: Environment, _ db: Database, _ range: KeyRange, reverse: Bool = false) throws -> String {
        try env.read { txn throws in txn.entries(in: db, range: range, reverse: reverse).map { string($0.key) }.joined() }
    }

    @Test func forwardAndReverseOverEverything() throws {
        try withLetters { env, db throws in
            #expect(try keys(env, db, .all) == "bdfhjlnprtvx")
            #expect(try keys(env, db, .all, reverse: true) == "xvtrpnljhfdb")
            let values = try env.read { txn throws in txn.entries(in: db).map { string($0.value) }.joined() }
            #expect(values == "BDFHJLNPRTVX")
        }
    }

    @Test(arguments: [
        // (lower, upper, upperInclusive, forward, reverse)
        ("a", "c", false, "b", "b"),  // bounds outside the keys
        ("b", "f", false, "bd", "db"),  // bounds on keys, exclusive upper
        ("b", "f", true, "bdf", "fdb"),  // inclusive upper on a key
        ("c", "g", true, "df", "fd"),  // bounds between keys
        ("x", "z", true, "x", "x"),  // the last key
        ("y", "z", true, "", ""),  // past the end
        ("0", "a", true, "", ""),  // before the start
        ("e", "e", true, "", ""),  // empty on a gap
        ("d", "d", true, "d", "d"),  // a single key
    ])
    func ranges(lower: String, upper: String, inclusive: Bool, forward: String, reverse: String) throws {
        try withLetters { env, db throws in
            let range = KeyRange(
                lower: .inclusive(bytes(lower)), upper: inclusive ? .inclusive(bytes(upper)) : .exclusive(bytes(upper)))
            #expect(try keys(env, db, range) == forward)
            #expect(try keys(env, db, range, reverse: true) == reverse)
        }
    }

    @Test func exclusiveLowerAndOpenEnds() throws {
        try withLetters { env, db throws in
            #expect(try keys(env, db, KeyRange(lower: .exclusive(bytes("t")))) == "vx")
            #expect(try keys(env, db, KeyRange(lower: .exclusive(bytes("t"))), reverse: true) == "xv")
            #expect(try keys(env, db, KeyRange(upper: .exclusive(bytes("f")))) == "bd")
            #expect(try keys(env, db, KeyRange(upper: .inclusive(bytes("f"))), reverse: true) == "fdb")
            #expect(try keys(env, db, .from(bytes("w")))  == "x")
        }
    }

    @Test func prefixes() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("p")
            let all = ["a", "ab", "abc", "abd", "ac", "b", "b\u{FF}"].map(bytes) + [[0x61, 0x62, 0xFF], [0xFF, 0xFF]]
            try env.write { txn throws in for k in all { try txn.put([1], forKey: k, in: db) } }
            func prefixed(_ p: [UInt8], reverse: Bool = false) throws -> [[UInt8]] {
                try env.read { txn throws in txn.entries(in: db, range: .prefix(p), reverse: reverse).map(\.keyBytes) }
            }
            #expect(try prefixed(bytes("ab")) == [bytes("ab"), bytes("abc"), bytes("abd"), [0x61, 0x62, 0xFF]])
            #expect(try prefixed(bytes("ab"), reverse: true) == [[0x61, 0x62, 0xFF], bytes("abd"), bytes("abc"), bytes("ab")])
            #expect(try prefixed(bytes("zz")).isEmpty)
            #expect(try prefixed([0xFF]) == [[0xFF, 0xFF]])
            #expect(try prefixed([0xFF], reverse: true) == [[0xFF, 0xFF]])
            #expect(try prefixed([]).count == all.count)
        }
    }

    @Test func emptyDatabase() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("empty")
            #expect(try keys(env, db, .all).isEmpty)
            #expect(try keys(env, db, .all, reverse: true).isEmpty)
            #expect(try keys(env, db, .prefix(bytes("a"))).isEmpty)
            try env.read { txn throws in
                let c = try txn.cursor(in: db)
                #expect(try c.first() == nil)
                #expect(try c.seek(atLeast: bytes("a")) == nil)
            }
        }
    }

    /// A reverse walk from a key's last duplicate back over the whole database: the seek and the
    /// move to the last duplicate were counted as two entries, so the walk found "more entries
    /// than the database holds" and took a sound database for a damaged one (a server then
    /// refused every request).
    @Test func aReverseWalkFromTheLastKeysLastDuplicateIsNoDamage() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("dups", flags: [.create, .duplicateSort])
            try env.write { txn throws in
                for v in ["1", "2", "3", "4", "5"] { try txn.put(bytes(v), forKey: bytes("k"), in: db) }
            }
            try env.read { txn throws in
                let back = txn.entries(in: db, range: KeyRange(upper: .inclusive(bytes("k"))), reverse: true).map { string($0.value) }
                #expect(back == ["5", "4", "3", "2", "1"])
                try txn.checkIntact()
            }
        }
    }

    @Test func duplicatesOfAKey() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("dups", flags: [.create, .duplicateSort])
            try env.write { txn throws in
                for v in ["3", "1", "2"] { try txn.put(bytes(v), forKey: bytes("k"), in: db) }
                try txn.put(bytes("9"), forKey: bytes("j"), in: db)
                try txn.put(bytes("0"), forKey: bytes("l"), in: db)
                #expect(try !txn.put(bytes("1"), forKey: bytes("k"), in: db, flags: .noDuplicateData))
            }
            try env.read { txn throws in
                #expect(txn.duplicates(of: bytes("k"), in: db).map { string($0.value) } == ["1", "2", "3"])
                #expect(txn.duplicates(of: bytes("zz"), in: db).map { string($0.value) } == [])
                let c = try txn.cursor(in: db)
                _ = try c.seek(exactly: bytes("k"))
                #expect(try c.duplicateCount() == 3)
                // Inclusive reverse range on a duplicated key starts at its last value.
                let back = txn.entries(in: db, range: .closed(bytes("j"), bytes("k")), reverse: true).map { string($0.value) }
                #expect(back == ["3", "2", "1", "9"])
            }
            try env.write { txn throws in #expect(try txn.delete(bytes("k"), value: bytes("2"), in: db)) }
            try env.read { txn throws in
                #expect(txn.duplicates(of: bytes("k"), in: db).map { string($0.value) } == ["1", "3"])
            }
        }
    }

    @Test func aReadTransactionCanBeUsedOnAnotherThread() throws {
        try withLetters { env, db throws in
            // MDB_NOTLS: the snapshot belongs to the transaction, not to the thread that began it.
            let result = try env.read { txn throws in
                let sequence = txn.entries(in: db)
                nonisolated(unsafe) let shared = sequence
                nonisolated(unsafe) var seen = ""
                let done = DispatchSemaphore(value: 0)
                let thread = Thread {
                    seen = shared.map { string($0.key) }.joined()
                    done.signal()
                }
                thread.start()
                done.wait()
                return seen
            }
            #expect(result == "bdfhjlnprtvx")
        }
    }

    /// Deleting at the cursor leaves it at the next entry: a range deleted in one walk, across
    /// leaf pages and up to the last entry, with what is outside the range kept; a walk that
    /// deletes the database's last entry ends there (LMDB leaves the cursor unset).
    @Test func deleteCurrentLeavesTheCursorAtTheNextEntry() throws {
        try withTemporaryDirectory { dir throws in
            let env = try Environment(path: dir)
            let db = try env.openDatabase("numbers")
            let key = { (i: Int) in bytes(String(format: "k%05d", i)) }
            let value = [UInt8](repeating: 7, count: 300)  // about a dozen entries a page
            try env.write { txn throws in for i in 0..<2_000 { try txn.put(value, forKey: key(i), in: db) } }
            func deleteWalk(from: Int, below: Int?) throws -> Int {
                try env.write { txn throws in
                    let cursor = try txn.cursor(in: db)
                    var deleted = 0
                    var entry = try cursor.seek(atLeast: key(from))
                    while let e = entry, below.map({ string(e.key) < String(format: "k%05d", $0) }) ?? true {
                        entry = try cursor.deleteCurrentAndFollow()
                        deleted += 1
                    }
                    return deleted
                }
            }
            #expect(try deleteWalk(from: 500, below: 1_500) == 1_000)
            #expect(try deleteWalk(from: 1_900, below: nil) == 100)
            let left = try env.read { txn throws in txn.entries(in: db).map { string($0.key) } }
            #expect(left == (0..<500).map { String(format: "k%05d", $0) } + (1_500..<1_900).map { String(format: "k%05d", $0) })
            #expect(try deleteWalk(from: 0, below: nil) == 900)
            #expect(try env.read { txn throws in txn.entries(in: db).map { $0.key.count } }.isEmpty)
        }
    }
}
