import Foundation
import Testing
@testable import Quire
import QuireLMDB  // white-box: reaches under the store on purpose
import QuireNews

@Suite struct StoreVerifyTests {
    @Test func soundStorePassesAndDamageIsFound() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(120)
            do {
                let store = try openStore(path)
                try await store.bulkInsert(sample, into: articles)
                try await store.write { txn in
                    try txn.setMembers(sample.prefix(3).map { .string($0.id) }, of: .string("l"), in: listMembers)
                }
                let report = try store.verify()
                #expect(report.isSound, "\(report.problems)")
                #expect(report.records == 120)
                #expect(report.indexEntries == sample.filter { $0.publishedAt != nil }.count + sample.filter { $0.section != nil }.count)
                #expect(report.relationEntries == 3)
                store.close()
            }
            // Damage: remove one record behind the indexes' back, and point a relation nowhere.
            try damage(path, sample[5].id)
            let store = try Store(path: path)
            let report = try store.verify()
            #expect(!report.isSound)
            #expect(report.problems.contains { $0.contains("points to missing record \(sample[5].id)") })
            #expect(report.problems.contains { $0.contains("member nowhere does not exist") })
        }
    }
}

private func damage(_ path: String, _ id: String) throws {
    let env = try Environment(path: path)
    defer { env.close() }
    let records = try env.openDatabase("c:articles")
    let relation = try env.openDatabase("r:list-articles", flags: [.create, .duplicateSort])
    try env.write { txn in
        try txn.delete(Array(id.utf8), in: records)
        try txn.put(Array("nowhere".utf8), forKey: Array("l".utf8), in: relation)
    }
}
