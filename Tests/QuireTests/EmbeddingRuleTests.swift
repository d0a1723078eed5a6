import Foundation
import Quire
import QuireNews
import QuireTestSupport
import Synchronization
import Testing

/// What an embedding program may not get wrong without being told: another value type read
/// through a read-only store, names that are the same text in another normalization, writes
/// that a relaxed load beside them left unsynced, relation changes missing from the feed,
/// error codes of a closed store, and "no limit" values.
@Suite struct EmbeddingRuleTests {
    struct ShadowArticle: Codable, Sendable {
        var id: String
        var headline: String?
    }

    /// A read-only store compared nothing: a declaration of another value type replaced the
    /// stored one, typed reads decoded articles into it, and the true declaration was refused.
    @Test func aReadOnlyStoreRefusesADeclarationOfAnotherValueType() async throws {
        try await withTemporaryStorePath { path in
            let article = generatedArticles(1)[0]
            do {
                let store = try openStore(path)
                try await store.put(article, in: articles)
                store.close()
            }
            var options = StoreOptions()
            options.readOnly = true
            let store = try Store(path: path, options: options)
            defer { store.close() }
            let shadow = StoreCollection<ShadowArticle>(name: "articles", key: { .string($0.id) })
            #expect { try store.register(shadow) } throws: { ($0 as? StoreError)?.code == .definitionMismatch }
            #expect { try store.read { try $0.get(.string(article.id), from: shadow) } } throws: {
                ($0 as? StoreError)?.code == .definitionMismatch
            }
            #expect(try store.read { try $0.get(.string(article.id), from: articles) }?.id == article.id)
        }
    }

    struct Note: Codable, Sendable { var id: String; var title: String }
    struct Count: Codable, Sendable { var id: String; var amount: Int }

    /// "café" composed and decomposed are one Swift string and two LMDB names: the second was
    /// taken for the first, its records written into the first's database. It is refused, and
    /// the first keeps its records, also after a reopen.
    @Test func aNameInAnotherNormalizationIsRefused() async throws {
        try await withTemporaryStorePath { path in
            let composed = StoreCollection<Note>(name: "caf\u{E9}", key: { .string($0.id) })
            let decomposed = StoreCollection<Count>(name: "cafe\u{301}", key: { .string($0.id) })
            do {
                let store = try Store(path: path)
                defer { store.close() }
                try store.register(composed)
                try await store.put(Note(id: "n1", title: "first"), in: composed)
                #expect { try store.register(decomposed) } throws: { error in
                    (error as? StoreError)?.code == .definitionMismatch && "\(error)".contains("another spelling")
                }
                #expect(try store.read { try $0.get(.string("n1"), from: composed) }?.title == "first")
            }
            let store = try Store(path: path)
            defer { store.close() }
            #expect { try store.register(decomposed) } throws: { ($0 as? StoreError)?.code == .definitionMismatch }
            try store.register(composed)
            #expect(try store.read { try $0.count(of: composed) } == 1)
        }
    }

    /// While a bulk load with relaxed durability runs, the environment's syncs are off: a write
    /// beside it committed and returned unsynced. It is synced before it returns; the load's
    /// own chunks are not.
    @Test func aWriteBesideARelaxedLoadIsSyncedBeforeItReturns() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            let before = store.commitsSyncedBesideRelaxedLoads.load(ordering: .relaxed)
            try await store.withBulkLoader(into: articles, options: BulkInsertOptions(relaxedDurability: true)) { loader in
                try await loader.submit(generatedArticles(200))
                let chunks = store.commitsSyncedBesideRelaxedLoads.load(ordering: .relaxed)
                #expect(chunks == before, "the load's own commits are not synced one by one")
                try await store.write { txn in try txn.put(Article(id: "must-be-durable", headline: "x"), in: articles) }
                #expect(store.commitsSyncedBesideRelaxedLoads.load(ordering: .relaxed) == chunks + 1)
            }
            try await store.write { txn in try txn.put(Article(id: "after", headline: "y"), in: articles) }
            #expect(store.commitsSyncedBesideRelaxedLoads.load(ordering: .relaxed) == before + 1, "durable again after the load")
        }
    }

    /// Emptying an owner's members is a change of the relation (it wrote no feed entry, so a
    /// watcher kept the old members for good).
    @Test func emptyingAnOwnersMembersIsInTheChangeFeed() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            defer { store.close() }
            try await store.write { txn in
                try txn.setMembers([.string("a1"), .string("a2")], of: .string("list-1"), in: listMembers)
            }
            let before = try store.lastChangeSequence()
            try await store.write { txn in try txn.setMembers([], of: .string("list-1"), in: listMembers) }
            #expect(try store.read { try $0.members(of: .string("list-1"), in: listMembers) }.isEmpty)
            #expect(try store.lastChangeSequence() == before + 1)
            let events = await collectChanges(store.changes(since: before), batches: 1)
            let changes = events.compactMap { event -> [StoreChange]? in
                if case .batch(let batch) = event { batch.changes } else { nil }
            }.flatMap { $0 }
            #expect(changes.contains { $0.collection == listMembers.name && $0.kind == .relation && $0.keys == [.string("list-1")] })
        }
    }

    /// Writes to a closed store said `.storage` (a disk's trouble), reads `.closed`.
    @Test func writesToAClosedStoreSayClosed() async throws {
        try await withTemporaryStorePath { path in
            let store = try openStore(path)
            store.close()
            let article = generatedArticles(1)[0]
            await #expect { try await store.put(article, in: articles) } throws: { ($0 as? StoreError)?.code == .closed }
            await #expect { try await store.write { txn in try txn.put(article, in: articles) } } throws: {
                ($0 as? StoreError)?.code == .closed
            }
        }
    }

    /// A dictionary capacity of `.max` ("no limit") trapped allocating it: no dictionary is
    /// larger than its samples, and training too few samples is a typed error.
    @Test func aDictionaryOfNoLimitIsNoTrap() async throws {
        _ = try await withTemporaryDirectory("trap", create: false) { path in
            await #expect(processExitsWith: .success) { [path = path as String] in
                var options = StoreOptions()
                options.dictionaryTrainingThreshold = 0
                let store = try Store(path: path, options: options)
                let packed = StoreCollection<Row>(name: "packed", key: { .int(Int64($0.id)) }, compressed: true)
                try store.register(packed)
                _ = try await store.bulkInsert(scrambledRows(300), into: packed)
                do {
                    _ = try await store.trainCompressionDictionary(for: packed, capacity: .max)
                } catch let error as StoreError where error.code == .codec {
                    // zstd found the samples too few for the size asked: said, not a trap.
                }
                store.close()
            }
        }
    }
}
