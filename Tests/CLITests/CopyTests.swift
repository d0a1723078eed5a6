import Foundation
import QuireLMDB
import Testing

@testable import quire

private func fileSize(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
}

/// Grows and then shrinks the `many` database so the file has free pages a compact copy drops.
private func addFreePages(_ store: String) throws {
    let environment = try Environment(path: store)
    defer { environment.close() }
    let scratch = try environment.openDatabase("scratch")
    try environment.write { txn in
        for i in 0..<2_000 {
            try txn.put(Array(repeating: 7, count: 300), forKey: Array(String(format: "s%05d", i).utf8), in: scratch)
        }
    }
    try environment.write { txn in try txn.removeAll(in: scratch) }
}

@Suite struct CopyCommandTests {
    @Test(arguments: [false, true])
    func copyHoldsTheSameContents(compact: Bool) async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let destination = scratch + "/backup"
            let result = try await runQuire(["--store", store, "copy", destination] + (compact ? ["--compact"] : []))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "")
            #expect(result.stderr.hasPrefix("quire: copy: "), "\(result)")
            #expect(result.stderr.contains(" bytes (") && result.stderr.contains(" pages of "), "\(result)")
            #expect(result.stderr.contains("compacted") == compact)
            #expect(result.stderr.split(separator: "\n").count == 1)

            #expect(try LMDBFixture.contents(at: destination) == LMDBFixture.expected)

            // The copy is an ordinary environment the LMDB tools read, down to its header.
            if LMDBTools.available {
                let original = try LMDBTools.run("mdb_dump", ["-a", store])
                let copied = try LMDBTools.run("mdb_dump", ["-a", destination])
                #expect(copied.status == 0, "\(copied.stderr)")
                #expect(copied.stdout == original.stdout)
            }
        }
    }

    @Test func compactCopyDropsFreePagesAndQuietPrintsNothing() async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            try addFreePages(store)
            let plain = try await runQuire(["--store", store, "copy", scratch + "/plain", "--quiet"])
            let compact = try await runQuire(["--store", store, "copy", "--compact", "-q", scratch + "/compact"])
            #expect(plain.status == 0 && compact.status == 0, "\(plain)\n\(compact)")
            #expect(plain.stderr == "" && compact.stderr == "")
            let plainSize = try fileSize(scratch + "/plain/data.mdb")
            let compactSize = try fileSize(scratch + "/compact/data.mdb")
            #expect(compactSize < plainSize)
            #expect(try LMDBFixture.contents(at: scratch + "/compact") == LMDBFixture.contents(at: scratch + "/plain"))
        }
    }

    @Test func copyingOntoAStoreFails() async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let destination = scratch + "/backup"
            #expect(try await runQuire(["--store", store, "copy", destination, "-q"]).status == 0)
            let sizeBefore = try fileSize(destination + "/data.mdb")

            let again = try await runQuire(["--store", store, "copy", destination])
            #expect(again.status == 1)
            #expect(again.stderr == "quire: copy: \(destination): already holds a store; choose a new directory\n")
            let ontoItself = try await runQuire(["--store", store, "copy", store])
            #expect(ontoItself.status == 1)
            #expect(ontoItself.stderr.hasPrefix("quire: copy: \(store): already holds a store"))
            #expect(try fileSize(destination + "/data.mdb") == sizeBefore)
        }
    }

    @Test func copyingIntoANonEmptyDirectoryOrAFileFails() async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let occupied = scratch + "/occupied"
            try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: false)
            try Data("notes".utf8).write(to: URL(fileURLWithPath: occupied + "/notes.txt"))
            let intoDirectory = try await runQuire(["--store", store, "copy", occupied])
            #expect(intoDirectory.status == 1)
            #expect(intoDirectory.stderr == "quire: copy: \(occupied): the directory is not empty\n")

            let file = scratch + "/file"
            try Data().write(to: URL(fileURLWithPath: file))
            let ontoFile = try await runQuire(["--store", store, "copy", file])
            #expect(ontoFile.status == 1)
            #expect(ontoFile.stderr == "quire: copy: \(file): exists and is not a directory\n")

            // An empty directory is fine.
            let empty = scratch + "/empty"
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
            #expect(try await runQuire(["--store", store, "copy", empty, "-q"]).status == 0)
            #expect(FileManager.default.fileExists(atPath: empty + "/data.mdb"))
        }
    }

    /// A directory holding only what a killed copy left is no store, and every command says what
    /// is there and how to get rid of it; a copy run again into it replaces it.
    /// (A killed compacted copy leaves its staging directory, the data file in it.)
    @Test(arguments: [false, true])
    func aKilledCopysLeftoverIsNamedNotTakenForAStore(staged: Bool) async throws {
        try await withScratchDirectory { scratch in
            let store = scratch + "/store"
            try LMDBFixture.build(at: store)
            let backup = scratch + "/backup"
            try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
            let leftover = Environment.partialCopyPrefix + (staged ? "staged-4242" : "Ab12Cd")
            let garbage = staged ? backup + "/" + leftover + "/data.mdb" : backup + "/" + leftover
            if staged { try FileManager.default.createDirectory(atPath: backup + "/" + leftover, withIntermediateDirectories: false) }
            try Data(repeating: 7, count: 8_192).write(to: URL(fileURLWithPath: garbage))
            let input = scratch + "/in.jsonl"
            try Data("{\"id\":\"a\",\"headline\":\"x\"}\n".utf8).write(to: URL(fileURLWithPath: input))
            for command in [["stats"], ["verify"], ["dump"], ["load", input]] {
                let result = try await runQuire(["--store", backup] + command)
                #expect(result.status == 1, "\(command): \(result)")
                #expect(result.stderr.contains("copy left (\(leftover)): run the copy again"), "\(command): \(result)")
            }
            #expect(try await runQuire(["--store", store, "copy", backup, "-q"] + (staged ? ["--compact"] : [])).status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: backup) == ["data.mdb"])
        }
    }

    @Test func copyingAMissingStoreFails() async throws {
        try await withScratchDirectory { scratch in
            let missing = scratch + "/nothing-here"
            let destination = scratch + "/backup"
            let result = try await runQuire(["--store", missing, "copy", destination])
            #expect(result.status == 1)
            #expect(result.stderr == "quire: copy: \(missing): no store at this path (make one with 'quire demo', 'fetch' or 'load', or name another with --store or $QUIRE_STORE)\n")
            #expect(!FileManager.default.fileExists(atPath: destination))

            // A directory without a data file is no store either.
            let emptyDirectory = scratch + "/empty"
            try FileManager.default.createDirectory(atPath: emptyDirectory, withIntermediateDirectories: false)
            let fromEmpty = try await runQuire(["--store", emptyDirectory, "copy", destination])
            #expect(fromEmpty.status == 1)
            #expect(fromEmpty.stderr == "quire: copy: \(emptyDirectory): no store at this path (make one with 'quire demo', 'fetch' or 'load', or name another with --store or $QUIRE_STORE)\n")
        }
    }

    /// A copy into a directory that does not exist says which one, as a new store does.
    @Test func aCopyIntoAMissingDirectorySaysWhichOne() throws {
        let refused = #expect(throws: RuntimeError.self) { try CopyCommand.checkDestination("nope/deeper/x") }
        #expect(refused?.description == "copy: nope/deeper/x: cannot create the copy: its directory nope/deeper does not exist")
        try CopyCommand.checkDestination(FileManager.default.temporaryDirectory.path + "/quire-copy-\(UUID().uuidString)")
        try CopyCommand.checkDestination(FileManager.default.temporaryDirectory.path + "/quire-copy-\(UUID().uuidString)/")
    }

    @Test func summaryNamesBytesAndPages() {
        let line = CopyCommand.summary(bytes: 1_228_800, pageSize: 4096, destination: "/b", compact: true)
        #expect(line == "quire: copy: 1,228,800 bytes (300 pages of 4096) to /b, compacted\n")
    }
}
