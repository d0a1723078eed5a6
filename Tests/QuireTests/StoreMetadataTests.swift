import Foundation
import Synchronization
import Testing
@testable import Quire
import QuireLMDB  // white-box: reaches under the store on purpose
import QuireNews

@Suite struct StoreMetadataTests {
    @Test func newerFormatIsRefused() async throws {
        try await withTemporaryStorePath { path in
            try rawWrite(path, "_meta", key: Array("format".utf8), value: Array("99".utf8))
            do {
                _ = try Store(path: path)
                Issue.record("a newer format must be refused")
            } catch let error as StoreError {
                #expect(error.code == .newerFormat)
                #expect(error.description.contains("99"))
            }
            // The refusal released the environment: it can be opened again.
            let env = try Environment(path: path)
            env.close()
        }
    }

    /// A second open in one process and a closed store have codes of their own (both were
    /// `.storage`, like a failing disk, so a caller could not tell "share the instance" or
    /// "open it again" from an I/O error).
    @Test func aSecondOpenAndAClosedStoreHaveTheirOwnCodes() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path, schema: StoreSchema(articles))
            #expect { _ = try Store(path: path + "/.") } throws: { ($0 as? StoreError)?.code == .alreadyOpen }
            store.close()
            #expect {
                _ = try store.read { try $0.count(of: articles) }
            } throws: { ($0 as? StoreError)?.code == .closed }
            let again = try Store(path: path, schema: StoreSchema(articles))
            #expect(try again.read { try $0.count(of: articles) } == 0)
            again.close()
        }
    }

    @Test func corruptedFieldTableIsRefused() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)
                try await store.put(generatedArticles(1)[0], in: articles)
                store.close()
            }
            // A gap in the ids: id 1 disappears.
            try rawWrite(path, "_fields", key: StoreLayout.fieldKey(1), value: nil)
            do {
                _ = try Store(path: path)
                Issue.record("a damaged field table must be refused")
            } catch let error as StoreError {
                #expect(error.code == .corrupted)
                #expect(error.description.contains("field table"))
            }
        }
    }

    @Test func aStaleFieldTableIsReloadedFromTheSnapshot() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            let article = generatedArticles(1)[0]
            try await store.put(article, in: articles)
            // Pretend this process loaded the table before those names existed.
            store.fieldCache.withLock { $0 = FieldTable() }
            let read = try store.read { try $0.get(.string(article.id), from: articles) }
            #expect(read == article)
            #expect(store.fields.count > 0)
        }
    }

    @Test func definitionsAreStoredForToolsAndIndexesRebuildWhenTheyChange() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try Store(path: path)
                let plain = StoreCollection<Row>(name: "rows", key: { .int(Int64($0.id)) })
                try store.register(plain)
                try await store.bulkInsert((0..<100).map { Row(id: $0, name: "r\($0)", group: $0 % 3) }, into: plain)
                store.close()
            }
            let store = try Store(path: path)
            try store.register(rows)  // now with a "group" index: built from the stored records
            let definitions = try store.storedCollections()
            #expect(definitions.map(\.name) == ["rows"])
            #expect(definitions.first?.indexes == [IndexDefinition(name: "group", kind: .int, field: "group")])
            let g = StoreKey.int(2).bytes
            let inGroup2 = try store.read { try $0.keys(in: rows.indexes[0], of: rows, range: .exactly(StoreKey(bytes: g))) }
            #expect(inGroup2.count == 33)
        }
    }

    @Test func aSecondProcessReadsWhileThisOneWrites() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            try store.register(rows)
            try await store.put(Row(id: 0, name: "first", group: 0), in: rows)
            async let writing: Void = {
                for i in 1...300 { try await store.put(Row(id: i, name: "row \(i)", group: i % 4), in: rows) }
            }()
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = path as String] in
                try readWhileAnotherProcessWrites(path)
            }
            if let result, result.exitStatus != .exitCode(0) { print(String(decoding: result.standardErrorContent, as: UTF8.self)) }
            try await writing
        }
    }
}

/// Child process: opens the store read-only while the parent writes; snapshots must only move
/// forward and every record must decode. Exits non-zero on any violation.
private func readWhileAnotherProcessWrites(_ path: String) throws {
    var options = StoreOptions()
    options.readOnly = true
    let store = try Store(path: path, options: options)
    var last = 0
    for _ in 0..<150 {
        let n = try store.read { snap throws -> Int in
            var seen = 0
            try snap.forEachGeneric(inCollectionNamed: "rows") { _, value in
                guard value["name"] != nil else { throw StoreError(.corrupted, "record without name") }
                seen += 1
                return true
            }
            return seen
        }
        if n < last { exit(3) }
        last = n
        usleep(2_000)
    }
    do {
        try store.ensureWritable()
        exit(4)
    } catch {}
    exit(last >= 1 ? 0 : 5)
}

/// Writes (or deletes, with a nil value) one raw key in a named database of a closed store.
func rawWrite(_ path: String, _ database: String, key: [UInt8], value: [UInt8]?) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let db = try env.openDatabase(database)
    try env.write { txn in
        if let value { try txn.put(value, forKey: key, in: db) } else { try txn.delete(key, in: db) }
    }
}
