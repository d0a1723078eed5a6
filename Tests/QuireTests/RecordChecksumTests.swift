import Foundation
import QuireCodec
import QuireLMDB
import QuireNews
import Testing

@testable import Quire

/// Records carry a CRC-32C (format 2): verify finds any changed byte; format 1 records still read.
@Suite struct RecordChecksumTests {
    @Test func verifyFindsEveryChangedByteOfARecord() async throws {
        try await withTemporaryStorePath { path in
            let sample = Array(generatedArticles(3))
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                #expect(try store.verify().isSound)
                store.close()
            }
            let key = Array(sample[1].id.utf8)
            let original = try rawRecord(path, key)
            #expect(original.first == 0x02)
            // Every byte of the record (a sample of positions in debug builds), each flip alone.
            for index in stride(from: 0, to: original.count, by: max(1, original.count / 97)) {
                var damaged = original
                damaged[index] ^= 0x20
                try putRawRecord(path, key, damaged)
                let store = try Store(path: path, options: readOnlyOptions())
                let report = try store.verify()
                store.close()
                #expect(report.problems.contains { $0.contains("record \(sample[1].id)") }, "byte \(index): \(report.problems)")
            }
            try putRawRecord(path, key, original)
            let store = try Store(path: path, options: readOnlyOptions())
            #expect(try store.verify().isSound)
            store.close()
        }
    }

    @Test func formatOneRecordsStayReadable() async throws {
        try await withTemporaryStorePath { path in
            let sample = Array(generatedArticles(2))
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                store.close()
            }
            // Rewrite one record as version 1 (no checksum), as a format 1 store holds it.
            let key = Array(sample[0].id.utf8)
            let checked = try rawRecord(path, key)
            try putRawRecord(path, key, [0x01] + checked[5...])
            let store = try openStore(path)
            defer { store.close() }
            #expect(try store.read { try $0.get(.string(sample[0].id), from: articles) } == sample[0])
            #expect(try store.verify().isSound)
        }
    }
}

private func readOnlyOptions() -> StoreOptions {
    var options = StoreOptions()
    options.readOnly = true
    options.initialMapSize = 0
    return options
}

private func rawRecord(_ path: String, _ key: [UInt8]) throws -> [UInt8] {
    let env = try Environment(path: path)
    defer { env.close() }
    let records = try env.openDatabase("c:articles", flags: [])
    return try #require(try env.read { txn in try txn.get(key, in: records) })
}

private func putRawRecord(_ path: String, _ key: [UInt8], _ value: [UInt8]) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let records = try env.openDatabase("c:articles", flags: [])
    try env.write { txn in try txn.put(value, forKey: key, in: records) }
}
