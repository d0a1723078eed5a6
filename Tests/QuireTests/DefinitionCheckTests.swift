import Foundation
@testable import Quire
import QuireLMDB  // white-box: rewrites a stored definition as an older version wrote it
import QuireNews
import Testing

/// A declaration that differs from the registered one is refused on every write path before
/// anything is written, and a typed read through a declaration of another type names both.
@Suite struct DefinitionCheckTests {
    struct Note: Codable, Sendable, Hashable {
        var id: String
        var text: String
    }

    static let bySection = StoreIndex<Article>(name: "section", kind: .string, field: "section") { a in
        a.section.map { [.string($0)] } ?? []
    }
    static let byDate = StoreIndex<Article>(name: "publishedAt", kind: .date, field: "publishedAt") { a in
        a.publishedAt.map { [.date($0)] } ?? []
    }

    @Test func aStaleHandleWithOtherIndexesIsRefusedOnEveryWritePath() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)  // `articles`: date and section indexes
            defer { store.close() }
            let sample = generatedArticles(3)
            try await store.put(sample[0], in: articles)
            let fewer = StoreCollection<Article>(name: "articles", key: { .string($0.id) }, indexes: [Self.byDate])
            let reordered = StoreCollection<Article>(
                name: "articles", key: { .string($0.id) }, indexes: [Self.bySection, Self.byDate])
            for stale in [fewer, reordered] {
                await #expect(throws: StoreError.self) { try await store.put(sample[1], in: stale) }
                await #expect(throws: StoreError.self) { try await store.write { txn in try txn.put(sample[1], in: stale) } }
                await #expect(throws: StoreError.self) { try await store.delete(.string(sample[0].id), from: stale) }
                await #expect(throws: StoreError.self) { _ = try await store.bulkInsert([sample[2]], into: stale) }
                do {
                    try await store.put(sample[1], in: stale)
                } catch let error as StoreError {
                    #expect(error.code == .definitionMismatch)
                    #expect(error.description.contains("registered"))
                }
            }
            // Nothing was written through them, and the indexes still agree with the records.
            #expect(try store.read { try $0.count(of: articles) } == 1)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test func aCollectionKeepsItsValueType() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            try await store.put(generatedArticles(1)[0], in: articles)
            let notes = StoreCollection<Note>(name: "articles", key: { .string($0.id) })
            do {
                try store.register(notes)
                Issue.record("registering Notes over Articles must be refused")
            } catch let error as StoreError {
                #expect(error.code == .definitionMismatch)
                #expect(error.description.contains("QuireNews.Article") && error.description.contains("Note"))
            }
            // A typed read through the foreign declaration is refused too, naming both types.
            do {
                _ = try store.read { try $0.get(.string("x"), from: notes) }
                Issue.record("a read as Notes must be refused")
            } catch let error as StoreError {
                #expect(error.code == .definitionMismatch)
            }
        }
    }

    @Test func aRecordThatDoesNotDecodeNamesItsCollectionAndKey() async throws {
        try await withTemporaryStorePath { path in
            do {
                let store = try openStore(path)
                try await store.put(generatedArticles(1, seed: 3)[0], in: articles)
                store.close()
            }
            // As a store written before value types were recorded: no type in the definition.
            let old = CollectionDefinition(name: "articles", indexes: [], compressed: false, valueType: nil)
            try rawWrite(path, "_meta", key: Array("collection:notes".utf8), value: Array(try JSONEncoder().encode(old)))
            try rawWrite(path, "_meta", key: Array("collection:articles".utf8), value: Array(try JSONEncoder().encode(
                CollectionDefinition(name: "articles", indexes: articles.definition.indexes, compressed: false, valueType: nil))))
            let store = try Store(path: path)
            defer { store.close() }
            let id = generatedArticles(1, seed: 3)[0].id
            let asNotes = StoreCollection<Note>(name: "articles", key: { .string($0.id) })
            do {
                _ = try store.read { try $0.get(.string(id), from: asNotes) }
                Issue.record("decoding an Article as a Note must fail")
            } catch let error as StoreError {
                #expect(error.code == .codec)
                #expect(error.description.contains("'articles'") && error.description.contains(id))
            }
        }
    }
}
