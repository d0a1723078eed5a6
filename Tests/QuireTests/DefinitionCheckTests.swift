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

    /// A relation declared again with members of another collection is refused, in this
    /// process and in the next, once it holds entries; an empty one may change.
    @Test func aRelationRedeclaredWithOtherMembersIsRefused() async throws {
        try await withTemporaryStorePath { path in
            let tagged = StoreRelation(name: "tagged", memberCollection: "articles")
            let retargeted = StoreRelation(name: "tagged", memberCollection: "lists")
            do {
                let store = try openStore(path)
                defer { store.close() }
                try store.register(retargeted)  // empty: it may still change
                try store.register(tagged)
                try await store.write { txn in try txn.addMembers([.string("a1")], to: .string("t"), in: tagged) }
                let again = #expect(throws: StoreError.self) { try store.register(retargeted) }
                #expect(again?.code == .definitionMismatch && again?.description.contains("'articles'") == true)
            }
            let reopened = try openStore(path)
            defer { reopened.close() }
            #expect(throws: StoreError.self) { try reopened.register(retargeted) }
            try reopened.register(tagged)
            #expect(try reopened.read { try $0.members(of: .string("t"), in: tagged) } == [.string("a1")])
        }
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
            // The code matches in a catch clause, as LMDB's and the fetch layer's do.
            var matched = false
            do {
                try await store.put(sample[1], in: fewer)
            } catch StoreError.Code.definitionMismatch {
                matched = true
            } catch {
                Issue.record("unexpected \(error)")
            }
            #expect(matched)
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

    /// A declaration that drops an index deletes its database, and LMDB gives the freed handle
    /// to the next database opened: a handle kept by name would then name that one (a later
    /// declaration with the index again emptied another collection and filled it with index
    /// entries). The search databases go the same way.
    @Test func aDroppedIndexsHandleIsNotReusedForAnotherDatabase() async throws {
        try await withTemporaryStorePath { path in
            let store = try Store(path: path)
            defer { store.close() }
            let withIndex = StoreCollection<Note>(
                name: "memos", key: { .string($0.id) },
                indexes: [StoreIndex(name: "text", kind: .string, field: "text") { [.string($0.text)] }])
            let without = StoreCollection<Note>(name: "memos", key: { .string($0.id) })
            let other = StoreCollection<Note>(name: "other", key: { .string($0.id) })
            try store.register(withIndex)
            try await store.put(Note(id: "n", text: "kept"), in: withIndex)
            try store.register(without)  // drops i:memos:text
            try store.register(other)  // opened next: LMDB's freed slot
            try await store.put(Note(id: "o1", text: "other's"), in: other)
            try store.register(withIndex)  // rebuilds the index from the records
            #expect(try store.read { try $0.values(of: other) } == [Note(id: "o1", text: "other's")])
            #expect(try store.read { try $0.indexKeyCount("memos", "text", indexKey: .string("kept")) } == 1)
            #expect(try store.verify().isSound)
            // The full-text index dropped and declared again the same way.
            try store.register(notes)
            try await store.put(note("s", "searchable words"), in: notes)
            try store.register(StoreCollection<QuireTests.Note>(name: "notes", key: { .string($0.id) }, indexes: notes.indexes))
            let third = StoreCollection<Note>(name: "third", key: { .string($0.id) })
            try store.register(third)
            try await store.put(Note(id: "t", text: "third's"), in: third)
            try store.register(notes)
            #expect(try store.read { try $0.values(of: third) } == [Note(id: "t", text: "third's")])
            #expect(try store.read { try $0.search("searchable", in: notes, limit: 5) }.count == 1)
            #expect(try store.verify().isSound)
        }
    }
}
