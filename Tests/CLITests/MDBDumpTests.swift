import Foundation
import QuireLMDB
import Testing

@testable import quire

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `writeMDBDump` on the environment at `path` (opened as `quire` opens it) into a file
/// and returns the bytes written.
private func dumpWithQuire(_ path: String, scratch: String) throws -> Data {
    let file = scratch + "/quire.dump"
    let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(fd >= 0)
    defer { close(fd) }
    let environment = try ReadOnlyStore.open(path, command: "dump")
    defer { environment.close() }
    let output = OutputWriter(fileDescriptor: fd, capacity: 4096)
    try writeMDBDump(environment: environment, to: output)
    try output.flush()
    return try Data(contentsOf: URL(fileURLWithPath: file))
}

@Suite struct MDBDumpFormatTests {
    @Test func hexLinesAreASpaceLowercaseHexAndANewline() {
        var line: [UInt8] = []
        [UInt8]([0x00, 0x0F, 0xA0, 0xFF]).withUnsafeBytes { MDBDumpWriter.appendHexLine($0, to: &line) }
        [UInt8]().withUnsafeBytes { MDBDumpWriter.appendHexLine($0, to: &line) }
        #expect(String(decoding: line, as: UTF8.self) == " 000fa0ff\n \n")
    }

    @Test func headerBodyAndSkippedMainDatabaseKeys() throws {
        try withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let text = String(decoding: try dumpWithQuire(store, scratch: scratch), as: UTF8.self)

            // One section per named database, in name order; plain main-database keys are skipped.
            let names = text.split(separator: "\n").filter { $0.hasPrefix("database=") }
            #expect(names == ["database=alpha", "database=dups", "database=empty", "database=many",
                              "database=name with spaces/ü"])
            #expect(!text.contains("plain"))

            let dups = try #require(text.range(of: "database=dups\n"))
            #expect(text[dups.upperBound...].hasPrefix("""
                type=btree
                mapsize=\(LMDBFixture.mapSize)
                """))
            #expect(text.contains("duplicates=1\ndupsort=1\ndb_pagesize="))
            #expect(text.contains("database=empty\ntype=btree\n"))
            #expect(text.contains("HEADER=END\nDATA=END\n"), "the empty database has no data lines")
            #expect(text.contains("HEADER=END\n 00\n 00\n 00\n 01ff\n 00\n ffff\n"), "dupsort values in order")
            #expect(text.hasPrefix("VERSION=3\nformat=bytevalue\ndatabase=alpha\n"))
            #expect(text.hasSuffix("HEADER=END\n 01\n 02\nDATA=END\n"))
        }
    }

    @Test(.enabled(if: LMDBTools.available, "mdb_dump/mdb_load (lmdb-utils) are not installed; skipping the comparison"))
    func matchesMdbDumpByteForByte() throws {
        try withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let ours = try dumpWithQuire(store, scratch: scratch)
            let theirs = try LMDBTools.run("mdb_dump", ["-a", store])
            #expect(theirs.status == 0, "\(theirs.stderr)")
            #expect(ours.count > 10_000)
            if ours != theirs.stdout {
                let a = String(decoding: ours, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                let b = String(decoding: theirs.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }
                Issue.record("dumps differ (\(a.count) vs \(b.count) lines); first difference: \(String(describing: first))")
            }
        }
    }

    @Test(.enabled(if: LMDBTools.available, "mdb_load (lmdb-utils) is not installed; skipping the restore"))
    func mdbLoadRestoresEveryDatabase() throws {
        try withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            _ = try dumpWithQuire(store, scratch: scratch)
            let restored = scratch + "/restored"
            try FileManager.default.createDirectory(atPath: restored, withIntermediateDirectories: false)
            // mdb_load 0.9.24 takes every section of a multi-database dump by its database= line.
            let load = try LMDBTools.run("mdb_load", ["-f", scratch + "/quire.dump", restored])
            #expect(load.status == 0, "\(load.stderr)")
            // mdb_load 0.9.24 warns about two lines mdb_dump 0.9.24 itself writes, and nothing else.
            let warnings = load.stderr.split(separator: "\n").filter {
                !$0.hasSuffix("unrecognized keyword ignored: db_pagesize")
                    && !$0.hasSuffix("unrecognized keyword ignored: duplicates")
            }
            #expect(warnings.isEmpty, "\(load.stderr)")
            let contents = try LMDBFixture.contents(at: restored)
            #expect(contents == LMDBFixture.expected)
        }
    }

    @Test func anEnvironmentWithoutNamedDatabasesDumpsNothing() throws {
        try withScratchDirectory { scratch in
            let store = scratch + "/store"
            let environment = try Environment(path: store)
            _ = try environment.openDatabase(nil, flags: [])
            environment.close()
            #expect(try dumpWithQuire(store, scratch: scratch).isEmpty)
        }
    }

    @Test(
        .enabled(if: LMDBTools.available, "mdb_dump (lmdb-utils) is not installed; skipping the comparison"))
    func dumpCommandMatchesMdbDump() async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let result = try await runQuire(["--store", store, "dump", "--format", "mdb"])
            #expect(result.status == 0, "\(result)")
            let theirs = try LMDBTools.run("mdb_dump", ["-a", store])
            #expect(Data(result.stdout.utf8) == theirs.stdout)
        }
    }

    /// A database named like a collection that the store does not hold (`c:ghost`, another
    /// program's bytes) is copied as bytes: the dump called the store corrupted, and `verify`,
    /// which it sent the user to, found nothing. A collection's own record is still checked.
    @Test func onlyTheStoresCollectionsAreCheckedAsRecords() async throws {
        try await withScratch { dir in
            let store = try await makeStore(in: dir, count: 5)
            func plant(_ value: String, key: String, in name: String) throws {
                let environment = try Environment(path: store)
                defer { environment.close() }
                let database = try environment.openDatabase(name, flags: .create)
                try environment.write { txn in try txn.put(Array(value.utf8), forKey: Array(key.utf8), in: database) }
            }
            try plant("world", key: "hello", in: "c:ghost")
            let ghost = try await runQuire(["dump", "--format", "mdb"], directory: dir)
            #expect(ghost.status == 0, "\(ghost)")
            #expect(ghost.stdout.contains("database=c:ghost\n") && ghost.stdout.contains(" 776f726c64\n"), "\(ghost)")
            #expect(try await runQuire(["verify"], directory: dir).status == 0)
            try plant("world", key: "hello", in: "c:articles")
            let record = try await runQuire(["dump", "--format", "mdb"], directory: dir)
            #expect(record.status == 1 && record.stderr.contains("the store is corrupted"), "\(record)")
        }
    }
}
