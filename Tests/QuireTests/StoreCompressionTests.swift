import Foundation
import Testing
@testable import Quire
import QuireNews

@Suite struct StoreCompressionTests {
    static let packed = StoreCollection<Article>(name: "packed", key: { .string($0.id) }, compressed: true)

    @Test func dictionaryIsTrainedKeptAndTransparent() async throws {
        try await withTemporaryStorePath { path in
            let sample = generatedArticles(600, seed: 99)
            let firstHalf = Array(sample[..<300])
            let secondHalf = Array(sample[300...])
            var plainBytes = 0
            var dictionaryBytes = 0
            do {
                let store = try Store(path: path)
                try store.register(Self.packed)
                try await store.bulkInsert(firstHalf, into: Self.packed)
                plainBytes = try size(store, firstHalf)
                let trained = try await store.trainCompressionDictionary(for: Self.packed)
                #expect(trained > 0)
                await #expect(throws: StoreError.self) { try await store.trainCompressionDictionary(for: Self.packed) }
                try await store.bulkInsert(secondHalf, into: Self.packed)
                dictionaryBytes = try size(store, secondHalf)
                store.close()
            }
            // Records compressed with the dictionary are smaller per record than zstd alone.
            #expect(Double(dictionaryBytes) / 300 < Double(plainBytes) / 300)
            // A new process (here: a reopen) reads both kinds, typed, generic and lazily.
            let store = try Store(path: path)
            try store.register(Self.packed)
            try store.read { snap throws in
                for article in [sample[0], sample[599]] {
                    #expect(try snap.get(.string(article.id), from: Self.packed) == article)
                    #expect(try snap.genericValue(.string(article.id), inCollectionNamed: "packed")?["id"] == .string(article.id))
                    #expect(try snap.field("url", of: .string(article.id), in: Self.packed) == article.url.map { .string($0) })
                }
                #expect(try snap.count(of: Self.packed) == 600)
            }
            #expect(try store.verify().isSound)
        }
    }
}

/// The stored bytes of `articles` in the packed collection.
private func size(_ store: Store, _ articles: [Article]) throws -> Int {
    try store.read { snap in
        try articles.reduce(0) { total, a in
            total + (try snap.withRecordBytes(.string(a.id), in: StoreCompressionTests.packed) { $0.count } ?? 0)
        }
    }
}
